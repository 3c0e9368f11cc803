/*
 * Code loading, kernel launches and graphs. The simulated driver runs no kernels, so these
 * answer CUDA_ERROR_NOT_SUPPORTED (callers treat that as "needs a real GPU"), and the handles
 * they would produce never exist.
 */
#include "sim_internal.h"

gcu_result sim_cuModuleLoadData(gcu_module *module, const void *image)
{
    SIM_BEGIN(cuModuleLoadData);
    SIM_FAIL(!module || !image ? GCU_ERROR_INVALID_VALUE : GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuModuleUnload(gcu_module module)
{
    (void)module;
    SIM_BEGIN(cuModuleUnload);
    SIM_FAIL(GCU_ERROR_INVALID_HANDLE);
    SIM_END();
}

gcu_result sim_cuModuleGetFunction(gcu_function *fn, gcu_module module, const char *name)
{
    (void)module;
    SIM_BEGIN(cuModuleGetFunction);
    SIM_FAIL(!fn || !name ? GCU_ERROR_INVALID_VALUE : GCU_ERROR_INVALID_HANDLE);
    SIM_END();
}

gcu_result sim_cuLaunchKernel(gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                              void **params, void **extra)
{
    (void)fn, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem;
    (void)stream, (void)params, (void)extra;
    SIM_BEGIN(cuLaunchKernel);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuStreamBeginCapture(CUstream stream, int mode)
{
    (void)stream, (void)mode;
    SIM_BEGIN(cuStreamBeginCapture);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuStreamEndCapture(CUstream stream, gcu_graph *graph)
{
    (void)stream, (void)graph;
    SIM_BEGIN(cuStreamEndCapture);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuGraphInstantiateWithFlags(gcu_graph_exec *exec, gcu_graph graph,
                                           unsigned long long flags)
{
    (void)exec, (void)graph, (void)flags;
    SIM_BEGIN(cuGraphInstantiateWithFlags);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuGraphLaunch(gcu_graph_exec exec, CUstream stream)
{
    (void)exec, (void)stream;
    SIM_BEGIN(cuGraphLaunch);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuGraphExecDestroy(gcu_graph_exec exec)
{
    (void)exec;
    SIM_BEGIN(cuGraphExecDestroy);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

gcu_result sim_cuGraphDestroy(gcu_graph graph)
{
    (void)graph;
    SIM_BEGIN(cuGraphDestroy);
    SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    SIM_END();
}

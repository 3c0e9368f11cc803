/*
 * Code loading, kernel launches and graphs. The simulated driver runs exactly one kernel: the
 * library's %smid observation kernel (src/observe.c, entry greenctx_smid), so that
 * gctx_stream_observe_sms works, and fails call by call, without a GPU. Every other image
 * answers CUDA_ERROR_NOT_SUPPORTED (callers treat that as "needs a real GPU"), and so do graphs.
 */
#include <string.h>

#include "sim_internal.h"

#define SIM_SMID_ENTRY "greenctx_smid"

/* A loaded module: only ever the %smid kernel's. Its one function's handle is the module's,
 * retagged, so the function lives exactly as long as its module. */
typedef struct sim_module {
    sim_slot slot;
} sim_module;

static sim_pool modules = {.item_size = sizeof(sim_module), .tag = SIM_TAG_MODULE};

int sim_modules_live(void)
{
    int n = 0;
    for (uint32_t i = 0; i < modules.count; i++)
        n += sim_pool_at(&modules, i) != NULL;
    return n;
}

void sim_kernels_reset(void) { sim_pool_clear(&modules); }

gcu_result sim_cuModuleLoadData(gcu_module *module, const void *image)
{
    SIM_BEGIN(cuModuleLoadData);
    if (!module || !image)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    if (!strstr(image, ".entry " SIM_SMID_ENTRY "("))
        SIM_FAIL(GCU_ERROR_NOT_SUPPORTED);
    sim_ctx c;
    SIM_CHECK(sim_ctx_current(&c));
    uintptr_t h;
    if (!sim_pool_alloc(&modules, &h))
        SIM_FAIL(GCU_ERROR_OUT_OF_MEMORY);
    *module = (gcu_module)h;
    SIM_END();
}

gcu_result sim_cuModuleUnload(gcu_module module)
{
    SIM_BEGIN(cuModuleUnload);
    sim_module *m = sim_pool_get(&modules, (uintptr_t)module);
    if (!m)
        SIM_FAIL(GCU_ERROR_INVALID_HANDLE);
    sim_pool_free(m);
    SIM_END();
}

gcu_result sim_cuModuleGetFunction(gcu_function *fn, gcu_module module, const char *name)
{
    SIM_BEGIN(cuModuleGetFunction);
    if (!fn || !name)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    if (!sim_pool_get(&modules, (uintptr_t)module))
        SIM_FAIL(GCU_ERROR_INVALID_HANDLE);
    if (strcmp(name, SIM_SMID_ENTRY) != 0)
        SIM_FAIL(GCU_ERROR_NOT_FOUND);
    *fn = (gcu_function)sim_handle_retag((uintptr_t)module, SIM_TAG_FUNCTION);
    SIM_END();
}

/* greenctx_smid(flags, spin_ns): thread 0 of each block stores 1 at flags[smid & 1023]. Block b
 * runs on the b-th SM the stream's context may use, round-robin as a GPU spreads spinning
 * blocks; blocks past the last SM only mark SMs already marked, so they are not simulated. */
gcu_result sim_cuLaunchKernel(gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                              void **params, void **extra)
{
    (void)shmem, (void)extra;
    SIM_BEGIN(cuLaunchKernel);
    if (!sim_pool_get(&modules, sim_handle_retag((uintptr_t)fn, SIM_TAG_MODULE)) ||
        sim_handle_tag((uintptr_t)fn) != SIM_TAG_FUNCTION)
        SIM_FAIL(GCU_ERROR_INVALID_HANDLE);
    if (!params || !params[0] || !gx || !gy || !gz || !bx || !by || !bz ||
        (unsigned long long)bx * by * bz > 1024)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    sim_ctx c;
    SIM_CHECK(sim_stream_ctx(stream, &c));
    sim_smset sms = sim_ctx_sms(&c);
    unsigned ids[SIM_MAX_SMS];
    unsigned n = sim_set_ids(&sms, ids);
    gcu_deviceptr flags = *(const gcu_deviceptr *)params[0];
    unsigned long long blocks = (unsigned long long)gx * gy * gz;
    for (unsigned long long b = 0; b < blocks && b < n; b++) {
        unsigned char *slot = sim_memory_range(flags + (ids[b] & 1023u) * 4u, 4);
        if (!slot)
            SIM_FAIL(GCU_ERROR_INVALID_VALUE);
        memcpy(slot, &(uint32_t){1}, 4);
    }
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

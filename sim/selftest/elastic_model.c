/* bench elastic's kernels in the simulator: their cost model on the stream's SMs, their life. */
#include "selftest.h"

/* One gce_gemm of n x n x n on stream s between two events: its modelled milliseconds. */
static float gemm_ms(gcu_function gemm, CUstream s, unsigned n)
{
    CUevent a, b;
    gcu_deviceptr none = 0x1000; /* the model reads sizes only, never memory */
    void *params[] = {&none, &none, &none, &n, &n, &n};
    float ms = -1;
    if (D.cuEventCreate(&a, 0) || D.cuEventCreate(&b, 0))
        return -1;
    if (D.cuEventRecord(a, s) || D.cuLaunchKernel(gemm, 256, 1, 1, 256, 1, 1, 0, s, params, NULL) ||
        D.cuEventRecord(b, s) || D.cuEventElapsedTime(&ms, a, b))
        ms = -1;
    D.cuEventDestroy(a);
    D.cuEventDestroy(b);
    return ms;
}

/* bench elastic's kernels: loaded by their image, timed by the model on the stream's SMs,
 * freed with their module. */
void check_elastic_model(void)
{
    configure("h200", "13000", NULL);
    CUcontext c, g16;
    D.cuDevicePrimaryCtxRetain(&c, 0);
    D.cuCtxSetCurrent(c);
    gcu_dev_resource dev = device_resource(0);
    split_out o;
    split(&o, &dev, 0, 16, 1);
    CUgreenCtx g = make_ctx(&o.res[0], 1);
    D.cuCtxFromGreenCtx(&g16, g);
    const char *image = ".version 7.0\n.visible .entry gce_decode_attn(\n";
    gcu_module mod = NULL, mod16 = NULL;
    gcu_function gemm = NULL, gemm16 = NULL, nope;
    CUstream s = NULL, s16 = NULL;
    check(D.cuModuleLoadData(&mod, image) == 0 &&
              D.cuModuleGetFunction(&gemm, mod, "gce_gemm") == 0 &&
              D.cuModuleGetFunction(&nope, mod, "gc_fma") == GCU_ERROR_NOT_FOUND &&
              D.cuStreamCreate(&s, 0) == 0,
          "the elastic kernels load; only theirs");
    check(live("module") == 1, "a module's functions are not modules (%d)", live("module"));
    D.cuCtxSetCurrent(g16);
    check(D.cuModuleLoadData(&mod16, image) == 0 &&
              D.cuModuleGetFunction(&gemm16, mod16, "gce_gemm") == 0 &&
              D.cuStreamCreate(&s16, 0) == 0,
          "in a green context too");
    float whole = gemm_ms(gemm, s, 4096), small = gemm_ms(gemm16, s16, 4096);
    check(whole > 0 && small > 8 * whole && small < 8.5f * whole,
          "a compute-bound GEMM takes 132/16 as long on 16 SMs (%.3f ms, %.3f ms)", whole, small);
    gcu_deviceptr none = 0x1000;
    unsigned n = 64;
    void *params[] = {&none, &none, &none, &n, &n, &n};
    check(D.cuLaunchKernel(gemm, 1, 1, 1, 256, 1, 1, 0, s16, params, NULL) ==
              GCU_ERROR_INVALID_HANDLE,
          "a function launches on its own context's streams only");
    D.cuCtxSetCurrent(NULL);
    check(D.cuLaunchKernel(gemm16, 1, 1, 1, 256, 1, 1, 0, s16, params, NULL) ==
              GCU_ERROR_INVALID_CONTEXT,
          "a launch needs a current context (maybe stricter than the driver)");
    D.cuCtxSetCurrent(g16);
    check(D.cuModuleUnload((gcu_module)gemm16) == GCU_ERROR_INVALID_HANDLE,
          "a function is not a module");
    D.cuModuleUnload(mod16);
    check(gemm_ms(gemm16, s16, 64) < 0, "a function dies with its module");
    D.cuStreamDestroy(s16);
    D.cuCtxSetCurrent(c);
    D.cuModuleUnload(mod);
    D.cuStreamDestroy(s);
    D.cuCtxSetCurrent(NULL);
    D.cuGreenCtxDestroy(g);
    D.cuDevicePrimaryCtxRelease(0);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

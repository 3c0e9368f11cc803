/* Kernels registered with a cost model (gctxsim_kernel_model): loaded by their image, timed by
 * the model on the stream's SMs, freed with their module. */
#include "selftest.h"

/* A GEMM (A, W, C, M, N, K): 2 M N K FLOPs, its operands read once. */
static gctxsim_work gemm_work(void **params, unsigned long long blocks, void *user)
{
    (void)blocks;
    ++*(int *)user;
    double m = *(unsigned *)params[3], n = *(unsigned *)params[4], k = *(unsigned *)params[5];
    return (gctxsim_work){.bytes = (m * k + n * k) * 2 + m * n * 4, .flops = 2 * m * n * k};
}

/* One test_gemm of n x n x n on stream s between two events: its modelled milliseconds. */
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

void check_kernel_model(void)
{
    CUcontext c, g16;
    CUgreenCtx g = green16_beside_primary(&c, &g16);
    const char *image = ".version 7.0\n.visible .entry test_gemm(\n";
    gcu_module mod = NULL, mod16 = NULL;
    gcu_function gemm = NULL, gemm16 = NULL, nope;
    CUstream s = NULL, s16 = NULL;
    check(D.cuModuleLoadData(&mod, image) == GCU_ERROR_NOT_SUPPORTED,
          "an image of no registered kernel needs a GPU");
    int launches = 0;
    check(kernel_model(NULL, gemm_work, NULL) == -1 && kernel_model("", gemm_work, NULL) == -1,
          "a kernel model needs a name");
    check(kernel_model("test_gemm", gemm_work, &launches) == 0, "a kernel model registers");
    check(D.cuModuleLoadData(&mod, image) == 0 &&
              D.cuModuleGetFunction(&gemm, mod, "test_gemm") == 0 &&
              D.cuModuleGetFunction(&nope, mod, "test_other") == GCU_ERROR_NOT_FOUND &&
              D.cuStreamCreate(&s, 0) == 0,
          "the registered kernels load; only theirs");
    check(live("module") == 1, "a module's functions are not modules (%d)", live("module"));
    D.cuCtxSetCurrent(g16);
    check(D.cuModuleLoadData(&mod16, image) == 0 &&
              D.cuModuleGetFunction(&gemm16, mod16, "test_gemm") == 0 &&
              D.cuStreamCreate(&s16, 0) == 0,
          "in a green context too");
    float whole = gemm_ms(gemm, s, 4096), small = gemm_ms(gemm16, s16, 4096);
    check(whole > 0 && small > 8 * whole && small < 8.5f * whole,
          "a compute-bound GEMM takes 132/16 as long on 16 SMs (%.3f ms, %.3f ms)", whole, small);
    check(launches == 2, "the model was asked once a launch (%d)", launches);
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
    check(kernel_model("test_gemm", NULL, NULL) == 0 && gemm_ms(gemm16, s16, 64) < 0 &&
              D.cuModuleGetFunction(&nope, mod16, "test_gemm") == GCU_ERROR_NOT_FOUND,
          "a removed model's functions launch no more");
    kernel_model("test_gemm", gemm_work, &launches);
    D.cuModuleUnload(mod16);
    check(gemm_ms(gemm16, s16, 64) < 0, "a function dies with its module");
    D.cuStreamDestroy(s16);
    D.cuCtxSetCurrent(c);
    D.cuModuleUnload(mod);
    D.cuStreamDestroy(s);
    D.cuCtxSetCurrent(NULL);
    D.cuGreenCtxDestroy(g);
    D.cuDevicePrimaryCtxRelease(0);
    kernel_model("test_gemm", NULL, NULL);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

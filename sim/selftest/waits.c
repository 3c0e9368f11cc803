/* Work that takes time: the %smid kernel's blocks spin for spin_ns, in waves, one kernel after
 * another on a stream; waits sleep until it ends and queries answer NOT_READY before. And the
 * default streams: the per-thread entry points cuGetProcAddress hands out, for its flag and
 * for flags 0 under GREENCTX_SIM_DEFAULT_STREAM=per-thread. And device-to-device copies. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selftest.h"

#define MS 1000000ull

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One %smid launch of `blocks` blocks of 1,024 threads (two fit an SM) that spin spin_ns. */
static gcu_result spin(gcu_pfn_cuLaunchKernel launch, gcu_function fn, unsigned blocks,
                       unsigned long long spin_ns, CUstream s, gcu_deviceptr flags)
{
    void *params[] = {&flags, &spin_ns};
    return launch(fn, blocks, 1, 1, 1024, 1, 1, 0, s, params, NULL);
}

static void *proc(const char *name, int version, unsigned long long flags)
{
    void *fn = NULL;
    return get_proc(name, &fn, version, flags, NULL) == 0 ? fn : NULL;
}

/* Device-to-device copies take their bytes' time at GREENCTX_SIM_COPY_GBPS, as spinning
 * kernels take theirs, through both entry points and their per-thread variants. */
static void check_copies(void)
{
    enum { BYTES = 2000000 }; /* 20 ms at 0.1 GB/s */
    setenv("GREENCTX_SIM_COPY_GBPS", "0.1", 1);
    CUcontext primary, g16;
    CUgreenCtx g;
    h200_with_16_sms(&primary, &g, &g16);
    D.cuCtxSetCurrent(g16);
    gcu_deviceptr src = 0, dst = 0;
    unsigned got = 0;
    check(D.cuMemAlloc(&src, BYTES) == 0 && D.cuMemAlloc(&dst, BYTES) == 0 &&
              D.cuMemsetD32(src, 7, BYTES / 4) == 0,
          "two buffers for the copies");
    gcu_pfn_cuMemcpyAsync copy_ptsz = proc("cuMemcpyAsync", 4000, 2);
    gcu_pfn_cuMemcpyDtoDAsync dtod_ptsz = proc("cuMemcpyDtoDAsync", 3020, 2);
    double t0 = now_ms();
    check(D.cuMemcpyDtoDAsync(dst, src, BYTES, NULL) == 0 &&
              D.cuStreamQuery(NULL) == GCU_ERROR_NOT_READY && copy_ptsz && dtod_ptsz &&
              copy_ptsz(dst, src, BYTES, NULL) == 0 && dtod_ptsz(dst, src, BYTES, NULL) == 0 &&
              D.cuMemcpyAsync(dst, src, BYTES, NULL) == 0,
          "copies go, and their stream is not ready while they run");
    int synced = D.cuCtxSynchronize() == 0;
    double took = now_ms() - t0;
    check(synced && took >= 79 && D.cuMemcpyDtoH(&got, dst + BYTES - 4, 4) == 0 && got == 7,
          "the wait ends after the four copies of 20 ms, which copied (%.1f ms, %u)", took, got);
    check(D.cuMemcpyAsync(dst + 4, src, BYTES, NULL) == GCU_ERROR_INVALID_VALUE,
          "a copy past its allocation is refused");
    D.cuMemFree(src);
    D.cuMemFree(dst);
    release_h200_with_16_sms(g);
    setenv("GREENCTX_SIM_COPY_GBPS", "fast", 1);
    configure("h200", "13000", NULL);
    check(config_error() && strstr(config_error(), "GREENCTX_SIM_COPY_GBPS=fast"),
          "a rate that is no number is refused, named: %s",
          config_error() ? config_error() : "(none)");
    unsetenv("GREENCTX_SIM_COPY_GBPS");
    configure("h200", "13000", NULL);
}

void check_waits(void)
{
    CUcontext primary, g16;
    CUgreenCtx g;
    h200_with_16_sms(&primary, &g, &g16);
    gcu_module mod = NULL;
    gcu_function fn = NULL;
    gcu_deviceptr flags = 0;
    CUstream s = NULL;
    CUevent e = NULL;
    D.cuCtxSetCurrent(g16);
    check(D.cuModuleLoadData(&mod, ".visible .entry greenctx_smid(\n") == 0 &&
              D.cuModuleGetFunction(&fn, mod, "greenctx_smid") == 0 &&
              D.cuMemAlloc(&flags, 4096) == 0 && D.cuStreamCreate(&s, 0) == 0 &&
              D.cuEventCreate(&e, 0) == 0,
          "the %%smid kernel, a stream and an event in a green context of 16 SMs");
    /* 64 blocks on 16 SMs x 2: two waves of 30 ms; then a 30 ms kernel after it. */
    double t0 = now_ms();
    check(spin(D.cuLaunchKernel, fn, 64, 30 * MS, s, flags) == 0 &&
              spin(D.cuLaunchKernel, fn, 1, 30 * MS, s, flags) == 0 && D.cuEventRecord(e, s) == 0,
          "kernels that spin launch");
    check(D.cuEventQuery(e) == GCU_ERROR_NOT_READY && D.cuStreamQuery(s) == GCU_ERROR_NOT_READY,
          "their event and stream are not ready while they run");
    int synced = D.cuEventSynchronize(e) == 0;
    double took = now_ms() - t0;
    check(synced && took >= 89 && D.cuEventQuery(e) == 0 && D.cuStreamQuery(s) == 0,
          "the event's wait ends with them, after two waves and a kernel (%.1f ms)", took);
    t0 = now_ms();
    synced = spin(D.cuLaunchKernel, fn, 1, 50 * MS, NULL, flags) == 0 &&
             spin(D.cuLaunchKernel, fn, 1, 50 * MS, s, flags) == 0 && D.cuCtxSynchronize() == 0;
    took = now_ms() - t0;
    check(synced && took >= 49 && took < 95,
          "cuCtxSynchronize waits for every stream of the context, which run side by side "
          "(%.1f ms)",
          took);

    gcu_pfn_cuLaunchKernel per_thread = proc("cuLaunchKernel", 4000, 2);
    check(per_thread && per_thread != D.cuLaunchKernel &&
              proc("cuLaunchKernel", 4000, 1) == (void *)D.cuLaunchKernel &&
              proc("cuLaunchKernel", 4000, 0) == (void *)D.cuLaunchKernel &&
              proc("cuCtxSynchronize", 2000, 2) == (void *)D.cuCtxSynchronize,
          "the per-thread flag gives cuLaunchKernel_ptsz, flags 0 and 1 the legacy one, and "
          "a call of no stream is one function");
    long legacy = default_stream_calls("cuLaunchKernel", (CUstream)1);
    check(spin(per_thread, fn, 1, 0, NULL, flags) == 0 &&
              default_stream_calls("cuLaunchKernel", (CUstream)2) == 1 &&
              default_stream_calls("cuLaunchKernel", (CUstream)1) == legacy && legacy == 1 &&
              default_stream_calls("cuStreamQuery", (CUstream)1) == -1,
          "a NULL stream through it is the per-thread default stream");
    D.cuEventDestroy(e);
    D.cuStreamDestroy(s);
    D.cuModuleUnload(mod);
    D.cuMemFree(flags);
    release_h200_with_16_sms(g);

    gcu_pfn_cuLaunchKernel legacy_launch = D.cuLaunchKernel;
    setenv("GREENCTX_SIM_DEFAULT_STREAM", "per-thread", 1);
    configure("h200", "13000", NULL);
    check(proc("cuLaunchKernel", 4000, 0) == (void *)per_thread &&
              proc("cuLaunchKernel", 4000, 1) == (void *)legacy_launch,
          "under GREENCTX_SIM_DEFAULT_STREAM=per-thread flags 0 give the per-thread one");
    setenv("GREENCTX_SIM_DEFAULT_STREAM", "ptds", 1);
    configure("h200", "13000", NULL);
    check(config_error() && strstr(config_error(), "GREENCTX_SIM_DEFAULT_STREAM=ptds"),
          "another value is refused, named: %s", config_error() ? config_error() : "(none)");
    unsetenv("GREENCTX_SIM_DEFAULT_STREAM");
    configure("h200", "13000", NULL);
    check_copies();
}

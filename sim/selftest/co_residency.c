/* Co-residency: the blocks an SM holds, cooperative launches refused past the context's SMs
 * as the driver refuses them, and what gctxsim_last_launch tells of a persistent grid. */
#include "selftest.h"

#define KB 1024u

static int occupancy(gcu_function fn, int threads, size_t shared)
{
    int n = -1;
    gcu_result r = D.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, shared);
    return r ? -(int)r : n;
}

/* A launch of `blocks` blocks on stream s: its result, the last launch's record in *blocks_out
 * and *resident. */
static gcu_result launch(int cooperative, gcu_function fn, unsigned blocks, unsigned threads,
                         unsigned shared, CUstream s, gcu_deviceptr flags)
{
    unsigned long long spin = 0;
    void *params[] = {&flags, &spin};
    return cooperative
               ? D.cuLaunchCooperativeKernel(fn, blocks, 1, 1, threads, 1, 1, shared, s, params)
               : D.cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, shared, s, params, NULL);
}

void check_co_residency(void)
{
    CUcontext primary, g16;
    CUgreenCtx g;
    h200_with_16_sms(&primary, &g, &g16);
    unsigned long long blocks = 0, resident = 0;
    check(last_launch(&blocks, &resident) == -1, "no launch since the reset");
    const char *image = ".version 7.0\n.visible .entry greenctx_smid(\n";
    gcu_module mod = NULL, mod16 = NULL;
    gcu_function fn = NULL, fn16 = NULL;
    gcu_deviceptr flags = 0;
    CUstream s16 = NULL;
    check(D.cuModuleLoadData(&mod, image) == 0 &&
              D.cuModuleGetFunction(&fn, mod, "greenctx_smid") == 0 &&
              D.cuMemAlloc(&flags, 4096) == 0,
          "the %%smid kernel loads in the primary context");
    check(occupancy(fn, 128, 200 * KB) == 1 && occupancy(fn, 256, 0) == 8 &&
              occupancy(fn, 1024, 0) == 2 && occupancy(fn, 32, 0) == 32 &&
              occupancy(fn, 128, 100 * KB) == 2 && occupancy(fn, 128, 228 * KB) == 0,
          "blocks per SM by shared memory (228 KB), threads (2,048) and blocks (32): %d %d %d "
          "%d %d %d",
          occupancy(fn, 128, 200 * KB), occupancy(fn, 256, 0), occupancy(fn, 1024, 0),
          occupancy(fn, 32, 0), occupancy(fn, 128, 100 * KB), occupancy(fn, 128, 228 * KB));
    check(occupancy(fn, 1025, 0) == -GCU_ERROR_INVALID_VALUE &&
              occupancy(NULL, 128, 0) == -GCU_ERROR_INVALID_HANDLE,
          "occupancy of more than 1,024 threads or of no function is refused");
    check(launch(1, fn, 132, 128, 200 * KB, NULL, flags) == 0 &&
              launch(1, fn, 133, 128, 200 * KB, NULL, flags) ==
                  GCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
          "a cooperative launch holds 132 x 1 blocks of 200 KB on the whole device, not 133");
    check(last_launch(&blocks, &resident) == 0 && blocks == 132 && resident == 132,
          "a refused launch is not the last launch (%llu of %llu)", blocks, resident);
    check(launch(0, fn, 1, 128, 228 * KB, NULL, flags) == GCU_ERROR_INVALID_VALUE,
          "a block whose shared memory no SM holds is refused");

    D.cuCtxSetCurrent(g16);
    check(D.cuModuleLoadData(&mod16, image) == 0 &&
              D.cuModuleGetFunction(&fn16, mod16, "greenctx_smid") == 0 &&
              D.cuStreamCreate(&s16, 0) == 0,
          "and in a green context of 16 SMs");
    check(occupancy(fn16, 128, 200 * KB) == 1, "occupancy is per SM, whatever the context");
    check(launch(1, fn16, 16, 128, 200 * KB, s16, flags) == 0 &&
              launch(1, fn16, 17, 128, 200 * KB, s16, flags) ==
                  GCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE &&
              launch(1, fn16, 128, 256, 0, s16, flags) == 0 &&
              launch(1, fn16, 129, 256, 0, s16, flags) == GCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
          "on 16 SMs a cooperative launch holds 16 x occupancy blocks, not one more");
    check(launch(1, fn16, 132, 128, 200 * KB, s16, flags) ==
              GCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
          "a grid sized by the whole device is refused on 16 SMs");
    check(launch(0, fn16, 132, 128, 200 * KB, s16, flags) == 0 &&
              last_launch(&blocks, &resident) == 0 && blocks == 132 && resident == 16,
          "an ordinary launch of it runs, 16 of its 132 blocks resident at once (%llu of %llu): "
          "a grid barrier would never complete",
          blocks, resident);
    check(launch(0, fn16, 16, 128, 200 * KB, s16, flags) == 0 &&
              last_launch(&blocks, &resident) == 0 && blocks == 16 && resident == 16,
          "a grid sized by the partition is wholly resident");

    D.cuStreamDestroy(s16);
    D.cuModuleUnload(mod16);
    D.cuCtxSetCurrent(primary);
    D.cuModuleUnload(mod);
    D.cuMemFree(flags);
    release_h200_with_16_sms(g);
}

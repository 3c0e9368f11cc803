/*
 * The per-thread default stream's entry points (cuda.h's _ptsz names), which cuGetProcAddress
 * hands out for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: NULL is the calling thread's
 * per-thread default stream (CU_STREAM_PER_THREAD) instead of the legacy one. Only the entry
 * points with a stream that programs under `greenctx run` wait or launch on; the others are
 * the same function in both modes, as they are for the driver.
 */
#include <string.h>

#include "sim_internal.h"

static CUstream per_thread(CUstream s) { return s ? s : SIM_STREAM_PER_THREAD; }

static gcu_result launch_ptsz(gcu_function fn, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                              CUstream stream, void **params, void **extra)
{
    return sim_cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shmem, per_thread(stream), params,
                              extra);
}

static gcu_result record_ptsz(CUevent event, CUstream stream)
{
    return sim_cuEventRecord(event, per_thread(stream));
}

static gcu_result sync_ptsz(CUstream stream) { return sim_cuStreamSynchronize(per_thread(stream)); }

static gcu_result query_ptsz(CUstream stream) { return sim_cuStreamQuery(per_thread(stream)); }

static gcu_result copy_ptsz(gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream)
{
    return sim_cuMemcpyAsync(dst, src, bytes, per_thread(stream));
}

static gcu_result dtod_ptsz(gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream)
{
    return sim_cuMemcpyDtoDAsync(dst, src, bytes, per_thread(stream));
}

void *sim_per_thread_proc(const char *symbol)
{
    static const struct {
        const char *name;
        void *fn;
    } procs[] = {{"cuLaunchKernel", (void *)launch_ptsz},
                 {"cuEventRecord", (void *)record_ptsz},
                 {"cuStreamSynchronize", (void *)sync_ptsz},
                 {"cuStreamQuery", (void *)query_ptsz},
                 {"cuMemcpyAsync", (void *)copy_ptsz},
                 {"cuMemcpyDtoDAsync", (void *)dtod_ptsz}};
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (strcmp(procs[i].name, symbol) == 0)
            return procs[i].fn;
    return NULL;
}

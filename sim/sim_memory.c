/* Device memory, simulated with host memory so that code which allocates, fills and reads
 * back buffers runs unchanged. Pointers are checked against the live allocations.
 *
 * cuMemGetInfo also counts what green contexts cost, as measured on the H200 (driver 13.0):
 * about 5 MiB per live green context, and 4 MiB per destroyed one, kept by the device's
 * primary context until cuDevicePrimaryCtxReset (sim_contexts.c counts both). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

typedef struct sim_alloc {
    unsigned char *base;
    size_t bytes;
} sim_alloc;

static sim_alloc *allocs;
static size_t nallocs, cap_allocs;

enum { SIM_MIB = 1 << 20, SIM_LIVE_GREEN_BYTES = 5 * SIM_MIB, SIM_DESTROYED_GREEN_BYTES = 4 * SIM_MIB };

void sim_memory_reset(void)
{
    for (size_t i = 0; i < nallocs; i++)
        free(allocs[i].base);
    free(allocs);
    allocs = NULL;
    nallocs = cap_allocs = 0;
}

int sim_memory_live(void) { return (int)nallocs; }

unsigned char *sim_memory_range(gcu_deviceptr ptr, size_t bytes)
{
    for (size_t i = 0; i < nallocs; i++) {
        uintptr_t base = (uintptr_t)allocs[i].base;
        if (ptr >= base && ptr - base <= allocs[i].bytes && bytes <= allocs[i].bytes - (ptr - base))
            return allocs[i].base + (ptr - base);
    }
    return NULL;
}

gcu_result sim_cuMemAlloc(gcu_deviceptr *ptr, size_t bytes)
{
    SIM_BEGIN_ARGS(cuMemAlloc, !ptr || bytes == 0);
    SIM_CTX(c, sim_ctx_current(&c));
    if (nallocs == cap_allocs) {
        size_t cap = cap_allocs ? cap_allocs * 2 : 16;
        sim_alloc *grown = realloc(allocs, cap * sizeof *grown);
        SIM_FAIL_IF(!grown, GCU_ERROR_OUT_OF_MEMORY);
        allocs = grown;
        cap_allocs = cap;
    }
    unsigned char *mem = malloc(bytes);
    SIM_FAIL_IF(!mem, GCU_ERROR_OUT_OF_MEMORY);
    allocs[nallocs++] = (sim_alloc){mem, bytes};
    *ptr = (gcu_deviceptr)(uintptr_t)mem;
    SIM_END();
}

gcu_result sim_cuMemFree(gcu_deviceptr ptr)
{
    SIM_BEGIN(cuMemFree);
    if (ptr == 0)
        goto out;
    size_t i = 0;
    while (i < nallocs && (uintptr_t)allocs[i].base != ptr)
        i++;
    SIM_FAIL_IF(i == nallocs, GCU_ERROR_INVALID_VALUE);
    free(allocs[i].base);
    allocs[i] = allocs[--nallocs];
    SIM_END();
}

gcu_result sim_cuMemcpyDtoH(void *dst, gcu_deviceptr src, size_t bytes)
{
    SIM_BEGIN(cuMemcpyDtoH);
    const unsigned char *from = sim_memory_range(src, bytes);
    SIM_FAIL_IF(!from || (!dst && bytes), GCU_ERROR_INVALID_VALUE);
    if (bytes)
        memcpy(dst, from, bytes);
    SIM_END();
}

/* cuMemcpyAsync and cuMemcpyDtoDAsync (sym), device to device: copied at once, but taking its
 * real time on the stream (GREENCTX_SIM_COPY_GBPS) as a spinning kernel does, so that waits
 * and a pacer see it run. */
static gcu_result copy_async(int sym, gcu_deviceptr dst, gcu_deviceptr src, size_t bytes,
                             CUstream stream)
{
    SIM_BEGIN_SYM(sym, true);
    unsigned char *to = sim_memory_range(dst, bytes);
    const unsigned char *from = sim_memory_range(src, bytes);
    SIM_FAIL_IF(!to || !from, GCU_ERROR_INVALID_VALUE);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    memmove(to, from, bytes);
    sim_stream_run(stream, &c, (long long)((double)bytes / sim.copy_bytes_per_ns));
    SIM_END();
}

gcu_result sim_cuMemcpyAsync(gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream)
{
    return copy_async(SIM_SYM_cuMemcpyAsync, dst, src, bytes, stream);
}

gcu_result sim_cuMemcpyDtoDAsync(gcu_deviceptr dst, gcu_deviceptr src, size_t bytes,
                                 CUstream stream)
{
    return copy_async(SIM_SYM_cuMemcpyDtoDAsync, dst, src, bytes, stream);
}

gcu_result sim_cuMemsetD32(gcu_deviceptr dst, unsigned int value, size_t count)
{
    SIM_BEGIN(cuMemsetD32);
    unsigned char *to = count <= SIZE_MAX / 4 && dst % 4 == 0 ? sim_memory_range(dst, count * 4) : NULL;
    SIM_FAIL_IF(!to, GCU_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < count; i++)
        memcpy(to + i * 4, &value, 4);
    SIM_END();
}

/* Allocations are not tied to a device in this model: they count on the current one. */
gcu_result sim_cuMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    SIM_BEGIN_ARGS(cuMemGetInfo, !free_bytes || !total_bytes);
    SIM_CTX(c, sim_ctx_current(&c));
    size_t total = (size_t)sim.dev[c.dev]->memory_mib * SIM_MIB;
    size_t live, destroyed;
    sim_greens_count(c.dev, &live, &destroyed);
    size_t used = live * SIM_LIVE_GREEN_BYTES + destroyed * SIM_DESTROYED_GREEN_BYTES;
    for (size_t i = 0; i < nallocs; i++)
        used += allocs[i].bytes;
    *total_bytes = total;
    *free_bytes = used < total ? total - used : 0;
    SIM_END();
}

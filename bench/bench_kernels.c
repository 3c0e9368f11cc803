/* Loading and launching the benchmark kernels, checking what they computed, and the lanes
 * they run in (a context, a stream, the kernels and timing events, made and torn down
 * together). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"

int bench_module_load(const bench_env *env, CUcontext ctx, bench_module *mod, int *not_supported)
{
    memset(mod, 0, sizeof *mod);
    if (not_supported)
        *not_supported = 0;
    if (bench_push(env, ctx))
        return -1;
    const raw_driver *drv = env->drv;
    gcu_result r = drv->cuModuleLoadData(&mod->module, bench_ptx);
    int rc = 0;
    if (r == GCU_ERROR_NOT_SUPPORTED && not_supported) {
        *not_supported = 1;
        mod->module = NULL;
        rc = -1;
    } else if (bench_cu(r, "cuModuleLoadData of the benchmark kernels (PTX)")) {
        mod->module = NULL;
        rc = -1;
    } else {
        static const char *const names[] = {"gc_fill", "gc_fma", "gc_sum", "gc_copy",
                                            "gc_empty"};
        gcu_function *slots[] = {&mod->fill, &mod->fma, &mod->sum, &mod->copy, &mod->empty};
        for (size_t i = 0; i < sizeof names / sizeof names[0] && rc == 0; i++)
            rc = bench_cu(drv->cuModuleGetFunction(slots[i], mod->module, names[i]), names[i]);
    }
    bench_pop(env);
    if (rc && mod->module)
        bench_module_unload(env, ctx, mod);
    return rc;
}

void bench_module_unload(const bench_env *env, CUcontext ctx, bench_module *mod)
{
    if (mod->module && bench_push(env, ctx) == 0) {
        env->drv->cuModuleUnload(mod->module);
        bench_pop(env);
    }
    memset(mod, 0, sizeof *mod);
}

static int launch(const bench_env *env, gcu_function fn, unsigned grid, CUstream stream,
                  void **params, const char *what)
{
    return bench_cu(env->drv->cuLaunchKernel(fn, grid, 1, 1, BENCH_BLOCK, 1, 1, 0, stream, params,
                                             NULL),
                    what);
}

int bench_fill(const bench_env *env, const bench_module *mod, CUstream stream, gcu_deviceptr buf,
               unsigned long long words, unsigned seed)
{
    void *params[] = {&buf, &words, &seed};
    return launch(env, mod->fill, env->sm_count * BENCH_FULL_BLOCKS_SM, stream, params,
                  "launching gc_fill");
}

int bench_fma(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
              gcu_deviceptr out, unsigned chunks, unsigned iters, gcu_deviceptr stamps)
{
    void *params[] = {&out, &chunks, &iters, &stamps};
    return launch(env, mod->fma, grid, stream, params, "launching gc_fma");
}

int bench_sum(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
              gcu_deviceptr src, unsigned long long vecs, gcu_deviceptr partial,
              gcu_deviceptr stamps)
{
    void *params[] = {&src, &vecs, &partial, &stamps};
    return launch(env, mod->sum, grid, stream, params, "launching gc_sum");
}

int bench_copy(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
               gcu_deviceptr src, gcu_deviceptr dst, unsigned long long vecs)
{
    void *params[] = {&src, &dst, &vecs};
    return launch(env, mod->copy, grid, stream, params, "launching gc_copy");
}

unsigned long long bench_stamps_start(const unsigned long long slot[2]) { return ~slot[0]; }
unsigned long long bench_stamps_end(const unsigned long long slot[2]) { return slot[1]; }

/* ---- host mirrors ---- */

static unsigned pattern(unsigned long long i, unsigned seed)
{
    unsigned x = (unsigned)i * 2654435761u ^ (unsigned)(i >> 32) ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return x | 1u;
}

/* The device's chain, step for step: fmaf rounds once, as fma.rn.f32 does, so the values
 * must agree to the bit. */
static float fma_expected(unsigned gid, unsigned long long steps)
{
    const float a = 0.99993896484375f, b = 0.000244140625f;
    float x0 = (float)(gid & 1023u) * 0.0009765625f;
    float x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
    for (unsigned long long i = 0; i < steps; i++) {
        x0 = fmaf(x0, a, b);
        x1 = fmaf(x1, a, b);
        x2 = fmaf(x2, a, b);
        x3 = fmaf(x3, a, b);
    }
    return (x0 + x1) + (x2 + x3);
}

int bench_check_fma(const bench_env *env, gcu_deviceptr out, unsigned grid, unsigned chunks,
                    unsigned iters, const char *what)
{
    const unsigned threads = grid * BENCH_BLOCK;
    const unsigned picks[] = {0, threads - 1, threads / 2 + 17, threads / 3 + 101, 1029};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        unsigned gid = picks[i] % threads, block = gid / BENCH_BLOCK;
        unsigned long long my_chunks = block < chunks ? (chunks - block + grid - 1) / grid : 0;
        float want = fma_expected(gid, my_chunks * iters), got;
        if (bench_read(env, &got, out + (gcu_deviceptr)gid * sizeof(float), sizeof got,
                       "cuMemcpyDtoH (checking results)"))
            return -1;
        if (memcmp(&got, &want, sizeof got) != 0) {
            fprintf(stderr, "greenctx bench: %s: wrong result: thread %u computed %.9g, the host "
                            "%.9g\n", what, gid, got, want);
            return -1;
        }
    }
    return 0;
}

int bench_check_sum(const bench_env *env, gcu_deviceptr partial, unsigned grid,
                    unsigned long long first_word, unsigned long long vecs, unsigned seed,
                    const char *what)
{
    size_t n = (size_t)grid * BENCH_SUM_WARPS;
    unsigned *got = malloc(n * sizeof *got);
    if (!got) {
        fprintf(stderr, "greenctx bench: out of memory checking %s\n", what);
        return -1;
    }
    int rc = bench_read(env, got, partial, n * sizeof *got, "cuMemcpyDtoH (checking results)");
    unsigned device_sum = 0, host_sum = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        device_sum += got[i];
    free(got);
    for (unsigned long long w = 0; rc == 0 && w < vecs * 4; w++)
        host_sum += pattern(first_word + w, seed);
    if (rc == 0 && device_sum != host_sum) {
        fprintf(stderr, "greenctx bench: %s: wrong result: the kernels' sum is %u, the host's %u\n",
                what, device_sum, host_sum);
        rc = -1;
    }
    return rc;
}

int bench_check_copy(const bench_env *env, gcu_deviceptr dst, unsigned long long words,
                     unsigned seed, const char *what)
{
    const unsigned long long picks[] = {0, words - 1, words / 2 + 3, words / 3 + 77, 4099};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        unsigned long long w = picks[i] % words;
        unsigned got;
        if (bench_read(env, &got, dst + w * sizeof got, sizeof got,
                       "cuMemcpyDtoH (checking results)"))
            return -1;
        if (got != pattern(w, seed)) {
            fprintf(stderr, "greenctx bench: %s: wrong result: word %llu is %#x, expected %#x\n",
                    what, w, got, pattern(w, seed));
            return -1;
        }
    }
    return 0;
}

/* ---- lanes ---- */

static int priority_value(const bench_env *env, int priority, int *value)
{
    int least = 0, greatest = 0;
    *value = 0;
    if (priority == BENCH_PRIORITY_NORMAL)
        return 0;
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuCtxGetStreamPriorityRange(&least, &greatest),
                      "cuCtxGetStreamPriorityRange");
    bench_pop(env);
    *value = priority == BENCH_PRIORITY_HIGH ? greatest : least;
    return rc;
}

int bench_lane_open(const bench_env *env, gctx_partition *partition, int priority,
                    bench_lane *lane)
{
    gctx_stream_options options = GCTX_STREAM_OPTIONS_INIT;
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    memset(lane, 0, sizeof *lane);
    lane->ctx = env->primary;
    lane->sms = env->sm_count;
    int rc = priority_value(env, priority, &options.priority);
    if (!rc && !partition && !(rc = bench_push(env, env->primary))) {
        rc = bench_cu(env->drv->cuStreamCreateWithPriority(&lane->stream, GCU_STREAM_NON_BLOCKING,
                                                           options.priority),
                      "cuStreamCreateWithPriority");
        bench_pop(env);
    }
    if (!rc && partition) {
        rc = bench_gctx(gctx_context_create(partition, NULL, &lane->green), "a green context") ||
             bench_gctx(gctx_stream_create(lane->green, &options, &lane->gstream),
                        "a green context's stream") ||
             bench_gctx(gctx_context_get_info(lane->green, &info), "a green context's facts");
        if (!rc) {
            lane->ctx = gctx_context_cu_context(lane->green);
            lane->stream = gctx_stream_handle(lane->gstream);
            lane->sms = info.sm_count;
        }
    }
    /* Kernels (where the driver runs any) and events, in the lane's context. */
    if (!rc && env->kernels)
        rc = bench_module_load(env, lane->ctx, &lane->mod, NULL);
    if (!rc && !(rc = bench_push(env, lane->ctx))) {
        rc = bench_cu(env->drv->cuEventCreate(&lane->start, GCU_EVENT_DEFAULT), "cuEventCreate") ||
             bench_cu(env->drv->cuEventCreate(&lane->end, GCU_EVENT_DEFAULT), "cuEventCreate");
        bench_pop(env);
    }
    if (rc)
        bench_lane_close(env, lane);
    return rc ? -1 : 0;
}

void bench_lane_close(const bench_env *env, bench_lane *lane)
{
    const raw_driver *drv = env->drv;
    if (lane->ctx && bench_push(env, lane->ctx) == 0) {
        if (lane->stream)
            drv->cuStreamSynchronize(lane->stream);
        if (lane->start)
            drv->cuEventDestroy(lane->start);
        if (lane->end)
            drv->cuEventDestroy(lane->end);
        if (!lane->green && lane->stream)
            drv->cuStreamDestroy(lane->stream);
        bench_pop(env);
    }
    bench_module_unload(env, lane->ctx, &lane->mod);
    gctx_stream_release(lane->gstream);
    gctx_context_release(lane->green);
    memset(lane, 0, sizeof *lane);
}

int bench_lane_mark(const bench_env *env, const bench_lane *lane, CUevent event)
{
    return bench_cu(env->drv->cuEventRecord(event, lane->stream), "cuEventRecord");
}

int bench_lane_elapsed(const bench_env *env, const bench_lane *lane, double *ms)
{
    float elapsed = 0;
    if (bench_cu(env->drv->cuEventSynchronize(lane->end), "waiting for benchmark work") ||
        bench_cu(env->drv->cuEventElapsedTime(&elapsed, lane->start, lane->end),
                 "cuEventElapsedTime"))
        return -1;
    *ms = elapsed;
    return 0;
}

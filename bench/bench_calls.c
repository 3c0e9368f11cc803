/* The small helpers every benchmark uses: checked driver and library calls, the primary
 * context's memory, clocks. They call no kernel code, so bench_kernels.c can use them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

int bench_cu(gcu_result r, const char *what)
{
    if (r == GCU_SUCCESS)
        return 0;
    fprintf(stderr, "greenctx bench: %s: %s (%d)\n", what, raw_result_name(r), r);
    return -1;
}

int bench_gctx(gctx_status s, const char *what)
{
    if (s == GCTX_SUCCESS)
        return 0;
    const char *message = gctx_last_error();
    fprintf(stderr, "greenctx bench: %s: %s\n", what,
            message && *message ? message : gctx_status_string(s));
    return -1;
}

int bench_push(const bench_env *env, CUcontext ctx)
{
    return bench_cu(env->drv->cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
}

void bench_pop(const bench_env *env)
{
    CUcontext popped;
    env->drv->cuCtxPopCurrent(&popped);
}

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

long long bench_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void bench_spin_us(double us)
{
    double until = bench_now_us() + us;
    while (bench_now_us() < until) {
    }
}

unsigned long long bench_random(unsigned long long *state)
{
    unsigned long long x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

int bench_alloc(const bench_env *env, gcu_deviceptr *ptr, size_t bytes, const char *what)
{
    *ptr = 0;
    if (bench_push(env, env->primary))
        return -1;
    gcu_result r = env->drv->cuMemAlloc(ptr, bytes);
    bench_pop(env);
    if (r != GCU_SUCCESS) {
        *ptr = 0;
        fprintf(stderr, "greenctx bench: cuMemAlloc of %zu MiB for %s: %s\n", bytes >> 20, what,
                raw_result_name(r));
        return -1;
    }
    return 0;
}

void *bench_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        fprintf(stderr, "greenctx bench: out of memory\n");
    return p;
}

int bench_read(const bench_env *env, void *dst, gcu_deviceptr src, size_t bytes, const char *what)
{
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuMemcpyDtoH(dst, src, bytes), what);
    bench_pop(env);
    return rc;
}

void bench_free(const bench_env *env, gcu_deviceptr *ptr)
{
    if (*ptr && bench_push(env, env->primary) == 0) {
        env->drv->cuMemFree(*ptr);
        bench_pop(env);
    }
    *ptr = 0;
}

void bench_pair_release(bench_pair *pair)
{
    for (int i = 0; i < 2; i++) {
        gctx_stream_release(pair->stream[i]);
        gctx_context_release(pair->ctx[i]);
        gctx_partition_release(pair->part[i]);
    }
    memset(pair, 0, sizeof *pair);
}

int bench_zero(const bench_env *env, gcu_deviceptr ptr, size_t bytes)
{
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuMemsetD32(ptr, 0, bytes / 4), "cuMemsetD32");
    /* The memset runs on the legacy stream, which our non-blocking streams don't wait for. */
    if (rc == 0)
        rc = bench_cu(env->drv->cuStreamSynchronize(NULL), "cuStreamSynchronize after a memset");
    bench_pop(env);
    return rc;
}

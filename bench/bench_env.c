/* The device a benchmark runs on, and the small helpers every benchmark uses. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_kernels.h"

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

int bench_env_open(bench_env *env, int device)
{
    env->device = device;
    if (!(env->drv = bench_driver_load()))
        return -1;
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    if (bench_gctx(gctx_device_get_info(device, &info), "reading the device") ||
        bench_gctx(gctx_driver_version(&env->driver_version), "reading the driver version") ||
        bench_cu(env->drv->cuDeviceGet(&env->cu_device, device), "cuDeviceGet"))
        return -1;
    snprintf(env->gpu_name, sizeof env->gpu_name, "%s", info.name);
    env->sm_count = info.sm_count;
    if (bench_cu(env->drv->cuDevicePrimaryCtxRetain(&env->primary, env->cu_device),
                 "cuDevicePrimaryCtxRetain")) {
        env->primary = NULL;
        return -1;
    }
    if (bench_gctx(gctx_partition_from_device(device, &env->whole), "the device's partition"))
        return -1;
    bench_module probe;
    int not_supported = 0;
    if (bench_module_load(env, env->primary, &probe, &not_supported) == 0) {
        env->kernels = 1;
        bench_module_unload(env, env->primary, &probe);
    } else if (!not_supported) {
        return -1;
    }
    if (!env->kernels)
        env->simulated = 1;
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(env->date, sizeof env->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return 0;
}

void bench_env_close(bench_env *env)
{
    gctx_partition_release(env->whole);
    env->whole = NULL;
    if (env->primary)
        env->drv->cuDevicePrimaryCtxRelease(env->cu_device);
    env->primary = NULL;
}

void bench_json_meta(json_writer *w, const bench_env *env)
{
    char version[16];
    json_object(w, "meta");
    json_string(w, "gpu", env->gpu_name);
    json_int(w, "device", env->device);
    json_uint(w, "sm_count", env->sm_count);
    json_int(w, "driver_version", env->driver_version);
    json_string(w, "driver",
                greenctx_format_driver_version(env->driver_version, version, sizeof version));
    json_string(w, "date", env->date);
    json_bool(w, "simulated", env->simulated);
    json_bool(w, "quick", env->opt.quick);
    json_string(w, "command", env->command);
    json_close(w);
}

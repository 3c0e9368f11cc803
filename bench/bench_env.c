/* The device a benchmark runs on: its facts, its primary context, whether kernels run. */
#include <stdio.h>
#include <time.h>

#include "bench_kernels.h"
#include "numbers.h"

int bench_env_open(bench_env *env, int device)
{
    char why[1024];
    env->device = device;
    /* The raw driver table, with green contexts (drivers 12.4+). */
    if (!gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        if (gctx_init() == GCTX_SUCCESS)
            snprintf(why, sizeof why, "green contexts are not available: %s",
                     gctx_feature_reason(GCTX_FEATURE_GREEN_CONTEXTS));
        else
            snprintf(why, sizeof why, "%s", gctx_last_error());
    } else {
        env->drv = raw_driver_load(why, sizeof why);
    }
    if (!env->drv) {
        fprintf(stderr, "greenctx bench: loading the driver: %s\n", why);
        return -1;
    }
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

/* The wrapped driver calls: exported under the driver's names (-lcuda) and handed out by the
 * wrapped cuGetProcAddress and dlsym. Everything else goes to the driver untouched, so
 * launches cost what they did (a guarded program's aside: run_pace.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run_preload.h"

enum { CU_ERROR_NOT_PERMITTED = 800, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
       CU_DEV_RESOURCE_TYPE_SM = 1 };

run_counters run_count;

static _Thread_local int thread_seen; /* this thread is counted in run_count.threads_seen */

/* Every wrapper starts here: the confinement made, the calling thread counted. */
static void enter(void)
{
    run_setup();
    if (!thread_seen) {
        thread_seen = 1;
        atomic_fetch_add(&run_count.threads_seen, 1);
    }
}

/* Once per `flag`: "greenctx run: MESSAGE" on stderr (refused calls). */
static void warn_once(atomic_int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_once(atomic_int *flag, const char *fmt, ...)
{
    if (atomic_exchange(flag, 1))
        return;
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    fprintf(stderr, "greenctx run: %s\n", message);
}

static run_device *device_of_cu_device(cu_device dev)
{
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (run.devices[i].cu_device == dev)
            return &run.devices[i];
    return NULL;
}

static cu_result refuse_context(CUcontext ctx, const char *call)
{
    static atomic_int warned;
    atomic_fetch_add(&run_count.refused_context, 1);
    warn_once(&warned,
              "%s of context %p refused (CUDA_ERROR_NOT_PERMITTED): it is no confined "
              "device's primary context, so its work would run outside the partition",
              call, (void *)ctx);
    return CU_ERROR_NOT_PERMITTED;
}

/* What binding `ctx` binds: a device's green context for its primary one, others as they are. */
static cu_result bind(CUcontext ctx, int push)
{
    enter();
    cu_result (*real)(CUcontext) = push ? run.drv.push : run.drv.set_current;
    if (!ctx) {
        atomic_fetch_add(&run_count.binds_passed, 1);
        return real(ctx);
    }
    run_device *d = run_device_of_context(ctx);
    if (!d)
        return refuse_context(ctx, push ? "cuCtxPushCurrent" : "cuCtxSetCurrent");
    atomic_fetch_add(ctx == d->primary ? &run_count.binds_redirected : &run_count.binds_passed, 1);
    cu_result r = real(d->green);
    run_fault_seen(d, r);
    return r;
}

/* What reading the current context gives: the primary context where its green context is
 * current, since cudart compares it with the primary context it retained. */
static cu_result read_current(CUcontext *ctx, int pop)
{
    enter();
    cu_result r = (pop ? run.drv.pop : run.drv.get_current)(ctx);
    run_device *d = r == CU_OK && ctx && *ctx ? run_device_of_context(*ctx) : NULL;
    if (d && *ctx == d->green) {
        *ctx = d->primary;
        atomic_fetch_add(&run_count.current_shown_primary, 1);
    }
    return r;
}

RUN_EXPORT cu_result cuCtxSetCurrent(CUcontext ctx) { return bind(ctx, 0); }
RUN_EXPORT cu_result cuCtxPushCurrent(CUcontext ctx) { return bind(ctx, 1); }
RUN_EXPORT cu_result cuCtxGetCurrent(CUcontext *ctx) { return read_current(ctx, 0); }
RUN_EXPORT cu_result cuCtxPopCurrent(CUcontext *ctx) { return read_current(ctx, 1); }

RUN_EXPORT cu_result cuDevicePrimaryCtxRetain(CUcontext *ctx, cu_device dev)
{
    enter();
    run_device *d = device_of_cu_device(dev);
    if (!d) {
        static atomic_int warned;
        atomic_fetch_add(&run_count.refused_device, 1);
        warn_once(&warned,
                  "device %d is not confined (%s=%s), so the program may not use it: its "
                  "primary context was refused (CUDA_ERROR_NOT_PERMITTED)",
                  dev, GREENCTX_RUN_SMS, run_cfg.sms);
        return CU_ERROR_NOT_PERMITTED;
    }
    cu_result r = run.drv.retain(ctx, dev);
    if (r == CU_OK)
        atomic_fetch_add(&run_count.retains, 1);
    run_fault_seen(d, r);
    return r;
}

RUN_EXPORT cu_result cuDevicePrimaryCtxRelease(cu_device dev)
{
    enter();
    cu_result r = run.drv.release(dev);
    if (r == CU_OK)
        atomic_fetch_add(&run_count.releases, 1);
    return r;
}

/* Resetting the primary context would pull it from under the green one: the device is left. */
RUN_EXPORT cu_result cuDevicePrimaryCtxReset(cu_device dev)
{
    static atomic_int warned;
    enter();
    atomic_fetch_add(&run_count.refused_reset, 1);
    warn_once(&warned,
              "cuDevicePrimaryCtxReset of device %d (cudaDeviceReset) refused "
              "(CUDA_ERROR_NOT_PERMITTED): the program's green context lives on the primary "
              "context; the device is left as it is",
              dev);
    return CU_ERROR_NOT_PERMITTED;
}

static cu_result refuse_create(atomic_long *counter, const char *call)
{
    enter();
    atomic_fetch_add(counter, 1);
    /* One message per call refused: counters are distinct per call. */
    static atomic_int warned_ctx, warned_green;
    warn_once(counter == &run_count.refused_ctx_create ? &warned_ctx : &warned_green,
              "%s refused (CUDA_ERROR_NOT_PERMITTED): a context the program makes itself "
              "would not be confined; under greenctx run it uses the primary context (as "
              "cudart does)",
              call);
    return CU_ERROR_NOT_PERMITTED;
}

RUN_EXPORT cu_result cuCtxCreate_v2(CUcontext *ctx, unsigned flags, cu_device dev)
{
    (void)ctx, (void)flags, (void)dev;
    return refuse_create(&run_count.refused_ctx_create, "cuCtxCreate");
}

RUN_EXPORT cu_result cuCtxCreate_v3(CUcontext *ctx, void *affinity, int nb_params, unsigned flags,
                                    cu_device dev)
{
    (void)ctx, (void)affinity, (void)nb_params, (void)flags, (void)dev;
    return refuse_create(&run_count.refused_ctx_create, "cuCtxCreate");
}

RUN_EXPORT cu_result cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned flags, cu_device dev)
{
    (void)ctx, (void)params, (void)flags, (void)dev;
    return refuse_create(&run_count.refused_ctx_create, "cuCtxCreate");
}

RUN_EXPORT cu_result cuGreenCtxCreate(CUgreenCtx *ctx, void *desc, cu_device dev, unsigned flags)
{
    (void)ctx, (void)desc, (void)dev, (void)flags;
    return refuse_create(&run_count.refused_green_ctx_create, "cuGreenCtxCreate");
}

/* A device told its partition (not under GREENCTX_RUN_DEVICE_SMS=physical); counted. */
static run_device *partition_shown(run_device *d)
{
    if (!d || run_cfg.device_sms == RUN_DEVICE_SMS_PHYSICAL)
        return NULL;
    atomic_fetch_add(&run_count.sm_count_shown, 1);
    return d;
}

/* The SM count cudart, PyTorch, Triton and grid-sizing kernels read: the partition's. */
RUN_EXPORT cu_result cuDeviceGetAttribute(int *value, int attribute, cu_device dev)
{
    enter();
    cu_result r = run.drv.get_attribute(value, attribute, dev);
    run_device *d = r == CU_OK && attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
                        ? partition_shown(device_of_cu_device(dev))
                        : NULL;
    if (d)
        *value = (int)d->joined.plan.sm_count;
    return r;
}

/* A confined device's SM resource is its green context's (what a split of it may use). */
RUN_EXPORT cu_result cuDeviceGetDevResource(cu_device dev, void *resource, int type)
{
    enter();
    run_device *d = type == CU_DEV_RESOURCE_TYPE_SM ? partition_shown(device_of_cu_device(dev))
                                                    : NULL;
    return d ? run.drv.ctx_resource(d->green, resource, type)
             : run.drv.device_resource(dev, resource, type);
}

/* The primary context's SM resource is the green context's that runs its work. */
RUN_EXPORT cu_result cuCtxGetDevResource(CUcontext ctx, void *resource, int type)
{
    enter();
    run_device *d = ctx && type == CU_DEV_RESOURCE_TYPE_SM ? run_device_of_context(ctx) : NULL;
    if (d && ctx == d->primary && partition_shown(d))
        ctx = d->green;
    return run.drv.ctx_resource(ctx, resource, type);
}

/* What cuGetProcAddress hands the program, given what the driver returned. */
static void *hook_for_proc(const char *symbol, int version, unsigned long long flags,
                           void *driver_fn);

RUN_EXPORT cu_result cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                         unsigned long long flags, int *symbol_status)
{
    run_setup();
    cu_result r = run.drv.getproc(symbol, pfn, version, flags, symbol_status);
    if (r == CU_OK && symbol && pfn && *pfn)
        *pfn = hook_for_proc(symbol, version, flags, *pfn);
    return r;
}

/* The first cuGetProcAddress (11.3) had no symbol status. */
RUN_EXPORT cu_result cuGetProcAddress(const char *symbol, void **pfn, int version,
                                      unsigned long long flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

/* Older names of the same calls (cuda.h maps cuCtxPushCurrent to _v2 and so on). */
RUN_EXPORT cu_result cuCtxPushCurrent_v2(CUcontext ctx) __attribute__((alias("cuCtxPushCurrent")));
RUN_EXPORT cu_result cuCtxPopCurrent_v2(CUcontext *ctx) __attribute__((alias("cuCtxPopCurrent")));
RUN_EXPORT cu_result cuDevicePrimaryCtxRelease_v2(cu_device dev)
    __attribute__((alias("cuDevicePrimaryCtxRelease")));
RUN_EXPORT cu_result cuDevicePrimaryCtxReset_v2(cu_device dev)
    __attribute__((alias("cuDevicePrimaryCtxReset")));
RUN_EXPORT cu_result cuCtxCreate(CUcontext *ctx, unsigned flags, cu_device dev)
    __attribute__((alias("cuCtxCreate_v2")));

/* By exported name: what dlsym hands out (an older name is an alias of its call's function). */
#define HOOK(name) {#name, (void *)name}
static const struct {
    const char *name;
    void *fn;
} hooks[] = {
    HOOK(cuGetProcAddress), HOOK(cuGetProcAddress_v2), HOOK(cuCtxSetCurrent),
    HOOK(cuCtxGetCurrent), HOOK(cuCtxPushCurrent), HOOK(cuCtxPopCurrent),
    HOOK(cuCtxPushCurrent_v2), HOOK(cuCtxPopCurrent_v2), HOOK(cuDevicePrimaryCtxRetain),
    HOOK(cuDevicePrimaryCtxRelease), HOOK(cuDevicePrimaryCtxRelease_v2),
    HOOK(cuDevicePrimaryCtxReset), HOOK(cuDevicePrimaryCtxReset_v2), HOOK(cuCtxCreate),
    HOOK(cuCtxCreate_v2), HOOK(cuCtxCreate_v3), HOOK(cuCtxCreate_v4), HOOK(cuGreenCtxCreate),
    HOOK(cuDeviceGetAttribute), HOOK(cuDeviceGetDevResource), HOOK(cuCtxGetDevResource),
};
#undef HOOK

void *run_hook_for_symbol(const char *name)
{
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
        if (strcmp(hooks[i].name, name) == 0)
            return hooks[i].fn;
    return run_pace_hook_for_symbol(name);
}

static void *hook_for_proc(const char *symbol, int version, unsigned long long flags,
                           void *driver_fn)
{
    void *paced = run_pace_hook_for_proc(symbol, version, flags, driver_fn);
    if (paced)
        return paced;
    /* cuGetProcAddress takes base names; two of them changed their prototype with the ABI
     * version asked for. */
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        return version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    if (strcmp(symbol, "cuCtxCreate") == 0)
        return version >= 12050   ? (void *)cuCtxCreate_v4
               : version >= 11040 ? (void *)cuCtxCreate_v3
                                  : (void *)cuCtxCreate_v2;
    void *hook = strstr(symbol, "_v") ? NULL : run_hook_for_symbol(symbol);
    return hook ? hook : driver_fn;
}

/* The confinement: at the program's first CUDA lookup or call, every device it may use gets
 * a green context (greenctx's planner and splits, the request of GREENCTX_RUN_SMS), before the
 * program can bind anything. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run_preload.h"

run_state run;
_Thread_local int run_inside;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static atomic_int ready; /* set once setup() made the confinement, read by run_setup_done */

void run_die(const char *fmt, ...)
{
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    fprintf(stderr,
            "greenctx run: %s\ngreenctx run: the program was stopped so that it does not run "
            "unconfined (exit status %d)\n",
            message, GREENCTX_RUN_EXIT_NOT_CONFINED);
    _exit(GREENCTX_RUN_EXIT_NOT_CONFINED);
}

void run_warn_once(atomic_int *flag, const char *fmt, ...)
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

/* At `version`, or the driver's own when older: 12.0 gives the current prototype of every
 * call wrapped (the _v2 ones); the resources' calls came with 12.4. */
static void *entry_point(const char *name, int version)
{
    void *fn = NULL;
    int status = 0;
    if (run.drv.version < version)
        version = run.drv.version;
    cu_result r = run.drv.getproc(name, &fn, version, 0, &status);
    if (r != CU_OK || !fn)
        run_die("the CUDA driver %s gives no %s (cuGetProcAddress returned %d, symbol status %d)",
                gctx_driver_path(), name, r, status);
    return fn;
}

/* The library loads the driver (GREENCTX_CUDA_LIBRARY or libcuda.so.1); the preload takes
 * the entry points its wrappers forward to from the same file. */
static void load_driver(void)
{
    if (gctx_init() != GCTX_SUCCESS)
        run_die("%s", gctx_last_error());
    gctx_driver_version(&run.drv.version);
    const char *path = gctx_driver_path();
    run.drv.handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    run.drv.getproc =
        run.drv.handle ? (cu_getproc_fn)run_real_dlsym(run.drv.handle, "cuGetProcAddress_v2") : NULL;
    if (!run.drv.getproc)
        run_die("the CUDA driver %s has no cuGetProcAddress_v2 (drivers of CUDA 12.0 and later "
                "do)",
                path);
    run.drv.device_get = (cu_device_get_fn)entry_point("cuDeviceGet", 12000);
    run.drv.retain = (cu_retain_fn)entry_point("cuDevicePrimaryCtxRetain", 12000);
    run.drv.release = (cu_device_fn)entry_point("cuDevicePrimaryCtxRelease", 12000);
    run.drv.set_current = (cu_ctx_fn)entry_point("cuCtxSetCurrent", 12000);
    run.drv.get_current = (cu_ctx_out_fn)entry_point("cuCtxGetCurrent", 12000);
    run.drv.push = (cu_ctx_fn)entry_point("cuCtxPushCurrent", 12000);
    run.drv.pop = (cu_ctx_out_fn)entry_point("cuCtxPopCurrent", 12000);
    run.drv.get_attribute = (cu_attribute_fn)entry_point("cuDeviceGetAttribute", 12000);
    /* Before 12.4 there are no green contexts: the confinement stops the program with the
     * planner's reason, before any wrapper could need these. */
    if (run.drv.version >= 12040) {
        run.drv.device_resource =
            (cu_device_resource_fn)entry_point("cuDeviceGetDevResource", 12040);
        run.drv.ctx_resource = (cu_ctx_resource_fn)entry_point("cuCtxGetDevResource", 12040);
    }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Where the green context's work really runs: a %smid kernel on a stream of it. */
static void observe(run_device *d)
{
    gctx_stream *stream = NULL;
    gctx_status s = gctx_stream_create(d->context, NULL, &stream);
    if (s == GCTX_SUCCESS)
        s = gctx_stream_observe_sms(stream, d->sm_ids, RUN_MAX_SM_IDS, &d->nb_sm_ids);
    gctx_stream_release(stream);
    if (s != GCTX_SUCCESS) {
        d->nb_sm_ids = 0;
        snprintf(d->sm_ids_error, sizeof d->sm_ids_error, "%s", gctx_last_error());
    }
}

/* The token's descriptor ("v1:DIR:FILE:FD") when it is the claim file's, as gctx_claim_join
 * leaves an inherited one (*file gets the file's identity); else -1 (the claim file was
 * opened again, at another number). */
static int token_descriptor(const char *token, struct stat *file)
{
    const char *fd_sep = strrchr(token, ':'), *file_sep = NULL;
    for (const char *p = token + 3; fd_sep && p < fd_sep; p++)
        if (*p == ':')
            file_sep = p;
    char path[1024];
    struct stat fd_st;
    if (!file_sep || strncmp(token, "v1:", 3) != 0)
        return -1;
    int fd = atoi(fd_sep + 1);
    snprintf(path, sizeof path, "%.*s/%.*s", (int)(file_sep - token - 3), token + 3,
             (int)(fd_sep - file_sep - 1), file_sep + 1);
    return fd >= 0 && fstat(fd, &fd_st) == 0 && stat(path, file) == 0 &&
                   fd_st.st_dev == file->st_dev && fd_st.st_ino == file->st_ino
               ? fd
               : -1;
}

int run_claim_fd_intact(const run_device *d)
{
    struct stat st;
    return d->claim_fd >= 0 && fstat(d->claim_fd, &st) == 0 && st.st_dev == d->claim_dev &&
           st.st_ino == d->claim_ino;
}

/* The tenant's claim, taken by greenctx run before the program started: the green context
 * is made on exactly its SMs, so two runs never share SMs. Without it the program would run
 * on SMs another tenant may hold: it is stopped. */
static void join_claim(run_device *d, const char *request)
{
    char token[1024], why[512];
    if (run_claim_list_find(run_cfg.claim, d->ordinal, token, sizeof token) != 0)
        run_die("%s=%s has no claim for device %d, which %s=%s confines", GREENCTX_RUN_CLAIM,
                run_cfg.claim, d->ordinal, GREENCTX_RUN_SMS, run_cfg.sms);
    gctx_status s = gctx_claim_join(d->ordinal, token, &d->claim);
    if (s != GCTX_SUCCESS)
        run_die("device %d: the claim greenctx run took could not be joined (%s: %s)",
                d->ordinal, gctx_status_name(s), gctx_last_error());
    if (run_plan_claim(d->ordinal, request, &d->plan, why, sizeof why) != GCTX_SUCCESS)
        run_die("%s=%s: %s", GREENCTX_RUN_SMS, run_cfg.sms, why);
    gctx_claim_info *info = &d->claim_info;
    *info = (gctx_claim_info)GCTX_CLAIM_INFO_INIT;
    if ((s = gctx_claim_get_info(d->claim, info)) != GCTX_SUCCESS ||
        (s = gctx_claim_context(d->claim, NULL, &d->context)) != GCTX_SUCCESS ||
        (s = gctx_claim_stream(d->claim, &d->probe)) != GCTX_SUCCESS)
        run_die("device %d: no green context on the claim's SMs (%s: %s)", d->ordinal,
                gctx_status_name(s), gctx_last_error());
    d->plan.sm_count = info->sm_count;
    struct stat file;
    d->claim_fd = token_descriptor(token, &file);
    d->claim_dev = file.st_dev;
    d->claim_ino = file.st_ino;
}

static void confine(run_device *d, int ordinal, const char *request)
{
    char why[512];
    d->ordinal = ordinal;
    if (run_cfg.claim[0])
        join_claim(d, request);
    else if (run_plan_device(ordinal, request, run_cfg.round[0] ? run_cfg.round : NULL, &d->plan,
                             &d->context, why, sizeof why) != GCTX_SUCCESS)
        run_die("%s=%s: %s", GREENCTX_RUN_SMS, run_cfg.sms, why);
    cu_result r = run.drv.device_get(&d->cu_device, ordinal);
    /* A reference the preload holds for the life of the process: the handle the program
     * binds stays the one recognised here. */
    if (r == CU_OK)
        r = run.drv.retain(&d->primary, d->cu_device);
    if (r != CU_OK)
        run_die("device %d: the primary context could not be retained (CUDA error %d)", ordinal,
                r);
    d->green = gctx_context_cu_context(d->context);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    if (gctx_context_get_info(d->context, &info) == GCTX_SUCCESS && info.has_id)
        d->green_id = info.id;
    if (run_cfg.report_dir[0]) {
        double t0 = now_ms();
        observe(d);
        run.observe_ms += now_ms() - t0;
    }
}

static void setup(void)
{
    double t0 = now_ms();
    if (run_cfg.error[0])
        run_die("%s", run_cfg.error);
    if (!run_cfg.present)
        run_die("%s is not set: the preload was loaded without a request (use greenctx run "
                "--sms COUNT -- CMD)",
                GREENCTX_RUN_SMS);
    /* From here this process uses CUDA: its work belongs in the report, and under
     * --no-inherit its own children are the ones released. */
    run_report_started();
    if (!run_cfg.inherit)
        run_release_children();
    run_inside++;
    load_driver();
    run.driver_ms = now_ms() - t0;
    if (gctx_device_count(&run.device_count) != GCTX_SUCCESS || run.device_count == 0)
        run_die("the CUDA driver shows no device (CUDA_VISIBLE_DEVICES=%s)",
                getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    for (unsigned i = 0; i < run_cfg.request.nb_entries; i++)
        if (run_cfg.request.entries[i].device >= run.device_count)
            run_die("%s=%s names device %d, but the driver shows %d (CUDA_VISIBLE_DEVICES=%s)",
                    GREENCTX_RUN_SMS, run_cfg.sms, run_cfg.request.entries[i].device,
                    run.device_count,
                    getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    for (int dev = 0; dev < run.device_count && dev < RUN_MAX_DEVICES; dev++) {
        const char *request = run_request_for(&run_cfg.request, dev);
        if (request)
            confine(&run.devices[run.nb_devices++], dev, request);
    }
    run_inside--;
    /* The %smid kernel of the report is not start-up: a run without --report skips it. */
    run.setup_ms = now_ms() - t0 - run.observe_ms;
    atomic_store_explicit(&ready, 1, memory_order_release);
}

void run_claims_at_exit(void)
{
    /* A child that forked from the program shares its claims: only the process the preload
     * started in gives them back. */
    if (!run_setup_done() || (long)getpid() != run_cfg.pid)
        return;
    run_fault_check_at_exit();
    run_inside++;
    /* The green contexts stay: threads still running may bind them until the process is
     * gone. Only the claim goes back, once the work on its context is done (the release
     * waits for it). A claim whose descriptor the program closed (closefrom) was no longer
     * held: said, as its SMs may have been another tenant's meanwhile. */
    for (unsigned i = 0; i < run.nb_devices; i++) {
        run_device *d = &run.devices[i];
        char token[1024];
        if (d->claim && gctx_claim_export(d->claim, token, sizeof token) == GCTX_ERROR_REGISTRY)
            fprintf(stderr, "greenctx run: device %d: %s\n", d->ordinal, gctx_last_error());
        gctx_claim_release(d->claim);
        d->claim = NULL;
    }
    run_inside--;
}

int run_setup_done(void) { return atomic_load_explicit(&ready, memory_order_acquire); }

void run_setup(void)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire))
        pthread_once(&setup_once, setup);
}

unsigned run_device_sms_shown(const run_device *d)
{
    return run_cfg.device_sms == RUN_DEVICE_SMS_PHYSICAL ? d->plan.device_sms : d->plan.sm_count;
}

run_device *run_device_of_context(CUcontext ctx)
{
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (run.devices[i].primary == ctx || run.devices[i].green == ctx)
            return &run.devices[i];
    return NULL;
}

run_device *run_device_of_cu_device(cu_device dev)
{
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (run.devices[i].cu_device == dev)
            return &run.devices[i];
    return NULL;
}

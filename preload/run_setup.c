/* The confinement: at the program's first CUDA lookup or call, every device it may use gets a
 * green context, before the program can bind anything; at its exit the claims go back. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
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

/* The wrappers forward to the driver file the library loaded. */
static void load_driver(void)
{
    if (gctx_init() != GCTX_SUCCESS)
        run_die("%s", gctx_last_error());
    gctx_driver_version(&run.drv.version);
    const char *path = gctx_driver_path();
    run.drv.handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    *(void **)&run.drv.getproc =
        run.drv.handle ? run_real_dlsym(run.drv.handle, "cuGetProcAddress_v2") : NULL;
    if (!run.drv.getproc)
        run_die("the CUDA driver %s has no cuGetProcAddress_v2 (drivers of CUDA 12.0 and later "
                "do)",
                path);
    *(void **)&run.drv.device_get = entry_point("cuDeviceGet", 12000);
    *(void **)&run.drv.retain = entry_point("cuDevicePrimaryCtxRetain", 12000);
    *(void **)&run.drv.release = entry_point("cuDevicePrimaryCtxRelease", 12000);
    *(void **)&run.drv.set_current = entry_point("cuCtxSetCurrent", 12000);
    *(void **)&run.drv.get_current = entry_point("cuCtxGetCurrent", 12000);
    *(void **)&run.drv.push = entry_point("cuCtxPushCurrent", 12000);
    *(void **)&run.drv.pop = entry_point("cuCtxPopCurrent", 12000);
    *(void **)&run.drv.get_attribute = entry_point("cuDeviceGetAttribute", 12000);
    /* Before 12.4 there are no green contexts: the confinement stops the program with the
     * planner's reason, before any wrapper could need these. */
    if (run.drv.version >= 12040) {
        *(void **)&run.drv.device_resource = entry_point("cuDeviceGetDevResource", 12040);
        *(void **)&run.drv.ctx_resource = entry_point("cuCtxGetDevResource", 12040);
    }
}

/* Where the green context's work really runs: a %smid kernel on a stream of it. */
static void observe(run_device *d)
{
    gctx_stream *stream = NULL;
    gctx_status s = gctx_stream_create(d->joined.context, NULL, &stream);
    if (s == GCTX_SUCCESS)
        s = gctx_stream_observe_sms(stream, d->sm_ids, RUN_MAX_SM_IDS, &d->nb_sm_ids);
    gctx_stream_release(stream);
    if (s != GCTX_SUCCESS) {
        d->nb_sm_ids = 0;
        snprintf(d->sm_ids_error, sizeof d->sm_ids_error, "%s", gctx_last_error());
    }
}

/* The device's green context on exactly the claim's SMs (--shared: the planner's split). A
 * program that can't have it would run on SMs another tenant may hold: it is stopped. */
static void confine(run_device *d, const run_session_request *req, const run_session *session,
                    unsigned i)
{
    char why[512];
    int ordinal = d->ordinal = session->plans[i].device;
    if (run_session_join(req, session, i, &d->joined, why, sizeof why) != GCTX_SUCCESS)
        run_die("%s=%s: %s", GREENCTX_RUN_SMS, run_cfg.sms, why);
    cu_result r = run.drv.device_get(&d->cu_device, ordinal);
    /* Held for the life of the process: the handle the program binds stays recognised. */
    if (r == CU_OK)
        r = run.drv.retain(&d->primary, d->cu_device);
    if (r != CU_OK)
        run_die("device %d: the primary context could not be retained (CUDA error %d)", ordinal,
                r);
    d->green = gctx_context_cu_context(d->joined.context);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    if (gctx_context_get_info(d->joined.context, &info) == GCTX_SUCCESS && info.has_id)
        d->green_id = info.id;
    if (run_cfg.report_dir[0]) {
        double t0 = clock_now_ns() / 1e6;
        observe(d);
        run.observe_ms += clock_now_ns() / 1e6 - t0;
    }
}

static void setup(void)
{
    double t0 = clock_now_ns() / 1e6;
    if (run_cfg.error[0])
        run_die("%s", run_cfg.error);
    if (!run_cfg.present)
        run_die("%s is not set: the preload was loaded without a request (use greenctx run "
                "--sms COUNT -- CMD)",
                GREENCTX_RUN_SMS);
    /* From here this process uses CUDA: its work is reported, its children released. */
    run_report_started();
    if (!run_cfg.inherit)
        run_release_children();
    run_inside++;
    load_driver();
    run.driver_ms = clock_now_ns() / 1e6 - t0;
    run_session_request req = {.sms = run_cfg.sms,
                               .round = run_cfg.round[0] ? run_cfg.round : NULL,
                               .claim_list = run_cfg.claim};
    static run_session session; /* too big for a program thread's stack */
    char why[512];
    if (run_session_open(&req, &session, why, sizeof why) != GCTX_SUCCESS)
        run_die("%s=%s: %s", GREENCTX_RUN_SMS, run_cfg.sms, why);
    for (unsigned i = 0; i < session.nb_plans; i++)
        confine(&run.devices[run.nb_devices++], &req, &session, i);
    run_inside--;
    /* The %smid kernel of the report is not start-up: a run without --report skips it. */
    run.setup_ms = clock_now_ns() / 1e6 - t0 - run.observe_ms;
    atomic_store_explicit(&ready, 1, memory_order_release);
}

/* A program whose context died of a sticky fault. Under MPS one client's fatal fault reaches
 * every client, so it may be another tenant's: the claims registry names who faulted first.
 * The program's error and exit status pass through; this adds one line on stderr. */
void run_fault_seen(run_device *d, cu_result result)
{
    static atomic_int reported;
    if (!gctx_cuda_result_is_sticky(result) || !d || !d->joined.claim ||
        atomic_exchange(&reported, 1))
        return;
    run_inside++;
    gctx_status s = gctx_claim_report_fault(d->joined.claim, result);
    if (s == GCTX_SUCCESS)
        fprintf(stderr, "greenctx run: %s\n", gctx_last_error());
    else
        fprintf(stderr,
                "greenctx run: device %d: the program's context died of CUDA error %d (a sticky "
                "fault: every later call on it fails); the claims registry could not record it: "
                "%s\n",
                d->ordinal, result, gctx_last_error());
    run_inside--;
}

void run_claims_at_exit(void)
{
    /* A forked child shares the claims: only the process the preload started in gives them back. */
    if (!run_setup_done() || (long)getpid() != run_cfg.pid)
        return;
    /* First each claimed device's context is asked whether it died, as run_fault_seen. */
    cu_result (*query)(CUstream stream) = NULL;
    run_inside++;
    cu_result r = run.drv.getproc("cuStreamQuery", (void **)&query, 2000, 0, NULL);
    run_inside--;
    for (unsigned i = 0; r == CU_OK && query && i < run.nb_devices; i++) {
        run_device *d = &run.devices[i];
        if (d->joined.probe)
            run_fault_seen(d, query(gctx_stream_handle(d->joined.probe)));
    }
    run_inside++;
    /* The green contexts stay: running threads may bind them until the process is gone. The
     * claim goes back once its context's work is done; one whose descriptor the program
     * closed is said, as its SMs may have been another tenant's meanwhile. */
    for (unsigned i = 0; i < run.nb_devices; i++) {
        run_device *d = &run.devices[i];
        char token[1024];
        if (d->joined.claim &&
            gctx_claim_export(d->joined.claim, token, sizeof token) == GCTX_ERROR_REGISTRY)
            fprintf(stderr, "greenctx run: device %d: %s\n", d->ordinal, gctx_last_error());
        gctx_claim_release(d->joined.claim);
        d->joined.claim = NULL;
    }
    run_inside--;
}

int run_setup_done(void) { return atomic_load_explicit(&ready, memory_order_acquire); }

void run_setup(void)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire))
        pthread_once(&setup_once, setup);
}

run_device *run_device_of_context(CUcontext ctx)
{
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (run.devices[i].primary == ctx || run.devices[i].green == ctx)
            return &run.devices[i];
    return NULL;
}

/* The preload of `greenctx run` (libgreenctx_preload.so), shared by its files; docs/run.md says
 * how it works. Programs find the driver's entry points through cuGetProcAddress (reached by
 * the dlsym the preload exports) or the cu* names it exports; both hand out its wrappers of
 * the calls that bind, return or size contexts (run_hooks.c), which bind each confined
 * device's green context (run_setup.c) in place of its primary one. What can't be confined is
 * refused, or the program stops with exit status 125 before it runs a kernel.
 *
 * Its globals, one line each: the file that writes it (any file may read them).
 *   run_cfg               run_config.c: its constructor, before main; never after
 *   greenctx_preload_abi  run_config.c: a constant, which the tool looks up before a run
 *   run                   run_setup.c: setup() (once, under pthread_once), run_claims_at_exit
 *   run_count             run_hooks.c: the wrappers' counts (atomics, from any thread)
 *   run_inside            run_setup.c: around its calls into greenctx
 *   real, releasing, self_*  run_children.c: the C library's exec calls; children released
 *   real_dlsym_fn         run_dlsym.c: the C library's dlsym, found once
 *   part, part_pid        run_report.c: this process's report part, at its first CUDA use
 *   setup_once, ready     run_setup.c: the confinement made
 *   thread_seen           run_hooks.c: this thread counted (thread-local)
 *   paces, active, ev, any_guarded  run_pace.c: its start (once) and the pacer thread; the
 *                         rings under each pace's lock
 *   warned, reported      the function they are static in: a warning's once-flag */
#ifndef GREENCTX_RUN_PRELOAD_H
#define GREENCTX_RUN_PRELOAD_H

#include <stdatomic.h>
#include <sys/types.h>

#include "greenctx.h"
#include "run_session.h"

/* The driver ABI of the calls the preload wraps, as cuda.h declares them. */
typedef int cu_result;
typedef int cu_device;
enum { CU_OK = 0 };

#define RUN_EXPORT __attribute__((visibility("default")))
#define RUN_MAX_SM_IDS 1024

/* ---- run_config.c: the variables, read once before main ---------------------------------- */

typedef struct run_config {
    int present;      /* GREENCTX_RUN_SMS was set */
    char error[512];  /* a variable that is wrong: the program is stopped at its first CUDA use */
    run_request request;
    char sms[512];    /* GREENCTX_RUN_SMS as given */
    char round[16];   /* GREENCTX_RUN_ROUND, "" when unset */
    char report_dir[3072]; /* GREENCTX_RUN_REPORT_DIR, "" when unset */
    char claim[4096];      /* GREENCTX_RUN_CLAIM, "" when unset (greenctx run --shared) */
    long pid; /* the process the variables were read in: only it gives the claims back (a
                 forked child shares the claim's lock, which is not its to end) */
    int inherit;
    int device_sms; /* GREENCTX_RUN_DEVICE_SMS: RUN_DEVICE_SMS_PARTITION (default) or _PHYSICAL */
} run_config;

extern run_config run_cfg; /* written by run_config.c only, before main */

/* ---- run_setup.c: the confinement -------------------------------------------------------- */

typedef struct run_device {
    int ordinal;
    cu_device cu_device;
    CUcontext primary;  /* the device's primary context, as the program knows it */
    CUcontext green;    /* what binds of `primary` make current */
    run_member joined; /* its plan, green context and claim (NULL when given back at exit) */
    unsigned long long green_id;
    unsigned sm_ids[RUN_MAX_SM_IDS]; /* from a %smid kernel, when a report is asked for */
    unsigned nb_sm_ids;
    char sm_ids_error[256];
} run_device;

/* The driver's own entry points that the wrappers forward to. CUdevResource is 144 bytes in
 * every driver (src/cuda_abi.h): passed through, never read. */
typedef struct run_driver {
    void *handle; /* the driver's dlopen handle */
    int version;
    cu_result (*getproc)(const char *symbol, void **pfn, int cuda_version,
                         unsigned long long flags, int *symbol_status);
    cu_result (*device_get)(cu_device *dev, int ordinal);
    cu_result (*retain)(CUcontext *ctx, cu_device dev);
    cu_result (*release)(cu_device dev);
    cu_result (*set_current)(CUcontext ctx), (*push)(CUcontext ctx);
    cu_result (*get_current)(CUcontext *ctx), (*pop)(CUcontext *ctx);
    cu_result (*get_attribute)(int *value, int attribute, cu_device dev);
    cu_result (*device_resource)(cu_device dev, void *resource, int type);
    cu_result (*ctx_resource)(CUcontext ctx, void *resource, int type);
} run_driver;

typedef struct run_state {
    run_driver drv;
    run_device devices[RUN_MAX_DEVICES];
    unsigned nb_devices;
    double setup_ms;   /* the confinement's start-up, the report's probe excluded */
    double driver_ms;  /* of which loading the driver (cuInit included) */
    double observe_ms; /* the report's %smid probe */
} run_state;

extern run_state run; /* written by run_setup.c only */

/* What the report counts; every field is updated atomically from any thread. */
typedef struct run_counters {
    atomic_long binds_redirected; /* a primary context bound: the green one was */
    atomic_long binds_passed;     /* NULL or a green context bound as it is */
    atomic_long retains, releases;
    atomic_long current_shown_primary; /* a read of the current context mapped back */
    atomic_long refused_ctx_create, refused_green_ctx_create, refused_reset;
    atomic_long refused_context, refused_device;
    atomic_long threads_seen;
    atomic_long sm_count_shown;    /* the SM count or resource of a device answered with the
                                      partition's (GREENCTX_RUN_DEVICE_SMS=partition) */
} run_counters;

extern run_counters run_count; /* written by run_hooks.c only */

/* Makes every confined device's green context, once, or stops the program. Cheap after. */
void run_setup(void);
/* 1 once run_setup has made the confinement. */
int run_setup_done(void);
/* At a normal exit: reports a context that died of a fault, then gives the claims back, so the
 * registry records the tenant as ended, not died (a killed one is found dead). */
void run_claims_at_exit(void);
/* The device whose primary or green context `ctx` is, or NULL. */
run_device *run_device_of_context(CUcontext ctx);

/* A sticky fault in `result` (d may be NULL): recorded in the registry and said, once. Under
 * MPS one client's fatal fault reaches every client, so the registry names who faulted first. */
void run_fault_seen(run_device *d, cu_result result);
/* "greenctx run: MESSAGE", then exit 125 without atexit handlers (state is half-made). */
_Noreturn void run_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Nonzero while the preload calls greenctx or the driver: dlsym reaches the C library's then. */
extern _Thread_local int run_inside; /* run_setup.c */

/* ---- run_dlsym.c -------------------------------------------------------------------------- */

/* The C library's dlsym (the preload exports its own). */
void *run_real_dlsym(void *handle, const char *name);

/* ---- run_hooks.c -------------------------------------------------------------------------- */

/* The wrapper for an exported driver name ("cuCtxSetCurrent", ...), or NULL. */
void *run_hook_for_symbol(const char *name);

/* ---- run_pace.c: the guard of greenctx run --class ---------------------------------------- */

/* The wrapper of a launch, copy or wait for a guarded program, or NULL. */
void *run_pace_hook_for_symbol(const char *name);
/* The same for cuGetProcAddress's base name, remembering the driver's function. */
void *run_pace_hook_for_proc(const char *symbol, int version, unsigned long long flags,
                             void *driver_fn);


/* ---- run_report.c ------------------------------------------------------------------------- */

/* With GREENCTX_RUN_REPORT_DIR, at first CUDA use: NAME.started, or the program stops. */
void run_report_started(void);
/* Writes this process's part if it started one: at exit and before an exec. */
void run_report_write_part(void);

/* ---- run_children.c ----------------------------------------------------------------------- */

/* Under GREENCTX_RUN_INHERIT=0, at first CUDA use: the programs it starts are not confined. */
void run_release_children(void);

#endif

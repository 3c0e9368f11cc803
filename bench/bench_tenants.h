/*
 * `greenctx bench tenants`: two processes on one GPU, a latency victim and a hog, in the
 * arrangements a user can choose between (time-slicing, MPS, the active-thread percentage,
 * greenctx claims), plus a memory-bound pair and a fault arm.
 *
 * Each tenant is the greenctx executable itself, run again as `greenctx bench tenant-worker`
 * (hidden): the same binary, library and driver as the parent, with nothing to install or
 * find beside it (tenant_worker.c). The parent (bench_tenants.c) starts the two, waits until
 * each says it is ready (context, kernels, buffers, warm-up done), sends both one wall-clock
 * start time through their stdin, and reads their results as lines on their stdout
 * (tenant_proc.c). Under MPS the parent also owns the control daemon when none answered
 * (tenant_mps.c).
 */
#ifndef GREENCTX_BENCH_TENANTS_H
#define GREENCTX_BENCH_TENANTS_H

#include <sys/types.h>

#include "bench_chart.h"

/* ---- what one tenant does (the worker's command line) ---- */

typedef enum tenant_role {
    TENANT_VICTIM = 0,   /* one request at a time: launch, synchronize, 0.5 ms pause */
    TENANT_HOG = 1,      /* large units back to back (bench_hog) */
    TENANT_LAUNCHER = 2, /* the fault arm's bystander: small kernels, counting failures */
    TENANT_FAULTER = 3,  /* the fault arm's culprit: one store to address 0x10 */
    TENANT_PROBE = 4,    /* a new tenant after the fault: its first kernel */
    TENANT_NB_ROLES = 5
} tenant_role;

typedef enum tenant_work {
    TENANT_WORK_FMA = 0,  /* compute-bound: the FMA chain */
    TENANT_WORK_READ = 1, /* victim: sums 64 MiB per request */
    TENANT_WORK_COPY = 2, /* hog: copies 1 GiB per unit */
    TENANT_NB_WORKS = 3
} tenant_work;

#define TENANT_VICTIM_GAP_US 500.0 /* the victim's pause between requests */
#define TENANT_VICTIM_ITERS 20000u /* FMA steps per thread: about 0.7 ms on 16 SMs of an H200 */
#define TENANT_FAULT_ADDRESS 0x10ull

typedef struct tenant_spec {
    tenant_role role;
    tenant_work work;
    const char *on;          /* "primary", or a claim request ("16", "rest") */
    int thread_percentage;   /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for it; 0: unset */
    int mps;                 /* 1: the MPS daemon's pipe directory; 0: one no daemon answers */
    /* a claim request held aside while on is claimed, then released: a hog alone on "rest"
     * gets the rest beside the victim's claim, which may be no count of its own (116 of an
     * H200's fine granules); NULL: none */
    const char *aside;
} tenant_spec;

/* The roles' and works' names, NULL-terminated (a bench_arg's choices). */
extern const char *const tenant_role_names[TENANT_NB_ROLES + 1];
extern const char *const tenant_work_names[TENANT_NB_WORKS + 1];
const char *tenant_role_name(tenant_role role);
const char *tenant_work_name(tenant_work work);

/* ---- what one tenant said (its result lines) ---- */

typedef struct tenant_report {
    unsigned sms;              /* "ready SMS": the SMs its context may use */
    bench_summary latency_us;  /* victim */
    unsigned long long units;  /* hog: units completed in seconds */
    double seconds, unit_amount;
    unsigned long long ok, failed; /* launcher */
    long long first_fail_ns;   /* launcher: wall clock of its first failed kernel; 0: none */
    int first_fail_result;
    long long fault_ns;        /* faulter: wall clock just before the faulting launch */
    int fault_result;          /* what the launch or the synchronize answered */
    long long done_ns;         /* probe: wall clock when its first kernel had finished */
    int probe_result;          /* probe: 0 when that kernel ran */
    char message[512];         /* launcher: the library's line after the fault */
} tenant_report;

/* The worker's side of the protocol: writes one line (and flushes). */
void tenant_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A summary as "NAME n min p50 p99 p999 max mean", and the parent's reading of it back into
 * s (1 when line is NAME's). */
void tenant_say_summary(const char *name, const bench_summary *s);
int tenant_summary_line(const char *line, const char *name, bench_summary *s);

/* ---- processes (tenant_proc.c) ---- */

typedef struct tenant_paths {
    char root[256];     /* mkdtemp under /tmp: everything below is removed at the end */
    char registry[300]; /* the claims' runtime directory of this run */
    char no_mps[300];   /* an empty pipe directory: a client looking there finds no daemon */
    char mps_pipe[512]; /* the daemon's pipe directory (ours under root, or the user's) */
    char mps_log[300];
} tenant_paths;

typedef struct tenant_proc {
    pid_t pid;
    int to_child, from_child; /* its stdin and stdout */
    char buf[4096];
    size_t len;
    tenant_report report;
    const char *name; /* "victim", "hog", ... for messages */
    /* Lines of another worker's protocol (bench elastic's): 1 when own_line took it. */
    int (*own_line)(void *own_ctx, const char *line);
    void *own_ctx;
} tenant_proc;

typedef struct tenant_run {
    const char *worker; /* the executable run as `bench tenant-worker` */
    const bench_env *env;
    const tenant_paths *paths;
    unsigned victim_sms;
    int duration_ms, fault_at_ms;
} tenant_run;

/* Starts a worker for spec and waits for its "ready" line (timeout_ms). -1 after a message
 * (the process is then gone). */
int tenant_start(const tenant_run *run, const tenant_spec *spec, tenant_proc *proc,
                 int timeout_ms);
/* tenant_start's process with another worker's command line (argv, NULL-terminated) under
 * spec's MPS environment; name is the process's in messages. */
int tenant_launch(const tenant_run *run, const tenant_spec *spec, const char *name, char **argv,
                  tenant_proc *proc, int timeout_ms);
/* The worker's side: says "ready SMS", waits for "go START_NS" on stdin and until that
 * instant; -1 when the go never comes (the bench is gone). */
int tenant_ready(unsigned sms, long long *start_ns);
/* Sends "go START_NS". */
int tenant_go(tenant_proc *proc, long long start_ns);
/* Reads result lines until "done", then reaps the process. -1 after a message when it
 * failed, said something unknown, or took longer than timeout_ms (it is then killed). */
int tenant_finish(tenant_proc *proc, int timeout_ms);
/* Kills and reaps (for failure paths); a proc never started or already finished is ignored. */
void tenant_kill(tenant_proc *proc);

/* ---- MPS (tenant_mps.c) ---- */

typedef struct tenant_mps {
    int available;    /* a daemon answers on paths->mps_pipe */
    int started;      /* we started it: we quit it */
    char why[1600];   /* when not available: why not */
} tenant_mps;

/* Makes the run's directories (paths). Prints why and returns -1 on failure. */
int tenant_paths_make(tenant_paths *paths);
/* Removes them (the daemon must be gone). */
void tenant_paths_remove(const tenant_paths *paths);
/* Uses the daemon that answers for this process's CUDA_MPS_PIPE_DIRECTORY, else starts one
 * of ours (nvidia-cuda-mps-control -d, its own pipe and log directories under paths->root;
 * no GPU setting is changed). From then on until tenant_mps_stop, SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT kill the workers and quit our daemon before the bench dies of them. mps->why
 * says why MPS is not available; that is not an error of this call. */
void tenant_mps_start(tenant_paths *paths, tenant_mps *mps);
/* Quits our daemon (`echo quit | nvidia-cuda-mps-control`, the same environment), if we
 * started one, and puts the signal handlers back. */
void tenant_mps_stop(tenant_mps *mps);
/* The workers a signal must kill: registered while they live. */
void tenant_mps_watch(pid_t pid);
void tenant_mps_unwatch(pid_t pid);

/* ---- the arms (bench_tenants.c) and their report (bench_tenants_report.c) ---- */

typedef enum tenant_arm_id {
    TA_VICTIM_ALONE = 0,
    TA_HOG_ALONE_CLAIM,
    TA_HOG_ALONE_PRIMARY,
    TA_SLICED_PRIMARY,
    TA_SLICED_CLAIMS,
    TA_MPS_PRIMARY,
    TA_MPS_THREADS,
    TA_MPS_CLAIMS,
    TA_READ_ALONE,
    TA_COPY_ALONE,
    TA_MPS_CLAIMS_COPY,
    TA_NB_ARMS
} tenant_arm_id;

typedef struct tenant_arm_def {
    const char *name, *label;
    int mps;
    int victim_reference, hog_reference; /* the alone arms its ratios divide by; -1: none */
    tenant_spec victim, hog;             /* role TENANT_NB_ROLES: that side does not run */
} tenant_arm_def;

typedef struct tenant_cell {
    int ran;              /* 1: measured */
    char why[1700];        /* when not: why not ("MPS is not available: ...") */
    tenant_report victim, hog;
    int has_victim, has_hog;
} tenant_cell;

typedef struct tenant_fault_cell {
    int ran;
    char why[1700];
    tenant_report launcher, faulter;
    int probe_attempts;
    long long probe_done_ns; /* 0: no new tenant ran before the deadline */
} tenant_fault_cell;

typedef struct tenants_result {
    unsigned sm_count, victim_sms, hog_sms;
    int duration_ms, fault_at_ms;
    unsigned victim_iters;
    int mps_available, mps_started;
    char mps_pipe[512];
    char mps_why[1600];
    unsigned foreign_claims; /* claims other tenants held in the default registry */
    tenant_cell arm[TA_NB_ARMS];
    tenant_fault_cell fault[2]; /* [0] without MPS, [1] under MPS */
    int failed;                 /* an arm that should have run did not */
} tenants_result;

const tenant_arm_def *tenant_arm(tenant_arm_id id, unsigned victim_sms, unsigned sm_count);
/* Victim p99 over its alone reference's, hog rate over its alone reference's; 0: no figure. */
double tenant_victim_ratio(const tenants_result *res, tenant_arm_id id);
double tenant_hog_ratio(const tenants_result *res, tenant_arm_id id);
/* The hog's rate in its unit: GFLOP/s (fma) or GB/s (copy). */
double tenant_hog_rate(const tenant_report *hog);

/* The parent holds no context while this runs (bench_env_close before): tenants must find
 * the GPU as any two processes would. worker: the executable each tenant runs, given the
 * worker's arguments (NULL: this one, /proc/self/exe). Returns -1 when an arm that should
 * have run failed (the others still ran and res says which). */
int bench_tenants_run(const bench_env *env, const char *worker, tenants_result *res);
void bench_tenants_print(const bench_env *env, const tenants_result *res);
void bench_tenants_json(json_writer *w, const tenants_result *res);
void bench_tenants_chart(const tenants_result *res, bench_chart *chart);

#endif

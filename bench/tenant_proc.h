/*
 * bench elastic's two tenant processes (bench_elastic_tenants.c): each is this executable
 * again, run as `greenctx-bench elastic-worker`, with its stdin and stdout on pipes to the
 * bench (tenant_proc.c), under the bench's own MPS daemon when none answered (tenant_mps.c).
 * The protocol is lines: the worker says "ready SMS", the bench answers "go START_NS", the
 * worker writes its result lines and "done". (bench tenants is a script now:
 * bench/compare/tenants.py.)
 */
#ifndef GREENCTX_TENANT_PROC_H
#define GREENCTX_TENANT_PROC_H

#include <sys/types.h>

#include "bench.h"

/* The environment one tenant runs in. */
typedef struct tenant_spec {
    int thread_percentage; /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for it; 0: unset */
    int mps;               /* 1: the MPS daemon's pipe directory; 0: one no daemon answers */
} tenant_spec;

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
    unsigned sms;     /* "ready SMS": the SMs its context may use */
    const char *name; /* "decode tenant", ... for messages */
    /* Its result lines: 1 when own_line took the line. */
    int (*own_line)(void *own_ctx, const char *line);
    void *own_ctx;
} tenant_proc;

typedef struct tenant_run {
    const char *worker; /* the executable each tenant runs */
    const tenant_paths *paths;
    int duration_ms;
} tenant_run;

/* Runs argv (NULL-terminated) under spec's MPS environment and waits for its "ready" line
 * (timeout_ms); name is the process's in messages. -1 after a message (the process is then
 * gone). */
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

#endif

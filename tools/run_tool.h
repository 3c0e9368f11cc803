/* `greenctx run`: what its files share. cmd_run.c calls run_sweep.c and run_report_merge.c;
 * all three call run_check.c, run_claims.c and run_child.c, which call none of them. */
#ifndef GREENCTX_TOOL_RUN_H
#define GREENCTX_TOOL_RUN_H

#include <limits.h>
#include <sys/types.h>

#include "greenctx_claims.h"
#include "run_session.h"
#include "tool.h"

/* What the command line asked, as cmd_run.c parsed it: never changed after. */
typedef struct run_options {
    int device;             /* --device N (a shared option, once found), or -1: every device */
    const char *sms;        /* --sms REQ, or NULL */
    const char *sweep;      /* --sweep REQ,REQ,..., or NULL */
    const char *round;      /* --round MODE, or NULL */
    const char *report;     /* --report FILE.json as given, or NULL */
    int no_inherit;         /* --no-inherit */
    int device_sms;         /* --device-sms: RUN_DEVICE_SMS_PARTITION (default) or _PHYSICAL */
    int shared;             /* --shared: no claim, the SMs may be shared with other tenants */
    int wait;               /* --wait[=SECONDS] given */
    int wait_ms;            /* its timeout; -1: forever */
    const char *label;      /* --label TEXT, or NULL */
    gctx_tenant_class tenant_class; /* --class latency[:TARGET] | best-effort */
    double target_ms, target_factor; /* latency's TARGET: 2.5ms, or 1.1x (as alone) */
    const char *memory;     /* --memory SIZE (16G, 512M), or NULL */
    const char *svg;        /* --svg FILE (sweep), or NULL */
    char **command;         /* CMD ARGS..., NULL-terminated */
} run_options;

/* One `greenctx run`: its options, and what the tool found and made for them on the way. */
typedef struct run_job {
    greenctx_tool_options *opts; /* the shared options, for messages */
    run_options options;
    char preload[PATH_MAX];      /* the preload's absolute path, once found and checked */
    char *program_preload;       /* LD_PRELOAD as the tool was started with (NULL: unset or
                                    empty): the program's own, kept after the preload */
    char report_path[PATH_MAX];  /* --report's file made absolute, once checked ("" before) */
    char report_dir[PATH_MAX];   /* where the processes write their parts, "" until made */
    int warned_without_mps;      /* what sharing a GPU without MPS costs was printed */
    char command_text[256];      /* the command line as the claims' registry shows it */
} run_job;

/* ---- run_check.c ---- */

/* The session's request for `sms` (--sms or a sweep's size) and the command line's options. */
void run_session_request_of(const run_job *job, const char *sms, run_session_request *req);
/* Checks REQ on every device it confines (the planner's split under --shared, else the
 * syntax: the claim decides). Plans the session, or prints why and returns the exit code. */
int run_check_request(const run_job *job, const char *request, run_session *session);

/* ---- run_claims.c ---- */

/* Refuses (exit 2) an MPS active-thread percentage below 100, and --memory without MPS. */
int run_check_mps(const run_job *job);
/* Claims every planned device's SMs (unless --shared), queueing with --wait; a full GPU is
 * refused (exit 1) with the holders named. Says once what sharing a GPU without MPS costs. */
int run_take_claims(run_job *job, run_session *session);
/* What the banner adds for plan i: " (claimed granules 0-7)", or --shared's note. */
const char *run_claim_note(const run_job *job, const run_session *session, unsigned i, char *buf,
                           size_t size);
/* The session's variables and LD_PRELOAD into this environment; 0, or -1 after saying why. */
int run_set_environment(const run_job *job, const run_session *session);

/* ---- run_sweep.c ---- */

/* --sweep: runs the command once per size; returns the tool's exit code. */
int run_sweep(run_job *job);

/* ---- run_child.c ---- */

/* Starts `command` as a child (stdout_to_stderr: its stdout is the tool's stderr) and forwards
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT to it until run_child_wait. Its pid, or -1 (said why). */
pid_t run_child_start(char **command, int stdout_to_stderr);
/* Waits for it (waitpid retried on EINTR only); 0 with its status, or -1 after saying why. */
int run_child_wait(pid_t pid, int *status);
/* CMD started with the session's variables and waited for, holding its claims: 0 with its pid
 * and status, or -1 after saying why, the claims given back. */
int run_child_program(const run_job *job, run_session *session, pid_t *pid, int *status);
/* The signal (SIGINT, ...) the tool got while it waited for the last child, or 0. */
int run_child_interrupted(void);
/* Ends the tool by `sig` (no core dump); returns 128 + sig if it survives it. */
int run_child_raise(int sig);
/* The tool's exit code: the child's exit status, or its signal raised in the tool. */
int run_child_exit(int status);
/* The claims given back if the program exited (a killed one's are left stale), run_child_exit. */
int run_child_end(run_session *session, int status);

/* ---- run_report_merge.c ---- */

/* --report FILE: made absolute in job->report_path, and checked writable before anything runs.
 * Returns the exit code (GREENCTX_EXIT_USAGE after saying why). */
int run_report_check(run_job *job);
/* Runs the program with GREENCTX_RUN_REPORT_DIR beside the report, then merges the parts:
 * the program's exit code, or 1 when it exited 0 but the report is incomplete or unwritten. */
int run_with_report(run_job *job, run_session *session);

#endif

/* `greenctx run`: what cmd_run.c (options, checks, exec) and run_sweep.c (one run per size)
 * share. */
#ifndef GREENCTX_TOOL_RUN_H
#define GREENCTX_TOOL_RUN_H

#include "run_request.h"
#include "tool.h"

typedef struct run_args {
    greenctx_tool_options *opts;
    int device;             /* --device N (a shared option), or -1: every device */
    const char *sms;        /* --sms REQ */
    const char *sweep;      /* --sweep REQ,REQ,... */
    const char *round;      /* --round MODE, or NULL */
    const char *report;     /* --report FILE.json, or NULL */
    int no_inherit;         /* --no-inherit */
    int shared;             /* --shared: no claim, the SMs may be shared with other tenants */
    int wait;               /* --wait[=SECONDS] given */
    int wait_ms;            /* its timeout; -1: forever */
    const char *label;      /* --label TEXT, or NULL */
    const char *memory;     /* --memory SIZE (16G, 512M), or NULL */
    int json;               /* --json (sweep; a shared option) */
    const char *svg;        /* --svg FILE (sweep) */
    char **command;         /* CMD ARGS..., NULL-terminated */
    const char *preload;    /* the preload's path, once found */
} run_args;

/* Checks REQ (GREENCTX_RUN_SMS's grammar, --device applied) on every device it confines: with
 * the planner under --shared, else only its syntax (the claim decides the SMs). On success
 * `text` holds the variable's value and plans[0..*nb_plans-1] each device (sm_count: what it
 * gets; 0 until claimed); else prints why and returns the tool's exit code. */
int run_check_request(const run_args *args, const char *request, char *text, size_t text_size,
                      run_device_plan *plans, unsigned *nb_plans);

/* The claims of one run: one per confined device, taken before the program starts. */
typedef struct run_claims {
    gctx_claim *claims[RUN_MAX_DEVICES]; /* in the order of the plans; NULL with --shared */
    unsigned nb_claims;
    char variable[4096]; /* GREENCTX_RUN_CLAIM's value, "" with --shared */
} run_claims;

/* What a run's environment allows, checked before anything is claimed or started: an MPS
 * active-thread percentage below 100 and --memory without an MPS daemon are refused (exit 2,
 * with the reason). */
int run_check_mps(const run_args *args);
/* Claims every planned device's SMs (unless --shared) as `text` (GREENCTX_RUN_SMS's value)
 * asks, queueing with --wait; a full GPU is refused (exit 1) with the holders named. On
 * success each plan's sm_count is the claim's, and what sharing a GPU without MPS costs is
 * printed, once, when another tenant holds SMs there. */
int run_take_claims(const run_args *args, const char *text, run_device_plan *plans,
                    unsigned nb_plans, run_claims *claims);
/* What the banner adds for plan i: " (claimed granules 0-7)", or --shared's note. */
const char *run_claim_note(const run_args *args, const run_claims *claims, unsigned i, char *buf,
                           size_t size);
/* Gives the claims back (a sweep's, between sizes; a failed exec's). */
void run_drop_claims(run_claims *claims);

/* Puts the preload's variables for `text` and `claims` and LD_PRELOAD into this process's
 * environment, for the program about to be started. Returns 0, or -1 after printing why. */
int run_set_environment(const run_args *args, const char *text, const run_claims *claims);

/* --sweep: runs the command once per size; returns the tool's exit code. */
int run_sweep(run_args *args);

#endif

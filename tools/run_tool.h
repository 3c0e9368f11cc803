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
    int json;               /* --json (sweep; a shared option) */
    const char *svg;        /* --svg FILE (sweep) */
    char **command;         /* CMD ARGS..., NULL-terminated */
    const char *preload;    /* the preload's path, once found */
} run_args;

/* Checks REQ (GREENCTX_RUN_SMS's grammar, --device applied) on every device it confines with
 * the planner. On success `text` holds the variable's value and plans[0..*nb_plans-1] what
 * each device gets; else prints why and returns the tool's exit code. */
int run_check_request(const run_args *args, const char *request, char *text, size_t text_size,
                      run_device_plan *plans, unsigned *nb_plans);

/* Puts the preload's variables for `text` and LD_PRELOAD into this process's environment,
 * for the program about to be started. Returns 0, or -1 after printing why. */
int run_set_environment(const run_args *args, const char *text);

/* --sweep: runs the command once per size; returns the tool's exit code. */
int run_sweep(run_args *args);

#endif

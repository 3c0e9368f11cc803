/* Shared declarations of the greenctx tool. A command is greenctx_cmd_NAME in cmd_NAME.c and
 * one row of commands.c's table; it gets argv from its own name on, parses it with options.h,
 * returns a GREENCTX_EXIT_* code and reports errors with greenctx_tool_error. One that uses
 * the driver calls greenctx_tool_start before printing anything, so that a run on the
 * simulated driver says so first. */
#ifndef GREENCTX_TOOL_H
#define GREENCTX_TOOL_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#include "command.h"
#include "greenctx_claims.h"
#include "group_syntax.h"
#include "json.h"
#include "options.h"
#include "run_session.h"

typedef int (*greenctx_command_fn)(int argc, char **argv, greenctx_tool_options *opts);

int greenctx_cmd_info(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_plan(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_bench(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_map(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_run(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_ps(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_mps(int argc, char **argv, greenctx_tool_options *opts);

/* Each command's --help, its own options and (mps) the words the completions offer. */
extern const char *const greenctx_info_usage[], *const greenctx_plan_usage[],
    *const greenctx_map_usage[], *const greenctx_run_usage[], *const greenctx_ps_usage[],
    *const greenctx_mps_usage[];
extern const greenctx_option greenctx_info_options[];
extern const greenctx_option tool_split_options[]; /* plan's and map's (groups.c) */
extern const greenctx_option greenctx_run_options[];
extern const greenctx_option greenctx_mps_options[];
extern const char *const greenctx_mps_actions[];

/* ---- commands.c: the command table, for main (greenctx.c) and generate.c ---- */
enum {
    GREENCTX_COMMAND_RUNS_PROGRAM = 1, /* from its first argument (or what follows --) on, the
                                          words are a program's */
    GREENCTX_COMMAND_TAKES_COMMAND = 2 /* its first argument is a command's name (help) */
};
typedef struct greenctx_command {
    const char *name;
    greenctx_command_fn run;
    const char *help;
    const char *const *usage;       /* its --help (NULL: the command prints its own) */
    const greenctx_option *options; /* its own ({NULL}-terminated; NULL: the shared ones only) */
    const char *const *words;       /* what its first argument may be (NULL-terminated), or NULL */
    int flags;                      /* GREENCTX_COMMAND_* */
} greenctx_command;
extern const greenctx_command greenctx_commands[];
extern const size_t greenctx_nb_commands;
/* The options only the tool takes, before the command, their ids in this order. */
extern const greenctx_option greenctx_global_options[];
enum {
    GREENCTX_GLOBAL_VERSION,
    GREENCTX_GLOBAL_VERSION_SHORT,
    GREENCTX_GLOBAL_MAN,
    GREENCTX_GLOBAL_COMPLETION,
    GREENCTX_NB_GLOBAL
};
void greenctx_tool_usage(FILE *out);
/* What command c's --help (NULL: the tool's usage) prints; NULL on failure. The caller frees it. */
char *greenctx_tool_capture_usage(const greenctx_command *c);
/* "Exit status: 0 done; 1 failed ...; 2 bad usage ...", for the usage and the man page. */
extern const char greenctx_exit_status_help[];
/* The command called name, or NULL. */
const greenctx_command *greenctx_tool_find_command(const char *name);
/* "info, plan, ...": the commands, for a message. */
const char *greenctx_tool_command_names(void);
/* The help of command c (NULL: the tool's) as the greenctx.help/1 JSON document on stdout. */
int greenctx_tool_help_json(const greenctx_tool_options *opts, const greenctx_command *c);

/* ---- generate.c: the man page and the completions, made from the command table ---- */
int greenctx_generate_man(void);
int greenctx_generate_completion(greenctx_tool_options *opts, const char *shell);

/* ---- tool_common.c ---- */

/* The path of a file that ships with the tool: $env_var when set (even if wrong, so that
 * errors name it), else, from the executable's directory, `file` beside it, at
 * install_relpath, in ../lib/greenctx/, or at build_relpath (NULL or "": none). Never a path
 * compiled in: a copied tool must not load whatever sits there. NULL when none is readable. */
const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_relpath);

/* --sim: sets the simulated driver's environment, before the library's first call. */
int greenctx_tool_use_sim(greenctx_tool_options *opts, const char *spec);
/* The simulated driver's models ("h200 h100 ..."), asked of it; NULL when it is not found. */
const char *greenctx_tool_sim_models(void);

/* ---- groups.c: groups on the command line with the tool's errors, and what `plan` and `map`
 * share ---- */

/* Parses argv into groups; on an error prints why (with the syntax's help) and returns -1. */
int tool_parse_groups(const greenctx_tool_options *opts, int argc, char **argv, unsigned sm_count,
                      unsigned unit_sms, group_request *out);

/* What `plan` and `map` share: their options, the device's partition and the parsed groups. */

typedef struct tool_split_setup {
    int device_ordinal;
    gctx_partition *device; /* the whole device */
    gctx_partition_info info;
    group_request request;
    gctx_split_options options;
} tool_split_setup;

/* Parses "[--device N] [--json] [--round MODE] GROUP...", starts the tool and takes the
 * device's partition. Returns an exit code (GREENCTX_EXIT_HELP after the usage). */
int tool_split_setup_begin(int argc, char **argv, greenctx_tool_options *opts,
                           tool_split_setup *setup);
void tool_split_setup_end(tool_split_setup *setup);
/* greenctx_tool_fail for a refused split, with the groups scaled down to fit when they don't. */
int tool_split_fail(const greenctx_tool_options *opts, const tool_split_setup *st, gctx_status s);
/* A split path's name as the JSON documents write it ("structured", "granules" or
 * "fine_granules"), and what it is for people. */
typedef struct tool_path_words {
    const char *name, *text;
} tool_path_words;
const tool_path_words *tool_path(gctx_split_path path);

/* ---- `greenctx run`: cmd_run.c calls run_sweep.c and run_report_merge.c; all three call
 * run_claims.c and run_child.c, which call none of them ---- */

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

/* ---- run_claims.c ---- */

/* Checks REQ on every device it confines (the planner's split under --shared, else the
 * syntax: the claim decides). Plans the session, or prints why and returns the exit code. */
int run_check_request(const run_job *job, const char *request, run_session *session);

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

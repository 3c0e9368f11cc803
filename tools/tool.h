/* Shared declarations of the greenctx tool. A command is greenctx_cmd_NAME in cmd_NAME.c and
 * one row of commands.c's table; it gets argv from its own name on, parses it with options.h,
 * returns a GREENCTX_EXIT_* code and reports errors with greenctx_tool_error. One that uses
 * the driver calls greenctx_tool_start before printing anything, so that a run on the
 * simulated driver says so first. */
#ifndef GREENCTX_TOOL_H
#define GREENCTX_TOOL_H

#include <stdio.h>

#include "command.h"
#include "json.h"
#include "options.h"

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

/* ---- commands.c: the command table, for main (greenctx.c), generate.c and completion.c ---- */
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

/* info --sizes (info_sizes.c): every legal partition size of each device and how many fit
 * (text or JSON); an exit code. */
int tool_info_sizes(const greenctx_tool_options *opts, const gctx_device_info *devices,
                    int nb_devices);

/* ---- generate.c (the man page) and completion.c: made from the command table ---- */
int greenctx_generate_man(greenctx_tool_options *opts);
int greenctx_generate_completion(greenctx_tool_options *opts, const char *shell);

/* ---- tool_common.c ---- */

/* What `function` (const char *(void)) of the simulated driver at path returns, or NULL. */
const char *greenctx_sim_text(const char *path, const char *function);

/* The path of a file that ships with the tool: $env_var when set (even if wrong, so that
 * errors name it), else, from the executable's directory, `file` beside it, at
 * install_relpath, in ../lib/greenctx/, or at build_relpath (NULL or "": none). Never a path
 * compiled in: a copied tool must not load whatever sits there. NULL when none is readable. */
const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_relpath);

/* ---- sim_option.c ---- */

/* --sim: sets the simulated driver's environment, before the library's first call. */
int greenctx_tool_use_sim(greenctx_tool_options *opts, const char *spec);
/* The simulated driver's models ("h200 h100 ..."), asked of it; NULL when it is not found. */
const char *greenctx_tool_sim_models(void);

#endif

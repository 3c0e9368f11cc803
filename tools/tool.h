/*
 * Shared declarations of the greenctx tool (tools/greenctx.c dispatches to the commands).
 *
 * Adding a command:
 * 1. write `int greenctx_cmd_NAME(int argc, char **argv, greenctx_tool_options *opts)`
 *    in tools/cmd_NAME.c (and add the file to tools/CMakeLists.txt), parsing its arguments
 *    with tools/options.h (which also takes the shared options: --sim, --device, --json);
 * 2. add one row {"NAME", greenctx_cmd_NAME, "one-line help"} to the table in greenctx.c.
 *
 * A command gets argv as the command sees it: argv[0] is the command's name ("info"),
 * argv[1..argc-1] its own arguments, after the global options. It returns the tool's exit
 * code: GREENCTX_EXIT_OK, GREENCTX_EXIT_FAILED or GREENCTX_EXIT_USAGE. It prints results on
 * stdout and errors through greenctx_tool_error() (stderr, and a JSON error under --json).
 * Every command that uses the driver calls greenctx_tool_start() once its arguments are
 * parsed and before printing anything, so that a run on the simulated driver says so first
 * (`mps` uses none).
 */
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

/* Each command's own options (the shared ones come on top), and what else the completions
 * offer: mps's actions. */
extern const greenctx_option greenctx_info_options[];
extern const greenctx_option tool_split_options[]; /* plan's and map's (groups.c) */
extern const greenctx_option greenctx_run_options[];
extern const greenctx_option greenctx_mps_options[];
extern const char *const greenctx_mps_actions[];

/* ---- commands.c: the command table, for main (greenctx.c), generate.c and completion.c ---- */
size_t greenctx_tool_nb_commands(void);
const char *greenctx_tool_command_name(size_t i);
const char *greenctx_tool_command_help(size_t i);
/* Command i's own options ({NULL}-terminated; NULL: the shared ones only). */
const greenctx_option *greenctx_tool_command_options(size_t i);
/* What command i's first argument may be (mps: start, stop, status; help: the commands),
 * NULL-terminated, or NULL for anything. */
const char *const *greenctx_tool_command_words(size_t i);
/* 1 when command i runs a program: from its first argument (or what follows --) on, the
 * words are the program's. */
int greenctx_tool_command_runs_program(size_t i);
/* Prints command i's --help on stdout (the tool's usage for `help`). */
int greenctx_tool_command_usage(size_t i, greenctx_tool_options *opts);
void greenctx_tool_usage(FILE *out);
/* What command i's --help (or, for i == -1, the tool's usage) prints, NUL-terminated; NULL
 * when it could not be captured. The caller frees it (generate.c). */
char *greenctx_tool_capture_usage(long i);
/* "Exit status: 0 done; 1 failed ...; 2 bad usage ...", for the usage and the man page. */
extern const char greenctx_exit_status_help[];
/* The options only the tool takes, before the command (--version, -V, --generate-*), their
 * ids in this order. */
const struct greenctx_option *greenctx_tool_global_options(void);
enum {
    GREENCTX_GLOBAL_VERSION,
    GREENCTX_GLOBAL_VERSION_SHORT,
    GREENCTX_GLOBAL_MAN,
    GREENCTX_GLOBAL_COMPLETION
};
/* The index of the command called name, or -1. */
long greenctx_tool_find_command(const char *name);
/* "info, plan, ...": the commands, for a message. */
const char *greenctx_tool_command_names(void);
/* The help of command i (-1: the tool's) as the greenctx.help/1 JSON document on stdout. */
int greenctx_tool_help_json(const greenctx_tool_options *opts, long i);
/* Runs command i on argv (its name first); sets opts->command (not for help). */
int greenctx_tool_command_run(size_t i, int argc, char **argv, greenctx_tool_options *opts);

/* The simulated driver's models ("h200 h100 ..."), asked of the simulated driver itself
 * (gctxsim_models); NULL when it is not found. */
const char *greenctx_tool_sim_models(void);

/* ---- generate.c (the man page) and completion.c: made from the command table ---- */
int greenctx_generate_man(greenctx_tool_options *opts);
int greenctx_generate_completion(greenctx_tool_options *opts, const char *shell);

/* ---- tool_common.c ---- */

/* The error document on stdout: {"greenctx_version", "schema": "greenctx.error/1",
 * "command": COMMAND or null, "error": {"status", "message"}}. */
void greenctx_json_error(const char *command, const char *status, const char *message);

/* --sim MODEL[,MODEL...][@DRIVER]: sets the environment the simulated driver reads. Must run
 * before the library's first call. Returns an exit code after printing why it failed. */
int greenctx_tool_use_sim(greenctx_tool_options *opts, const char *spec);

#endif

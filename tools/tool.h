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

#include "greenctx.h"
#include "json.h"
#include "numbers.h" /* greenctx_parse_int, for the commands' options */

enum {
    GREENCTX_EXIT_OK = 0,     /* done */
    GREENCTX_EXIT_FAILED = 1, /* the command ran and failed (no driver, driver error, ...) */
    GREENCTX_EXIT_USAGE = 2   /* bad command line */
};

/* What the shared options (before or after the command, tools/options.h) decided. */
typedef struct greenctx_tool_options {
    const char *program;    /* argv[0] of the tool */
    const char *command;    /* the command's name once known ("plan"), for messages */
    int argc;               /* the whole command line, for hints that repeat it */
    char **argv;
    int simulated;          /* 1 when --sim was given */
    const char *sim_models; /* --sim's models ("h200,a100"), else NULL */
    int sim_driver_version; /* --sim's @DRIVER (13000), or 0 when not given */
    const char *sim_library; /* the simulated driver file chosen for --sim, else NULL */
    int device;             /* --device N (default 0) */
    int device_given;
    int json;               /* --json */
    int banner_on_stderr;   /* the simulated-driver banner goes to stderr, not stdout: a
                               command whose stdout is not its own (run: the program's) */
} greenctx_tool_options;

typedef int (*greenctx_command_fn)(int argc, char **argv, greenctx_tool_options *opts);

int greenctx_cmd_info(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_plan(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_bench(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_map(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_run(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_ps(int argc, char **argv, greenctx_tool_options *opts);
int greenctx_cmd_mps(int argc, char **argv, greenctx_tool_options *opts);

/* ---- greenctx.c: the command table, for tools/generate.c ---- */
size_t greenctx_tool_nb_commands(void);
const char *greenctx_tool_command_name(size_t i);
const char *greenctx_tool_command_help(size_t i);
/* Prints command i's --help on stdout (the tool's usage for `help`). */
int greenctx_tool_command_usage(size_t i, greenctx_tool_options *opts);
void greenctx_tool_usage(FILE *out);
/* The options only the tool takes, before the command (--version, -V, --generate-*). */
const struct greenctx_option *greenctx_tool_global_options(void);

/* ---- generate.c: made from the command table ---- */
int greenctx_generate_man(greenctx_tool_options *opts);
int greenctx_generate_completion(greenctx_tool_options *opts, const char *shell);

/* ---- tool_common.c ---- */

/* Prints "greenctx CMD: <message>" on stderr and, under --json, the document
 * {"greenctx_version", "schema": "greenctx.error/1", "command": CMD or null, "error":
 * {"status": STATUS, "message": MESSAGE}} on stdout so that a script reading stdout sees the
 * refusal too.
 * Returns exit_code. */
int greenctx_tool_error(const greenctx_tool_options *opts, int exit_code, const char *status,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The error document on stdout: {"greenctx_version", "schema": "greenctx.error/1",
 * "command": COMMAND or null, "error": {"status", "message"}}. */
void greenctx_json_error(const char *command, const char *status, const char *message);

/* "13.0" from 13000, into buf; returns buf. */
const char *greenctx_format_driver_version(int version, char *buf, size_t size);

/* Call once a command's arguments are parsed, before its output. On the simulated driver it
 * prints "simulated driver: MODELS (driver X.Y) — no GPU is used" (on stdout, or on stderr
 * under --json so that stdout stays one JSON document, or with banner_on_stderr). Returns
 * GREENCTX_EXIT_OK; GREENCTX_EXIT_FAILED with a message when no driver loads (the message says what was tried
 * and, unless --sim was given, the user's own command line with --sim h200); or
 * GREENCTX_EXIT_USAGE when the simulated driver refused its configuration (--sim or the
 * GREENCTX_SIM_* variables), with the simulator's list of what is valid. */
int greenctx_tool_start(const greenctx_tool_options *opts);

/* 1 when the loaded driver is the simulated one: --sim, or GREENCTX_CUDA_LIBRARY naming it
 * (recognised by its test hooks). Call after greenctx_tool_start. */
int greenctx_tool_simulated(const greenctx_tool_options *opts);

/* greenctx_tool_error() with the status's name and gctx_last_error() (or the status string
 * when empty); returns GREENCTX_EXIT_FAILED. */
int greenctx_tool_fail(const greenctx_tool_options *opts, gctx_status status);

/* --sim MODEL[,MODEL...][@DRIVER]: sets the environment the simulated driver reads. Must run
 * before the library's first call. Returns an exit code after printing why it failed. */
int greenctx_tool_use_sim(greenctx_tool_options *opts, const char *spec);

#endif

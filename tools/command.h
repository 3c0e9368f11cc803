/* A command's contract with the tool (the shared options, exit codes, errors, the driver's
 * start), from greenctx_cli, which the tool and greenctx-bench both link: bench/ includes this
 * and options.h, never tool.h, the tool's own. */
#ifndef GREENCTX_TOOL_COMMAND_H
#define GREENCTX_TOOL_COMMAND_H

#include <stdarg.h>
#include <stddef.h>

#include "greenctx.h"
#include "numbers.h" /* greenctx_parse_int, greenctx_format_driver_version */

enum {
    GREENCTX_EXIT_OK = 0,     /* done */
    GREENCTX_EXIT_FAILED = 1, /* the command ran and failed (no driver, driver error, ...) */
    GREENCTX_EXIT_USAGE = 2,  /* bad command line */
    GREENCTX_EXIT_HELP = -1   /* --help printed the usage: a command stops, the tool exits 0 */
};

/* What the shared options (before or after the command, tools/options.h) decided. */
typedef struct greenctx_tool_options {
    const char *command;    /* the command's name once known ("plan"), for messages */
    int argc;               /* the whole command line, for hints that repeat it */
    char **argv;
    int simulated;          /* 1 when --sim was given */
    const char *sim_models; /* --sim's models ("h200,a100"), else NULL */
    int sim_driver_version; /* --sim's @DRIVER (13000), or 0 when not given */
    int device;             /* --device N (default 0) */
    int device_given;
    const char *device_name; /* --device by UUID (or its prefix) or PCI bus id: the index is
                                found by greenctx_tool_start, which sets device */
    int json;               /* --json */
    int banner_on_stderr;   /* the simulated-driver banner goes to stderr, not stdout: a
                               command whose stdout is not its own (run: the program's) */
    const char *const *usage; /* the command's --help, in parts (NULL-terminated): the parser
                                 prints it (tools/options.h); NULL: --help is the command's */
} greenctx_tool_options;

/* ---- tool_common.c ---- */

/* vsnprintf into buf, cut (when too long) where no UTF-8 character is split. */
void greenctx_vformat(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* "greenctx CMD: <message>" on stderr and, under --json, greenctx.error/1 on stdout too. */
int greenctx_tool_error(const greenctx_tool_options *opts, int exit_code, const char *status,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Call once a command's arguments are parsed, before its output: loads the driver (on the
 * simulated one, prints its banner: on stderr under --json or banner_on_stderr) and looks up a
 * --device given by UUID or PCI bus id. Returns an exit code, after saying why it failed (no
 * driver, a configuration the simulator refuses, no such device, an ambiguous UUID prefix). */
int greenctx_tool_start(greenctx_tool_options *opts);

/* 1 on the simulated driver: --sim, or GREENCTX_CUDA_LIBRARY naming it. After tool_start. */
int greenctx_tool_simulated(const greenctx_tool_options *opts);
/* 1 when the driver loaded is the simulated one (its file name), --sim given or not. */
int greenctx_driver_simulated(void);

/* greenctx_tool_error() with the status's name and gctx_last_error(); GREENCTX_EXIT_FAILED. */
int greenctx_tool_fail(const greenctx_tool_options *opts, gctx_status status);

/* The tool's exit code: HELP is 0; a --json failure with no document gets the error document;
 * a failed write of stdout fails. */
int greenctx_tool_finish(const greenctx_tool_options *opts, int rc);

#endif

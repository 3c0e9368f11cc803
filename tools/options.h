/* The tool's command line: one parser for the global options and every command's own. Every
 * option is accepted as `--name value` and `--name=value`, before or after the command; the
 * shared ones (--sim, --device/-d, --json/-j, --verbose, --help/-h) are handled here. A lone
 * "--" ends the options. A command loops on greenctx_args_next until GREENCTX_ARG_END,
 * returning args.rc on GREENCTX_ARG_STOP (a message or its --help was printed). */
#ifndef GREENCTX_TOOL_OPTIONS_H
#define GREENCTX_TOOL_OPTIONS_H

#include "command.h"

/* One option of a command: "--round" and the words its value takes ("strict, down, nearest
 * or up", for the message when it is missing), or NULL for a flag. A value_help that starts
 * with '[' ("[=SECONDS]") makes the value optional: given only as --name=VALUE, else
 * args.value is NULL. A table ends with {NULL}. */
typedef struct greenctx_option {
    const char *name;
    const char *value_help;
} greenctx_option;

/* The values the completions offer: a value_help that is one of these (the object) gets them. */
extern const char greenctx_values_round[];  /* --round's modes: strict, down, nearest, up */
extern const char greenctx_values_sim[];    /* the simulated driver's models */
extern const char greenctx_values_device[]; /* the devices: indices and UUIDs */
extern const char greenctx_values_file[];   /* a file name */

typedef struct greenctx_args {
    int argc;
    char **argv;
    int next;   /* index of the next argument to look at */
    int ended;  /* "--" was seen */
    const char *name;  /* the option as typed ("--round" of "--round=up") */
    const char *value; /* the option's value, or the positional argument */
    const greenctx_option *option; /* the option just returned */
    int rc;            /* the exit code after GREENCTX_ARG_STOP */
    greenctx_tool_options *opts; /* where the shared options land */
    int negative_positional; /* set by a command: "-3" is a positional (a count it refuses
                                with its own message), not an unknown option */
} greenctx_args;

enum {
    GREENCTX_ARG_END = -1,        /* no arguments left */
    GREENCTX_ARG_POSITIONAL = -2, /* args.value is a positional argument */
    GREENCTX_ARG_HELP = -3,       /* --help or -h where opts->usage is NULL (with it, the parser
                                     prints it and returns STOP, rc GREENCTX_EXIT_HELP) */
    GREENCTX_ARG_STOP = -4        /* a message was printed: exit with args.rc */
};

/* Starts after argv[0] (the program, or the command's name). */
void greenctx_args_begin(greenctx_args *args, int argc, char **argv, greenctx_tool_options *opts);

/* The next argument: the index of one of `own` (may be NULL), or a GREENCTX_ARG_*. A bad one
 * prints why and returns STOP (rc USAGE, or FAILED when --sim finds no simulated driver). */
int greenctx_args_next(greenctx_args *args, const greenctx_option *own);

/* 1 when argv[from..] holds long_name or short_name before a lone "--": a look ahead. */
int greenctx_args_given(int argc, char **argv, int from, const char *long_name,
                        const char *short_name);

/* The options every command shares, for the man page and completions. */
const greenctx_option *greenctx_shared_options(void);

/* "greenctx[ CMD]: <message> (see greenctx[ CMD] --help)" (and JSON); GREENCTX_EXIT_USAGE. */
int greenctx_args_bad(greenctx_args *args, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* greenctx_args_bad for the option's value: "--round takes strict, ...; got 'x'". */
int greenctx_args_refuse(greenctx_args *args);

#endif

/*
 * The bench's commands: greenctx-bench's (main.c hands bench_main its arguments, argv[0]
 * "bench"), and those it hands on to. Only the files that parse a command line include this:
 * the benchmarks themselves see no command line.
 *
 * What they take from tools/ is the command contract both programs link (greenctx_cli:
 * tools/command.h: the shared options, exit codes, errors, the driver's start; its option
 * parser, tools/options.h), never the tool itself.
 */
#ifndef GREENCTX_BENCH_COMMANDS_H
#define GREENCTX_BENCH_COMMANDS_H

#include "bench.h"
#include "command.h"
#include "options.h"

/* bench_args.c: a benchmark's options as data. Each sets what `to` points at: a flag an int
 * to 1; a count an unsigned in [lo, hi]; a word (a file name: not empty, not an option) a
 * const char *; parse, its own way (0, or -1 when the value is not one). With max > 1 it is a
 * list: it takes the words that follow it too, up to max, `to` an array and *count the values
 * so far. A bad value says "NAME needs HELP, got 'VALUE'". */
typedef enum bench_arg_kind {
    BENCH_ARG_FLAG = 0,
    BENCH_ARG_UINT,
    BENCH_ARG_TEXT,
    BENCH_ARG_PARSE,
} bench_arg_kind;

typedef struct bench_arg {
    const char *name, *help; /* "--reps", "a count from 1 to 1000000" */
    bench_arg_kind kind;
    void *to;
    int lo, hi;
    unsigned max, *count;
    int (*parse)(const char *value, void *to, unsigned i);
} bench_arg;

/* A table's rows, one kind each. */
#define BENCH_FLAG(name, to) {name, NULL, BENCH_ARG_FLAG, to, 0, 0, 0, NULL, NULL}
#define BENCH_UINT(name, help, to, lo, hi) {name, help, BENCH_ARG_UINT, to, lo, hi, 0, NULL, NULL}
#define BENCH_TEXT(name, help, to) {name, help, BENCH_ARG_TEXT, to, 0, 0, 0, NULL, NULL}
#define BENCH_PARSE(name, help, to, parse) {name, help, BENCH_ARG_PARSE, to, 0, 0, 0, NULL, parse}
/* A list: up to max values into the array to, *count of them so far. */
#define BENCH_LIST(name, help, kind, to, lo, hi, max, count, parse)                            \
    {name, help, kind, to, lo, hi, max, count, parse}

#define BENCH_MAX_ARGS 16
#define BENCH_NB(table) (sizeof(table) / sizeof((table)[0]))
/* A word that is no option's value: GREENCTX_EXIT_OK, or an exit code after a message. */
typedef int (*bench_positional)(greenctx_args *args, const char *word, void *ctx);

/* The rest of args (greenctx_args_begin'd, its opts->usage the command's --help) by table's n
 * options; positional takes the other words (NULL: none is taken). GREENCTX_EXIT_OK, an exit
 * code after a message, or GREENCTX_EXIT_HELP after the usage on stdout. */
int bench_args_parse(greenctx_args *args, const bench_arg *table, size_t n,
                     bench_positional positional, void *ctx);

/* cmd_bench.c: everything after the shared options that come first. */
int bench_main(int argc, char **argv, greenctx_tool_options *opts);



#endif

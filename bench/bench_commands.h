/* The bench's commands, and their parser: only they see a command line. From tools/ they take
 * the command contract both programs link (command.h, options.h), never the tool itself. */
#ifndef GREENCTX_BENCH_COMMANDS_H
#define GREENCTX_BENCH_COMMANDS_H

#include "bench.h"
#include "command.h"
#include "options.h"

/* bench_args.c: options as data, each setting what `to` points at: a flag an int to 1, a
 * count an unsigned in [lo, hi], a word a const char *. max > 1: a list of up to max counts,
 * *count so far. A bad value: "NAME needs HELP, got 'VALUE'". */
typedef enum bench_arg_kind { BENCH_ARG_FLAG = 0, BENCH_ARG_UINT, BENCH_ARG_TEXT } bench_arg_kind;

typedef struct bench_arg {
    const char *name, *help; /* "--reps", "a count from 1 to 1000000" */
    bench_arg_kind kind;
    void *to;
    int lo, hi;
    unsigned max, *count;
} bench_arg;

#define BENCH_FLAG(name, to) {name, NULL, BENCH_ARG_FLAG, to, 0, 0, 0, NULL}
#define BENCH_UINT(name, help, to, lo, hi) {name, help, BENCH_ARG_UINT, to, lo, hi, 0, NULL}
#define BENCH_TEXT(name, help, to) {name, help, BENCH_ARG_TEXT, to, 0, 0, 0, NULL}
/* A list: up to max counts into the array to, *count of them so far. */
#define BENCH_UINT_LIST(name, help, to, lo, hi, max, count)                                    \
    {name, help, BENCH_ARG_UINT, to, lo, hi, max, count}

#define BENCH_MAX_ARGS 16
#define BENCH_NB(table) (sizeof(table) / sizeof((table)[0]))
/* A word that is no option's value: GREENCTX_EXIT_OK, or an exit code after a message. */
typedef int (*bench_positional)(greenctx_args *args, const char *word, void *ctx);

/* The rest of args by table; positional takes the other words. An exit code
 * (GREENCTX_EXIT_HELP after the usage). */
int bench_args_parse(greenctx_args *args, const bench_arg *table, size_t n,
                     bench_positional positional, void *ctx);

/* cmd_bench.c: everything after the shared options that come first. */
int bench_main(int argc, char **argv, greenctx_tool_options *opts);

#endif

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

#include "bench_elastic.h"
#include "command.h"
#include "options.h"

/* cmd_bench.c: everything after the shared options that come first. */
int bench_main(int argc, char **argv, greenctx_tool_options *opts);

/* cmd_bench_overlap.c: `greenctx bench overlap ...` (argv[0] is "overlap"); command is the
 * command line as typed, for the output's header. */
int greenctx_bench_overlap(int argc, char **argv, greenctx_tool_options *opts,
                           const char *command);

/* tenant_worker.c: `greenctx bench tenant-worker ...`, one tenant of `bench tenants`. */
int bench_tenant_worker(int argc, char **argv, greenctx_tool_options *opts);

/* bench_elastic_cmd.c: `bench elastic`'s own options (argv[0] is "elastic"). An exit code,
 * or -1 after --help. */
int bench_elastic_parse(int argc, char **argv, greenctx_tool_options *opts, bench_env *env,
                        elastic_options *eo);

/* bench_elastic_worker.c: `greenctx bench elastic-worker ...`, one tenant of the two-process
 * arms of `bench elastic`. */
int bench_elastic_worker(int argc, char **argv, greenctx_tool_options *opts);

#endif

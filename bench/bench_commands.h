/*
 * The bench's commands as the tool runs them: `greenctx bench` (cmd_bench.c, whose entry
 * point tools/tool.h declares for the command table), and those it hands on to. Only the
 * files that parse a command line include this: the benchmarks themselves see no tool.
 *
 * What they take from the tool is its command contract (tools/command.h: the shared options,
 * exit codes, errors, the driver's start) and its option parser (tools/options.h).
 */
#ifndef GREENCTX_BENCH_COMMANDS_H
#define GREENCTX_BENCH_COMMANDS_H

#include "bench_elastic.h"
#include "command.h"
#include "options.h"

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

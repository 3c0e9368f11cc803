/*
 * The bench's commands as the tool runs them: `greenctx bench` (cmd_bench.c, whose entry
 * point tools/tool.h declares for the command table), and the two it hands on to. Only the
 * files that parse a command line include this: the benchmarks themselves see no tool.
 *
 * What they take from the tool is its command contract (tools/command.h: the shared options,
 * exit codes, errors, the driver's start) and its option parser (tools/options.h).
 */
#ifndef GREENCTX_BENCH_COMMANDS_H
#define GREENCTX_BENCH_COMMANDS_H

#include "command.h"
#include "options.h"

/* cmd_bench_overlap.c: `greenctx bench overlap ...` (argv[0] is "overlap"); command is the
 * command line as typed, for the output's header. */
int greenctx_bench_overlap(int argc, char **argv, greenctx_tool_options *opts,
                           const char *command);

/* tenant_worker.c: `greenctx bench tenant-worker ...`, one tenant of `bench tenants`. */
int bench_tenant_worker(int argc, char **argv, greenctx_tool_options *opts);

#endif

/* The bench's command: only it sees a command line. From tools/ it takes the command contract
 * both programs link (command.h, options.h), never the tool itself. */
#ifndef GREENCTX_BENCH_COMMANDS_H
#define GREENCTX_BENCH_COMMANDS_H

#include "bench.h"
#include "command.h"
#include "options.h"

/* cmd_bench.c: everything after the shared options that come first. */
int bench_main(int argc, char **argv, greenctx_tool_options *opts);

#endif

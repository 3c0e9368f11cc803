/* bench elastic in two processes (the next stage): listed, not run yet. */
#include <stdio.h>
#include <string.h>

#include "bench_elastic.h"

void bench_elastic_two_process(const bench_env *env, const elastic_options *eo,
                               elastic_result *res)
{
    (void)env, (void)eo, (void)res;
}

int bench_elastic_worker(int argc, char **argv, greenctx_tool_options *opts)
{
    (void)argc, (void)argv, (void)opts;
    return GREENCTX_EXIT_USAGE;
}

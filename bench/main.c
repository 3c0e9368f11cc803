/* greenctx-bench: the benchmarks' own program. `greenctx bench ARGS` runs it with the shared
 * options it took first. It parses with the tool's option parser (greenctx_cli,
 * tools/command.h), so its options and errors read as the tool's. */
#include <string.h>

#include "bench_commands.h"

/* The shared option arg names (--sim, --device, --json, ... as --x or --x=V), or NULL. */
static const greenctx_option *shared_option(const char *arg)
{
    size_t len = strcspn(arg, "=");
    for (const greenctx_option *o = greenctx_shared_options(); o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, arg, len))
            return o;
    return NULL;
}

int main(int argc, char **argv)
{
    greenctx_tool_options opts;
    memset(&opts, 0, sizeof opts);
    opts.command = "bench"; /* messages read as the tool's: "greenctx bench: ..." */
    opts.argc = argc;
    opts.argv = argv;
    /* The shared options before the benchmark's name, one at a time: the parser would take
     * the benchmark's own options after them too, which are the benchmark's to parse. */
    int i = 1;
    for (const greenctx_option *o; i < argc && (o = shared_option(argv[i]));) {
        int end = i + (o->value_help && !strchr(argv[i], '=') ? 2 : 1);
        greenctx_args args;
        greenctx_args_begin(&args, end < argc ? end : argc, argv, &opts);
        args.next = i;
        if (greenctx_args_next(&args, NULL) == GREENCTX_ARG_STOP)
            return greenctx_tool_finish(&opts, args.rc);
        i = end;
    }
    /* The benchmark sees argv from "bench" on, as it did inside the tool (its output's
     * header prints the command as `greenctx [--sim ...] bench ...`). */
    char name[] = "bench", *bench_argv[argc + 1];
    int n = 0;
    bench_argv[n++] = name;
    for (; i <= argc; i++)
        bench_argv[n++] = argv[i];
    return greenctx_tool_finish(&opts, bench_main(n - 1, bench_argv, &opts));
}

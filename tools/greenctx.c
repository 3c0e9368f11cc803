/* The greenctx tool: main, its own options before the command, and the command it runs. */
#include <stdio.h>

#include "tool.h"

/* The tool's version, and the library's (the libgreenctx.so loaded: maybe another build's). */
static int print_version(const greenctx_tool_options *opts)
{
    char tool[32];
    snprintf(tool, sizeof tool, "%d.%d.%d", GCTX_VERSION_MAJOR, GCTX_VERSION_MINOR,
             GCTX_VERSION_PATCH);
    if (!opts->json) {
        printf("greenctx %s (libgreenctx %s)\n", tool, gctx_version_string());
        return GREENCTX_EXIT_OK;
    }
    json_writer w;
    json_begin(&w, stdout, "greenctx.version/1");
    json_string(&w, "library", gctx_version_string());
    json_int(&w, "library_version", gctx_version());
    json_string(&w, "tool", tool);
    json_end(&w);
    return GREENCTX_EXIT_OK;
}

int main(int argc, char **argv)
{
    greenctx_tool_options opts = {.argc = argc, .argv = argv};
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, &opts);
    for (;;) {
        int id = greenctx_args_next(&args, greenctx_global_options);
        if (id == GREENCTX_ARG_STOP)
            return greenctx_tool_finish(&opts, args.rc);
        if (id == GREENCTX_ARG_HELP) {
            if (opts.json || greenctx_args_given(argc, argv, args.next, "--json", "-j"))
                return greenctx_tool_finish(&opts, greenctx_tool_help_json(&opts, NULL));
            greenctx_tool_usage(stdout);
            return greenctx_tool_finish(&opts, GREENCTX_EXIT_OK);
        }
        if (id == GREENCTX_GLOBAL_VERSION || id == GREENCTX_GLOBAL_VERSION_SHORT)
            return greenctx_tool_finish(&opts, print_version(&opts));
        if (id == GREENCTX_GLOBAL_MAN)
            return greenctx_tool_finish(&opts, greenctx_generate_man());
        if (id == GREENCTX_GLOBAL_COMPLETION)
            return greenctx_tool_finish(&opts, greenctx_generate_completion(&opts, args.value));
        if (id == GREENCTX_ARG_END) {
            if (!opts.json)
                greenctx_tool_usage(stderr);
            return greenctx_tool_finish(&opts, greenctx_tool_error(&opts, GREENCTX_EXIT_USAGE,
                                                                   "usage",
                                                                   "no command given; commands: %s",
                                                                   greenctx_tool_command_names()));
        }
        if (id == GREENCTX_ARG_POSITIONAL)
            break;
    }
    /* The command sees argv from its name on: the options before it are taken already. */
    int i = args.next - 1;
    const greenctx_command *c = greenctx_tool_find_command(argv[i]);
    if (c) {
        /* COMMAND --help --json: the help as a document, as `--json help COMMAND` gives it. */
        if (greenctx_args_given(argc, argv, i + 1, "--help", "-h") &&
            (opts.json || greenctx_args_given(argc, argv, i + 1, "--json", "-j")))
            return greenctx_tool_finish(&opts, greenctx_tool_help_json(&opts, c));
        if (!(c->flags & GREENCTX_COMMAND_TAKES_COMMAND)) /* help's messages are the tool's */
            opts.command = c->name;
        opts.usage = c->usage;
        return greenctx_tool_finish(&opts, c->run(argc - i, argv + i, &opts));
    }
    return greenctx_tool_finish(&opts, greenctx_args_bad(&args,
                                                         "unknown command '%s'; commands: %s",
                                                         argv[i], greenctx_tool_command_names()));
}

/* The greenctx tool: global options, the command table, usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "tool.h"

typedef struct command {
    const char *name;
    greenctx_command_fn run;
    const char *help;
} command;

static int cmd_help(int argc, char **argv, greenctx_tool_options *opts);

/* The one list of commands: the usage, `help COMMAND`, the man page and the shell
 * completions (tools/generate.c) are all made from it and from each command's --help. */
static const command commands[] = {
    {"info", greenctx_cmd_info, "the driver, each device's SM rules and the feature matrix"},
    {"plan", greenctx_cmd_plan, "dry-run a split: what each group would get (plan 24 40 rest)"},
    {"bench", greenctx_cmd_bench, "measured isolation, scaling, overhead, overlap and elastic partitions (needs a GPU)"},
    {"map", greenctx_cmd_map, "make the split, run a kernel on each partition, show its SMs"},
    {"run", greenctx_cmd_run, "run a program confined to N SMs, or sweep sizes (run --sms 16 -- CMD)"},
    {"ps", greenctx_cmd_ps, "the tenants of each GPU: SM claims, free SMs, MPS, recent events"},
    {"mps", greenctx_cmd_mps, "your own MPS control daemon: mps start|stop|status"},
    {"help", cmd_help, "this help, or a command's (help plan)"},
};
#define NB_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: greenctx [GLOBAL OPTIONS] COMMAND [ARGS]\n"
            "\n"
            "Partition a CUDA GPU's SMs with green contexts.\n"
            "\n"
            "global options:\n"
            "  --sim MODEL[,MODEL...][@DRIVER]  use the simulated driver instead of the GPU,\n"
            "                                   e.g. --sim h200@13000, --sim h200,a100@12050\n"
            "                                   (models: h200 h100 a100 l4 b200)\n"
            "  -d, --device N                   the device (default 0; info: all of them)\n"
            "  -j, --json                       one JSON document on stdout (errors too)\n"
            "  --verbose                        what the library decides, on stderr\n"
            "                                   (GREENCTX_LOG=info; GREENCTX_LOG=debug: more)\n"
            "  -h, --help                       this help (COMMAND --help: the command's)\n"
            "  -V, --version                    the tool's and library's version\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NB_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nOptions go before or after the command, as --x VALUE or --x=VALUE.\n"
                 "Exit status: 0 done, 1 failed, 2 bad usage.\n"
                 "e.g. greenctx --sim h200 plan 24 40 rest\n");
}

/* The valid commands, from the table the usage lists too. */
static const char *command_names(void)
{
    static char names[128];
    names[0] = '\0';
    for (size_t c = 0; c < NB_COMMANDS; c++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? ", " : "",
                 commands[c].name);
    return names;
}

static const command *find_command(const char *name)
{
    for (size_t c = 0; c < NB_COMMANDS; c++)
        if (!strcmp(name, commands[c].name))
            return &commands[c];
    return NULL;
}

/* `greenctx help [COMMAND]`: the tool's usage, or the command's own --help. */
static int cmd_help(int argc, char **argv, greenctx_tool_options *opts)
{
    if (argc < 2) {
        usage(stdout);
        return GREENCTX_EXIT_OK;
    }
    const command *c = find_command(argv[1]);
    if (!c || c->run == cmd_help)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "help: no command '%s'; commands: %s", argv[1],
                                   command_names());
    char help[] = "--help";
    char *help_argv[] = {argv[1], help, NULL};
    opts->command = c->name;
    return c->run(2, help_argv, opts);
}

/* The man page and completions see the table through these (tools/generate.c). */
size_t greenctx_tool_nb_commands(void) { return NB_COMMANDS; }
const char *greenctx_tool_command_name(size_t i) { return commands[i].name; }
const char *greenctx_tool_command_help(size_t i) { return commands[i].help; }
int greenctx_tool_command_usage(size_t i, greenctx_tool_options *opts)
{
    char help[] = "--help", name[32];
    snprintf(name, sizeof name, "%s", commands[i].name);
    char *argv[] = {name, help, NULL};
    if (commands[i].run == cmd_help) {
        usage(stdout);
        return GREENCTX_EXIT_OK;
    }
    opts->command = commands[i].name;
    return commands[i].run(2, argv, opts);
}
void greenctx_tool_usage(FILE *out) { usage(out); }

/* The options only the tool takes, before the command (the two --generate ones make the
 * man page and the completions at build time, and are not in the usage). */
enum { GLOBAL_VERSION, GLOBAL_VERSION_SHORT, GLOBAL_MAN, GLOBAL_COMPLETION };
static const greenctx_option global_options[] = {{"--version", NULL},
                                                 {"-V", NULL},
                                                 {"--generate-man", NULL},
                                                 {"--generate-completion", "bash or zsh"},
                                                 {NULL, NULL}};

const greenctx_option *greenctx_tool_global_options(void) { return global_options; }

static int print_version(const greenctx_tool_options *opts)
{
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", GCTX_VERSION_MAJOR, GCTX_VERSION_MINOR,
             GCTX_VERSION_PATCH);
    if (!opts->json) {
        printf("greenctx %s (header %s)\n", gctx_version_string(), header);
        return GREENCTX_EXIT_OK;
    }
    json_writer w;
    json_begin(&w, stdout, "greenctx.version/1");
    json_string(&w, "library", gctx_version_string());
    json_string(&w, "header", header);
    json_end(&w);
    return GREENCTX_EXIT_OK;
}

int main(int argc, char **argv)
{
    greenctx_tool_options opts;
    memset(&opts, 0, sizeof opts);
    opts.program = argv[0];
    opts.argc = argc;
    opts.argv = argv;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, &opts);
    for (;;) {
        int id = greenctx_args_next(&args, global_options);
        if (id == GREENCTX_ARG_STOP)
            return greenctx_tool_finish(&opts, args.rc);
        if (id == GREENCTX_ARG_HELP) {
            usage(stdout);
            return greenctx_tool_finish(&opts, GREENCTX_EXIT_OK);
        }
        if (id == GLOBAL_VERSION || id == GLOBAL_VERSION_SHORT)
            return greenctx_tool_finish(&opts, print_version(&opts));
        if (id == GLOBAL_MAN)
            return greenctx_tool_finish(&opts, greenctx_generate_man(&opts));
        if (id == GLOBAL_COMPLETION)
            return greenctx_tool_finish(&opts, greenctx_generate_completion(&opts, args.value));
        if (id == GREENCTX_ARG_END) {
            if (!opts.json)
                usage(stderr);
            return greenctx_tool_finish(&opts, greenctx_tool_error(&opts, GREENCTX_EXIT_USAGE,
                                                                   "usage",
                                                                   "no command given; commands: %s",
                                                                   command_names()));
        }
        if (id == GREENCTX_ARG_POSITIONAL)
            break;
    }
    /* The command sees argv from its name on: the options before it are taken already. */
    int i = args.next - 1;
    const command *c = find_command(argv[i]);
    if (c) {
        if (c->run != cmd_help)
            opts.command = c->name;
        return greenctx_tool_finish(&opts, c->run(argc - i, argv + i, &opts));
    }
    return greenctx_tool_finish(&opts, greenctx_args_bad(&args,
                                                         "unknown command '%s'; commands: %s",
                                                         argv[i], command_names()));
}

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
    const greenctx_option *options; /* its own options, NULL for none (the shared ones on top) */
    const char *const *words;       /* what its first argument may be, NULL for anything */
    int runs_program;               /* its first argument, or what follows --, is a program */
} command;

static int cmd_help(int argc, char **argv, greenctx_tool_options *opts);
/* help's words: the names of the table below, copied there when the completions ask. */
static const char *command_names_list[16];

/* The one list of commands: the usage, `help COMMAND`, the man page (with each command's
 * --help) and the shell completions (tools/generate.c: the options and words below) are all
 * made from it. bench runs greenctx-bench, whose options are its own: the completions offer
 * the shared ones. */
static const command commands[] = {
    {"info", greenctx_cmd_info, "the driver, each device's SM rules and the feature matrix",
     greenctx_info_options, NULL, 0},
    {"plan", greenctx_cmd_plan, "dry-run a split: what each group would get (plan 24 40 rest)",
     tool_split_options, NULL, 0},
    {"bench", greenctx_cmd_bench, "measured isolation, scaling, overhead, overlap and elastic partitions (needs a GPU)",
     NULL, NULL, 0},
    {"map", greenctx_cmd_map, "make the split, run a kernel on each partition, show its SMs",
     tool_split_options, NULL, 0},
    {"run", greenctx_cmd_run, "run a program confined to N SMs, or sweep sizes (run --sms 16 -- CMD)",
     greenctx_run_options, NULL, 1},
    {"ps", greenctx_cmd_ps, "the tenants of each GPU: SM claims, free SMs, MPS, recent events",
     NULL, NULL, 0},
    {"mps", greenctx_cmd_mps, "your own MPS control daemon: mps start|stop|status",
     greenctx_mps_options, greenctx_mps_actions, 0},
    {"help", cmd_help, "this help, or a command's (help plan)", NULL, command_names_list, 0},
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
            "  -d, --device N                   the device (default 0; info, ps: all of them), or\n"
            "                                   its UUID (or its start) or PCI bus id\n"
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
                 "%s"
                 "e.g. greenctx --sim h200 plan 24 40 rest\n",
            greenctx_exit_status_help);
}

const char greenctx_exit_status_help[] =
    "Exit status: 0 done; 1 failed: no driver, a driver error, or a well-written request\n"
    "the device can't give (plan 133 on 132 SMs); 2 bad usage: a malformed command line\n"
    "(plan 0x10, plan 150%, an unknown option). run exits with its program's status.\n";

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

/* `greenctx --json help [COMMAND]`: {"command": COMMAND or null, "usage": the text, and
 * without a command "commands": [{"name", "summary"}]}. */
static int help_json(const greenctx_tool_options *opts, const command *c)
{
    char *text = greenctx_tool_capture_usage(c && c->run != cmd_help ? c - commands : -1);
    if (!text)
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    json_writer w;
    json_begin(&w, stdout, "greenctx.help/1");
    if (c && c->run != cmd_help)
        json_string(&w, "command", c->name);
    else
        json_null(&w, "command");
    json_string(&w, "usage", text);
    if (!c || c->run == cmd_help) {
        json_array(&w, "commands");
        for (size_t i = 0; i < NB_COMMANDS; i++) {
            json_object(&w, NULL);
            json_string(&w, "name", commands[i].name);
            json_string(&w, "summary", commands[i].help);
            json_close(&w);
        }
        json_close(&w);
    }
    json_end(&w);
    free(text);
    return GREENCTX_EXIT_OK;
}

/* `greenctx help [COMMAND]`: the tool's usage, or the command's own --help (`help help`:
 * the tool's usage, which is help's). */
static int cmd_help(int argc, char **argv, greenctx_tool_options *opts)
{
    const char *name = NULL;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; (id = greenctx_args_next(&args, NULL)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_STOP)
            return args.rc;
        if (id == GREENCTX_ARG_POSITIONAL && name)
            return greenctx_args_bad(&args, "help takes one command; got '%s' and '%s'", name,
                                     args.value);
        if (id == GREENCTX_ARG_POSITIONAL)
            name = args.value;
    }
    const command *c = name ? find_command(name) : NULL;
    if (name && !c)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "help: no command '%s'; commands: %s", name,
                                   command_names());
    if (opts->json)
        return help_json(opts, c);
    if (!c || c->run == cmd_help) {
        usage(stdout);
        return GREENCTX_EXIT_OK;
    }
    char help[] = "--help";
    char *help_argv[] = {(char *)c->name, help, NULL};
    opts->command = c->name;
    return c->run(2, help_argv, opts);
}

/* The man page and completions see the table through these (tools/generate.c). */
size_t greenctx_tool_nb_commands(void) { return NB_COMMANDS; }
const char *greenctx_tool_command_name(size_t i) { return commands[i].name; }
const char *greenctx_tool_command_help(size_t i) { return commands[i].help; }
const greenctx_option *greenctx_tool_command_options(size_t i) { return commands[i].options; }
const char *const *greenctx_tool_command_words(size_t i)
{
    _Static_assert(NB_COMMANDS < sizeof command_names_list / sizeof *command_names_list,
                   "command_names_list holds every command and a NULL");
    for (size_t c = 0; c < NB_COMMANDS; c++)
        command_names_list[c] = commands[c].name;
    return commands[i].words;
}
int greenctx_tool_command_runs_program(size_t i) { return commands[i].runs_program; }
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

/* The tool's version, and the library's (gctx_version: the libgreenctx.so the tool loaded,
 * which is another build's when LD_LIBRARY_PATH says so). */
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

/* 1 when argv[from..] holds long_name or short_name before a lone "--" (after which the
 * words are a program's). */
static int given(int argc, char **argv, int from, const char *long_name, const char *short_name)
{
    for (int i = from; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], long_name) || !strcmp(argv[i], short_name))
            return 1;
    return 0;
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
            if (opts.json || given(argc, argv, args.next, "--json", "-j"))
                return greenctx_tool_finish(&opts, help_json(&opts, NULL));
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
        /* COMMAND --help --json: the help as a document, as `--json help COMMAND` gives it. */
        if (given(argc, argv, i + 1, "--help", "-h") &&
            (opts.json || given(argc, argv, i + 1, "--json", "-j")))
            return greenctx_tool_finish(&opts, help_json(&opts, c));
        return greenctx_tool_finish(&opts, c->run(argc - i, argv + i, &opts));
    }
    return greenctx_tool_finish(&opts, greenctx_args_bad(&args,
                                                         "unknown command '%s'; commands: %s",
                                                         argv[i], command_names()));
}

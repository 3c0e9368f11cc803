/* The command table and what is made from it: the usage, `help [COMMAND]`, each --help's text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

static int cmd_help(int argc, char **argv, greenctx_tool_options *opts);

/* The one list of commands. bench's options are greenctx-bench's: completions offer shared ones. */
const greenctx_command greenctx_commands[] = {
    {"info", greenctx_cmd_info, "the driver, each device's SM rules and the feature matrix",
     greenctx_info_usage, greenctx_info_options, NULL, 0},
    {"plan", greenctx_cmd_plan, "dry-run a split: what each group would get (plan 24 40 rest)",
     greenctx_plan_usage, tool_split_options, NULL, 0},
    {"bench", greenctx_cmd_bench, "measured isolation, scaling and overhead (needs a GPU)",
     NULL, NULL, NULL, 0},
    {"map", greenctx_cmd_map, "make the split, run a kernel on each partition, show its SMs",
     greenctx_map_usage, tool_split_options, NULL, 0},
    {"run", greenctx_cmd_run, "run a program confined to N SMs, or sweep sizes (run --sms 16 -- CMD)",
     greenctx_run_usage, greenctx_run_options, NULL, GREENCTX_COMMAND_RUNS_PROGRAM},
    {"ps", greenctx_cmd_ps, "the tenants of each GPU: SM claims, free SMs, MPS, recent events",
     greenctx_ps_usage, NULL, NULL, 0},
    {"mps", greenctx_cmd_mps, "your own MPS control daemon: mps start|stop|status",
     greenctx_mps_usage, greenctx_mps_options, greenctx_mps_actions, 0},
    {"help", cmd_help, "this help, or a command's (help plan)", NULL, NULL, NULL,
     GREENCTX_COMMAND_TAKES_COMMAND},
};
#define NB_COMMANDS (sizeof greenctx_commands / sizeof greenctx_commands[0])
const size_t greenctx_nb_commands = NB_COMMANDS;
void greenctx_tool_usage(FILE *out)
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
        fprintf(out, "  %-8s %s\n", greenctx_commands[i].name, greenctx_commands[i].help);
    fprintf(out, "\nOptions go before or after the command, as --x VALUE or --x=VALUE.\n"
                 "%s"
                 "e.g. greenctx --sim h200 plan 24 40 rest\n",
            greenctx_exit_status_help);
}

const char greenctx_exit_status_help[] =
    "Exit status: 0 done; 1 failed: no driver, a driver error, or a well-written request\n"
    "the device can't give (plan 133 on 132 SMs); 2 bad usage: a malformed command line\n"
    "(plan 0x10, plan 150%, an unknown option). run exits with its program's status.\n";

const char *greenctx_tool_command_names(void)
{
    static char names[128];
    names[0] = '\0';
    for (size_t c = 0; c < NB_COMMANDS; c++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? ", " : "",
                 greenctx_commands[c].name);
    return names;
}

const greenctx_command *greenctx_tool_find_command(const char *name)
{
    for (size_t c = 0; c < NB_COMMANDS; c++)
        if (!strcmp(name, greenctx_commands[c].name))
            return &greenctx_commands[c];
    return NULL;
}

/* A command's --help (the tool's usage for help, which is help's own). */
static int command_usage(const greenctx_command *c, greenctx_tool_options *opts)
{
    if (!c || c->run == cmd_help) {
        greenctx_tool_usage(stdout);
        return GREENCTX_EXIT_OK;
    }
    char help[] = "--help", name[32];
    snprintf(name, sizeof name, "%s", c->name);
    char *argv[] = {name, help, NULL};
    opts->command = c->name;
    opts->usage = c->usage;
    return c->run(2, argv, opts);
}

int greenctx_tool_help_json(const greenctx_tool_options *opts, const greenctx_command *c)
{
    if (c && c->run == cmd_help)
        c = NULL;
    char *text = greenctx_tool_capture_usage(c);
    if (!text)
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    json_writer w;
    json_begin(&w, stdout, "greenctx.help/1");
    json_string(&w, "command", c ? c->name : NULL);
    json_string(&w, "usage", text);
    if (!c) {
        json_array(&w, "commands");
        for (size_t i = 0; i < NB_COMMANDS; i++) {
            json_object(&w, NULL);
            json_string(&w, "name", greenctx_commands[i].name);
            json_string(&w, "summary", greenctx_commands[i].help);
            json_close(&w);
        }
        json_close(&w);
    }
    json_end(&w);
    free(text);
    return GREENCTX_EXIT_OK;
}

/* `greenctx help [COMMAND]`: the tool's usage, or the command's own --help. */
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
    const greenctx_command *c = name ? greenctx_tool_find_command(name) : NULL;
    if (name && !c)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "help: no command '%s'; commands: %s", name,
                                   greenctx_tool_command_names());
    return opts->json ? greenctx_tool_help_json(opts, c) : command_usage(c, opts);
}

/* The tool's own options, before the command (--generate-* run at build time; not in usage). */
const greenctx_option greenctx_global_options[] = {
    [GREENCTX_GLOBAL_VERSION] = {"--version", NULL},
    [GREENCTX_GLOBAL_VERSION_SHORT] = {"-V", NULL},
    [GREENCTX_GLOBAL_MAN] = {"--generate-man", NULL},
    [GREENCTX_GLOBAL_COMPLETION] = {"--generate-completion", "bash or zsh"},
    [GREENCTX_NB_GLOBAL] = {NULL, NULL},
};

char *greenctx_tool_capture_usage(const greenctx_command *c)
{
    FILE *tmp = tmpfile();
    if (!tmp)
        return NULL;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        if (saved >= 0)
            close(saved);
        fclose(tmp);
        return NULL;
    }
    greenctx_tool_options quiet = {0};
    command_usage(c, &quiet);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long size = ftell(tmp);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text) {
        rewind(tmp);
        size_t got = fread(text, 1, (size_t)size, tmp);
        text[got] = '\0';
    }
    fclose(tmp);
    return text;
}

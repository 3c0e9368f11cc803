/* The tool's one option parser, and the options every command shares (tools/options.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tool.h"

/* The shared options, after the command as before it (-d and -j are the short forms). */
enum { SHARED_SIM, SHARED_DEVICE, SHARED_JSON, SHARED_VERBOSE, SHARED_DEVICE_SHORT,
       SHARED_JSON_SHORT, NB_SHARED };
const char greenctx_values_round[] = "strict, down, nearest or up";
const char greenctx_values_sim[] = "MODEL[,MODEL...][@DRIVER], e.g. h200@13000";
const char greenctx_values_device[] =
    "a device number (0, 1, ...), a UUID (GPU-..., or its start) or a PCI bus id";
const char greenctx_values_file[] = "a file name";

static const greenctx_option shared[] = {
    [SHARED_SIM] = {"--sim", greenctx_values_sim},
    [SHARED_DEVICE] = {"--device", greenctx_values_device},
    [SHARED_JSON] = {"--json", NULL},
    [SHARED_VERBOSE] = {"--verbose", NULL},
    [SHARED_DEVICE_SHORT] = {"-d", greenctx_values_device},
    [SHARED_JSON_SHORT] = {"-j", NULL},
    [NB_SHARED] = {NULL, NULL},
};

const greenctx_option *greenctx_shared_options(void) { return shared; }

void greenctx_args_begin(greenctx_args *args, int argc, char **argv, greenctx_tool_options *opts)
{
    *args = (greenctx_args){.argc = argc, .argv = argv, .next = 1, .opts = opts};
}

int greenctx_args_given(int argc, char **argv, int from, const char *long_name,
                        const char *short_name)
{
    for (int i = from; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], long_name) || !strcmp(argv[i], short_name))
            return 1;
    return 0;
}

/* A refusal of an option that comes before --json (or -j) is a JSON document too. */
static void json_ahead(greenctx_args *args)
{
    if (greenctx_args_given(args->argc, args->argv, args->next, "--json", "-j"))
        args->opts->json = 1;
}

int greenctx_args_bad(greenctx_args *args, const char *fmt, ...)
{
    json_ahead(args);
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    greenctx_vformat(message, sizeof message, fmt, ap);
    va_end(ap);
    const char *command = args->opts->command;
    greenctx_tool_error(args->opts, GREENCTX_EXIT_USAGE, "usage", "%s (see greenctx%s%s --help)",
                        message, command ? " " : "", command ? command : "");
    return args->rc = GREENCTX_EXIT_USAGE;
}

int greenctx_args_refuse(greenctx_args *args)
{
    return greenctx_args_bad(args, "%s takes %s; got '%s'", args->option->name,
                             args->option->value_help, args->value);
}

/* Index of the option named like arg ("--round" or "--round=..."), or -1. */
static int lookup(const greenctx_option *table, const char *arg, size_t len)
{
    for (int i = 0; table && table[i].name; i++)
        if (strlen(table[i].name) == len && strncmp(table[i].name, arg, len) == 0)
            return i;
    return -1;
}

/* Takes the option's value: after '=', or the next argument. Nonzero after a message. */
static int take_value(greenctx_args *args, const greenctx_option *option, const char *equals)
{
    if (!option->value_help) {
        if (equals)
            return greenctx_args_bad(args, "%s takes no value; got '%s'", option->name,
                                     args->name);
        args->value = NULL;
        return 0;
    }
    if (option->value_help[0] == '[') { /* optional: only as --name=VALUE */
        args->value = equals ? equals + 1 : NULL;
        return 0;
    }
    if (equals)
        args->value = equals + 1;
    else if (args->next < args->argc)
        args->value = args->argv[args->next++];
    else
        return greenctx_args_bad(args, "%s needs %s", option->name, option->value_help);
    return 0;
}

/* Nonzero after a message (args->rc says how to exit). */
static int apply_shared(greenctx_args *args, int id)
{
    greenctx_tool_options *opts = args->opts;
    switch (id) {
    case SHARED_SIM: {
        /* Looked ahead for the refusal only: a program's own --json after `run` is its. */
        int json = opts->json;
        json_ahead(args);
        args->rc = greenctx_tool_use_sim(opts, args->value);
        if (args->rc == GREENCTX_EXIT_OK)
            opts->json = json;
        return args->rc == GREENCTX_EXIT_OK ? 0 : GREENCTX_ARG_STOP;
    }
    case SHARED_DEVICE:
    case SHARED_DEVICE_SHORT:
        /* A number, or a UUID ("GPU-...") or bus id ("0000:18:00.0") found by tool_start. */
        opts->device_name = NULL;
        if (greenctx_parse_int(args->value, 0, INT_MAX, &opts->device) != 0) {
            if (strncasecmp(args->value, "GPU-", 4) != 0 && !strchr(args->value, ':'))
                return greenctx_args_bad(args, "%s needs %s; got '%s'", shared[id].name,
                                         shared[id].value_help, args->value);
            opts->device_name = args->value;
        }
        opts->device_given = 1;
        return 0;
    case SHARED_VERBOSE: {
        /* The library's diagnostics (src/log.h), read when it loads the driver. */
        const char *level = getenv("GREENCTX_LOG");
        if (!level || strcmp(level, "debug") != 0)
            setenv("GREENCTX_LOG", "info", 1);
        return 0;
    }
    default:
        opts->json = 1;
        return 0;
    }
}

int greenctx_args_next(greenctx_args *args, const greenctx_option *own)
{
    for (;;) {
        if (args->next >= args->argc)
            return GREENCTX_ARG_END;
        const char *arg = args->argv[args->next++];
        args->name = arg;
        args->value = arg;
        if (args->ended || arg[0] != '-' || arg[1] == '\0' ||
            (args->negative_positional && arg[1] >= '0' && arg[1] <= '9'))
            return GREENCTX_ARG_POSITIONAL;
        if (strcmp(arg, "--") == 0) {
            args->ended = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            if (!args->opts->usage)
                return GREENCTX_ARG_HELP;
            for (const char *const *part = args->opts->usage; *part; part++)
                fputs(*part, stdout);
            args->rc = GREENCTX_EXIT_HELP;
            return GREENCTX_ARG_STOP;
        }
        const char *equals = strchr(arg, '=');
        size_t len = equals ? (size_t)(equals - arg) : strlen(arg);
        int id = lookup(own, arg, len);
        const greenctx_option *table = own;
        if (id < 0 && (id = lookup(shared, arg, len)) >= 0)
            table = shared;
        if (id < 0) {
            greenctx_args_bad(args, "unknown option '%.*s'", (int)len, arg);
            return GREENCTX_ARG_STOP;
        }
        args->option = &table[id];
        if (take_value(args, args->option, equals) != 0)
            return GREENCTX_ARG_STOP;
        if (table == own)
            return id;
        if (apply_shared(args, id) != 0)
            return GREENCTX_ARG_STOP;
    }
}

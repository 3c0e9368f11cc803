/* The greenctx tool: global options, the command table, usage. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

typedef struct command {
    const char *name;
    greenctx_command_fn run;
    const char *help;
} command;

static const command commands[] = {
    {"info", greenctx_cmd_info, "the driver, each device's SM rules and the feature matrix"},
    {"plan", greenctx_cmd_plan, "dry-run a split: what each group would get (plan 24 40 rest)"},
    {"bench", greenctx_cmd_bench, "measured isolation, scaling and overhead (needs a GPU)"},
    {"map", greenctx_cmd_map, "make the split, run a kernel on each partition, show its SMs"},
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
            "  --help                           this help\n"
            "  --version                        the tool's and library's version\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NB_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nCommon command options: --device N, --json.\n"
                 "Exit status: 0 done, 1 failed, 2 bad usage.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("greenctx: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see greenctx --help)\n", stderr);
    return GREENCTX_EXIT_USAGE;
}

static int readable(const char *path) { return path && *path && access(path, R_OK) == 0; }

/* The simulated driver's file: $GREENCTX_SIM_LIBRARY, next to the executable, the install
 * layout (<bindir>/../<libdir>/greenctx/), ../lib/greenctx/, then the build tree's. */
static const char *find_sim_library(void)
{
    static char found[PATH_MAX + 64];
    const char *env = getenv("GREENCTX_SIM_LIBRARY");
    if (env && *env)
        return env; /* named explicitly: used even if it turns out wrong, so errors say so */

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            const char *relative[] = {"libgreenctx_sim.so",
#ifdef GREENCTX_SIM_INSTALL_RELPATH
                                      GREENCTX_SIM_INSTALL_RELPATH,
#endif
                                      "../lib/greenctx/libgreenctx_sim.so"};
            for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
                snprintf(found, sizeof found, "%s/%s", exe, relative[i]);
                if (readable(found))
                    return found;
            }
        }
    }
#ifdef GREENCTX_SIM_BUILD_PATH
    if (readable(GREENCTX_SIM_BUILD_PATH))
        return GREENCTX_SIM_BUILD_PATH;
#endif
    return NULL;
}

/* --sim MODEL[,MODEL...][@DRIVER]: the environment the simulated driver reads. Must run
 * before the library's first call (the driver is loaded once per process). */
static int apply_sim(const char *spec, greenctx_tool_options *opts)
{
    static char models[256];
    const char *at = strchr(spec, '@');
    size_t len = at ? (size_t)(at - spec) : strlen(spec);
    if (len == 0 || len >= sizeof models)
        return bad_usage("--sim needs MODEL[,MODEL...][@DRIVER], e.g. h200@13000; got '%s'", spec);
    memcpy(models, spec, len);
    models[len] = '\0';
    if (at && greenctx_parse_int(at + 1, 1000, 99999, &opts->sim_driver_version) != 0)
        return bad_usage("--sim: the driver version after @ is a number like 13000 or 12050; "
                         "got '%s'",
                         at + 1);

    const char *lib = find_sim_library();
    if (!lib) {
        fprintf(stderr, "greenctx: --sim: the simulated driver (libgreenctx_sim.so) was not "
                        "found next to the tool, in ../lib/greenctx, or in the build tree; set "
                        "GREENCTX_SIM_LIBRARY to its path\n");
        return GREENCTX_EXIT_FAILED;
    }
    setenv("GREENCTX_CUDA_LIBRARY", lib, 1);
    setenv("GREENCTX_SIM_DEVICES", models, 1);
    if (opts->sim_driver_version) {
        char version[16];
        snprintf(version, sizeof version, "%d", opts->sim_driver_version);
        setenv("GREENCTX_SIM_DRIVER_VERSION", version, 1);
    }
    opts->simulated = 1;
    opts->sim_models = models;
    opts->sim_library = lib;
    return GREENCTX_EXIT_OK;
}

int main(int argc, char **argv)
{
    greenctx_tool_options opts = {argv[0], 0, NULL, 0, NULL};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return GREENCTX_EXIT_OK;
        } else if (!strcmp(arg, "--version")) {
            printf("greenctx %s (header %d.%d.%d)\n", gctx_version_string(), GCTX_VERSION_MAJOR,
                   GCTX_VERSION_MINOR, GCTX_VERSION_PATCH);
            return GREENCTX_EXIT_OK;
        } else if (!strcmp(arg, "--sim") || !strncmp(arg, "--sim=", 6)) {
            const char *spec = arg[5] == '=' ? arg + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!spec)
                return bad_usage("%s needs MODEL[,MODEL...][@DRIVER], e.g. --sim h200@13000", arg);
            int rc = apply_sim(spec, &opts);
            if (rc != GREENCTX_EXIT_OK)
                return rc;
        } else {
            return bad_usage("unknown global option '%s'", arg);
        }
    }
    if (i == argc) {
        usage(stderr);
        return GREENCTX_EXIT_USAGE;
    }
    for (size_t c = 0; c < NB_COMMANDS; c++)
        if (!strcmp(argv[i], commands[c].name))
            return commands[c].run(argc - i, argv + i, &opts);
    return bad_usage("unknown command '%s'", argv[i]);
}

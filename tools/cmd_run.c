/* greenctx run [--device N] --sms REQ [--round MODE] [--report FILE.json] [--no-inherit] -- CMD
 * greenctx run [--device N] --sweep REQ,REQ,... [--round MODE] [--json] [--svg FILE] -- CMD
 *
 * Checks the request with the planner, then starts CMD with the preload (docs/run.md), which
 * confines every kernel the program launches to a green context of that size. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "companion.h"
#include "groups.h"
#include "run_tool.h"

#define RUN_HELP_SHOWN (-1)

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: greenctx run [--device N] --sms REQ [--round MODE] [--report FILE.json]\n"
            "                    [--no-inherit] -- CMD [ARGS...]\n"
            "       greenctx run [--device N] --sweep REQ,REQ,... [--round MODE] [--json]\n"
            "                    [--svg FILE] -- CMD [ARGS...]\n"
            "\n"
            "Runs an unmodified CUDA program with every kernel it launches confined to a green\n"
            "context of REQ SMs (on every thread, stream and graph; docs/run.md).\n"
            "  REQ            a GROUP (below) or all; without --device every device gets it, and\n"
            "                 DEV=GROUP,DEV=GROUP gives each device its own (others are refused)\n"
            "  --device N     confine device N only; the program may not use the others\n"
            "  --round MODE   strict (default; percentages: nearest), down, nearest, up\n"
            "  --report FILE  at exit, JSON: device, SMs and their ids, binds redirected, threads\n"
            "  --no-inherit   programs CMD starts are not confined\n"
            "  --sweep LIST   run CMD once per size: wall time, speed-up against the smallest\n"
            "                 size and efficiency per SM (--json, --svg FILE)\n"
            "When the program can't be confined it does not run: greenctx run exits 1 before\n"
            "starting it, or the program is stopped with exit status %d.\n%s",
            GREENCTX_RUN_EXIT_NOT_CONFINED, tool_groups_help);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("greenctx run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see greenctx run --help)\n", stderr);
    return GREENCTX_EXIT_USAGE;
}

/* Options up to "--" or the first word that is not one; what follows is the command. */
static int parse_args(int argc, char **argv, run_args *a)
{
    static const char *const valued[] = {"--device", "--sms", "--sweep", "--round", "--report",
                                         "--svg"};
    memset(a, 0, sizeof *a);
    a->device = -1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return RUN_HELP_SHOWN;
        }
        if (strcmp(arg, "--no-inherit") == 0 || strcmp(arg, "--json") == 0) {
            *(arg[2] == 'n' ? &a->no_inherit : &a->json) = 1;
            continue;
        }
        size_t k = 0, len = strcspn(arg, "=");
        while (k < sizeof valued / sizeof valued[0] &&
               !(strlen(valued[k]) == len && strncmp(arg, valued[k], len) == 0))
            k++;
        if (k == sizeof valued / sizeof valued[0])
            return usage_error("unknown option '%s'", arg);
        const char *value = arg[len] == '=' ? arg + len + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value || !*value)
            return usage_error("%s needs a value", valued[k]);
        switch (k) {
        case 0:
            if (greenctx_parse_int(value, 0, RUN_MAX_DEVICES - 1, &a->device) != 0)
                return usage_error("--device needs a device number (0, 1, ...), got '%s'", value);
            break;
        case 1: a->sms = value; break;
        case 2: a->sweep = value; break;
        case 3:
            if (tool_parse_rounding(value) < 0)
                return usage_error("--round takes strict, down, nearest or up, got '%s'", value);
            a->round = value;
            break;
        case 4: a->report = value; break;
        default: a->svg = value; break;
        }
    }
    a->command = argv + i;
    if (!a->sms == !a->sweep)
        return usage_error("give --sms REQ (one run) or --sweep REQ,REQ,... %s", "(sizes)");
    if (!*a->command)
        return usage_error("give the command to run after the options (%s)",
                           "greenctx run --sms 16 -- ./app");
    if (a->sms && (a->json || a->svg))
        return usage_error("%s go with --sweep", "--json and --svg");
    if (a->sweep && a->report)
        return usage_error("%s goes with --sms (one run)", "--report");
    return GREENCTX_EXIT_OK;
}

/* A GROUP's syntax alone (no device needed): a typo is bad usage, not a failed plan. */
static int check_syntax(const run_request *request)
{
    for (unsigned i = 0; i < request->nb_entries; i++) {
        char *text = (char *)request->entries[i].text;
        tool_group_request groups;
        if (strcmp(text, "all") == 0)
            continue;
        if (tool_parse_groups("run", 1, &text, 100, &groups) != 0)
            return GREENCTX_EXIT_USAGE;
        tool_free_groups(&groups);
    }
    return GREENCTX_EXIT_OK;
}

int run_check_request(const run_args *args, const char *request, char *text, size_t text_size,
                      run_device_plan *plans, unsigned *nb_plans)
{
    if (args->device >= 0 && strpbrk(request, "=,"))
        return usage_error("with --device, give one GROUP or all, not '%s'", request);
    if (args->device >= 0)
        snprintf(text, text_size, "%d=%s", args->device, request);
    else
        snprintf(text, text_size, "%s", request);
    run_request parsed;
    char why[512];
    if (run_request_parse(text, &parsed, why, sizeof why) != 0)
        return usage_error("%s", why);
    int rc = check_syntax(&parsed), count = 0;
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    gctx_status s = gctx_device_count(&count);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail("run", s);
    if (count == 0) {
        fprintf(stderr, "greenctx run: the driver shows no device (CUDA_VISIBLE_DEVICES=%s); "
                        "the program was not started\n",
                getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
        return GREENCTX_EXIT_FAILED;
    }
    for (unsigned i = 0; i < parsed.nb_entries; i++) {
        if (parsed.entries[i].device >= count) {
            fprintf(stderr, "greenctx run: there is no device %d: the driver shows %d (valid "
                            "devices are 0 to %d; CUDA_VISIBLE_DEVICES applies)\n",
                    parsed.entries[i].device, count, count - 1);
            return GREENCTX_EXIT_FAILED;
        }
    }
    *nb_plans = 0;
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        const char *req = run_request_for(&parsed, dev);
        if (!req)
            continue;
        if (run_plan_device(dev, req, args->round, &plans[*nb_plans], NULL, why, sizeof why) !=
            GCTX_SUCCESS) {
            fprintf(stderr, "greenctx run: %s\ngreenctx run: the program was not started\n", why);
            return GREENCTX_EXIT_FAILED;
        }
        (*nb_plans)++;
    }
    return GREENCTX_EXIT_OK;
}

int run_set_environment(const run_args *args, const char *text)
{
    /* The program's own LD_PRELOAD, taken once: a sweep sets this for every run. */
    static char *original;
    static int taken;
    if (!taken) {
        const char *old = getenv("LD_PRELOAD");
        original = old && *old ? strdup(old) : NULL;
        taken = 1;
    }
    size_t size = strlen(args->preload) + (original ? strlen(original) : 0) + 2;
    char *list = malloc(size);
    if (!list) {
        fprintf(stderr, "greenctx run: out of memory\n");
        return -1;
    }
    /* First, so that its dlsym is the one the program finds. */
    snprintf(list, size, "%s%s%s", args->preload, original ? " " : "", original ? original : "");
    int bad = setenv("LD_PRELOAD", list, 1) | setenv(GREENCTX_RUN_SMS, text, 1);
    free(list);
    bad |= args->round ? setenv(GREENCTX_RUN_ROUND, args->round, 1) : unsetenv(GREENCTX_RUN_ROUND);
    bad |= args->report ? setenv(GREENCTX_RUN_REPORT, args->report, 1)
                        : unsetenv(GREENCTX_RUN_REPORT);
    bad |= args->no_inherit ? setenv(GREENCTX_RUN_INHERIT, "0", 1) : unsetenv(GREENCTX_RUN_INHERIT);
    if (bad) {
        perror("greenctx run: setting the environment");
        return -1;
    }
    return 0;
}

/* The preload, found and loaded once here: a file the dynamic loader can't load would be
 * skipped with a warning and the program would run unconfined. */
static int find_preload(run_args *args)
{
#ifdef GREENCTX_PRELOAD_INSTALL_RELPATH
    const char *install = GREENCTX_PRELOAD_INSTALL_RELPATH;
#else
    const char *install = NULL;
#endif
#ifdef GREENCTX_PRELOAD_BUILD_PATH
    const char *build = GREENCTX_PRELOAD_BUILD_PATH;
#else
    const char *build = NULL;
#endif
    args->preload = tool_find_companion("libgreenctx_preload.so", "GREENCTX_PRELOAD_LIBRARY",
                                        install, build);
    if (!args->preload) {
        fprintf(stderr, "greenctx run: the preload (libgreenctx_preload.so) was not found next "
                        "to the tool, in ../lib/greenctx or in the build tree; set "
                        "GREENCTX_PRELOAD_LIBRARY to its path\n");
        return GREENCTX_EXIT_FAILED;
    }
    /* Its constructor reads (and takes out) the preload's variables: the ones in this
     * environment are for the program, so they are put aside while it is loaded here. */
    char *aside[64];
    size_t nb_aside = 0, prefix = strlen(GREENCTX_RUN_VAR_PREFIX);
    for (char **e = environ; *e && nb_aside < sizeof aside / sizeof aside[0]; e++)
        if (strncmp(*e, GREENCTX_RUN_VAR_PREFIX, prefix) == 0)
            aside[nb_aside++] = strdup(*e);
    for (size_t i = 0; i < nb_aside; i++)
        if (aside[i]) {
            aside[i][strcspn(aside[i], "=")] = '\0';
            unsetenv(aside[i]);
            aside[i][strlen(aside[i])] = '=';
        }
    void *handle = dlopen(args->preload, RTLD_NOW | RTLD_LOCAL);
    for (size_t i = 0; i < nb_aside; i++)
        if (aside[i])
            putenv(aside[i]); /* the environment keeps the string */
    if (!handle) {
        const char *why = dlerror();
        fprintf(stderr, "greenctx run: the preload %s can't be loaded (%s); the program was not "
                        "started\n",
                args->preload, why ? why : "no reason given");
        return GREENCTX_EXIT_FAILED;
    }
    dlclose(handle);
    return GREENCTX_EXIT_OK;
}

int greenctx_cmd_run(int argc, char **argv, const greenctx_tool_options *opts)
{
    run_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc != GREENCTX_EXIT_OK)
        return rc == RUN_HELP_SHOWN ? GREENCTX_EXIT_OK : rc;
    /* Our messages go to stderr: stdout is the program's. */
    if ((rc = greenctx_tool_start(opts, "run", 1)) != GREENCTX_EXIT_OK)
        return rc;
    if ((rc = find_preload(&args)) != GREENCTX_EXIT_OK)
        return rc;
    if (args.sweep)
        return run_sweep(&args);
    char text[512];
    run_device_plan plans[RUN_MAX_DEVICES];
    unsigned nb_plans = 0;
    rc = run_check_request(&args, args.sms, text, sizeof text, plans, &nb_plans);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    for (unsigned i = 0; i < nb_plans; i++)
        fprintf(stderr, "greenctx run: device %d: %u of %u SMs\n", plans[i].device,
                plans[i].sm_count, plans[i].device_sms);
    if (run_set_environment(&args, text) != 0)
        return GREENCTX_EXIT_FAILED;
    fflush(NULL);
    execvp(args.command[0], args.command);
    int err = errno;
    fprintf(stderr, "greenctx run: %s: %s\n", args.command[0], strerror(err));
    return err == ENOENT ? 127 : 126;
}

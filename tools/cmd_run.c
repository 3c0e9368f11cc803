/* greenctx run [--device N] --sms REQ [--round MODE] [--report FILE.json] [--no-inherit]
 *              [--wait[=S] | --shared] [--label TEXT] [--memory SIZE] -- CMD
 * greenctx run [--device N] --sweep REQ,REQ,... [--round MODE] [--json] [--svg FILE] -- CMD
 *
 * Checks the request, claims the SMs (run_claims.c; with --shared the planner's split
 * instead), then starts CMD with the preload (docs/run.md), which confines every kernel the
 * program launches to a green context on the claimed SMs. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "companion.h"
#include "groups.h"
#include "options.h"
#include "run_tool.h"

#define RUN_HELP_SHOWN (-1)

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: greenctx run [--device N] --sms REQ [--round MODE] [--report FILE.json]\n"
            "                    [--no-inherit] [--wait[=SECONDS] | --shared] [--label TEXT]\n"
            "                    [--memory SIZE] -- CMD [ARGS...]\n"
            "       greenctx run [--device N] --sweep REQ,REQ,... [--round MODE] [--json]\n"
            "                    [--svg FILE] -- CMD [ARGS...]\n"
            "\n"
            "Runs an unmodified CUDA program with every kernel it launches confined to a green\n"
            "context of REQ SMs (on every thread, stream and graph; docs/run.md).\n"
            "  REQ            a GROUP (below) or all; without --device every device gets it, and\n"
            "                 DEV=GROUP,DEV=GROUP gives each device its own (others are refused)\n"
            "  --device N     confine device N only; the program may not use the others\n"
            "  --round MODE   a count the device can't give: strict (default: refuse), down,\n"
            "                 nearest, up\n"
            "  --report FILE  when CMD ends, JSON of every process that used CUDA: device, SMs\n"
            "                 and their ids, binds redirected, threads\n"
            "  --no-inherit   programs started by a process that used CUDA are not confined\n"
            "                 (wrappers before it, such as env or sh -c, pass confinement on)\n"
            "  --wait[=S]     when the SMs are held by other tenants, queue for them (up to S\n"
            "                 seconds; no value: as long as it takes) instead of refusing\n"
            "  --shared       take no claim: other tenants may run on the same SMs (as before\n"
            "                 claims); by default the SMs are claimed (greenctx ps lists them)\n"
            "  --label TEXT   a name for the claim, shown by greenctx ps\n"
            "  --memory SIZE  the program's device-memory limit under MPS (16G, 512M):\n"
            "                 CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; refused without an MPS daemon\n"
            "  --sweep LIST   run CMD once per size: wall time, speed-up against the smallest\n"
            "                 size and efficiency per SM (--json, --svg FILE)\n"
            "When the program can't be confined it does not run: greenctx run exits 1 before\n"
            "starting it, or the program is stopped with exit status %d. Tenants on disjoint\n"
            "claims run side by side only under MPS (greenctx mps start; docs/tenants.md).\n"
            "A claim (the default) takes whole granules: a count they make (on an H200 15 of\n"
            "8 SMs and one of 12: after --sms 64, a second tenant gets 68 or rest), a share\n"
            "or rest; the GROUPs below with 0 or a suffix (:c2, :b) need --shared.\n"
            "  e.g. greenctx run --sms 64 -- ./server & greenctx run --sms rest -- ./batch\n%s",
            GREENCTX_RUN_EXIT_NOT_CONFINED, group_syntax_help);
}

/* Options up to the command (after "--", or the first word that is not an option): what
 * follows it is the program's, options or not. */
static int parse_args(int argc, char **argv, greenctx_tool_options *opts, run_args *a)
{
    enum { SMS, SWEEP, ROUND, REPORT, SVG, WAIT, SHARED, LABEL, MEMORY, NO_INHERIT };
    static const greenctx_option own[] = {
        {"--sms", "a GROUP (16, 25%, ...), all, or DEV=GROUP,DEV=GROUP"},
        {"--sweep", "sizes, e.g. 16,32,64,all"},
        {"--round", "strict, down, nearest or up"},
        {"--report", "a file for the JSON report"},
        {"--svg", "a file for the chart"},
        {"--wait", "[=SECONDS]"},
        {"--shared", NULL},
        {"--label", "a text for greenctx ps"},
        {"--memory", "a size such as 16G or 512M"},
        {"--no-inherit", NULL},
        {NULL, NULL},
    };
    memset(a, 0, sizeof *a);
    a->opts = opts;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; !a->command && (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        switch (id) {
        case GREENCTX_ARG_HELP: usage(stdout); return RUN_HELP_SHOWN;
        case GREENCTX_ARG_STOP: return args.rc;
        case GREENCTX_ARG_POSITIONAL: a->command = argv + args.next - 1; break;
        case SMS: a->sms = args.value; break;
        case SWEEP: a->sweep = args.value; break;
        case ROUND:
            if (group_syntax_rounding(args.value) < 0)
                return greenctx_args_bad(&args, "--round takes %s; got '%s'", own[ROUND].value_help,
                                         args.value);
            a->round = args.value;
            break;
        case REPORT: a->report = args.value; break;
        case SVG: a->svg = args.value; break;
        case WAIT:
            a->wait = 1;
            a->wait_ms = -1;
            if (args.value && greenctx_parse_int(args.value, 0, INT_MAX / 1000, &a->wait_ms) != 0)
                return greenctx_args_bad(&args, "--wait=SECONDS takes a whole number of seconds; "
                                                "got '%s'",
                                         args.value);
            if (args.value)
                a->wait_ms *= 1000;
            break;
        case SHARED: a->shared = 1; break;
        case LABEL: a->label = args.value; break;
        case MEMORY: a->memory = args.value; break;
        default: a->no_inherit = 1; break;
        }
    }
    a->device = opts->device_given ? opts->device : -1;
    a->json = opts->json;
    if (!a->sms == !a->sweep)
        return greenctx_args_bad(&args, "give --sms REQ (one run) or --sweep REQ,REQ,... (sizes)");
    if (!a->command)
        return greenctx_args_bad(&args, "give the command to run after the options "
                                        "(greenctx run --sms 16 -- ./app)");
    if (a->sms && (a->json || a->svg))
        return greenctx_args_bad(&args, "--json and --svg go with --sweep");
    if (a->sweep && a->report)
        return greenctx_args_bad(&args, "--report goes with --sms (one run)");
    if (a->shared && (a->wait || a->label))
        return greenctx_args_bad(&args, "--shared takes no claim: --wait and --label go with a "
                                        "claim");
    return GREENCTX_EXIT_OK;
}

/* A GROUP's syntax alone (no device needed): a typo is bad usage, not a failed plan. A
 * claim is a count of SMs, so a GROUP's suffixes (16:c2) need --shared. */
static int check_syntax(const run_args *args, const run_request *request)
{
    const greenctx_tool_options *opts = args->opts;
    for (unsigned i = 0; i < request->nb_entries; i++) {
        char *text = (char *)request->entries[i].text;
        group_request groups;
        if (strcmp(text, "all") == 0)
            continue;
        if (!args->shared && strchr(text, ':'))
            return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                       "'%s': a claim is a count or a share of the SMs; a "
                                       "GROUP's suffixes need --shared (no claim)",
                                       text);
        if (tool_parse_groups(opts, 1, &text, 100, 1, &groups) != 0)
            return GREENCTX_EXIT_USAGE;
        group_request_free(&groups);
    }
    return GREENCTX_EXIT_OK;
}

int run_check_request(const run_args *args, const char *request, char *text, size_t text_size,
                      run_device_plan *plans, unsigned *nb_plans)
{
    const greenctx_tool_options *opts = args->opts;
    if (args->device >= 0 && strpbrk(request, "=,"))
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "with --device, give one GROUP or all, not '%s'", request);
    int n = args->device >= 0 ? snprintf(text, text_size, "%d=%s", args->device, request)
                              : snprintf(text, text_size, "%s", request);
    /* Cut, a device would get another size (the preload reads at most as much). */
    if (n < 0 || (size_t)n >= text_size)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "the request is %zu bytes long; the preload takes at most %zu "
                                   "(with --device's DEV=)",
                                   strlen(request), text_size - 1);
    run_request parsed;
    char why[512];
    if (run_request_parse(text, &parsed, why, sizeof why) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s", why);
    int rc = check_syntax(args, &parsed), count = 0;
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    gctx_status s = gctx_device_count(&count);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(opts, s);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (count == 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                   "the driver shows no device (CUDA_VISIBLE_DEVICES=%s); the "
                                   "program was not started",
                                   visible ? visible : "unset");
    for (unsigned i = 0; i < parsed.nb_entries; i++) {
        if (parsed.entries[i].device >= count)
            return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                       "there is no device %d: the driver shows %d (valid devices "
                                       "are 0 to %d; CUDA_VISIBLE_DEVICES=%s applies)",
                                       parsed.entries[i].device, count, count - 1,
                                       visible ? visible : "unset");
    }
    *nb_plans = 0;
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        const char *req = run_request_for(&parsed, dev);
        if (!req)
            continue;
        s = args->shared
                ? run_plan_device(dev, req, args->round, &plans[*nb_plans], NULL, why, sizeof why)
                : run_plan_claim(dev, req, &plans[*nb_plans], why, sizeof why);
        if (s != GCTX_SUCCESS)
            return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                       "%s\n  the program was not started", why);
        (*nb_plans)++;
    }
    return GREENCTX_EXIT_OK;
}

/* --memory for every confined device, in MPS's syntax ("0=16G,1=16G"). */
static int set_memory_limit(const run_args *args, const char *text)
{
    if (!args->memory)
        return 0;
    run_request parsed;
    char why[256], value[1024] = "";
    int count = 0;
    if (run_request_parse(text, &parsed, why, sizeof why) != 0 ||
        gctx_device_count(&count) != GCTX_SUCCESS)
        return -1;
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        size_t used = strlen(value);
        if (run_request_for(&parsed, dev))
            snprintf(value + used, sizeof value - used, "%s%d=%s", used ? "," : "", dev,
                     args->memory);
    }
    return setenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", value, 1);
}

int run_set_environment(const run_args *args, const char *text, const run_claims *claims)
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
        greenctx_tool_fail(args->opts, GCTX_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    /* First, so that its dlsym is the one the program finds. */
    snprintf(list, size, "%s%s%s", args->preload, original ? " " : "", original ? original : "");
    int bad = setenv("LD_PRELOAD", list, 1) | setenv(GREENCTX_RUN_SMS, text, 1);
    free(list);
    bad |= args->round ? setenv(GREENCTX_RUN_ROUND, args->round, 1) : unsetenv(GREENCTX_RUN_ROUND);
    bad |= args->report_dir ? setenv(GREENCTX_RUN_REPORT_DIR, args->report_dir, 1)
                            : unsetenv(GREENCTX_RUN_REPORT_DIR);
    bad |= args->no_inherit ? setenv(GREENCTX_RUN_INHERIT, "0", 1) : unsetenv(GREENCTX_RUN_INHERIT);
    bad |= claims->variable[0] ? setenv(GREENCTX_RUN_CLAIM, claims->variable, 1)
                               : unsetenv(GREENCTX_RUN_CLAIM);
    bad |= set_memory_limit(args, text);
    if (bad) {
        perror("greenctx run: setting the environment");
        return -1;
    }
    return 0;
}

/* Loads the preload here, once, and says why it can't be used (NULL when it can): a file the
 * dynamic loader can't load would be skipped with a warning, and any other library would let
 * the program run unconfined, so it must carry greenctx_preload_abi of this very version. Its
 * constructor reads the preload's variables: the ones in this environment are the program's,
 * so they are put aside meanwhile. */
static const char *load_error(const char *path)
{
    static char why[512];
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
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *error = handle ? NULL : dlerror();
    for (size_t i = 0; i < nb_aside; i++)
        if (aside[i])
            putenv(aside[i]); /* the environment keeps the string */
    if (!handle) {
        snprintf(why, sizeof why, "%s", error ? error : "no reason given");
        return why;
    }
    const run_preload_abi *abi = dlsym(handle, GREENCTX_PRELOAD_ABI_SYMBOL);
    if (!abi || strncmp(abi->magic, GREENCTX_PRELOAD_ABI_MAGIC, sizeof abi->magic) != 0)
        snprintf(why, sizeof why, "it is not greenctx's preload: it has no %s",
                 GREENCTX_PRELOAD_ABI_SYMBOL);
    else if (abi->version != GCTX_VERSION)
        snprintf(why, sizeof why, "it is the preload of greenctx %d, this tool is %d: use the "
                                  "preload built with the tool",
                 abi->version, GCTX_VERSION);
    else
        why[0] = '\0';
    dlclose(handle);
    return why[0] ? why : NULL;
}

/* The preload, found relative to the tool and checked once here. */
static int find_preload(run_args *args)
{
    static char absolute[PATH_MAX];
    args->preload = tool_find_companion("libgreenctx_preload.so", "GREENCTX_PRELOAD_LIBRARY",
                                        GREENCTX_PRELOAD_INSTALL_RELPATH,
                                        GREENCTX_PRELOAD_BUILD_RELPATH);
    /* Absolute, so that programs that change directory still find it for their children. */
    if (args->preload && realpath(args->preload, absolute))
        args->preload = absolute;
    if (!args->preload)
        return greenctx_tool_error(args->opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DRIVER",
                                   "the preload (libgreenctx_preload.so) was not found next to "
                                   "the tool, in ../lib/greenctx or in the build tree beside the "
                                   "tool; set GREENCTX_PRELOAD_LIBRARY to its path");
    const char *why = load_error(args->preload);
    if (why)
        return greenctx_tool_error(args->opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DRIVER",
                                   "the preload %s can't be used (%s); the program was not "
                                   "started",
                                   args->preload, why);
    return GREENCTX_EXIT_OK;
}

/* Under another `greenctx run` (its variables are in the environment), this run's request
 * would replace the outer one's and the program would get a size the outer run did not give. */
static int refuse_nested(const greenctx_tool_options *opts)
{
    const char *outer = getenv(GREENCTX_RUN_SMS);
    if (!outer)
        return GREENCTX_EXIT_OK;
    return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "nested",
                               "already inside greenctx run (%s=%s): a nested run would replace "
                               "the outer run's confinement; run the program directly (the outer "
                               "run confines it), or start the outer run with --no-inherit from a "
                               "program that uses CUDA; the program was not started",
                               GREENCTX_RUN_SMS, outer);
}

/* Starts the tool with its banner on stderr (stdout is the program's); a driver that does not
 * start is reported as text, never as JSON on the program's stdout. */
static int start(const greenctx_tool_options *opts)
{
    greenctx_tool_options quiet = *opts;
    quiet.json = opts->json || gctx_init() == GCTX_SUCCESS;
    return greenctx_tool_start(&quiet);
}

int greenctx_cmd_run(int argc, char **argv, greenctx_tool_options *opts)
{
    run_args args;
    int rc = parse_args(argc, argv, opts, &args);
    if (rc != GREENCTX_EXIT_OK)
        return rc == RUN_HELP_SHOWN ? GREENCTX_EXIT_OK : rc;
    if ((rc = refuse_nested(opts)) != GREENCTX_EXIT_OK)
        return rc;
    if (args.report && (rc = run_report_check(&args)) != GREENCTX_EXIT_OK)
        return rc;
    if ((rc = start(opts)) != GREENCTX_EXIT_OK)
        return rc;
    if ((rc = find_preload(&args)) != GREENCTX_EXIT_OK)
        return rc;
    if ((rc = run_check_mps(&args)) != GREENCTX_EXIT_OK)
        return rc;
    if (args.sweep)
        return run_sweep(&args);
    char text[512], note[600];
    run_device_plan plans[RUN_MAX_DEVICES];
    unsigned nb_plans = 0;
    rc = run_check_request(&args, args.sms, text, sizeof text, plans, &nb_plans);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    run_claims claims;
    if ((rc = run_take_claims(&args, text, plans, nb_plans, &claims)) != GREENCTX_EXIT_OK)
        return rc;
    for (unsigned i = 0; i < nb_plans; i++)
        fprintf(stderr, "greenctx run: device %d: %u of %u SMs%s\n", plans[i].device,
                plans[i].sm_count, plans[i].device_sms,
                run_claim_note(&args, &claims, i, note, sizeof note));
    /* With a report the tool stays the program's parent, to merge it at the end. */
    if (args.report)
        return run_with_report(&args, text, &claims);
    if (run_set_environment(&args, text, &claims) != 0) {
        run_drop_claims(&claims);
        return GREENCTX_EXIT_FAILED;
    }
    fflush(NULL);
    /* The claims' locks pass to the program (GCTX_CLAIM_INHERIT): they are its now. */
    execvp(args.command[0], args.command);
    int err = errno;
    run_drop_claims(&claims);
    return greenctx_tool_error(opts, err == ENOENT ? 127 : 126, "exec", "%s: %s", args.command[0],
                               strerror(err));
}

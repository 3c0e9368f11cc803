/* greenctx run: the options, the request checked and claimed, then CMD started with the
 * preload (docs/run.md) as the tool's child; --report and --sweep in their own files. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim_text.h"
#include "tool.h"

/* The exit status in the usage's text. */
#define RUN_STR_(x) #x
#define RUN_STR(x) RUN_STR_(x)

const char *const greenctx_run_usage[] = {
    "usage: greenctx run [--device N] --sms REQ [--round MODE] [--report FILE.json]\n"
    "                    [--no-inherit] [--wait[=SECONDS] | --shared] [--label TEXT]\n"
    "                    [--class latency[:TARGET]|best-effort]\n"
    "                    [--memory SIZE] [--device-sms MODE] -- CMD [ARGS...]\n"
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
    "                 and their ids, the SM count it was told, binds redirected, threads\n"
    "  --no-inherit   programs started by a process that used CUDA are not confined\n"
    "                 (wrappers before it, such as env or sh -c, pass confinement on)\n"
    "  --wait[=S]     when the SMs are held by other tenants, queue for them (up to S\n"
    "                 seconds; no value: as long as it takes) instead of refusing\n"
    "  --shared       take no claim: other tenants may run on the same SMs (as before\n"
    "                 claims); by default the SMs are claimed (greenctx ps lists them)\n"
    "  --label TEXT   a name for the claim, shown by greenctx ps\n"
    "  --class CLASS  latency[:TARGET] (TARGET 2.5ms, or 1.1x its step alone: the\n"
    "                 default) or best-effort: best-effort tenants give way while a\n"
    "                 latency tenant's target is at risk (docs/tenants.md, the guard)\n"
    "  --memory SIZE  the program's device-memory limit under MPS (16G, 512M):\n"
    "                 CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; refused without an MPS daemon\n"
    "  --sweep LIST   run CMD once per size: wall time, speed-up against the smallest\n"
    "                 size and efficiency per SM (--json, --svg FILE)\n"
    "  --device-sms MODE  the SM count the program is told: partition (default: the\n"
    "                 device's SM count and SM resource are the partition's, so grids\n"
    "                 sized by them, persistent kernels and cooperative launches, fit)\n"
    "                 or physical (the whole device's, as without greenctx run: for a\n"
    "                 program that indexes per-SM buffers by %smid, which stays the\n"
    "                 physical SM id outside MPS and can exceed the partition's count;\n"
    "                 its kernels sized by the count then run in waves, and persistent\n"
    "                 ones with a grid barrier hang)\n"
    "When the program can't be confined it does not run: greenctx run exits 1 before\n"
    "starting it, or the program is stopped with exit status " RUN_STR(GREENCTX_RUN_EXIT_NOT_CONFINED) ". Tenants on disjoint\n"
    "claims run side by side only under MPS (greenctx mps start; docs/tenants.md).\n"
    "A claim (the default) is a count of whole granules (as greenctx info shows; on an\n"
    "H200 multiples of 16: two tenants of 64 side by side, clusters of up to 8 SMs), a\n"
    "share, rest (every free granule) or all; GROUPs with 0 or a suffix (:c2, :b) need\n"
    "--shared. GREENCTX_CLAIM_GRANULES=fine: multiples of 8 on an H200, clusters of up\n"
    "to 2 SMs.\n"
    "  e.g. greenctx run --sms 64 -- ./server & greenctx run --sms rest -- ./batch\n",
    group_syntax_help, NULL};

/* The report and the chart are files the completions offer; the other values are the user's. */
enum { SMS, SWEEP, ROUND, REPORT, SVG, WAIT, SHARED, LABEL, MEMORY, NO_INHERIT, DEVICE_SMS, CLASS,
       NB_RUN_OPTIONS };
const greenctx_option greenctx_run_options[] = {
    [SMS] = {"--sms", "a GROUP (16, 25%, ...), all, or DEV=GROUP,DEV=GROUP"},
    [SWEEP] = {"--sweep", "sizes, e.g. 16,32,64,all"},
    [ROUND] = {"--round", greenctx_values_round},
    [REPORT] = {"--report", greenctx_values_file},
    [SVG] = {"--svg", greenctx_values_file},
    [WAIT] = {"--wait", "[=SECONDS]"},
    [SHARED] = {"--shared", NULL},
    [LABEL] = {"--label", "a text for greenctx ps"},
    [MEMORY] = {"--memory", "a size such as 16G or 512M"},
    [NO_INHERIT] = {"--no-inherit", NULL},
    [DEVICE_SMS] = {"--device-sms", RUN_DEVICE_SMS_VALUES},
    [CLASS] = {"--class", "latency[:2.5ms|:1.1x] or best-effort"},
    [NB_RUN_OPTIONS] = {NULL, NULL},
};

/* --class: "best-effort", "latency", "latency:2.5ms" or "latency:1.1x"; -1 otherwise. */
static int parse_class(const char *text, run_options *a)
{
    char unit[4] = "", end;
    double v;
    if (strcmp(text, "best-effort") == 0) {
        a->tenant_class = GCTX_TENANT_BEST_EFFORT;
        return 0;
    }
    if (strncmp(text, "latency", 7) != 0)
        return -1;
    a->tenant_class = GCTX_TENANT_LATENCY;
    a->target_factor = 1.10; /* the bound: p99 within 10 % of alone */
    if (!text[7])
        return 0;
    if (text[7] != ':' || sscanf(text + 8, "%lf%3[msx]%c", &v, unit, &end) != 2 || !(v > 0))
        return -1;
    if (strcmp(unit, "ms") == 0) {
        a->target_ms = v;
        a->target_factor = 0;
        return 0;
    }
    a->target_factor = v;
    return strcmp(unit, "x") == 0 && v >= 1 ? 0 : -1;
}

/* Options up to the command ("--" or the first non-option word): the rest is the program's. */
static int parse_args(int argc, char **argv, greenctx_tool_options *opts, run_options *a)
{
    *a = (run_options){.device_sms = RUN_DEVICE_SMS_PARTITION};
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; !a->command &&
                 (id = greenctx_args_next(&args, greenctx_run_options)) != GREENCTX_ARG_END;) {
        int refused = 0;
        switch (id) {
        case GREENCTX_ARG_STOP: return args.rc;
        case GREENCTX_ARG_POSITIONAL: a->command = argv + args.next - 1; break;
        case SMS: a->sms = args.value; break;
        case SWEEP: a->sweep = args.value; break;
        case ROUND:
            refused = group_syntax_rounding(args.value) < 0;
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
        case CLASS: refused = parse_class(args.value, a) != 0; break;
        case MEMORY: a->memory = args.value; break;
        case NO_INHERIT: a->no_inherit = 1; break;
        case DEVICE_SMS: refused = (a->device_sms = run_device_sms_parse(args.value)) < 0; break;
        }
        if (refused)
            return greenctx_args_refuse(&args);
    }
    if (!a->sms == !a->sweep)
        return greenctx_args_bad(&args, "give --sms REQ (one run) or --sweep REQ,REQ,... (sizes)");
    if (!a->command)
        return greenctx_args_bad(&args, "give the command to run after the options "
                                        "(greenctx run --sms 16 -- ./app)");
    if (a->sms && (opts->json || a->svg))
        return greenctx_args_bad(&args, "--json and --svg go with --sweep");
    if (a->sweep && a->report)
        return greenctx_args_bad(&args, "--report goes with --sms (one run)");
    if (a->shared && (a->wait || a->label || a->tenant_class))
        return greenctx_args_bad(&args, "--shared takes no claim: --wait, --label and --class "
                                        "go with a claim");
    return GREENCTX_EXIT_OK;
}

/* Loads the preload once and says why it can't be used (NULL when it can): the loader would
 * skip a file it can't load, and another library would leave the program unconfined, so it
 * must carry this version's greenctx_preload_abi. Its constructors only read and note the
 * GREENCTX_RUN_* variables: loaded here, it confines nothing. */
static const char *load_error(const char *path, char *why, size_t size)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror();
        snprintf(why, size, "%s", error ? error : "no reason given");
        return why;
    }
    const run_preload_abi *abi = dlsym(handle, GREENCTX_PRELOAD_ABI_SYMBOL);
    if (!abi || strncmp(abi->magic, GREENCTX_PRELOAD_ABI_MAGIC, sizeof abi->magic) != 0)
        snprintf(why, size, "it is not greenctx's preload: it has no %s",
                 GREENCTX_PRELOAD_ABI_SYMBOL);
    else if (abi->version != GCTX_VERSION)
        snprintf(why, size, "it is the preload of greenctx %d, this tool is %d: use the preload "
                            "built with the tool",
                 abi->version, GCTX_VERSION);
    else
        why[0] = '\0';
    dlclose(handle);
    return why[0] ? why : NULL;
}

/* The preload, found relative to the tool and checked once here, into job->preload. */
static int find_preload(run_job *job)
{
    const char *found = tool_find_companion("libgreenctx_preload.so", "GREENCTX_PRELOAD_LIBRARY",
                                            GREENCTX_PRELOAD_INSTALL_RELPATH,
                                            GREENCTX_PRELOAD_BUILD_RELPATH);
    if (!found)
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DRIVER",
                                   "the preload (libgreenctx_preload.so) was not found next to "
                                   "the tool, in ../lib/greenctx or in the build tree beside the "
                                   "tool; set GREENCTX_PRELOAD_LIBRARY to its path");
    /* Absolute, so that programs that change directory still find it for their children. */
    if (!realpath(found, job->preload))
        snprintf(job->preload, sizeof job->preload, "%s", found);
    char why[512];
    if (load_error(job->preload, why, sizeof why))
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DRIVER",
                                   "the preload %s can't be used (%s); the program was not "
                                   "started",
                                   job->preload, why);
    return GREENCTX_EXIT_OK;
}

/* One run, or a sweep, as job->options ask. */
static int run(run_job *job)
{
    greenctx_tool_options *opts = job->opts;
    /* Under another `greenctx run`, this run's request would replace the outer one's. */
    const char *outer = getenv(GREENCTX_RUN_SMS);
    if (outer)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "nested",
                                   "already inside greenctx run (%s=%s): a nested run would "
                                   "replace the outer run's confinement; run the program directly "
                                   "(the outer run confines it), or start the outer run with "
                                   "--no-inherit from a program that uses CUDA; the program was "
                                   "not started",
                                   GREENCTX_RUN_SMS, outer);
    int rc;
    if (job->options.report && (rc = run_report_check(job)) != GREENCTX_EXIT_OK)
        return rc;
    opts->banner_on_stderr = 1; /* stdout is the program's */
    if ((rc = greenctx_tool_start(opts)) != GREENCTX_EXIT_OK)
        return rc;
    job->options.device = opts->device_given ? opts->device : -1; /* found by its UUID */
    if ((rc = find_preload(job)) != GREENCTX_EXIT_OK)
        return rc;
    if ((rc = run_check_mps(job)) != GREENCTX_EXIT_OK)
        return rc;
    if (job->options.sweep)
        return run_sweep(job);
    char note[600];
    static run_session session; /* too big for the stack */
    if ((rc = run_check_request(job, job->options.sms, &session)) != GREENCTX_EXIT_OK ||
        (rc = run_take_claims(job, &session)) != GREENCTX_EXIT_OK)
        return rc;
    for (unsigned i = 0; i < session.nb_plans; i++) {
        const run_device_plan *plan = &session.plans[i];
        fprintf(stderr, "greenctx run: device %d: %u of %u SMs%s; the program is told %u\n",
                plan->device, plan->sm_count, plan->device_sms,
                run_claim_note(job, &session, i, note, sizeof note),
                job->options.device_sms == RUN_DEVICE_SMS_PHYSICAL ? plan->device_sms
                                                                   : plan->sm_count);
    }
    /* The tool stays the program's parent, so that the claims go back as released when it
     * ends, CUDA or not: an exec'd program that never joins them would leave them to be found
     * stale, a false "died". */
    if (job->options.report)
        return run_with_report(job, &session);
    pid_t child;
    int status = 0;
    if (run_child_program(job, &session, &child, &status) != 0)
        return GREENCTX_EXIT_FAILED;
    return run_child_end(&session, status);
}

int greenctx_cmd_run(int argc, char **argv, greenctx_tool_options *opts)
{
    run_job job = {.opts = opts};
    int rc = parse_args(argc, argv, opts, &job.options);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    text_join_words(job.options.command, job.command_text, sizeof job.command_text);
    /* The program's own LD_PRELOAD, before a run sets it (a sweep sets it for every size). */
    const char *own = getenv("LD_PRELOAD");
    if (own && *own && !(job.program_preload = strdup(own)))
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    rc = run(&job);
    free(job.program_preload);
    return rc;
}

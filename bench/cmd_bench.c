/* greenctx-bench (and `greenctx bench`, which runs it) isolation|scaling|overhead|all: the
 * command line, the header every output carries (GPU, driver, date, command), and the order
 * the benchmarks run and print in. Two tenants on one GPU, elastic partitions and NCCL beside
 * cuBLAS are scripts: bench/compare/tenants.py, elastic.py and overlap.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_commands.h"
#include "bench_isolation.h"
#include "bench_overhead.h"
#include "bench_scaling.h"

enum { RUN_ISOLATION = 1, RUN_SCALING = 2, RUN_OVERHEAD = 4 };

/* The benchmarks, and those that are scripts of bench/compare/ now (runs 0: doc describes
 * each). */
static const struct {
    const char *name;
    int runs;
    const char *doc;
} benchmarks[] = {{"isolation", RUN_ISOLATION, NULL},
                  {"scaling", RUN_SCALING, NULL},
                  {"overhead", RUN_OVERHEAD, NULL},
                  {"all", RUN_ISOLATION | RUN_SCALING | RUN_OVERHEAD, NULL},
                  {"tenants", 0, "docs/tenants.md"},
                  {"elastic", 0, "docs/elastic.md"},
                  {"overlap", 0, "BENCHMARKS.md"}};

static const char *const usage[] = {
    "usage: greenctx bench isolation|scaling|overhead|all\n"
    "                      [--device N]\n"
    "                      [--json] [--svg FILE] [--reps N] [--victim-sms N [N ...]]\n"
    "                      [--quick]\n"
    "\n"
    "  isolation   a short victim beside a hog: alone, plain streams, priorities, green\n"
    "              partitions for both, green victim with the hog in the primary context\n"
    "  scaling     compute- and memory-bound kernels on 8..128 SMs and the whole GPU\n"
    "  overhead    greenctx against the raw driver calls (split, contexts, streams,\n"
    "              re-partitioning) and the launch cost on green vs ordinary streams\n"
    "  all         the three (under a minute on an H200; --quick: about 10 s)\n"
    "\n"
    "  --reps N         repetitions per measurement (defaults: isolation 1000,\n"
    "                   scaling 20, overhead 200; --quick: 150, 7, 50)\n"
    "  --victim-sms N   the victim's partition size(s) for isolation (default 16); the\n"
    "                   first is also the overhead benchmark's split\n"
    "  --svg FILE       draw the latency distributions and scaling curves\n"
    "  --json           every figure as one JSON document on stdout\n"
    "\n"
    "Kernels ship as PTX and need a GPU; on the simulated driver only `overhead` runs\n"
    "(creation costs only; its timings mean nothing there).\n"
    "Two tenants on one GPU (claims, MPS, time-slicing, the guard, a fault),\n"
    "elastic partitions (decode beside prefill, the controller) and an NCCL all-reduce\n"
    "beside cuBLAS GEMMs (green partitions against ordinary streams) are scripts:\n"
    "python3 bench/compare/tenants.py, bench/compare/elastic.py and\n"
    "bench/compare/overlap.py (docs/tenants.md, docs/elastic.md, BENCHMARKS.md).\n",
    NULL};

/* A benchmark's name: which of them run. */
static int pick(greenctx_args *args, const char *word, int *runs)
{
    size_t k = 0, n = sizeof benchmarks / sizeof benchmarks[0];
    while (k < n && strcmp(word, benchmarks[k].name))
        k++;
    if (k < n && !benchmarks[k].runs)
        return greenctx_args_bad(args, "bench %s is a script now: python3 bench/compare/%s.py "
                                 "[--quick] in the source tree (torch on the GPU; --dry on the "
                                 "simulated driver; %s)", word, word, benchmarks[k].doc);
    if (k == n)
        return greenctx_args_bad(args, "unknown benchmark '%s': isolation, scaling, overhead "
                                 "or all", word);
    if (*runs)
        return greenctx_args_bad(args, "one benchmark at a time ('all' runs the three); got "
                                 "'%s' too", word);
    *runs = benchmarks[k].runs;
    return GREENCTX_EXIT_OK;
}

enum { OPT_QUICK, OPT_SVG, OPT_REPS, OPT_VICTIM_SMS };
static const greenctx_option options[] = {{"--quick", NULL},
                                          {"--svg", "a file name"},
                                          {"--reps", "a count from 1 to 1000000"},
                                          {"--victim-sms", "SM counts (1 to 1024)"},
                                          {NULL, NULL}};

static int too_many_victims(greenctx_args *args, const char *value)
{
    return greenctx_args_bad(args, "--victim-sms takes at most %u values; '%s' is one too many",
                             BENCH_MAX_VICTIM_SMS, value);
}

/* The benchmark's arguments: an exit code (GREENCTX_EXIT_HELP after --help). --victim-sms
 * takes the counts that follow it, up to BENCH_MAX_VICTIM_SMS in all. */
static int parse(int argc, char **argv, greenctx_tool_options *opts, bench_options *opt,
                 int *runs)
{
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    opts->usage = usage;
    *runs = 0;
    int listing = 0; /* the words after --victim-sms may be its counts */
    for (int id, n; (id = greenctx_args_next(&args, options)) != GREENCTX_ARG_END;) {
        const char *v = args.value;
        if (id == GREENCTX_ARG_STOP)
            return args.rc;
        if (id == GREENCTX_ARG_POSITIONAL) {
            int count = listing && greenctx_parse_int(v, 1, 1024, &n) == 0;
            if (count && opt->nb_victim_sms == BENCH_MAX_VICTIM_SMS)
                return too_many_victims(&args, v);
            if (count) {
                opt->victim_sms[opt->nb_victim_sms++] = (unsigned)n;
                continue;
            }
            listing = 0;
            int rc = pick(&args, v, runs);
            if (rc != GREENCTX_EXIT_OK)
                return rc;
            continue;
        }
        listing = id == OPT_VICTIM_SMS;
        if (id == OPT_QUICK)
            opt->quick = 1;
        else if (id == OPT_SVG && *v && v[0] != '-')
            opt->svg_path = v;
        else if (id == OPT_REPS && greenctx_parse_int(v, 1, 1000000, &n) == 0)
            opt->reps = (unsigned)n;
        else if (id == OPT_VICTIM_SMS && opt->nb_victim_sms == BENCH_MAX_VICTIM_SMS)
            return too_many_victims(&args, v);
        else if (id == OPT_VICTIM_SMS && greenctx_parse_int(v, 1, 1024, &n) == 0)
            opt->victim_sms[opt->nb_victim_sms++] = (unsigned)n;
        else if (id >= 0)
            return greenctx_args_bad(&args, "%s needs %s, got '%s'", options[id].name,
                                     options[id].value_help, v);
        else
            return greenctx_args_bad(&args, "unexpected argument '%s'", v);
    }
    if (!*runs)
        return greenctx_args_bad(&args, "which benchmark? isolation, scaling, overhead or all");
    if (opt->svg_path && !(*runs & (RUN_ISOLATION | RUN_SCALING)))
        return greenctx_args_bad(&args, "--svg draws isolation and scaling; 'overhead' has "
                                 "neither");
    return GREENCTX_EXIT_OK;
}

typedef struct bench_results {
    iso_result iso[BENCH_MAX_VICTIM_SMS];
    unsigned nb_iso;
    scaling_result scaling;
    ov_result overhead;
    int runs;
} bench_results;

static int run_all(const bench_env *env, bench_results *r)
{
    int json = env->opt.json;
    /* Every victim size must make a legal split before anything runs. */
    for (unsigned i = 0; (r->runs & RUN_ISOLATION) && i < env->opt.nb_victim_sms; i++) {
        gctx_group groups[2] = {{.num_sms = env->opt.victim_sms[i]}, {.backfill = 1}};
        char what[64];
        snprintf(what, sizeof what, "--victim-sms %u", env->opt.victim_sms[i]);
        if (bench_gctx(gctx_partition_plan(env->whole, groups, 2, NULL, NULL, NULL), what))
            return -1;
    }
    if (r->runs & RUN_ISOLATION)
        for (unsigned i = 0; i < env->opt.nb_victim_sms; i++, r->nb_iso++) {
            if (bench_isolation_run(env, env->opt.victim_sms[i], &r->iso[i]))
                return -1;
            if (!json)
                bench_isolation_print(env, &r->iso[i]);
        }
    if (r->runs & RUN_SCALING) {
        if (bench_scaling_run(env, &r->scaling))
            return -1;
        if (!json)
            bench_scaling_print(&r->scaling);
    }
    if (r->runs & RUN_OVERHEAD) {
        if (bench_overhead_run(env, &r->overhead))
            return -1;
        if (!json)
            bench_overhead_print(&r->overhead);
    }
    return 0;
}

/* The JSON document (--json): each benchmark's member, null where it did not run. */
static void print_json(const bench_env *env, const bench_results *r)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.bench/2"); /* /2: BENCHMARKS.md (Method, Overhead) */
    bench_json_meta(&w, env);
    if (r->runs & RUN_ISOLATION) {
        json_array(&w, "isolation");
        for (unsigned i = 0; i < r->nb_iso; i++)
            bench_isolation_json(&w, env, &r->iso[i]);
        json_close(&w);
    } else {
        json_null(&w, "isolation");
    }
    if (r->runs & RUN_SCALING)
        bench_scaling_json(&w, &r->scaling);
    else
        json_null(&w, "scaling");
    if (r->runs & RUN_OVERHEAD)
        bench_overhead_json(&w, env, &r->overhead);
    else
        json_null(&w, "overhead");
    json_end(&w);
}

/* The chart into --svg ("chart: FILE" after the tables); -1 after saying why. */
static int draw(const bench_env *env, const bench_results *r)
{
    bench_chart *chart = bench_calloc(1, sizeof *chart);
    if (!chart)
        return -1;
    for (unsigned i = 0; i < r->nb_iso; i++)
        bench_isolation_chart(&r->iso[i], chart);
    if (r->runs & RUN_SCALING)
        bench_scaling_chart(env, &r->scaling, chart);
    int rc = bench_svg_write(env->opt.svg_path, env, chart);
    free(chart);
    if (rc == 0 && !env->opt.json)
        printf("\nchart: %s\n", env->opt.svg_path);
    return rc;
}

/* The command line, the driver and the device (closed again on failure); an exit code. */
static int open_env(greenctx_tool_options *opts, int argc, char **argv, bench_env *env)
{
    /* The command line as typed, for the header of every output. */
    char *buf = env->command;
    size_t size = sizeof env->command, n = (size_t)snprintf(buf, size, "greenctx");
    if (opts->simulated && n < size) {
        n += (size_t)snprintf(buf + n, size - n, " --sim %s", opts->sim_models);
        if (opts->sim_driver_version && n < size)
            n += (size_t)snprintf(buf + n, size - n, "@%d", opts->sim_driver_version);
    }
    for (int i = 0; i < argc && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, " %s", argv[i]);
    env->opt.json = opts->json;
    int rc = greenctx_tool_start(opts);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    if (bench_env_open(env, opts->device)) {
        bench_env_close(env);
        return GREENCTX_EXIT_FAILED;
    }
    env->simulated |= opts->simulated;
    return GREENCTX_EXIT_OK;
}

int bench_main(int argc, char **argv, greenctx_tool_options *opts)
{
    bench_env env;
    memset(&env, 0, sizeof env);
    int runs;
    int rc = parse(argc, argv, opts, &env.opt, &runs);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    if (env.opt.nb_victim_sms == 0)
        env.opt.victim_sms[env.opt.nb_victim_sms++] = 16;
    if ((rc = open_env(opts, argc, argv, &env)) != GREENCTX_EXIT_OK)
        return rc;
    if ((runs & (RUN_ISOLATION | RUN_SCALING)) && !env.kernels) {
        bench_env_close(&env);
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   gctx_status_name(GCTX_ERROR_UNSUPPORTED),
                                   "benchmarks need a GPU: this driver runs no kernels "
                                   "(cuModuleLoadData answered CUDA_ERROR_NOT_SUPPORTED; the "
                                   "simulated driver?). Only `greenctx bench overhead` runs "
                                   "here, without its launch rows.");
    }
    bench_results *results = calloc(1, sizeof *results);
    rc = results ? 0 : -1;
    if (!rc) {
        results->runs = runs;
        if (!env.opt.json)
            bench_print_header(&env);
        rc = run_all(&env, results);
    }
    /* The tables were printed as each benchmark ran. */
    if (!rc && env.opt.json)
        print_json(&env, results);
    if (!rc && env.opt.svg_path)
        rc = draw(&env, results);
    free(results);
    bench_env_close(&env);
    return rc ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

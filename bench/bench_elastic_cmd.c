/* `greenctx bench elastic`: its command line, and the order of the run: the one-process arms
 * (with the calibration), then, holding no context, the two-process arms; then the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"
#include "bench_commands.h"

#define DEFAULT_SECONDS 10.0
#define QUICK_SECONDS 5.0

void bench_elastic_usage(FILE *out)
{
    fprintf(out,
            "usage: greenctx bench elastic [--trace onoff|duty50|poisson|stationary]\n"
            "                              [--seconds S] [--quick] [--target-ms MS]\n"
            "                              [--layers N] [--batch N] [--context N] [--chunk N]\n"
            "                              [--seed N] [--arms all|1p] [--svg FILE]\n"
            "                              [--gemm auto|own|cublas] [--json-file FILE] [--json]\n"
            "\n"
            "A latency workload shaped like LLM decode (bf16 Llama-3-8B-shaped layers: GEMV\n"
            "weight reads and decode attention over a KV cache, its batch following the trace)\n"
            "beside a prefill GEMM stream on the same weights, in every arm on the same trace:\n"
            "static splits (swept), no split, priority streams, the controller over layouts,\n"
            "chunked prefill (one process); time-slicing, static claims, MPS, MPS with the\n"
            "active-thread percentage, the controller over claims (two processes).\n"
            "\n"
            "  --trace T      onoff: the peak batch 1 s of every 5, 10 %% of it otherwise\n"
            "                 (default); duty50: 2.5 s of 5; poisson: Poisson arrivals at\n"
            "                 onoff's mean load; stationary: onoff's mean load, constant\n"
            "  --seconds S    each arm's length (default 10; --quick 5)\n"
            "  --quick        fewer static splits and calibration runs, 5 s arms\n"
            "  --target-ms MS the decode step time to hold at p99 (default 1.5 x the peak\n"
            "                 batch's step on every SM, measured first)\n"
            "  --layers N     model layers (default 2, at most 8)\n"
            "  --batch N      the peak batch (default 32)\n"
            "  --context N    each sequence's KV cache positions (default 8192)\n"
            "  --chunk N      prefill tokens per unit (default 256)\n"
            "  --seed N       the trace's seed (default 1)\n"
            "  --arms 1p      the one-process arms only\n"
            "  --gemm G       prefill's GEMMs: cuBLAS (tensor cores) when found (auto, the\n"
            "                 default; never on --sim), the bench's own CUDA-core kernel (own)\n"
            "                 or cuBLAS or fail (cublas)\n"
            "  --svg FILE     SMs over time per workload, the step-time distributions\n"
            "  --json-file F  the JSON document (as --json prints it) into F, beside the table\n");
}

static int parse_double(const char *text, double lo, double hi, double *value)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= lo && v <= hi))
        return -1;
    *value = v;
    return 0;
}

int bench_elastic_parse(int argc, char **argv, greenctx_tool_options *opts, bench_env *env,
                        elastic_options *eo)
{
    enum { OPT_TRACE, OPT_SECONDS, OPT_QUICK, OPT_TARGET, OPT_LAYERS, OPT_BATCH, OPT_CONTEXT,
           OPT_CHUNK, OPT_SEED, OPT_ARMS, OPT_SVG, OPT_JSON_FILE, OPT_GEMM };
    static const greenctx_option own[] = {{"--trace", "onoff, duty50, poisson or stationary"},
                                          {"--seconds", "seconds from 0.2 to 600"},
                                          {"--quick", NULL},
                                          {"--target-ms", "milliseconds"},
                                          {"--layers", "a count from 1 to 8"},
                                          {"--batch", "a count from 1 to 256"},
                                          {"--context", "positions, 64 to 131072"},
                                          {"--chunk", "tokens, 16 to 4096"},
                                          {"--seed", "a number"},
                                          {"--arms", "all or 1p"},
                                          {"--svg", "a file name"},
                                          {"--json-file", "a file name"},
                                          {"--gemm", "auto, own or cublas"},
                                          {NULL, NULL}};
    *eo = (elastic_options){EL_TRACE_ONOFF, 0, 0, 2, 32, 8192, 256, 1, 0, EL_GEMM_AUTO, NULL};
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    int value;
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        const char *a = args.value;
        if (id == GREENCTX_ARG_HELP) {
            bench_elastic_usage(stdout);
            return -1;
        }
        if (id == GREENCTX_ARG_STOP)
            return args.rc;
        if (id == OPT_TRACE) {
            if ((value = el_trace_parse(a)) < 0)
                return greenctx_args_bad(&args, "--trace: onoff, duty50, poisson or stationary, "
                                         "got '%s'", a);
            eo->trace = (el_trace_kind)value;
        } else if (id == OPT_SECONDS) {
            if (parse_double(a, 0.2, 600, &eo->seconds))
                return greenctx_args_bad(&args, "--seconds needs seconds from 0.2 to 600, got "
                                         "'%s'", a);
        } else if (id == OPT_QUICK) {
            env->opt.quick = 1;
        } else if (id == OPT_TARGET) {
            if (parse_double(a, 0.001, 100000, &eo->target_ms))
                return greenctx_args_bad(&args, "--target-ms needs milliseconds (0.001 to "
                                         "100000), got '%s'", a);
        } else if (id == OPT_SVG || id == OPT_JSON_FILE) {
            if (!*a || a[0] == '-')
                return greenctx_args_bad(&args, "%s needs a file name, got '%s'", own[id].name, a);
            if (id == OPT_SVG)
                env->opt.svg_path = a;
            else
                eo->json_path = a;
        } else if (id == OPT_ARMS) {
            if (strcmp(a, "all") && strcmp(a, "1p"))
                return greenctx_args_bad(&args, "--arms: all or 1p (the one-process arms "
                                         "only), got '%s'", a);
            eo->one_process_only = !strcmp(a, "1p");
        } else if (id == OPT_GEMM) {
            static const char *const kinds[] = {"auto", "own", "cublas"};
            int k = 0;
            while (k < 3 && strcmp(a, kinds[k]))
                k++;
            if (k == 3)
                return greenctx_args_bad(&args, "--gemm: auto (cuBLAS when found), own (the "
                                         "bench's kernel) or cublas, got '%s'", a);
            eo->gemm = (el_gemm_kind)k;
        } else if (id == OPT_SEED) {
            if (greenctx_parse_int(a, 0, 2147483647, &value))
                return greenctx_args_bad(&args, "--seed needs a number from 0 to 2147483647, "
                                         "got '%s'", a);
            eo->seed = (unsigned long long)value;
        } else if (id >= OPT_LAYERS && id <= OPT_CHUNK) {
            static const int lo[] = {1, 1, 64, 16}, hi[] = {EL_MAX_LAYERS, 256, 131072, 4096};
            static const char *const what[] = {"a count from 1 to 8", "a count from 1 to 256",
                                               "positions from 64 to 131072",
                                               "tokens from 16 to 4096"};
            int k = id - OPT_LAYERS;
            if (greenctx_parse_int(a, lo[k], hi[k], &value))
                return greenctx_args_bad(&args, "%s needs %s, got '%s'", own[id].name, what[k], a);
            unsigned *fields[] = {&eo->layers, &eo->peak_batch, &eo->context, &eo->chunk};
            *fields[k] = (unsigned)value;
        } else {
            return greenctx_args_bad(&args, "bench elastic takes no '%s' (its options: "
                                     "greenctx bench elastic --help)", a);
        }
    }
    if (eo->seconds == 0)
        eo->seconds = env->opt.quick ? QUICK_SECONDS : DEFAULT_SECONDS;
    return GREENCTX_EXIT_OK;
}

int bench_elastic(bench_env *env, const elastic_options *eo)
{
    elastic_result *res = calloc(1, sizeof *res);
    if (!res) {
        bench_env_close(env);
        fprintf(stderr, "greenctx bench: out of memory\n");
        return GREENCTX_EXIT_FAILED;
    }
    int rc = bench_elastic_one_process(env, eo, res);
    bench_env_close(env); /* the tenants must find the GPU as any two processes would */
    if (rc == 0 && !eo->one_process_only)
        bench_elastic_two_process(env, eo, res);
    if (rc == 0) {
        el_pick_best(res);
        el_check_targets(env, res);
        const bench_report report = {"greenctx.bench.elastic/1", res, bench_elastic_print,
                                     bench_elastic_json, bench_elastic_chart};
        rc = bench_report_write(env, &report, eo->json_path);
    }
    rc |= res->failed;
    free(res);
    return rc ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

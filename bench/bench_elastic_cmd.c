/* `greenctx bench elastic`: its command line, and the order of the run: the one-process arms
 * (with the calibration), then, holding no context, the two-process arms; then the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"
#include "bench_commands.h"

#define DEFAULT_SECONDS 10.0
#define QUICK_SECONDS 5.0

static void usage(FILE *out)
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

int bench_elastic_parse(int argc, char **argv, greenctx_tool_options *opts, bench_env *env,
                        elastic_options *eo)
{
    static const char *const arms[] = {"all", "1p", NULL}, *const gemms[] = {"auto", "own",
                                                                               "cublas", NULL};
    int trace = EL_TRACE_ONOFF, one_process = 0, gemm = EL_GEMM_AUTO;
    unsigned seed = 1;
    *eo = (elastic_options){EL_TRACE_ONOFF, 0, 0, 2, 32, 8192, 256, 1, 0, EL_GEMM_AUTO, NULL};
    const bench_arg table[] = {
        BENCH_CHOICE("--trace", "onoff, duty50, poisson or stationary", &trace, el_trace_names),
        BENCH_DOUBLE("--seconds", "seconds from 0.2 to 600", &eo->seconds, 0.2, 600),
        BENCH_FLAG("--quick", &env->opt.quick),
        BENCH_DOUBLE("--target-ms", "milliseconds (0.001 to 100000)", &eo->target_ms, 0.001,
                     100000),
        BENCH_UINT("--layers", "a count from 1 to 8", &eo->layers, 1, EL_MAX_LAYERS),
        BENCH_UINT("--batch", "a count from 1 to 256", &eo->peak_batch, 1, 256),
        BENCH_UINT("--context", "positions from 64 to 131072", &eo->context, 64, 131072),
        BENCH_UINT("--chunk", "tokens from 16 to 4096", &eo->chunk, 16, 4096),
        BENCH_UINT("--seed", "a number from 0 to 2147483647", &seed, 0, 2147483647),
        BENCH_CHOICE("--arms", "all or 1p (the one-process arms only)", &one_process, arms),
        BENCH_TEXT("--svg", "a file name", &env->opt.svg_path),
        BENCH_TEXT("--json-file", "a file name", &eo->json_path),
        BENCH_CHOICE("--gemm", "auto (cuBLAS when found), own (the bench's kernel) or cublas",
                     &gemm, gemms),
    };
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    int rc = bench_args_parse(&args, table, BENCH_NB(table), usage, NULL, NULL);
    eo->trace = (el_trace_kind)trace;
    eo->one_process_only = one_process;
    eo->gemm = (el_gemm_kind)gemm;
    eo->seed = seed;
    if (eo->seconds == 0)
        eo->seconds = env->opt.quick ? QUICK_SECONDS : DEFAULT_SECONDS;
    return rc;
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

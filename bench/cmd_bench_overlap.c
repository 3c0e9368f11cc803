/* `greenctx bench overlap`: its command line, its refusals (fewer than two GPUs, no kernels,
 * NVLink multicast asked for, NCCL or cuBLAS missing), and the order of its output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_commands.h"
#include "bench_overlap.h"

#define OVERLAP_USAGE                                                                           \
    "usage: greenctx bench overlap [--device N] [--sizes S [S ...]] [--sms C [C ...]]\n"        \
    "                              [--gemm MxNxK] [--mix G:R] [--reps N] [--quick]\n"           \
    "                              [--json] [--svg FILE]\n"                                      \
    "\n"                                                                                        \
    "An NCCL all-reduce between GPUs N and N+1 beside cuBLAS GEMMs on both, side by side:\n"    \
    "ordinary streams; NCCL's maxCTAs = C beside an ordinary-stream GEMM; green partitions of\n" \
    "C SMs for the all-reduce and the rest for the GEMM, each with and without maxCTAs = C and\n" \
    "with and without cublasSetSmCountTarget(rest). Per arm: the all-reduce's p50/p99 beside\n" \
    "the GEMM and against alone in the same SMs, the GEMM's rate against alone in its SMs and\n" \
    "on the whole GPU, and the time of a step (G GEMMs and R all-reduces queued at once, both\n" \
    "done). Then the arm with the shortest step, and the one with the shortest all-reduce p99\n" \
    "that keeps the GEMM at >= 0.9 of its whole-GPU rate, as lines to copy into a program.\n"   \
    "\n"                                                                                        \
    "  --sizes S...   all-reduce sizes, bytes with K/M/G (MiB) suffixes (default 4M 256M)\n"    \
    "  --sms C...     communication partition sizes (default 8 16 24 32)\n"                     \
    "  --gemm MxNxK   the GEMM, bf16 in and out, fp32 compute (default 8192x8192x8192)\n"      \
    "  --mix G:R      per step (default 8 GEMMs and as many all-reduces as take the same time\n" \
    "                 alone on the whole GPU; --quick: 4)\n"                                    \
    "  --reps N       all-reduces timed per arm (default 2000 up to 16 MiB, 200 above;\n"       \
    "                 --quick: 200, 20)\n"                                                      \
    "  --quick        about 20 s on two H200s (the default run: about a minute)\n"             \
    "\n"                                                                                        \
    "Needs two GPUs, NCCL (libnccl.so.2: GREENCTX_NCCL_LIBRARY, the loader's path or pip's\n"   \
    "nvidia-nccl-cu13 in a system, /opt, $VIRTUAL_ENV or $CONDA_PREFIX site-packages) and\n"    \
    "cuBLAS (libcublas.so.13: GREENCTX_CUBLAS_LIBRARY, the loader's path, /usr/local/cuda/lib64\n" \
    "or pip's nvidia-cublas, found the same way), both loaded at run time; never from the\n"     \
    "current directory, and Python is never run to find them. Runs NCCL with\n"                 \
    "NCCL_NVLS_ENABLE=0 (NVLink multicast off) and refuses any other value.\n"

/* "4M" -> 4 MiB; a multiple of 4 bytes (fp32 words), 4 B to 4 GiB. */
static int parse_size(const char *text, void *to, unsigned i)
{
    size_t *bytes = (size_t *)to + i;
    char *end;
    if (!text || text[0] < '0' || text[0] > '9')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned long long unit = 1;
    if (*end == 'K' || *end == 'k')
        unit = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        unit = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        unit = 1ull << 30, end++;
    if (*end || v == 0 || v > (4ull << 30) / unit || (v * unit) % 4)
        return -1;
    *bytes = (size_t)(v * unit);
    return 0;
}

static int parse_gemm(const char *text, void *to, unsigned i)
{
    olap_options *o = to;
    (void)i;
    unsigned m, n, k;
    char tail;
    if (!text || sscanf(text, "%ux%ux%u%c", &m, &n, &k, &tail) != 3 || !m || !n || !k ||
        m > 65536 || n > 65536 || k > 65536)
        return -1;
    o->m = m, o->n = n, o->k = k;
    return 0;
}

static int parse_mix(const char *text, void *to, unsigned i)
{
    olap_options *o = to;
    (void)i;
    unsigned g, r;
    char tail;
    if (!text || sscanf(text, "%u:%u%c", &g, &r, &tail) != 2 || !g || !r || g > 1000 || r > 100000)
        return -1;
    o->mix_gemms = g, o->mix_allreduces = r;
    return 0;
}

/* The benchmark's arguments: an exit code (GREENCTX_EXIT_HELP after --help). --sizes and --sms
 * take the values that follow them. */
static int parse(int argc, char **argv, greenctx_tool_options *opts, olap_options *o,
                 const char **svg)
{
    const bench_arg table[] = {
        BENCH_FLAG("--quick", &o->quick),
        BENCH_LIST("--sizes", "sizes in bytes, multiples of 4 up to 4G, with K, M or G (4M: "
                   "4 MiB)", BENCH_ARG_PARSE, o->sizes, 0, 0, OLAP_MAX_SIZES, &o->nb_sizes,
                   parse_size),
        BENCH_LIST("--sms", "SM counts (1 to 1024)", BENCH_ARG_UINT, o->sms, 1, 1024,
                   OLAP_MAX_SMS, &o->nb_sms, NULL),
        BENCH_PARSE("--gemm", "MxNxK (each 1 to 65536), e.g. 8192x8192x8192", o, parse_gemm),
        BENCH_PARSE("--mix", "GEMMS:ALLREDUCES per step, e.g. 8:40", o, parse_mix),
        BENCH_UINT("--reps", "a count from 1 to 100000", &o->reps, 1, 100000),
        BENCH_TEXT("--svg", "a file name", svg),
    };
    greenctx_args args;
    static const char *const usage[] = {OVERLAP_USAGE, NULL};
    greenctx_args_begin(&args, argc, argv, opts);
    opts->usage = usage;
    return bench_args_parse(&args, table, BENCH_NB(table), NULL, NULL);
}

static void defaults(olap_options *o)
{
    if (!o->nb_sizes) {
        o->sizes[o->nb_sizes++] = 4u << 20;
        o->sizes[o->nb_sizes++] = 256u << 20;
    }
    if (!o->nb_sms)
        for (unsigned c = 8; c <= 32; c += 8)
            o->sms[o->nb_sms++] = c;
    if (!o->m)
        o->m = o->n = o->k = 8192;
    if (!o->mix_gemms)
        o->mix_gemms = o->quick ? 4 : 8;
}

/* Two GPUs, every C a legal split of both, and a driver that runs kernels. Returns an exit
 * code after saying why not. */
static int check_machine(greenctx_tool_options *opts, bench_env env[OLAP_GPUS],
                         const olap_options *o)
{
    int count = 0, first = opts->device;
    gctx_status s = gctx_device_count(&count);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(opts, s);
    if (count < first + OLAP_GPUS)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   gctx_status_name(GCTX_ERROR_NO_DEVICE),
                                   "needs 2 GPUs (an NCCL all-reduce between devices %d and "
                                   "%d); this machine has %d",
                                   first, first + 1, count);
    for (int i = 0; i < OLAP_GPUS; i++)
        if (bench_env_open(&env[i], first + i))
            return GREENCTX_EXIT_FAILED;
    for (int i = 0; i < OLAP_GPUS; i++)
        for (unsigned c = 0; c < o->nb_sms; c++) {
            gctx_group groups[2] = {{.num_sms = o->sms[c]}, {.backfill = 1}};
            s = gctx_partition_plan(env[i].whole, groups, 2, NULL, NULL, NULL);
            if (s != GCTX_SUCCESS)
                return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                           "--sms %u on GPU %d: %s", o->sms[c], first + i,
                                           gctx_last_error());
        }
    /* GREENCTX_BENCH_OVERLAP_SIM=1 runs it on the simulated driver anyway, with test doubles
     * of NCCL and cuBLAS (tests/fake_*.c): a test hook for the benchmark's own flow. */
    const char *hook = getenv("GREENCTX_BENCH_OVERLAP_SIM");
    int on_sim = hook && !strcmp(hook, "1") && greenctx_tool_simulated(opts);
    if ((!env[0].kernels || !env[1].kernels) && !on_sim)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   gctx_status_name(GCTX_ERROR_UNSUPPORTED),
                                   "needs real GPUs: this driver runs no kernels "
                                   "(cuModuleLoadData answered CUDA_ERROR_NOT_SUPPORTED; the "
                                   "simulated driver?), and NCCL and cuBLAS need the real "
                                   "driver");
    return GREENCTX_EXIT_OK;
}

int greenctx_bench_overlap(int argc, char **argv, greenctx_tool_options *opts,
                           const char *command)
{
    opts->command = "bench overlap";
    olap_options o;
    memset(&o, 0, sizeof o);
    const char *svg = NULL;
    int rc = parse(argc, argv, opts, &o, &svg);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    defaults(&o);
    char why[2048];
    if (olap_nvls_off(why, sizeof why))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                   gctx_status_name(GCTX_ERROR_INVALID_ARGUMENT), "%s", why);
    if ((rc = greenctx_tool_start(opts)) != GREENCTX_EXIT_OK)
        return rc;
    bench_env env[OLAP_GPUS];
    memset(env, 0, sizeof env);
    olap_libs libs;
    olap_result *res = NULL;
    /* NCCL's init changes this thread's current context; the run leaves it as it found it. */
    CUcontext saved = NULL;
    int have_saved = gctx_current_context_save(&saved) == GCTX_SUCCESS;
    rc = check_machine(opts, env, &o);
    if (rc == GREENCTX_EXIT_OK && olap_libs_load(&libs, why, sizeof why))
        rc = greenctx_tool_error(opts, GREENCTX_EXIT_FAILED,
                                 gctx_status_name(GCTX_ERROR_UNSUPPORTED), "%s", why);
    if (rc == GREENCTX_EXIT_OK && !(res = calloc(1, sizeof *res)))
        rc = greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    if (rc == GREENCTX_EXIT_OK) {
        snprintf(env[0].command, sizeof env[0].command, "%s", command);
        env[0].opt = (bench_options){.quick = o.quick, .json = opts->json, .svg_path = svg};
        if (!opts->json)
            bench_print_header(&env[0], "overlap", NULL);
        if (bench_overlap_run(env, &libs, &o, res))
            rc = GREENCTX_EXIT_FAILED;
    }
    if (rc == GREENCTX_EXIT_OK) {
        bench_overlap_advise(res);
        const bench_report report = {"greenctx.bench.overlap/1", res, bench_overlap_print,
                                     bench_overlap_json, bench_overlap_chart};
        if (bench_report_write(&env[0], &report))
            rc = GREENCTX_EXIT_FAILED;
    }
    free(res);
    for (int i = 0; i < OLAP_GPUS; i++)
        if (env[i].drv)
            bench_env_close(&env[i]);
    if (have_saved)
        gctx_current_context_restore(saved, NULL);
    return rc;
}

/* `greenctx bench overlap`: its command line, its refusals (fewer than two GPUs, no kernels,
 * NVLink multicast asked for, NCCL or cuBLAS missing), and the order of its output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "  --reps N       all-reduces timed per arm (default 1000 up to 16 MiB, 100 above;\n"       \
    "                 --quick: 200, 20)\n"                                                      \
    "  --quick        under a minute on two H200s (the default run: about 3 minutes)\n"        \
    "\n"                                                                                        \
    "Needs two GPUs, NCCL (libnccl.so.2: GREENCTX_NCCL_LIBRARY, the loader's path or python3's\n" \
    "nvidia-nccl-cu13) and cuBLAS (libcublas.so.13: GREENCTX_CUBLAS_LIBRARY, the loader's path,\n" \
    "/usr/local/cuda/lib64 or python3's nvidia-cublas), both loaded at run time. Runs NCCL with\n" \
    "NCCL_NVLS_ENABLE=0 (NVLink multicast off) and refuses any other value.\n"

static int bad(const char *fmt, const char *arg)
{
    fputs("greenctx bench overlap: ", stderr);
    fprintf(stderr, fmt, arg ? arg : "nothing");
    fputs(" (see greenctx bench overlap --help)\n", stderr);
    return GREENCTX_EXIT_USAGE;
}

/* "4M" -> 4 MiB; a multiple of 4 bytes (fp32 words), 4 B to 4 GiB. */
static int parse_size(const char *text, size_t *bytes)
{
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

static int parse_gemm(const char *text, olap_options *o)
{
    unsigned m, n, k;
    char tail;
    if (!text || sscanf(text, "%ux%ux%u%c", &m, &n, &k, &tail) != 3 || !m || !n || !k ||
        m > 65536 || n > 65536 || k > 65536)
        return -1;
    o->m = m, o->n = n, o->k = k;
    return 0;
}

static int parse_mix(const char *text, olap_options *o)
{
    unsigned g, r;
    char tail;
    if (!text || sscanf(text, "%u:%u%c", &g, &r, &tail) != 2 || !g || !r || g > 1000 || r > 100000)
        return -1;
    o->mix_gemms = g, o->mix_allreduces = r;
    return 0;
}

/* Values following an option until the next option: sizes or SM counts. */
static int parse_list(int argc, char **argv, int *i, const char *option, olap_options *o)
{
    int taken = 0;
    while (*i + 1 < argc && argv[*i + 1][0] != '-') {
        const char *v = argv[++*i];
        int sms;
        if (!strcmp(option, "--sizes")) {
            if (o->nb_sizes == OLAP_MAX_SIZES)
                return bad("--sizes takes at most 4 sizes; '%s' is one too many", v);
            if (parse_size(v, &o->sizes[o->nb_sizes++]))
                return bad("--sizes: '%s' is not a size: bytes, a multiple of 4 up to 4G, with "
                           "an optional K, M or G (4M is 4 MiB)",
                           v);
        } else {
            if (o->nb_sms == OLAP_MAX_SMS)
                return bad("--sms takes at most 8 counts; '%s' is one too many", v);
            if (greenctx_parse_int(v, 1, 1024, &sms))
                return bad("--sms needs SM counts (1 to 1024), got '%s'", v);
            o->sms[o->nb_sms++] = (unsigned)sms;
        }
        taken++;
    }
    return taken ? GREENCTX_EXIT_OK : bad("%s needs values", option);
}

static int parse(int argc, char **argv, olap_options *o, const char **svg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int value, rc;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--sizes") || !strcmp(a, "--sms")) {
            if ((rc = parse_list(argc, argv, &i, a, o)) != GREENCTX_EXIT_OK)
                return rc;
        } else if (!strcmp(a, "--gemm")) {
            if (parse_gemm(v, o))
                return bad("--gemm needs MxNxK (each 1 to 65536), got '%s'", v);
            i++;
        } else if (!strcmp(a, "--mix")) {
            if (parse_mix(v, o))
                return bad("--mix needs GEMMS:ALLREDUCES per step, e.g. 8:40, got '%s'", v);
            i++;
        } else if (!strcmp(a, "--reps")) {
            if (greenctx_parse_int(v, 1, 100000, &value))
                return bad("--reps needs a count from 1 to 100000, got '%s'", v);
            o->reps = (unsigned)value;
            i++;
        } else if (!strcmp(a, "--svg")) {
            if (!v || !*v || v[0] == '-')
                return bad("--svg needs a file name, got %s", v);
            *svg = v;
            i++;
        } else {
            return bad(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
        }
    }
    return GREENCTX_EXIT_OK;
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

/* Two GPUs, every C a legal split of both, and a driver that runs kernels. Prints why not. */
static int check_machine(bench_env env[OLAP_GPUS], int first, const olap_options *o)
{
    int count = 0;
    if (bench_gctx(gctx_device_count(&count), "counting devices"))
        return -1;
    if (count < first + OLAP_GPUS) {
        fprintf(stderr, "greenctx bench overlap: needs 2 GPUs (an NCCL all-reduce between "
                        "devices %d and %d); this machine has %d\n",
                first, first + 1, count);
        return -1;
    }
    for (int i = 0; i < OLAP_GPUS; i++)
        if (bench_env_open(&env[i], first + i))
            return -1;
    for (int i = 0; i < OLAP_GPUS; i++)
        for (unsigned c = 0; c < o->nb_sms; c++) {
            gctx_group groups[2] = {{o->sms[c], 0, 0, 0}, {0, 0, 0, 1}};
            char what[64];
            snprintf(what, sizeof what, "--sms %u on GPU %d", o->sms[c], first + i);
            if (bench_gctx(gctx_partition_plan(env[i].whole, groups, 2, NULL, NULL, NULL), what))
                return -1;
        }
    if (!env[0].kernels || !env[1].kernels) {
        fprintf(stderr, "greenctx bench overlap: needs real GPUs: this driver runs no kernels "
                        "(cuModuleLoadData answered CUDA_ERROR_NOT_SUPPORTED; the simulated "
                        "driver?), and NCCL and cuBLAS need the real driver\n");
        return -1;
    }
    return 0;
}

static void print_header(const bench_env *env, int json)
{
    char version[16];
    greenctx_format_driver_version(env->driver_version, version, sizeof version);
    if (json) {
        printf("{\"meta\":{\"driver_version\":%d,\"driver\":\"%s\",\"date\":\"%s\","
               "\"quick\":%s,\"command\":",
               env->driver_version, version, env->date, env->opt.quick ? "true" : "false");
        greenctx_json_string(stdout, env->command);
        printf("},\"overlap\":");
        return;
    }
    printf("greenctx bench overlap: driver %s, %s\ncommand: %s\n", version, env->date,
           env->command);
}

int greenctx_bench_overlap(int argc, char **argv, const greenctx_tool_options *opts,
                           const char *command)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(OVERLAP_USAGE, stdout);
            return GREENCTX_EXIT_OK;
        }
    olap_options o;
    memset(&o, 0, sizeof o);
    const char *svg = NULL;
    greenctx_common_args common;
    int rc = greenctx_parse_common(&argc, argv, 0, &common);
    if (rc == GREENCTX_EXIT_OK)
        rc = parse(argc, argv, &o, &svg);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    defaults(&o);
    char why[512];
    if (olap_nvls_off(why, sizeof why)) {
        fprintf(stderr, "greenctx bench overlap: %s\n", why);
        return GREENCTX_EXIT_FAILED;
    }
    if ((rc = greenctx_tool_start(opts, "bench", common.json)) != GREENCTX_EXIT_OK)
        return rc;
    bench_env env[OLAP_GPUS];
    memset(env, 0, sizeof env);
    olap_libs libs;
    olap_result *res = NULL;
    /* NCCL's init changes this thread's current context; the run leaves it as it found it. */
    CUcontext saved = NULL;
    int have_saved = gctx_current_context_save(&saved) == GCTX_SUCCESS;
    rc = check_machine(env, common.device, &o);
    if (!rc && olap_libs_load(&libs, why, sizeof why)) {
        fprintf(stderr, "greenctx bench overlap: %s\n", why);
        rc = -1;
    }
    if (!rc && !(res = calloc(1, sizeof *res)))
        rc = -1;
    if (!rc) {
        snprintf(env[0].command, sizeof env[0].command, "%s", command);
        env[0].opt.quick = o.quick;
        if (!common.json)
            print_header(&env[0], 0);
        rc = bench_overlap_run(env, &libs, &o, res);
    }
    if (!rc) {
        bench_overlap_advise(res);
        if (common.json) {
            print_header(&env[0], 1);
            bench_overlap_json(res);
            printf("}\n");
        } else {
            bench_overlap_print(res);
        }
    }
    if (!rc && svg) {
        bench_chart *chart = calloc(1, sizeof *chart);
        rc = chart ? 0 : -1;
        if (chart) {
            bench_overlap_chart(&env[0], res, chart);
            rc = bench_svg_write(svg, &env[0], chart);
            if (rc == 0 && !common.json)
                printf("chart: %s\n", svg);
        }
        free(chart);
    }
    free(res);
    for (int i = 0; i < OLAP_GPUS; i++)
        if (env[i].drv)
            bench_env_close(&env[i]);
    if (have_saved)
        gctx_current_context_restore(saved, NULL);
    return rc ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

/* `greenctx bench overlap`: the picks, the table, the JSON, the chart. */
#include <stdio.h>
#include <string.h>

#include "bench_overlap.h"

static const char *kind_name(olap_kind kind)
{
    return kind == OLAP_GREEN ? "green" : kind == OLAP_PLAIN_MAXCTAS ? "ordinary_maxctas"
                                                                     : "ordinary";
}

/* "4 MiB", "256 MiB", "1 GiB", "640 KiB", "100 B" */
static const char *size_text(size_t bytes, char *buf, size_t size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0)
        bytes /= 1024, u++;
    snprintf(buf, size, "%zu %s", bytes, units[u]);
    return buf;
}

void bench_overlap_advise(olap_result *res)
{
    for (unsigned s = 0; s < res->nb_sizes; s++) {
        olap_size_result *sr = &res->sizes[s];
        sr->best_step = sr->best_p99 = -1;
        for (unsigned a = 0; a < sr->nb_arms; a++) {
            const olap_arm *arm = &sr->arms[a];
            if (!arm->measured)
                continue;
            if (sr->best_step < 0 || arm->step_ms < sr->arms[sr->best_step].step_ms)
                sr->best_step = (int)a;
            if (arm->gemm_tflops >= OLAP_GEMM_KEEP * res->gemm_whole_tflops &&
                (sr->best_p99 < 0 || arm->ar_us.p99 < sr->arms[sr->best_p99].ar_us.p99))
                sr->best_p99 = (int)a;
        }
    }
}

void bench_overlap_advice_line(const olap_arm *arm, char *buf, size_t size)
{
    int n;
    if (arm->kind == OLAP_GREEN)
        n = snprintf(buf, size,
                     "gctx_group groups[2] = {{.num_sms = %u}, {.backfill = 1}}; /* "
                     "gctx_partition_split: NCCL on a stream of groups[0], GEMMs on the rest */",
                     arm->comm_sms);
    else
        n = snprintf(buf, size, "/* ordinary streams, no split */");
    if (arm->max_ctas && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - n, " ncclConfig_t config = NCCL_CONFIG_INITIALIZER; "
                                         "config.maxCTAs = %u;",
                      arm->max_ctas);
    if (arm->sm_target && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - n, " cublasSetSmCountTarget(handle, %u);", arm->sm_target);
}

/* ---- the table ------------------------------------------------------------------------- */

static void print_pick(const olap_size_result *sr, int index, const char *why)
{
    if (index < 0) {
        printf("%s: none of the arms qualifies\n", why);
        return;
    }
    const olap_arm *arm = &sr->arms[index], *plain = &sr->arms[0];
    char line[512];
    bench_overlap_advice_line(arm, line, sizeof line);
    printf("%s: %s — step %.2f ms, %.2fx ordinary streams' %.2f ms; all-reduce p99 %.1f us "
           "(%.1f us on ordinary streams)\n  %s\n",
           why, arm->label, arm->step_ms, bench_ratio(plain->step_ms, arm->step_ms),
           plain->step_ms, arm->ar_us.p99, plain->ar_us.p99, line);
}

static void print_size(const olap_result *res, const olap_size_result *sr)
{
    char sz[32];
    printf("\n== overlap: %s all-reduce (fp32 sum, 2 GPUs) beside a bf16 GEMM %ux%ux%u (fp32 "
           "compute)\n",
           size_text(sr->bytes, sz, sizeof sz), res->m, res->n, res->k);
    printf("step = %u GEMMs + %u all-reduces queued at once, both done; all-reduce alone on the "
           "whole GPU p50 %.1f us; GEMM alone %.0f TFLOP/s; %u all-reduces timed per arm, "
           "median of %u steps\n\n",
           sr->mix_gemms, sr->mix_allreduces, sr->ar_whole_us, res->gemm_whole_tflops, sr->reps,
           sr->steps);
    printf("%-40s %9s %9s %9s | %8s %7s %7s | %9s %8s\n", "arm", "AR p50", "AR p99", "p99/alone",
           "TFLOP/s", "/alone", "/whole", "step ms", "speedup");
    const olap_arm *plain = &sr->arms[0];
    for (unsigned a = 0; a < sr->nb_arms; a++) {
        const olap_arm *arm = &sr->arms[a];
        if (!arm->measured)
            continue;
        printf("%-40s %9.1f %9.1f %8.2fx | %8.0f %7.3f %7.3f | %9.2f %7.2fx%s\n", arm->label,
               arm->ar_us.p50, arm->ar_us.p99, bench_ratio(arm->ar_us.p99, arm->ar_alone_us.p99),
               arm->gemm_tflops, bench_ratio(arm->gemm_tflops, arm->gemm_alone_tflops),
               bench_ratio(arm->gemm_tflops, res->gemm_whole_tflops), arm->step_ms,
               bench_ratio(plain->step_ms, arm->step_ms), (int)a == sr->best_step ? " *" : "");
    }
    printf("(AR: all-reduce beside the GEMM, us; p99/alone: against alone in the same SMs with "
           "the same NCCL config; TFLOP/s: the GEMM beside the all-reduce, /alone in its SMs with "
           "the same SM target, /whole: alone on the whole GPU; speedup: ordinary streams' step "
           "/ this arm's; * shortest step)\n\n");
    print_pick(sr, sr->best_step, "pick, shortest step");
    char why[96];
    snprintf(why, sizeof why, "pick, shortest all-reduce p99 keeping the GEMM >= %.1f of whole",
             OLAP_GEMM_KEEP);
    print_pick(sr, sr->best_p99, why);
}

void bench_overlap_print(const bench_env *env, const void *result)
{
    const olap_result *res = result;
    (void)env;
    char version[32] = "unknown";
    if (res->nccl_version)
        snprintf(version, sizeof version, "%d.%d.%d", res->nccl_version / 10000,
                 res->nccl_version / 100 % 100, res->nccl_version % 100);
    printf("NCCL %s (%s), NCCL_NVLS_ENABLE=0; cuBLAS %d (%s)\n", version, res->nccl_path,
           res->cublas_version, res->cublas_path);
    printf("GPU 0: %s (%u SMs); GPU 1: %s (%u SMs)\n", res->gpu_name[0], res->sm_count[0],
           res->gpu_name[1], res->sm_count[1]);
    printf("NCCL's communicator init %s the calling thread's current context%s\n",
           res->init_changed_context ? "changed" : "did not change",
           res->init_changed_context ? "; gctx_current_context_restore put it back" : "");
    for (unsigned s = 0; s < res->nb_sizes; s++)
        print_size(res, &res->sizes[s]);
    printf("\noverlap: %.0f s\n", res->seconds);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_pick(json_writer *w, const char *key, const olap_size_result *sr, int index)
{
    if (index < 0) {
        json_null(w, key);
        return;
    }
    const olap_arm *arm = &sr->arms[index];
    char line[512];
    bench_overlap_advice_line(arm, line, sizeof line);
    json_object(w, key);
    json_int(w, "arm", index);
    json_string(w, "label", arm->label);
    json_fixed(w, "step_ms", arm->step_ms, 4);
    json_fixed(w, "speedup_over_ordinary", bench_ratio(sr->arms[0].step_ms, arm->step_ms), 4);
    json_fixed(w, "allreduce_p99_us", arm->ar_us.p99, 3);
    json_string(w, "line", line);
    json_close(w);
}

static void json_arm(json_writer *w, const olap_result *res, const olap_arm *arm)
{
    json_object(w, NULL);
    json_string(w, "label", arm->label);
    json_string(w, "kind", kind_name(arm->kind));
    json_uint(w, "comm_sms", arm->comm_sms);
    json_uint(w, "compute_sms", arm->compute_sms);
    json_uint(w, "max_ctas", arm->max_ctas);
    json_uint(w, "sm_target", arm->sm_target);
    json_bool(w, "measured", arm->measured);
    bench_json_summary(w, "allreduce_us", &arm->ar_us);
    bench_json_summary(w, "allreduce_alone_us", &arm->ar_alone_us);
    json_fixed(w, "p99_vs_alone", bench_ratio(arm->ar_us.p99, arm->ar_alone_us.p99), 4);
    json_fixed(w, "p50_vs_alone", bench_ratio(arm->ar_us.p50, arm->ar_alone_us.p50), 4);
    json_fixed(w, "gemm_tflops", arm->gemm_tflops, 3);
    json_fixed(w, "gemm_alone_tflops", arm->gemm_alone_tflops, 3);
    json_fixed(w, "gemm_vs_alone", bench_ratio(arm->gemm_tflops, arm->gemm_alone_tflops), 4);
    json_fixed(w, "gemm_vs_whole", bench_ratio(arm->gemm_tflops, res->gemm_whole_tflops), 4);
    json_fixed(w, "step_ms", arm->step_ms, 4);
    json_fixed(w, "step_min_ms", arm->step_min_ms, 4);
    json_fixed(w, "step_max_ms", arm->step_max_ms, 4);
    json_close(w);
}

void bench_overlap_json(json_writer *w, const bench_env *env, const void *result)
{
    const olap_result *res = result;
    (void)env;
    json_object(w, "overlap");
    json_int(w, "nccl_version", res->nccl_version);
    json_string(w, "nccl_library", res->nccl_path);
    json_int(w, "cublas_version", res->cublas_version);
    json_string(w, "cublas_library", res->cublas_path);
    json_string(w, "nccl_nvls_enable", "0");
    json_bool(w, "init_changed_context", res->init_changed_context);
    json_array(w, "gpus");
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        json_object(w, NULL);
        json_string(w, "name", res->gpu_name[i]);
        json_uint(w, "sm_count", res->sm_count[i]);
        json_close(w);
    }
    json_close(w);
    json_object(w, "gemm");
    json_uint(w, "m", res->m);
    json_uint(w, "n", res->n);
    json_uint(w, "k", res->k);
    json_string(w, "inputs", "bf16");
    json_string(w, "output", "bf16");
    json_string(w, "compute", "fp32");
    json_fixed(w, "whole_tflops", res->gemm_whole_tflops, 3);
    json_close(w);
    json_fixed(w, "gemm_keep", OLAP_GEMM_KEEP, 2);
    json_fixed(w, "seconds", res->seconds, 1);
    json_array(w, "sizes");
    for (unsigned s = 0; s < res->nb_sizes; s++) {
        const olap_size_result *sr = &res->sizes[s];
        json_object(w, NULL);
        json_uint(w, "bytes", sr->bytes);
        json_uint(w, "reps", sr->reps);
        json_uint(w, "steps", sr->steps);
        json_object(w, "mix");
        json_uint(w, "gemms", sr->mix_gemms);
        json_uint(w, "allreduces", sr->mix_allreduces);
        json_close(w);
        json_fixed(w, "allreduce_whole_us", sr->ar_whole_us, 3);
        json_array(w, "arms");
        for (unsigned a = 0; a < sr->nb_arms; a++)
            json_arm(w, res, &sr->arms[a]);
        json_close(w);
        json_pick(w, "shortest_step", sr, sr->best_step);
        json_pick(w, "shortest_p99_keeping_gemm", sr, sr->best_p99);
        json_close(w);
    }
    json_close(w);
    json_close(w);
}

/* ---- the chart ------------------------------------------------------------------------- */

void bench_overlap_chart(const bench_env *env, const void *result, bench_chart *chart)
{
    const olap_result *res = result;
    char sz[32];
    for (unsigned s = 0; s < res->nb_sizes; s++) {
        const olap_size_result *sr = &res->sizes[s];
        size_text(sr->bytes, sz, sizeof sz);
        /* one panel per C: its alone reference, ordinary streams with maxCTAs, the green arms */
        for (unsigned first = 1; first < sr->nb_arms && chart->nb_dist < CHART_MAX_DIST;
             first += OLAP_ARMS_PER_SMS) {
            chart_dist *d = &chart->dist[chart->nb_dist++];
            memset(d, 0, sizeof *d);
            snprintf(d->title, sizeof d->title,
                     "%s all-reduce beside the GEMM, communication on %u SMs (us)", sz,
                     sr->arms[first].comm_sms);
            bench_chart_row(d, "ordinary streams", &sr->arms[0].ar_us, 1);
            bench_chart_row(d, "alone, its green partition", &sr->arms[first + 1].ar_alone_us, 1);
            for (unsigned a = first; a < first + OLAP_ARMS_PER_SMS && a < sr->nb_arms; a++)
                bench_chart_row(d, sr->arms[a].label, &sr->arms[a].ar_us, 1);
        }
    }
    /* The GEMM's rate in the rest against its share of the SMs (first size's green arms). */
    if (res->nb_sizes && chart->nb_curves < CHART_MAX_CURVES) {
        const olap_size_result *sr = &res->sizes[0];
        chart_curve *c = &chart->curve[chart->nb_curves++];
        memset(c, 0, sizeof *c);
        snprintf(c->title, sizeof c->title, "GEMM beside the all-reduce / alone on the whole GPU");
        snprintf(c->y_label, sizeof c->y_label, "fraction (dashed: SM share)");
        for (unsigned a = 1; a < sr->nb_arms && c->nb_points < CHART_MAX_POINTS;
             a += OLAP_ARMS_PER_SMS) {
            const olap_arm *arm = &sr->arms[a + 1]; /* green, no maxCTAs, no target */
            c->x[c->nb_points] = arm->compute_sms;
            c->y[c->nb_points] = bench_ratio(arm->gemm_tflops, res->gemm_whole_tflops);
            c->ideal[c->nb_points++] = (double)arm->compute_sms / env->sm_count;
        }
    }
}

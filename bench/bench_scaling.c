/* Scaling: the same per-SM work on partitions of k SMs. Compute: k * 8 blocks of 256 threads
 * (every SM full, one wave) of the same FMA chain: linear scaling takes the whole GPU's time,
 * efficiency t_full / t_k. Memory: a streaming copy of a fixed buffer with k * 8 blocks (bytes
 * read plus written); a few dozen SMs saturate HBM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "bench_kernels.h"
#include "bench_scaling.h"

#define SCALING_REPS 20
#define SCALING_QUICK_REPS 7
#define SCALING_WARMUPS 2
#define FMA_ITERS 16384 /* about 0.5 ms per launch at any size on an H200 */
#define COPY_BYTES (2ull << 30)
#define QUICK_COPY_BYTES (1ull << 30)
#define COPY_SEED 0x5eed0003u

static const unsigned sizes[] = {8, 16, 32, 64, 96, 128};

typedef struct scaling_run {
    const bench_env *env;
    scaling_result *res;
    gcu_deviceptr fma_out, src, dst;
    unsigned long long copy_bytes;
    double *times;
    progress_meter progress;
} scaling_run;

/* The median of reps launches on the lane. */
static int time_kernel(scaling_run *run, const bench_lane *lane, int copy, double *median_ms)
{
    const bench_env *env = run->env;
    unsigned grid = lane->sms * BENCH_FULL_BLOCKS_SM, reps = run->res->reps;
    int rc = 0;
    for (unsigned i = 0; i < SCALING_WARMUPS + reps && !rc; i++) {
        double ms = 0;
        rc = bench_lane_mark(env, lane, lane->start) ||
             (copy ? bench_copy(env, &lane->mod, lane->stream, grid, run->src, run->dst,
                                run->copy_bytes / 16)
                   : bench_fma(env, &lane->mod, lane->stream, grid, run->fma_out, grid,
                               FMA_ITERS, 0)) ||
             bench_lane_mark(env, lane, lane->end) || bench_lane_elapsed(env, lane, &ms);
        if (i >= SCALING_WARMUPS)
            run->times[i - SCALING_WARMUPS] = ms;
    }
    if (rc)
        return -1;
    bench_summary s;
    bench_summarize(run->times, reps, &s);
    *median_ms = s.p50;
    return copy ? bench_check_copy(env, run->dst, run->copy_bytes / 4, COPY_SEED, "the copy kernel")
                : bench_check_fma(env, run->fma_out, grid, grid, FMA_ITERS, "the fma kernel");
}

static int measure(scaling_run *run, const bench_lane *lane, scaling_point *pt)
{
    if (bench_push(run->env, lane->ctx))
        return -1;
    int rc = time_kernel(run, lane, 0, &pt->fma_ms) || time_kernel(run, lane, 1, &pt->copy_ms);
    bench_pop(run->env);
    if (rc)
        return -1;
    double flop = (double)lane->sms * BENCH_FULL_BLOCKS_SM * BENCH_BLOCK * 4.0 * FMA_ITERS * 2.0;
    pt->sms = lane->sms;
    pt->fma_tflops = flop / (pt->fma_ms * 1e-3) * 1e-12;
    pt->fma_per_sm = pt->fma_tflops * 1e3 / lane->sms;
    pt->copy_gbs = 2.0 * (double)run->copy_bytes / (pt->copy_ms * 1e-3) * 1e-9;
    pt->valid = 1;
    return 0;
}

static int run_point(scaling_run *run, unsigned k, scaling_point *pt)
{
    const bench_env *env = run->env;
    bench_lane lane;
    gctx_partition *part = NULL;
    memset(pt, 0, sizeof *pt);
    pt->sms = k;
    pt->whole_gpu = k == env->sm_count;
    progress_step(&run->progress, "%u SMs", k);
    /* A partition of k SMs; for a count only 2-SM units give, co-scheduling given up. */
    gctx_group group = {.num_sms = k};
    gctx_status s = GCTX_SUCCESS;
    if (!pt->whole_gpu && gctx_partition_split(env->whole, &group, 1, NULL, &part, NULL, NULL,
                                               NULL) != GCTX_SUCCESS) {
        group.coscheduled_sm_count = 2;
        pt->fine_granules = 1;
        s = gctx_partition_split(env->whole, &group, 1, NULL, &part, NULL, NULL, NULL);
    }
    if (s != GCTX_SUCCESS) {
        snprintf(pt->note, sizeof pt->note, "skipped: %s", gctx_last_error());
        return 0;
    }
    int rc = bench_lane_open(env, part, BENCH_PRIORITY_NORMAL, &lane); /* NULL: whole GPU */
    gctx_partition_release(part);
    if (rc)
        return -1;
    rc = measure(run, &lane, pt);
    bench_lane_close(env, &lane);
    return rc;
}

static int open_buffers(scaling_run *run)
{
    const bench_env *env = run->env;
    bench_lane lane;
    if (bench_alloc(env, &run->fma_out,
                    (size_t)env->sm_count * BENCH_FULL_BLOCKS_SM * BENCH_BLOCK * 4, "scaling") ||
        bench_alloc(env, &run->src, run->copy_bytes, "scaling") ||
        bench_alloc(env, &run->dst, run->copy_bytes, "scaling") ||
        bench_lane_open(env, NULL, BENCH_PRIORITY_NORMAL, &lane))
        return -1;
    int rc = bench_push(env, env->primary);
    if (!rc) {
        rc = bench_fill(env, &lane.mod, lane.stream, run->src, run->copy_bytes / 4, COPY_SEED) ||
             bench_cu(env->drv->cuStreamSynchronize(lane.stream), "filling the copy source");
        bench_pop(env);
    }
    bench_lane_close(env, &lane);
    return rc ? -1 : 0;
}

int bench_scaling_run(const bench_env *env, scaling_result *res)
{
    memset(res, 0, sizeof *res);
    res->reps = env->opt.reps ? env->opt.reps : env->opt.quick ? SCALING_QUICK_REPS : SCALING_REPS;
    scaling_run run = {env, res, 0, 0, 0, env->opt.quick ? QUICK_COPY_BYTES : COPY_BYTES, NULL,
                       {NULL, 0, 0, 0}};
    snprintf(res->fma_text, sizeof res->fma_text,
             "fma: k x %u blocks x %u threads (every SM full, one wave), %u FMA steps x 4 "
             "chains per thread",
             BENCH_FULL_BLOCKS_SM, BENCH_BLOCK, FMA_ITERS);
    snprintf(res->copy_text, sizeof res->copy_text,
             "copy: %llu MiB to another buffer, k x %u blocks x %u threads; GB/s counts bytes "
             "read + written",
             run.copy_bytes >> 20, BENCH_FULL_BLOCKS_SM, BENCH_BLOCK);
    run.times = calloc(res->reps, sizeof *run.times);
    int rc = run.times ? open_buffers(&run) : -1;
    unsigned points = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        points += sizes[i] < env->sm_count;
    progress_begin(&run.progress, "greenctx bench: scaling", points);
    /* The whole GPU first: every other point is measured against it. */
    if (!rc)
        rc = run_point(&run, env->sm_count, &res->points[res->nb_points++]);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !rc; i++)
        if (sizes[i] < env->sm_count)
            rc = run_point(&run, sizes[i], &res->points[res->nb_points++]);
    const scaling_point *full = &res->points[0];
    for (unsigned i = 0; i < res->nb_points && !rc; i++) {
        scaling_point *pt = &res->points[i];
        pt->efficiency = bench_ratio(pt->fma_per_sm, full->fma_per_sm);
        pt->copy_vs_full = bench_ratio(pt->copy_gbs, full->copy_gbs);
    }
    bench_free(env, &run.fma_out);
    bench_free(env, &run.src);
    bench_free(env, &run.dst);
    free(run.times);
    return rc ? -1 : 0;
}

/* ---- output ---- */

/* Points in SM order, the whole GPU last. */
static const scaling_point *point_at(const scaling_result *res, unsigned i)
{
    return i + 1 < res->nb_points ? &res->points[i + 1] : &res->points[0];
}

void bench_scaling_print(const scaling_result *res)
{
    printf("\n== scaling: the same kernels on partitions of k SMs (median of %u reps)\n",
           res->reps);
    printf("   %s\n   %s\n\n", res->fma_text, res->copy_text);
    printf("%5s %-9s %9s %9s %10s %10s | %9s %9s %8s\n", "SMs", "where", "fma ms", "TFLOP/s",
           "GFLOP/s/SM", "efficiency", "copy ms", "GB/s", "vs full");
    for (unsigned i = 0; i < res->nb_points; i++) {
        const scaling_point *p = point_at(res, i);
        const char *where = p->whole_gpu ? "whole GPU" : p->fine_granules ? "green (2)" : "green";
        if (!p->valid) {
            printf("%5u %-9s %s\n", p->sms, where, p->note);
            continue;
        }
        printf("%5u %-9s %9.3f %9.2f %10.2f %10.3f | %9.3f %9.1f %8.3f\n", p->sms, where,
               p->fma_ms, p->fma_tflops, p->fma_per_sm, p->efficiency, p->copy_ms, p->copy_gbs,
               p->copy_vs_full);
    }
    printf("   efficiency 1.000 is linear scaling (target >= 0.95 at every size); "
           "'green (2)': 2-SM units, co-scheduling given up\n");
}

void bench_scaling_json(json_writer *w, const scaling_result *res)
{
    json_object(w, "scaling");
    json_uint(w, "reps", res->reps);
    json_string(w, "fma", res->fma_text);
    json_string(w, "copy", res->copy_text);
    json_array(w, "points");
    for (unsigned i = 0; i < res->nb_points; i++) {
        const scaling_point *p = point_at(res, i);
        json_object(w, NULL);
        json_uint(w, "sms", p->sms);
        json_bool(w, "whole_gpu", p->whole_gpu);
        json_bool(w, "fine_granules", p->fine_granules);
        json_bool(w, "valid", p->valid);
        if (p->valid) {
            json_fixed(w, "fma_ms", p->fma_ms, 5);
            json_fixed(w, "fma_tflops", p->fma_tflops, 4);
            json_fixed(w, "fma_gflops_per_sm", p->fma_per_sm, 4);
            json_fixed(w, "efficiency", p->efficiency, 5);
            json_fixed(w, "copy_ms", p->copy_ms, 5);
            json_fixed(w, "copy_gbs", p->copy_gbs, 3);
            json_fixed(w, "copy_vs_full", p->copy_vs_full, 5);
        } else {
            json_string(w, "note", p->note);
        }
        json_close(w);
    }
    json_close(w);
    json_close(w);
}

void bench_scaling_chart(const bench_env *env, const scaling_result *res, bench_chart *chart)
{
    if (chart->nb_curves + 2 > CHART_MAX_CURVES)
        return;
    chart_curve *eff = &chart->curve[chart->nb_curves++];
    chart_curve *bw = &chart->curve[chart->nb_curves++];
    *eff = (chart_curve){.title = "compute-bound: TFLOP/s vs SMs (dashed: linear)",
                         .y_label = "TFLOP/s"};
    *bw = (chart_curve){.title = "memory-bound: GB/s vs SMs (dashed: whole GPU)",
                        .y_label = "GB/s"};
    const scaling_point *full = &res->points[0];
    for (unsigned i = 0; i < res->nb_points && eff->nb_points < CHART_MAX_POINTS; i++) {
        const scaling_point *p = point_at(res, i);
        if (!p->valid || !full->valid)
            continue;
        eff->x[eff->nb_points] = bw->x[bw->nb_points] = p->sms;
        eff->y[eff->nb_points] = p->fma_tflops;
        eff->ideal[eff->nb_points++] = full->fma_tflops * p->sms / env->sm_count;
        bw->y[bw->nb_points] = p->copy_gbs;
        bw->ideal[bw->nb_points++] = full->copy_gbs;
    }
}

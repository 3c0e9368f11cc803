/* Re-partitioning rows: see cache_rows.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "cache_rows.h"

#define MEMORY_CYCLES 200
#define QUICK_MEMORY_CYCLES 50
#define WARMUPS 4

/* ---- re-partitions, their time and the device memory they lose ---- */

static int build(const bench_env *env, unsigned sms, bench_pair *s)
{
    gctx_group g = {.num_sms = sms};
    memset(s, 0, sizeof *s);
    gctx_status st = gctx_partition_split(env->whole, &g, 1, NULL, &s->part[0], &s->part[1],
                                          NULL, NULL);
    for (int i = 0; i < 2 && st == GCTX_SUCCESS; i++)
        if ((st = gctx_context_create(s->part[i], NULL, &s->ctx[i])) == GCTX_SUCCESS)
            st = gctx_stream_create(s->ctx[i], NULL, &s->stream[i]);
    if (st != GCTX_SUCCESS)
        bench_pair_release(s);
    return bench_gctx(st, "a re-partition");
}

static int free_memory(const bench_env *env, size_t *free_bytes)
{
    size_t total;
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuMemGetInfo(free_bytes, &total), "cuMemGetInfo");
    bench_pop(env);
    return rc;
}

/* cycles re-partitions with the cache at `limit` (0: off), each timed from the teardown of
 * the old ratio to the new streams, and the device memory they lost. */
static int repartitions(const bench_env *env, cache_rows *rows, unsigned limit, double *us,
                        bench_summary *time, double *lost_mib)
{
    bench_pair s;
    size_t before = 0, after = 0;
    if (bench_gctx(gctx_cache_set_limit(env->device, limit), "gctx_cache_set_limit") ||
        build(env, rows->small_sms, &s))
        return -1;
    int rc = 0;
    for (unsigned i = 0; i < WARMUPS + rows->cycles && !rc; i++) {
        if (i == WARMUPS)
            rc = free_memory(env, &before);
        double t0 = bench_now_us();
        bench_pair_release(&s);
        rc = rc || build(env, i & 1 ? rows->small_sms : rows->large_sms, &s);
        if (i >= WARMUPS)
            us[i - WARMUPS] = bench_now_us() - t0;
    }
    if (!rc)
        rc = free_memory(env, &after);
    bench_pair_release(&s);
    if (rc)
        return -1;
    bench_summarize(us, rows->cycles, time);
    *lost_mib = ((double)before - (double)after) / (1024.0 * 1024.0);
    return 0;
}

/* ---- layouts ---- */

/* Host time of a switch; on a GPU also the device gap it adds: kernel A (long enough that
 * what follows is queued before it ends) and kernel B on the old layout's stream, a switch,
 * kernel C on the new layout's: the gap B end -> C start, against A end -> B start. */
typedef struct switch_run {
    gctx_layouts *layouts;
    CUcontext ctx[2];
    CUstream stream[2];
    bench_module mod[2];
    gcu_deviceptr out, stamps; /* stamps: A, B, C slots of two 64-bit words */
    int kernels;
} switch_run;

static void switch_end(const bench_env *env, switch_run *run)
{
    for (int k = 0; k < 2; k++)
        bench_module_unload(env, run->ctx[k], &run->mod[k]);
    bench_free(env, &run->out);
    bench_free(env, &run->stamps);
    gctx_layouts_release(run->layouts);
}

static int switch_begin(const bench_env *env, const cache_rows *rows, switch_run *run)
{
    const unsigned counts[] = {rows->small_sms, 0, rows->large_sms, 0};
    memset(run, 0, sizeof *run);
    if (bench_gctx(gctx_layouts_create(env->device, counts, 2, 2, NULL, &run->layouts),
                   "gctx_layouts_create"))
        return -1;
    for (unsigned k = 0; k < 2; k++) {
        gctx_context *c;
        gctx_stream *s;
        if (bench_gctx(gctx_layouts_get(run->layouts, k, 0, NULL, &c, &s), "gctx_layouts_get"))
            return -1;
        run->ctx[k] = gctx_context_cu_context(c);
        run->stream[k] = gctx_stream_handle(s);
    }
    if (!env->kernels)
        return 0;
    run->kernels = 1;
    return bench_module_load(env, run->ctx[0], &run->mod[0], NULL) ||
           bench_module_load(env, run->ctx[1], &run->mod[1], NULL) ||
           bench_alloc(env, &run->out, 1 << 20, "the switch's kernels") ||
           bench_alloc(env, &run->stamps, 6 * sizeof(unsigned long long), "stamps");
}

static int one_switch(const bench_env *env, switch_run *run, int from, double *host,
                      double *gap, double *same)
{
    const int to = !from;
    if (bench_gctx(gctx_layouts_switch(run->layouts, (unsigned)from, NULL), "gctx_layouts_switch"))
        return -1;
    const gcu_deviceptr slot = sizeof(unsigned long long) * 2;
    if (run->kernels &&
        (bench_zero(env, run->stamps, 3 * slot) ||
         bench_fma(env, &run->mod[from], run->stream[from], 1, run->out, 1, 20000, run->stamps) ||
         bench_fma(env, &run->mod[from], run->stream[from], 1, run->out, 1, 1,
                   run->stamps + slot)))
        return -1;
    double t0 = bench_now_us();
    gctx_status s = gctx_layouts_switch(run->layouts, (unsigned)to, NULL);
    *host = bench_now_us() - t0;
    if (bench_gctx(s, "gctx_layouts_switch"))
        return -1;
    if (!run->kernels)
        return 0;
    unsigned long long st[6];
    if (bench_fma(env, &run->mod[to], run->stream[to], 1, run->out, 1, 1, run->stamps + 2 * slot) ||
        bench_cu(env->drv->cuStreamSynchronize(run->stream[to]), "the switch's kernels") ||
        bench_cu(env->drv->cuStreamSynchronize(run->stream[from]), "the switch's kernels") ||
        bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuMemcpyDtoH(st, run->stamps, sizeof st), "reading stamps");
    bench_pop(env);
    *same = (double)(bench_stamps_start(st + 2) - bench_stamps_end(st)) / 1e3;
    *gap = (double)(bench_stamps_start(st + 4) - bench_stamps_end(st + 2)) / 1e3;
    return rc;
}

static int switches(const bench_env *env, unsigned reps, cache_rows *rows, double *v)
{
    switch_run run;
    double *host = v, *gap = v + reps, *same = v + 2 * reps;
    int rc = switch_begin(env, rows, &run);
    for (unsigned i = 0; i < WARMUPS + reps && !rc; i++) {
        double h = 0, g = 0, s = 0;
        rc = one_switch(env, &run, (int)(i & 1), &h, &g, &s);
        if (i >= WARMUPS)
            host[i - WARMUPS] = h, gap[i - WARMUPS] = g, same[i - WARMUPS] = s;
    }
    if (!rc) {
        bench_summarize(host, reps, &rows->switch_host);
        rows->gap_valid = run.kernels;
        if (run.kernels) {
            bench_summarize(gap, reps, &rows->gap_switch);
            bench_summarize(same, reps, &rows->gap_same_stream);
        }
    }
    switch_end(env, &run);
    return rc;
}

/* 16 layouts of {8k, rest}: with an empty cache, then again with every context cached; the
 * median of LAYOUT_BUILDS of each (each cold build's contexts, trimmed, leave the driver's
 * 4 MiB each behind). */
#define LAYOUT_BUILDS 3
static int layouts_build(const bench_env *env, cache_rows *rows)
{
    unsigned counts[32];
    for (unsigned k = 0; k < 16; k++)
        counts[2 * k] = 8 * (k + 1), counts[2 * k + 1] = 0;
    if (bench_gctx(gctx_cache_set_limit(env->device, 32), "gctx_cache_set_limit"))
        return -1;
    double cold[LAYOUT_BUILDS], warm[LAYOUT_BUILDS];
    for (int i = 0; i < LAYOUT_BUILDS; i++) {
        if (bench_gctx(gctx_cache_trim(env->device), "gctx_cache_trim"))
            return -1;
        double *ms[2] = {&cold[i], &warm[i]};
        for (int round = 0; round < 2; round++) {
            gctx_layouts *l;
            double t0 = bench_now_us();
            if (bench_gctx(gctx_layouts_create(env->device, counts, 16, 2, NULL, &l),
                           "gctx_layouts_create"))
                return -1;
            *ms[round] = (bench_now_us() - t0) / 1e3;
            gctx_layouts_release(l);
        }
    }
    rows->layouts_cold_ms = bench_median(cold, LAYOUT_BUILDS);
    rows->layouts_warm_ms = bench_median(warm, LAYOUT_BUILDS);
    return 0;
}

int cache_rows_measure(const bench_env *env, unsigned reps, cache_rows *rows)
{
    memset(rows, 0, sizeof *rows);
    rows->small_sms = 16;
    rows->large_sms = 64;
    rows->cycles = env->opt.quick ? QUICK_MEMORY_CYCLES : MEMORY_CYCLES;
    unsigned limit;
    if (bench_gctx(gctx_cache_get_limit(env->device, &limit), "gctx_cache_get_limit"))
        return -1;
    size_t n = 3 * (size_t)(reps > rows->cycles ? reps : rows->cycles);
    double *v = calloc(n, sizeof *v);
    if (!v) {
        fprintf(stderr, "greenctx bench: out of memory\n");
        return -1;
    }
    fprintf(stderr, "greenctx bench: re-partitioning\n");
    int rc = repartitions(env, rows, limit ? limit : 16, v, &rows->repartition_cached,
                          &rows->lost_cached_mib) ||
             repartitions(env, rows, 0, v, &rows->repartition_rebuild, &rows->lost_rebuild_mib) ||
             bench_gctx(gctx_cache_set_limit(env->device, limit ? limit : 16),
                        "gctx_cache_set_limit") ||
             switches(env, reps, rows, v) || layouts_build(env, rows);
    free(v);
    if (bench_gctx(gctx_cache_set_limit(env->device, limit), "gctx_cache_set_limit") ||
        bench_gctx(gctx_cache_trim(env->device), "gctx_cache_trim"))
        rc = -1;
    rows->valid = !rc;
    return rc ? -1 : 0;
}

void cache_rows_print(const cache_rows *r)
{
    if (!r->valid)
        return;
    printf("\nre-partitioning: %u/rest <-> %u/rest, with the context cache and without "
           "(GREENCTX_CONTEXT_CACHE=0); times in us\n",
           r->small_sms, r->large_sms);
    printf("%-34s %10s %10s | %10s %10s | %7s\n", "", "cache p50", "p99", "none p50", "p99",
           "ratio");
    printf("%-34s %10.2f %10.2f | %10.2f %10.2f | %7.3f\n", "re-partition", r->repartition_cached.p50,
           r->repartition_cached.p99, r->repartition_rebuild.p50, r->repartition_rebuild.p99,
           bench_ratio(r->repartition_cached.p50, r->repartition_rebuild.p50));
    printf("%-34s %10.1f %10s | %10.1f %10s |\n", "device memory lost, MiB", r->lost_cached_mib,
           "", r->lost_rebuild_mib, "");
    printf("   (over %u re-partitions; target with the cache: 0, at most 10 MB in 100,000)\n",
           r->cycles);
    printf("%-34s %10.2f %10.2f |   target p50 <= 2 us\n", "layout switch, host",
           r->switch_host.p50, r->switch_host.p99);
    if (r->gap_valid) {
        printf("%-34s %10.2f %10.2f | %10.2f %10.2f |  added %.2f (target <= 1 us)\n",
               "device gap: switch | one stream", r->gap_switch.p50, r->gap_switch.p99,
               r->gap_same_stream.p50, r->gap_same_stream.p99,
               r->gap_switch.p50 - r->gap_same_stream.p50);
    } else {
        printf("%-34s needs a GPU (kernels)\n", "device gap across a switch");
    }
    printf("%-34s %10.1f ms empty cache | %.1f ms from the cache (target <= 60 ms)\n",
           "16 layouts x 2 contexts + streams", r->layouts_cold_ms, r->layouts_warm_ms);
}

void cache_rows_json(json_writer *w, const cache_rows *r)
{
    json_object(w, "repartitioning");
    json_bool(w, "valid", r->valid);
    if (r->valid) {
        json_uint(w, "small_sms", r->small_sms);
        json_uint(w, "large_sms", r->large_sms);
        json_uint(w, "cycles", r->cycles);
        bench_json_summary(w, "repartition_cache_us", &r->repartition_cached);
        bench_json_summary(w, "repartition_no_cache_us", &r->repartition_rebuild);
        json_fixed(w, "memory_lost_cache_mib", r->lost_cached_mib, 3);
        json_fixed(w, "memory_lost_no_cache_mib", r->lost_rebuild_mib, 3);
        bench_json_summary(w, "layout_switch_host_us", &r->switch_host);
        if (r->gap_valid) {
            bench_json_summary(w, "device_gap_switch_us", &r->gap_switch);
            bench_json_summary(w, "device_gap_same_stream_us", &r->gap_same_stream);
        }
        json_fixed(w, "layouts_16x2_cold_ms", r->layouts_cold_ms, 3);
        json_fixed(w, "layouts_16x2_warm_ms", r->layouts_warm_ms, 3);
    }
    json_close(w);
}

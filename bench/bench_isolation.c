/* Isolation: how much a hog on the other SMs delays a latency-critical victim. Closed loop,
 * a random 0-200 us host gap between submissions (every phase of the hog's blocks). Each is
 * timed by events around it on the victim's stream (latency), and from the host's wall clock
 * before the launch to the first block's %globaltimer (start delay): beyond the smallest
 * offset of the two clocks seen idle (32 submissions before and after the arm, interpolated
 * against drift), what the hog adds that events can't see when the stream itself waits. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "bench_isolation.h"

/* ---- the hog: a thread with a few units of work queued ahead, so that its lane never idles */

#define HOG_IN_FLIGHT 4u       /* units queued ahead: a few ms of slack for the feeder thread */
#define HOG_CHUNKS_PER_SLOT 64 /* fine chunks: a partition of any size gets an even share */
#define HOG_ITERS_PER_CHUNK 480 /* with 64 chunks per block slot, about 1 ms per unit on H200 */
#define HOG_COPY_BYTES (1ull << 30)

/* A unit is the same work on every lane: units per second compare across partitions. */
typedef struct bench_hog_work {
    gcu_deviceptr fma_out;            /* one float per thread of the largest grid */
    unsigned fma_chunks, fma_iters;   /* per unit */
    gcu_deviceptr src, dst;
    unsigned long long copy_words;    /* per unit: copy_words * 4 bytes read and written */
    unsigned seed;
} bench_hog_work;

typedef struct bench_hog {
    const bench_env *env;
    const bench_lane *lane;
    const bench_hog_work *work;
    bench_hog_kind kind;
    pthread_t thread;
    int running;
    atomic_int stop;
    int failed;
    unsigned long long units; /* launched and completed between the start and end events */
    double seconds;
} bench_hog;

static const char *hog_name(bench_hog_kind kind) { return kind == BENCH_HOG_FMA ? "fma" : "copy"; }

static unsigned hog_grid(const bench_hog *hog) { return hog->lane->sms * BENCH_FULL_BLOCKS_SM; }

static int launch_unit(const bench_hog *hog)
{
    const bench_hog_work *w = hog->work;
    if (hog->kind == BENCH_HOG_FMA)
        return bench_fma(hog->env, &hog->lane->mod, hog->lane->stream, hog_grid(hog), w->fma_out,
                         w->fma_chunks, w->fma_iters, 0);
    return bench_copy(hog->env, &hog->lane->mod, hog->lane->stream, hog_grid(hog), w->src, w->dst,
                      w->copy_words / 4);
}

/* Body of the feeder thread, with the lane's context current. */
static int feed(bench_hog *hog, CUevent ring[HOG_IN_FLIGHT], CUevent start, CUevent end)
{
    const raw_driver *drv = hog->env->drv;
    CUstream stream = hog->lane->stream;
    if (bench_cu(drv->cuEventRecord(start, stream), "cuEventRecord (hog start)"))
        return -1;
    unsigned long long i = 0;
    for (; !atomic_load(&hog->stop); i++) {
        CUevent slot = ring[i % HOG_IN_FLIGHT];
        if (i >= HOG_IN_FLIGHT && bench_cu(drv->cuEventSynchronize(slot), "the hog's work"))
            return -1;
        if (launch_unit(hog) || bench_cu(drv->cuEventRecord(slot, stream), "cuEventRecord (hog)"))
            return -1;
    }
    float ms = 0;
    if (bench_cu(drv->cuEventRecord(end, stream), "cuEventRecord (hog end)") ||
        bench_cu(drv->cuEventSynchronize(end), "draining the hog") ||
        bench_cu(drv->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime (hog)"))
        return -1;
    hog->units = i;
    hog->seconds = ms * 1e-3;
    return 0;
}

static void *hog_main(void *arg)
{
    bench_hog *hog = arg;
    const raw_driver *drv = hog->env->drv;
    CUevent ev[HOG_IN_FLIGHT + 2] = {0}; /* the ring, then the start and the end */
    if (bench_push(hog->env, hog->lane->ctx)) {
        hog->failed = 1;
        return NULL;
    }
    int rc = 0;
    for (unsigned i = 0; i < HOG_IN_FLIGHT + 2 && !rc; i++)
        rc = bench_cu(drv->cuEventCreate(&ev[i], i < HOG_IN_FLIGHT ? GCU_EVENT_DISABLE_TIMING
                                                                   : GCU_EVENT_DEFAULT),
                      "cuEventCreate");
    if (!rc)
        rc = feed(hog, ev, ev[HOG_IN_FLIGHT], ev[HOG_IN_FLIGHT + 1]);
    drv->cuStreamSynchronize(hog->lane->stream);
    for (unsigned i = 0; i < HOG_IN_FLIGHT + 2; i++)
        if (ev[i])
            drv->cuEventDestroy(ev[i]);
    bench_pop(hog->env);
    hog->failed = rc != 0;
    return NULL;
}

static int hog_start(bench_hog *hog, const bench_env *env, const bench_lane *lane,
                     const bench_hog_work *work, bench_hog_kind kind)
{
    memset(hog, 0, sizeof *hog);
    hog->env = env;
    hog->lane = lane;
    hog->work = work;
    hog->kind = kind;
    atomic_init(&hog->stop, 0);
    if (pthread_create(&hog->thread, NULL, hog_main, hog) != 0) {
        fprintf(stderr, "greenctx bench: could not start the hog thread\n");
        return -1;
    }
    hog->running = 1;
    return 0;
}

static int hog_stop(bench_hog *hog)
{
    if (!hog->running)
        return 0;
    atomic_store(&hog->stop, 1);
    pthread_join(hog->thread, NULL);
    hog->running = 0;
    if (hog->failed || hog->units == 0)
        return -1;
    const bench_hog_work *w = hog->work;
    if (hog->kind == BENCH_HOG_FMA)
        return bench_check_fma(hog->env, w->fma_out, hog_grid(hog), w->fma_chunks, w->fma_iters,
                               "the fma hog");
    return bench_check_copy(hog->env, w->dst, w->copy_words, w->seed, "the copy hog");
}

static double hog_rate(const bench_hog *hog)
{
    return hog->seconds > 0 ? (double)hog->units / hog->seconds : 0;
}

static int hog_alone(const bench_env *env, const bench_lane *lane, const bench_hog_work *work,
                     bench_hog_kind kind, double seconds, double *rate)
{
    bench_hog hog;
    if (hog_start(&hog, env, lane, work, kind))
        return -1;
    bench_spin_us(seconds * 1e6);
    if (hog_stop(&hog))
        return -1;
    *rate = hog_rate(&hog);
    return 0;
}

/* ---- the victims beside it, arm by arm ---- */

#define ISO_REPS 1000
#define ISO_QUICK_REPS 150
#define ISO_WARMUPS 20
#define ISO_CALIBRATION 32
#define ISO_MAX_SLEEP_US 200
#define ISO_HOG_ALONE_S 0.3
#define ISO_QUICK_HOG_ALONE_S 0.1
#define FMA_BLOCKS_PER_SM 2
#define FMA_ITERS 3000 /* about 25 us on a 16-SM partition of an H200 */
#define DECODE_STEPS 8
#define DECODE_SLICE_BYTES (16ull << 20)
#define DECODE_BLOCKS_PER_SM 4
#define STAMP_SLOT_BYTES 16

enum { L_PRIMARY, L_PRIMARY_HOG, L_HIGH, L_LOW, L_GREEN_VICTIM, L_GREEN_HOG, NB_LANES };

static const struct arm_def {
    const char *name, *label;
    int victim_lane, hog_lane; /* hog_lane -1: no hog */
} arms[ISO_NB_ARMS] = {
    {"alone_full", "victim alone, whole GPU", L_PRIMARY, -1},
    {"alone_partition", "victim alone, its partition", L_GREEN_VICTIM, -1},
    {"plain_streams", "plain streams", L_PRIMARY, L_PRIMARY_HOG},
    {"priorities", "priorities (victim high)", L_HIGH, L_LOW},
    {"green", "green: victim | hog rest", L_GREEN_VICTIM, L_GREEN_HOG},
    {"green_victim_only", "green victim, hog primary", L_GREEN_VICTIM, L_PRIMARY_HOG},
};

static int has_hog(int arm) { return arms[arm].hog_lane >= 0; }
static const char *victim_name(int v) { return v == ISO_VICTIM_FMA ? "fma" : "decode"; }

/* SMs the hog can use in an arm: the rest of the split, or the whole GPU. */
static unsigned hog_sms(const iso_result *res, int arm, unsigned device_sms)
{
    return arms[arm].hog_lane == L_GREEN_HOG ? res->hog_sms : device_sms;
}

typedef struct iso_run {
    const bench_env *env;
    iso_result *res;
    gctx_partition *parts[2];
    bench_lane lanes[NB_LANES];
    bench_hog_work hog_work;
    gcu_deviceptr fma_out, decode_src, decode_partial, stamps;
    unsigned fma_grid, decode_grid;
    size_t partial_bytes; /* a decode step's partial sums */
    unsigned slots; /* per victim: calibration, warm-ups, reps, calibration */
    unsigned long long rng;
    progress_meter progress;
    long long *host_ns; /* per slot, both victims */
    double *latency_ms;
    unsigned long long *stamp_host;
    double *scratch;
} iso_run;

/* Submits slots [first, first + count) of victim v, each waited for, then a random gap. */
static int submit(iso_run *run, iso_victim v, const bench_lane *lane, unsigned first,
                  unsigned count)
{
    const bench_env *env = run->env;
    const unsigned long long vecs = DECODE_SLICE_BYTES / 16;
    for (unsigned slot = v * run->slots + first; slot < v * run->slots + first + count; slot++) {
        gcu_deviceptr stamps = run->stamps + (gcu_deviceptr)slot * STAMP_SLOT_BYTES;
        if (bench_lane_mark(env, lane, lane->start))
            return -1;
        run->host_ns[slot] = bench_wall_ns();
        if (v == ISO_VICTIM_FMA && bench_fma(env, &lane->mod, lane->stream, run->fma_grid,
                                             run->fma_out, run->fma_grid, FMA_ITERS, stamps))
            return -1;
        for (unsigned k = 0; v == ISO_VICTIM_DECODE && k < DECODE_STEPS; k++)
            if (bench_sum(env, &lane->mod, lane->stream, run->decode_grid,
                          run->decode_src + k * DECODE_SLICE_BYTES, vecs,
                          run->decode_partial + k * run->partial_bytes, stamps))
                return -1;
        if (bench_lane_mark(env, lane, lane->end) ||
            bench_lane_elapsed(env, lane, &run->latency_ms[slot]))
            return -1;
        bench_spin_us((double)(bench_random(&run->rng) % (ISO_MAX_SLEEP_US + 1)));
    }
    return 0;
}

/* Smallest (GPU start - host submit) over count slots, and the host time of the last. */
static long long min_offset(const iso_run *run, unsigned first, unsigned count, long long *when)
{
    long long best = LLONG_MAX;
    for (unsigned i = first; i < first + count; i++) {
        long long d = (long long)bench_stamps_start(&run->stamp_host[2 * i]) - run->host_ns[i];
        if (d < best)
            best = d;
    }
    *when = run->host_ns[first + count / 2];
    return best;
}

static int summarize_victim(iso_run *run, iso_victim v, iso_cell *cell)
{
    const unsigned base = v * run->slots, reps = run->res->reps;
    const unsigned measured = base + ISO_CALIBRATION + run->res->warmups;
    for (unsigned i = base; i < base + run->slots; i++)
        if (run->stamp_host[2 * i] == 0 || run->stamp_host[2 * i + 1] == 0) {
            fprintf(stderr, "greenctx bench: a %s victim kernel left no timestamps\n",
                    victim_name(v));
            return -1;
        }
    long long t0, t1;
    long long c0 = min_offset(run, base, ISO_CALIBRATION, &t0);
    long long c1 = min_offset(run, base + run->slots - ISO_CALIBRATION, ISO_CALIBRATION, &t1);
    double *values = run->scratch;
    for (unsigned i = 0; i < reps; i++)
        values[i] = run->latency_ms[measured + i] * 1e3;
    bench_summarize(values, reps, &cell->latency_us);
    for (unsigned i = 0; i < reps; i++) {
        unsigned s = measured + i;
        double frac = t1 > t0 ? (double)(run->host_ns[s] - t0) / (double)(t1 - t0) : 0;
        double offset = (double)c0 + (double)(c1 - c0) * frac;
        double d = (double)((long long)bench_stamps_start(&run->stamp_host[2 * s]) -
                            run->host_ns[s]);
        values[i] = (d - offset) * 1e-3;
    }
    bench_summarize(values, reps, &cell->start_us);
    cell->drift_us = (double)(c1 - c0) * 1e-3;
    cell->valid = 1;
    return 0;
}

static int check_victims(iso_run *run)
{
    const unsigned last = DECODE_STEPS - 1;
    return bench_check_fma(run->env, run->fma_out, run->fma_grid, run->fma_grid, FMA_ITERS,
                           "the fma victim") ||
           bench_check_sum(run->env, run->decode_partial + last * run->partial_bytes,
                           run->decode_grid, last * (DECODE_SLICE_BYTES / 4),
                           DECODE_SLICE_BYTES / 16, 0x5eed0002u, "the decode victim");
}

/* One arm, one hog (< 0: none): calibration, the hog, both victims' reps, calibration. */
static int run_cell(iso_run *run, iso_arm arm, int hog)
{
    const bench_env *env = run->env;
    const unsigned cal = ISO_CALIBRATION, warm = run->res->warmups, reps = run->res->reps;
    const bench_lane *lane = &run->lanes[arms[arm].victim_lane];
    const size_t stamp_bytes = (size_t)2 * run->slots * STAMP_SLOT_BYTES;
    bench_hog hog_state;
    memset(&hog_state, 0, sizeof hog_state);
    progress_step(&run->progress, "victim %u SMs: %s%s%s", run->res->victim_sms, arms[arm].label,
                  hog >= 0 ? ", hog " : "", hog >= 0 ? hog_name(hog) : "");
    if (bench_zero(env, run->stamps, stamp_bytes) || bench_push(env, lane->ctx))
        return -1;
    int rc = 0;
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit(run, v, lane, 0, cal);
    if (!rc && hog >= 0)
        rc = hog_start(&hog_state, env, &run->lanes[arms[arm].hog_lane], &run->hog_work, hog);
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit(run, v, lane, cal, warm + reps);
    if (hog >= 0 && hog_stop(&hog_state))
        rc = -1;
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit(run, v, lane, cal + warm + reps, cal);
    bench_pop(env);
    if (!rc)
        rc = bench_read(env, run->stamp_host, run->stamps, stamp_bytes,
                        "reading the victims' timestamps");
    iso_cell *cells = run->res->cell[hog < 0 ? ISO_HOG_NONE : 1 + hog][arm];
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = summarize_victim(run, v, &cells[v]);
    if (!rc && hog >= 0)
        run->res->hog_rate[hog][arm] = hog_rate(&hog_state);
    return rc ? rc : check_victims(run);
}

static int open_lanes(iso_run *run)
{
    const bench_env *env = run->env;
    gctx_group groups[2] = {{.num_sms = run->res->victim_sms}, {.backfill = 1}};
    if (bench_gctx(gctx_partition_split(env->whole, groups, 2, NULL, run->parts, NULL, NULL, NULL),
                   "splitting the device into the victim's partition and the rest"))
        return -1;
    /* Each lane's priority and partition (-1: an ordinary stream). */
    static const struct {
        int priority, part;
    } lanes[NB_LANES] = {{BENCH_PRIORITY_NORMAL, -1}, {BENCH_PRIORITY_NORMAL, -1},
                         {BENCH_PRIORITY_HIGH, -1},   {BENCH_PRIORITY_LOW, -1},
                         {BENCH_PRIORITY_NORMAL, 0},  {BENCH_PRIORITY_NORMAL, 1}};
    for (int l = 0; l < NB_LANES; l++)
        if (bench_lane_open(env, lanes[l].part < 0 ? NULL : run->parts[lanes[l].part],
                            lanes[l].priority, &run->lanes[l]))
            return -1;
    run->res->hog_sms = run->lanes[L_GREEN_HOG].sms;
    return 0;
}

/* The victims' and the hog's work, sized and described, their buffers filled. */
static int open_buffers(iso_run *run)
{
    const bench_env *env = run->env;
    iso_result *res = run->res;
    run->fma_grid = res->victim_sms * FMA_BLOCKS_PER_SM;
    run->decode_grid = res->victim_sms * DECODE_BLOCKS_PER_SM;
    run->partial_bytes = (size_t)run->decode_grid * BENCH_SUM_WARPS * 4;
    run->slots = 2 * ISO_CALIBRATION + res->warmups + res->reps;
    size_t slots = 2 * (size_t)run->slots;
    const bench_lane *primary = &run->lanes[L_PRIMARY];
    bench_hog_work *w = &run->hog_work;
    const unsigned full_grid = env->sm_count * BENCH_FULL_BLOCKS_SM;
    w->fma_chunks = full_grid * HOG_CHUNKS_PER_SLOT;
    w->fma_iters = HOG_ITERS_PER_CHUNK;
    w->copy_words = HOG_COPY_BYTES / 4;
    w->seed = 0x5eed0001u;
    /* What the victims and the hogs do, for the output. */
    snprintf(res->victim_text[ISO_VICTIM_FMA], sizeof res->victim_text[0],
             "fma victim: %u blocks x %u threads, %u FMA steps x 4 chains per thread",
             run->fma_grid, BENCH_BLOCK, FMA_ITERS);
    snprintf(res->victim_text[ISO_VICTIM_DECODE], sizeof res->victim_text[0],
             "decode victim: %u dependent kernels, each summing %llu MiB, %u blocks x %u threads",
             DECODE_STEPS, DECODE_SLICE_BYTES >> 20, run->decode_grid, BENCH_BLOCK);
    res->hog_unit[BENCH_HOG_FMA] = (double)w->fma_chunks * BENCH_BLOCK * 4.0 * w->fma_iters * 2.0;
    res->hog_unit[BENCH_HOG_COPY] = (double)w->copy_words * 4.0 * 2.0;
    snprintf(res->hog_text[BENCH_HOG_FMA], sizeof res->hog_text[0],
             "fma hog: %.1f GFLOP fp32 per unit, %u blocks x %u threads per SM, each block "
             "lives the whole unit",
             res->hog_unit[BENCH_HOG_FMA] * 1e-9, BENCH_FULL_BLOCKS_SM, BENCH_BLOCK);
    snprintf(res->hog_text[BENCH_HOG_COPY], sizeof res->hog_text[0],
             "copy hog: %.0f MiB copied per unit (%.2f GB moved), %u blocks x %u threads per SM",
             (double)w->copy_words * 4.0 / 1048576.0, res->hog_unit[BENCH_HOG_COPY] * 1e-9,
             BENCH_FULL_BLOCKS_SM, BENCH_BLOCK);
    if (!(run->host_ns = bench_calloc(slots, sizeof *run->host_ns)) ||
        !(run->latency_ms = bench_calloc(slots, sizeof *run->latency_ms)) ||
        !(run->stamp_host = bench_calloc(2 * slots, sizeof *run->stamp_host)) ||
        !(run->scratch = bench_calloc(res->reps, sizeof *run->scratch)) ||
        bench_alloc(env, &run->fma_out, (size_t)run->fma_grid * BENCH_BLOCK * 4, "the victim") ||
        bench_alloc(env, &run->decode_src, DECODE_STEPS * DECODE_SLICE_BYTES, "the victim") ||
        bench_alloc(env, &run->decode_partial, DECODE_STEPS * run->partial_bytes, "the victim") ||
        bench_alloc(env, &run->stamps, slots * STAMP_SLOT_BYTES, "timestamps") ||
        bench_alloc(env, &w->fma_out, (size_t)full_grid * BENCH_BLOCK * sizeof(float), "the hog") ||
        bench_alloc(env, &w->src, HOG_COPY_BYTES, "the hog's copy source") ||
        bench_alloc(env, &w->dst, HOG_COPY_BYTES, "the hog's copy destination") ||
        bench_push(env, env->primary))
        return -1;
    int rc = bench_fill(env, &primary->mod, primary->stream, run->decode_src,
                        DECODE_STEPS * DECODE_SLICE_BYTES / 4, 0x5eed0002u) ||
             bench_fill(env, &primary->mod, primary->stream, w->src, w->copy_words, w->seed) ||
             bench_cu(env->drv->cuStreamSynchronize(primary->stream), "filling the inputs");
    bench_pop(env);
    return rc ? -1 : 0;
}

static void close_run(iso_run *run)
{
    const bench_env *env = run->env;
    bench_free(env, &run->hog_work.fma_out);
    bench_free(env, &run->hog_work.src);
    bench_free(env, &run->hog_work.dst);
    bench_free(env, &run->fma_out);
    bench_free(env, &run->decode_src);
    bench_free(env, &run->decode_partial);
    bench_free(env, &run->stamps);
    for (int l = 0; l < NB_LANES; l++)
        bench_lane_close(env, &run->lanes[l]);
    gctx_partition_release(run->parts[0]);
    gctx_partition_release(run->parts[1]);
    free(run->host_ns);
    free(run->latency_ms);
    free(run->stamp_host);
    free(run->scratch);
}

int bench_isolation_run(const bench_env *env, unsigned victim_sms, iso_result *res)
{
    memset(res, 0, sizeof *res);
    res->victim_sms = victim_sms;
    res->reps = env->opt.reps ? env->opt.reps : env->opt.quick ? ISO_QUICK_REPS : ISO_REPS;
    res->warmups = ISO_WARMUPS;
    iso_run run;
    memset(&run, 0, sizeof run);
    run.env = env;
    run.res = res;
    run.rng = 0x9e3779b97f4a7c15ULL ^ victim_sms;
    int rc = open_lanes(&run) || open_buffers(&run);
    unsigned cells = 0;
    for (int arm = 0; arm < ISO_NB_ARMS; arm++)
        cells += has_hog(arm) ? BENCH_NB_HOGS : 1;
    progress_begin(&run.progress, "greenctx bench: isolation", cells);
    double alone_s = env->opt.quick ? ISO_QUICK_HOG_ALONE_S : ISO_HOG_ALONE_S;
    for (int h = 0; h < BENCH_NB_HOGS && !rc; h++)
        rc = hog_alone(env, &run.lanes[L_PRIMARY_HOG], &run.hog_work, h, alone_s,
                       &res->hog_alone_full[h]) ||
             hog_alone(env, &run.lanes[L_GREEN_HOG], &run.hog_work, h, alone_s,
                       &res->hog_alone_part[h]);
    for (int hog = -1; hog < BENCH_NB_HOGS && !rc; hog++) /* the alone arms first */
        for (int arm = 0; arm < ISO_NB_ARMS && !rc; arm++)
            if ((hog >= 0) == has_hog(arm))
                rc = run_cell(&run, arm, hog);
    close_run(&run);
    return rc ? -1 : 0;
}

static const iso_cell *cell_of(const iso_result *res, int hog, iso_arm arm, iso_victim v)
{
    return &res->cell[has_hog(arm) ? 1 + hog : ISO_HOG_NONE][arm][v];
}

static double p99_vs(const iso_result *res, const iso_cell *c, iso_arm ref, iso_victim v)
{
    return bench_ratio(c->latency_us.p99, res->cell[ISO_HOG_NONE][ref][v].latency_us.p99);
}

static void print_ratio(double r)
{
    if (r > 0)
        printf(" %8.2f", r);
    else
        printf(" %8s", "-");
}

static void print_cell(const iso_result *res, int hog, iso_arm arm, iso_victim v)
{
    const iso_cell *c = cell_of(res, hog, arm, v);
    if (!c->valid)
        return;
    const bench_summary *l = &c->latency_us, *s = &c->start_us;
    printf("%-7s %-5s %-27s %8.1f %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f %7.1f |",
           victim_name(v), has_hog(arm) ? hog_name(hog) : "-",
           arms[arm].label, l->p50, l->p99, l->p999, l->max, s->p50, s->p99, s->p999, s->max);
    print_ratio(p99_vs(res, c, ISO_ALONE_FULL, v));
    print_ratio(p99_vs(res, c, ISO_ALONE_PART, v));
    printf("\n");
}

/* Hog h's rate on sms SMs against alone on the whole GPU and (part) in its partition. */
static void print_hog_row(const bench_env *env, const iso_result *res, int h, const char *arm,
                          unsigned sms, double rate, int part)
{
    printf("%-5s %-27s %4u %10.1f %10.1f %7.3f %8.3f", hog_name(h), arm, sms, rate,
           rate * res->hog_unit[h] * 1e-9, bench_ratio(rate, res->hog_alone_full[h]),
           (double)sms / env->sm_count);
    print_ratio(part ? bench_ratio(rate, res->hog_alone_part[h]) : 0);
    printf("  %s\n", h == BENCH_HOG_FMA ? "GFLOP/s" : "GB/s");
}

void bench_isolation_print(const bench_env *env, const iso_result *res)
{
    printf("\n== isolation: victim in %u SMs, hog in the other %u (one split of %u SMs)\n",
           res->victim_sms, res->hog_sms, env->sm_count);
    for (int v = 0; v < ISO_NB_VICTIMS; v++)
        printf("   %s\n", res->victim_text[v]);
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        printf("   %s\n", res->hog_text[h]);
    printf("   %u reps per row after %u warm-ups, closed loop with random host gaps of 0-200 us; "
           "times in us\n",
           res->reps, res->warmups);
    printf("   latency: events around each submission; start: host launch to first block "
           "start, beyond the idle minimum\n\n");
    printf("%-7s %-5s %-27s %8s %7s %7s %7s | %7s %7s %7s %7s | %8s %8s\n", "victim", "hog", "arm",
           "lat p50", "p99", "p99.9", "max", "start50", "p99", "p99.9", "max", "p99/full",
           "p99/part");
    for (int v = 0; v < ISO_NB_VICTIMS; v++)
        for (int hog = -1; hog < BENCH_NB_HOGS; hog++) /* the alone arms first */
            for (int arm = 0; arm < ISO_NB_ARMS; arm++)
                if ((hog >= 0) == has_hog(arm))
                    print_cell(res, hog, arm, v);
    printf("   target: 'green' p99/part <= 1.10 (the victim as if alone in its partition)\n");
    printf("\nhog throughput (share: vs alone on the whole GPU; expected: its SMs / %u)\n",
           env->sm_count);
    printf("%-5s %-27s %4s %10s %10s %7s %8s %8s\n", "hog", "arm", "SMs", "units/s", "rate",
           "share", "expected", "vs part");
    for (int h = 0; h < BENCH_NB_HOGS; h++) {
        print_hog_row(env, res, h, "alone, whole GPU", env->sm_count, res->hog_alone_full[h], 0);
        print_hog_row(env, res, h, "alone, its partition", res->hog_sms, res->hog_alone_part[h], 1);
        for (int arm = 0; arm < ISO_NB_ARMS; arm++)
            if (has_hog(arm)) {
                unsigned sms = hog_sms(res, arm, env->sm_count);
                print_hog_row(env, res, h, arms[arm].label, sms, res->hog_rate[h][arm],
                              sms == res->hog_sms);
            }
    }
    printf("   a memory-bound hog is not expected to follow its SM share: SMs split, memory "
           "bandwidth does not\n");
}

void bench_isolation_json(json_writer *w, const bench_env *env, const iso_result *res)
{
    json_object(w, NULL);
    json_uint(w, "victim_sms", res->victim_sms);
    json_uint(w, "hog_sms", res->hog_sms);
    json_uint(w, "reps", res->reps);
    json_uint(w, "warmups", res->warmups);
    json_object(w, "victims");
    for (int v = 0; v < ISO_NB_VICTIMS; v++)
        json_string(w, victim_name(v), res->victim_text[v]);
    json_close(w);
    json_object(w, "hogs");
    for (int h = 0; h < BENCH_NB_HOGS; h++) {
        json_object(w, hog_name(h));
        json_string(w, "text", res->hog_text[h]);
        json_fixed(w, "unit", res->hog_unit[h], 0);
        json_string(w, "unit_kind", h == BENCH_HOG_FMA ? "flop" : "bytes");
        json_fixed(w, "alone_full_units_per_s", res->hog_alone_full[h], 4);
        json_fixed(w, "alone_partition_units_per_s", res->hog_alone_part[h], 4);
        json_close(w);
    }
    json_close(w);
    json_array(w, "cells");
    for (int hog = -1; hog < BENCH_NB_HOGS; hog++)
        for (int arm = 0; arm < ISO_NB_ARMS; arm++)
            for (int v = 0; v < ISO_NB_VICTIMS; v++) {
                const iso_cell *c = cell_of(res, hog, arm, v);
                if ((hog < 0) == has_hog(arm) || !c->valid)
                    continue;
                json_object(w, NULL);
                json_string(w, "arm", arms[arm].name);
                json_string(w, "hog", hog < 0 ? NULL : hog_name(hog));
                json_string(w, "victim", victim_name(v));
                bench_json_summary(w, "latency_us", &c->latency_us);
                bench_json_summary(w, "start_delay_us", &c->start_us);
                json_fixed(w, "clock_drift_us", c->drift_us, 3);
                json_fixed(w, "p99_vs_alone_full", p99_vs(res, c, ISO_ALONE_FULL, v), 4);
                json_fixed(w, "p99_vs_alone_partition", p99_vs(res, c, ISO_ALONE_PART, v), 4);
                json_close(w);
            }
    json_close(w);
    json_array(w, "hog_throughput");
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        for (int arm = 0; arm < ISO_NB_ARMS; arm++) {
            if (!has_hog(arm))
                continue;
            unsigned sms = hog_sms(res, arm, env->sm_count);
            double rate = res->hog_rate[h][arm];
            json_object(w, NULL);
            json_string(w, "hog", hog_name(h));
            json_string(w, "arm", arms[arm].name);
            json_uint(w, "hog_sms", sms);
            json_fixed(w, "units_per_s", rate, 4);
            json_fixed(w, "vs_alone_full", bench_ratio(rate, res->hog_alone_full[h]), 4);
            json_fixed(w, "expected_share", (double)sms / env->sm_count, 4);
            json_fixed(w, "vs_alone_partition",
                       sms == res->hog_sms ? bench_ratio(rate, res->hog_alone_part[h]) : 0.0, 4);
            json_close(w);
        }
    json_close(w);
    json_close(w);
}

void bench_isolation_chart(const iso_result *res, bench_chart *chart)
{
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        for (int v = 0; v < ISO_NB_VICTIMS; v++) {
            if (chart->nb_dist == CHART_MAX_DIST)
                return;
            chart_dist *d = &chart->dist[chart->nb_dist++];
            memset(d, 0, sizeof *d);
            snprintf(d->title, sizeof d->title,
                     "%s victim (%u SMs) beside the %s hog: latency per submission, us",
                     victim_name(v), res->victim_sms, hog_name(h));
            for (int arm = 0; arm < ISO_NB_ARMS && d->nb_rows < CHART_MAX_ROWS; arm++) {
                const iso_cell *c = cell_of(res, h, arm, v);
                const bench_summary *s = &c->latency_us;
                if (!c->valid)
                    continue;
                chart_row *r = &d->rows[d->nb_rows++];
                snprintf(r->label, sizeof r->label, "%s", arms[arm].label);
                r->p50 = s->p50, r->p99 = s->p99, r->p999 = s->p999, r->max = s->max;
            }
        }
}

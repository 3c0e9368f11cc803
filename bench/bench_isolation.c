/*
 * Isolation: how much a hog on the other SMs delays a latency-critical victim.
 *
 * Closed loop: each victim submission is waited for, then the host spins a random 0-200 us
 * before the next, so submissions land at every phase of the hog's blocks. Each submission is
 * timed two ways:
 * - latency: events recorded just before and after it on the victim's stream (queueing for
 *   SMs plus execution);
 * - start delay: the kernel's first block stores %globaltimer; the host notes its wall clock
 *   just before cuLaunchKernel. The two clocks differ by an unknown offset, so the delay is
 *   reported beyond the smallest one seen while the GPU was idle, measured just before and
 *   just after the arm (32 idle submissions each) and interpolated in time to absorb drift.
 *   It is the launch-to-start delay the hog adds, which events cannot see when the victim's
 *   stream itself is held up.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "bench_isolation.h"

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

const char *iso_arm_name(iso_arm arm) { return arms[arm].name; }
const char *iso_arm_label(iso_arm arm) { return arms[arm].label; }
int iso_arm_has_hog(iso_arm arm) { return arms[arm].hog_lane >= 0; }
const char *iso_victim_name(iso_victim victim)
{
    return victim == ISO_VICTIM_FMA ? "fma" : "decode";
}

unsigned iso_hog_sms(const iso_result *res, iso_arm arm, unsigned device_sms)
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
    unsigned slots; /* per victim: calibration, warm-ups, reps, calibration */
    unsigned long long rng;
    progress_meter progress; /* one step per cell */
    long long *host_ns;          /* per slot, both victims */
    double *latency_ms;          /* per slot */
    unsigned long long *stamp_host;
    double *scratch;
} iso_run;

static unsigned slot_index(const iso_run *run, iso_victim v, unsigned i)
{
    return (unsigned)v * run->slots + i;
}

static int submit_victim(iso_run *run, iso_victim v, const bench_lane *lane, unsigned slot)
{
    const bench_env *env = run->env;
    gcu_deviceptr stamps = run->stamps + (gcu_deviceptr)slot * STAMP_SLOT_BYTES;
    if (bench_lane_mark(env, lane, lane->start))
        return -1;
    run->host_ns[slot] = bench_wall_ns();
    if (v == ISO_VICTIM_FMA) {
        if (bench_fma(env, &lane->mod, lane->stream, run->fma_grid, run->fma_out, run->fma_grid,
                      FMA_ITERS, stamps))
            return -1;
    } else {
        unsigned long long vecs = DECODE_SLICE_BYTES / 16;
        for (unsigned k = 0; k < DECODE_STEPS; k++)
            if (bench_sum(env, &lane->mod, lane->stream, run->decode_grid,
                          run->decode_src + k * DECODE_SLICE_BYTES, vecs,
                          run->decode_partial +
                              (gcu_deviceptr)k * run->decode_grid * BENCH_SUM_WARPS * 4,
                          stamps))
                return -1;
    }
    if (bench_lane_mark(env, lane, lane->end))
        return -1;
    int rc = bench_lane_elapsed(env, lane, &run->latency_ms[slot]);
    bench_spin_us((double)(bench_random(&run->rng) % (ISO_MAX_SLEEP_US + 1)));
    return rc;
}

/* Submits slots [first, first + count) of victim v. */
static int submit_range(iso_run *run, iso_victim v, const bench_lane *lane, unsigned first,
                        unsigned count)
{
    for (unsigned i = first; i < first + count; i++)
        if (submit_victim(run, v, lane, slot_index(run, v, i)))
            return -1;
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
    const unsigned base = slot_index(run, v, 0), reps = run->res->reps;
    const unsigned measured = base + ISO_CALIBRATION + run->res->warmups;
    for (unsigned i = base; i < base + run->slots; i++)
        if (run->stamp_host[2 * i] == 0 || run->stamp_host[2 * i + 1] == 0) {
            fprintf(stderr, "greenctx bench: a %s victim kernel left no timestamps\n",
                    iso_victim_name(v));
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
    unsigned last = DECODE_STEPS - 1;
    unsigned long long vecs = DECODE_SLICE_BYTES / 16;
    return bench_check_fma(run->env, run->fma_out, run->fma_grid, run->fma_grid, FMA_ITERS,
                           "the fma victim") ||
           bench_check_sum(run->env,
                           run->decode_partial +
                               (gcu_deviceptr)last * run->decode_grid * BENCH_SUM_WARPS * 4,
                           run->decode_grid, last * (DECODE_SLICE_BYTES / 4), vecs, 0x5eed0002u,
                           "the decode victim");
}

/* One arm with one hog (hog < 0: none): calibrate, start the hog, warm up and measure both
 * victims, stop the hog, calibrate again. */
static int run_cell(iso_run *run, iso_arm arm, int hog)
{
    const bench_env *env = run->env;
    const unsigned cal = ISO_CALIBRATION, warm = run->res->warmups, reps = run->res->reps;
    const bench_lane *lane = &run->lanes[arms[arm].victim_lane];
    bench_hog hog_state;
    memset(&hog_state, 0, sizeof hog_state);
    progress_step(&run->progress, "victim %u SMs: %s%s%s", run->res->victim_sms,
                        arms[arm].label, hog >= 0 ? ", hog " : "",
                        hog >= 0 ? bench_hog_name(hog) : "");
    if (bench_zero(env, run->stamps, (size_t)2 * run->slots * STAMP_SLOT_BYTES) ||
        bench_push(env, lane->ctx))
        return -1;
    int rc = 0;
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit_range(run, v, lane, 0, cal);
    if (!rc && hog >= 0)
        rc = bench_hog_start(&hog_state, env, &run->lanes[arms[arm].hog_lane], &run->hog_work, hog);
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit_range(run, v, lane, cal, warm + reps);
    if (hog >= 0 && bench_hog_stop(&hog_state))
        rc = -1;
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = submit_range(run, v, lane, cal + warm + reps, cal);
    bench_pop(env);
    if (!rc)
        rc = bench_push(env, env->primary);
    if (!rc) {
        rc = bench_cu(env->drv->cuMemcpyDtoH(run->stamp_host, run->stamps,
                                             (size_t)2 * run->slots * STAMP_SLOT_BYTES),
                      "reading the victims' timestamps");
        bench_pop(env);
    }
    iso_cell *cells = run->res->cell[hog < 0 ? ISO_HOG_NONE : 1 + hog][arm];
    for (int v = 0; v < ISO_NB_VICTIMS && !rc; v++)
        rc = summarize_victim(run, v, &cells[v]);
    if (!rc && hog >= 0)
        run->res->hog_rate[hog][arm] = bench_hog_rate(&hog_state);
    return rc ? rc : check_victims(run);
}

static int open_lanes(iso_run *run)
{
    const bench_env *env = run->env;
    gctx_group groups[2] = {{.num_sms = run->res->victim_sms}, {.backfill = 1}};
    if (bench_gctx(gctx_partition_split(env->whole, groups, 2, NULL, run->parts, NULL, NULL, NULL),
                   "splitting the device into the victim's partition and the rest"))
        return -1;
    static const int priority[NB_LANES] = {BENCH_PRIORITY_NORMAL, BENCH_PRIORITY_NORMAL,
                                           BENCH_PRIORITY_HIGH,   BENCH_PRIORITY_LOW,
                                           BENCH_PRIORITY_NORMAL, BENCH_PRIORITY_NORMAL};
    for (int l = 0; l < NB_LANES; l++) {
        bench_lane *lane = &run->lanes[l];
        int rc = l == L_GREEN_VICTIM ? bench_lane_green(env, run->parts[0], priority[l], lane)
                 : l == L_GREEN_HOG  ? bench_lane_green(env, run->parts[1], priority[l], lane)
                                     : bench_lane_primary(env, priority[l], lane);
        if (rc)
            return -1;
    }
    run->res->hog_sms = run->lanes[L_GREEN_HOG].sms;
    return 0;
}

static int open_buffers(iso_run *run)
{
    const bench_env *env = run->env;
    iso_result *res = run->res;
    run->fma_grid = res->victim_sms * FMA_BLOCKS_PER_SM;
    run->decode_grid = res->victim_sms * DECODE_BLOCKS_PER_SM;
    run->slots = 2 * ISO_CALIBRATION + res->warmups + res->reps;
    size_t slots = 2 * (size_t)run->slots;
    run->host_ns = calloc(slots, sizeof *run->host_ns);
    run->latency_ms = calloc(slots, sizeof *run->latency_ms);
    run->stamp_host = calloc(2 * slots, sizeof *run->stamp_host);
    run->scratch = calloc(res->reps, sizeof *run->scratch);
    if (!run->host_ns || !run->latency_ms || !run->stamp_host || !run->scratch) {
        fprintf(stderr, "greenctx bench: out of memory\n");
        return -1;
    }
    const bench_lane *primary = &run->lanes[L_PRIMARY];
    if (bench_alloc(env, &run->fma_out, (size_t)run->fma_grid * BENCH_BLOCK * 4, "the victim") ||
        bench_alloc(env, &run->decode_src, DECODE_STEPS * DECODE_SLICE_BYTES, "the victim") ||
        bench_alloc(env, &run->decode_partial,
                    (size_t)DECODE_STEPS * run->decode_grid * BENCH_SUM_WARPS * 4, "the victim") ||
        bench_alloc(env, &run->stamps, slots * STAMP_SLOT_BYTES, "timestamps") ||
        bench_push(env, env->primary))
        return -1;
    int rc = bench_fill(env, &primary->mod, primary->stream, run->decode_src,
                        DECODE_STEPS * DECODE_SLICE_BYTES / 4, 0x5eed0002u) ||
             bench_hog_work_init(env, &primary->mod, primary->stream, &run->hog_work) ||
             bench_cu(env->drv->cuStreamSynchronize(primary->stream), "filling the inputs");
    bench_pop(env);
    return rc ? -1 : 0;
}

static void close_run(iso_run *run)
{
    const bench_env *env = run->env;
    bench_hog_work_free(env, &run->hog_work);
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

static void describe(iso_run *run)
{
    iso_result *res = run->res;
    snprintf(res->victim_text[ISO_VICTIM_FMA], sizeof res->victim_text[0],
             "fma victim: %u blocks x %u threads, %u FMA steps x 4 chains per thread",
             run->fma_grid, BENCH_BLOCK, FMA_ITERS);
    snprintf(res->victim_text[ISO_VICTIM_DECODE], sizeof res->victim_text[0],
             "decode victim: %u dependent kernels, each summing %llu MiB, %u blocks x %u threads",
             DECODE_STEPS, DECODE_SLICE_BYTES >> 20, run->decode_grid, BENCH_BLOCK);
    for (int h = 0; h < BENCH_NB_HOGS; h++) {
        bench_hog_describe(&run->hog_work, h, res->hog_text[h], sizeof res->hog_text[h]);
        res->hog_unit[h] = bench_hog_unit_amount(&run->hog_work, h);
    }
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
    if (!rc)
        describe(&run);
    unsigned cells = 0;
    for (int arm = 0; arm < ISO_NB_ARMS; arm++)
        cells += iso_arm_has_hog(arm) ? BENCH_NB_HOGS : 1;
    progress_begin(&run.progress, "greenctx bench: isolation", cells);
    double alone_s = env->opt.quick ? ISO_QUICK_HOG_ALONE_S : ISO_HOG_ALONE_S;
    for (int h = 0; h < BENCH_NB_HOGS && !rc; h++)
        rc = bench_hog_alone(env, &run.lanes[L_PRIMARY_HOG], &run.hog_work, h, alone_s,
                             &res->hog_alone_full[h]) ||
             bench_hog_alone(env, &run.lanes[L_GREEN_HOG], &run.hog_work, h, alone_s,
                             &res->hog_alone_part[h]);
    for (int arm = 0; arm < ISO_NB_ARMS && !rc; arm++)
        if (!iso_arm_has_hog(arm))
            rc = run_cell(&run, arm, -1);
    for (int h = 0; h < BENCH_NB_HOGS && !rc; h++)
        for (int arm = 0; arm < ISO_NB_ARMS && !rc; arm++)
            if (iso_arm_has_hog(arm))
                rc = run_cell(&run, arm, h);
    close_run(&run);
    return rc ? -1 : 0;
}

/* The overhead benchmark's re-partitioning rows: see bench_overhead.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_overhead.h"

#define MEMORY_CYCLES 200
#define QUICK_MEMORY_CYCLES 50
#define WARMUPS 4

static const struct {
    const char *label;
    bench_row_keys keys;
} row_defs[CR_NB_ROWS] = {
    {"re-partition",
     {.a = "repartition_cache_us", .b = "repartition_no_cache_us",
      .ratio = "repartition_ratio_p50"}},
    {"device memory lost, MiB",
     {.a = "memory_lost_cache_mib", .b = "memory_lost_no_cache_mib"}},
    {"layout switch, host",
     {.a = "layout_switch_host_us", .b = "layout_switch_by_hand_us",
      .ratio = "layout_switch_ratio_p50"}},
    {"... against its own calls by hand",
     {.b = "layout_switch_barrier_by_hand_us", .ratio = "layout_switch_barrier_ratio_p50",
      .a_quiet = "layout_switch_host_quiet_us",
      .b_quiet = "layout_switch_barrier_by_hand_quiet_us"}},
    {"layout switch by part, host",
     {.a = "layout_switch_by_part_host_us", .ratio = "layout_switch_by_part_ratio_p50",
      .a_quiet = "layout_switch_by_part_host_quiet_us",
      .b_quiet = "layout_switch_by_hand_quiet_us"}},
    {"device gap: switch | one stream",
     {.a = "device_gap_switch_us", .b = "device_gap_same_stream_us"}},
    {"device gap: by part | one stream", {.a = "device_gap_switch_by_part_us"}},
    {"16 layouts x 2, empty cache, ms",
     {.a = "layouts_16x2_cold_ms_summary", .b = "layouts_16x2_by_hand_ms",
      .ratio = "layouts_16x2_ratio_p50", .a_p50 = "layouts_16x2_cold_ms"}},
    {"... from the cache, ms",
     {.a = "layouts_16x2_warm_ms_summary", .a_p50 = "layouts_16x2_warm_ms"}},
};

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

/* cycles re-partitions with the cache at `limit` (0: off): their time, the memory they lost. */
static int repartitions(const bench_env *env, cache_rows *rows, unsigned limit, double *us,
                        bench_summary *time, bench_summary *lost_mib)
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
    *lost_mib = (bench_summary){.n = 1, .p50 = ((double)before - (double)after) / 1048576.0};
    return 0;
}

/* Host time of a switch, the barrier and by part; on a GPU also the device gap it adds:
 * kernels A (long) and B on the old layout's stream, a switch, C on the new layout's: the gap
 * B end -> C start, against A end -> B start. Beside them the same hand-over by hand. */
#define SWITCH_PARTS 2
/* A rep's values, each a column of reps: host times, device gaps, its check, room for a copy. */
enum {
    SW_HOST, SW_BY_PART, SW_BY_HAND, SW_BARRIER,
    SW_GAP, SW_BY_PART_GAP, SW_SAME,
    SW_CHECK, SW_SCRATCH, SWITCH_VALUES
};
/* 4 switch reps to one of the bench's (800 by default): the p99 no longer the second highest. */
#define SWITCH_REPS_PER_REP 4
#define SWITCH_SPIN_US 2000
#define SWITCH_MOVE_EVERY 100 /* reps a block, on the CPU quietest at its start (bench_pin.h) */
typedef struct switch_run {
    gctx_layouts *layouts;
    CUcontext ctx[2][SWITCH_PARTS]; /* [layout][partition] */
    CUstream stream[2][SWITCH_PARTS];
    CUevent by_hand[2][SWITCH_PARTS]; /* made in the context of the stream of the same index */
    bench_module mod[2]; /* in partition 0 of each layout, where the kernels run */
    gcu_deviceptr out, stamps; /* stamps: A, B, C slots of two 64-bit words */
} switch_run;

static void switch_end(const bench_env *env, switch_run *run)
{
    for (int k = 0; k < 2; k++) {
        bench_module_unload(env, run->ctx[k][0], &run->mod[k]);
        for (int i = 0; i < SWITCH_PARTS; i++)
            if (run->by_hand[k][i])
                env->drv->cuEventDestroy(run->by_hand[k][i]);
    }
    bench_free(env, &run->out);
    bench_free(env, &run->stamps);
    gctx_layouts_release(run->layouts);
}

static int switch_begin(const bench_env *env, const cache_rows *rows, switch_run *run)
{
    const unsigned counts[] = {rows->small_sms, 0, rows->large_sms, 0};
    memset(run, 0, sizeof *run);
    if (bench_gctx(gctx_layouts_create(env->device, counts, 2, SWITCH_PARTS, NULL, &run->layouts),
                   "gctx_layouts_create"))
        return -1;
    for (unsigned k = 0; k < 2; k++)
        for (unsigned i = 0; i < SWITCH_PARTS; i++) {
            gctx_context *c;
            gctx_stream *s;
            if (bench_gctx(gctx_layouts_get(run->layouts, k, i, NULL, &c, &s), "gctx_layouts_get"))
                return -1;
            run->ctx[k][i] = gctx_context_cu_context(c);
            run->stream[k][i] = gctx_stream_handle(s);
            if (bench_push(env, run->ctx[k][i]))
                return -1;
            gcu_result r = env->drv->cuEventCreate(&run->by_hand[k][i], GCU_EVENT_DISABLE_TIMING);
            bench_pop(env);
            if (bench_cu(r, "cuEventCreate"))
                return -1;
        }
    if (!env->kernels)
        return 0;
    return bench_module_load(env, run->ctx[0][0], &run->mod[0], NULL) ||
           bench_module_load(env, run->ctx[1][0], &run->mod[1], NULL) ||
           bench_alloc(env, &run->out, 1 << 20, "the switch's kernels") ||
           bench_alloc(env, &run->stamps, 6 * sizeof(unsigned long long), "stamps");
}

/* A (long) and B on the old layout: what follows is timed while it is busy, as in a program. */
static int queue_old(const bench_env *env, switch_run *run, int from)
{
    const gcu_deviceptr slot = sizeof(unsigned long long) * 2;
    CUstream stream = run->stream[from][0];
    return env->kernels &&
           (bench_zero(env, run->stamps, 3 * slot) ||
            bench_fma(env, &run->mod[from], stream, 1, run->out, 1, 20000, run->stamps) ||
            bench_fma(env, &run->mod[from], stream, 1, run->out, 1, 1, run->stamps + slot));
}

static int drain(const bench_env *env, const switch_run *run)
{
    for (int k = 0; k < 2; k++)
        if (bench_cu(env->drv->cuStreamSynchronize(run->stream[k][0]), "the switch's kernels"))
            return -1;
    return 0;
}

static int one_switch(const bench_env *env, switch_run *run, int from, unsigned order,
                      double *host, double *gap, double *same)
{
    const int to = !from;
    if (bench_gctx(gctx_layouts_switch_ordered(run->layouts, (unsigned)from, order, NULL),
                   "gctx_layouts_switch_ordered") ||
        queue_old(env, run, from))
        return -1;
    double t0 = bench_now_us();
    gctx_status s = gctx_layouts_switch_ordered(run->layouts, (unsigned)to, order, NULL);
    *host = bench_now_us() - t0;
    if (bench_gctx(s, "gctx_layouts_switch_ordered"))
        return -1;
    if (!env->kernels)
        return 0;
    const gcu_deviceptr slot = sizeof(unsigned long long) * 2;
    unsigned long long st[6];
    if (bench_fma(env, &run->mod[to], run->stream[to][0], 1, run->out, 1, 1,
                  run->stamps + 2 * slot) ||
        drain(env, run) || bench_read(env, st, run->stamps, sizeof st, "reading stamps"))
        return -1;
    *same = (double)(bench_stamps_start(st + 2) - bench_stamps_end(st)) / 1e3;
    *gap = (double)(bench_stamps_start(st + 4) - bench_stamps_end(st + 2)) / 1e3;
    return 0;
}

/* A switch's twins by hand: by part (new stream i waits for old stream i), or the barrier's
 * funnel as src/layouts.c makes it (old streams 1.. into old stream 0, every new one on it). */
static int one_by_hand(const bench_env *env, switch_run *run, int from, int barrier,
                       double *host)
{
    const int to = !from;
    if (queue_old(env, run, from))
        return -1;
    const raw_driver *drv = env->drv;
/* Record on stream i of layout of; stream i of layout to waits for stream j's of layout of. */
#define RECORD(of, i) drv->cuEventRecord(run->by_hand[of][i], run->stream[of][i])
#define WAIT(to, i, of, j) drv->cuStreamWaitEvent(run->stream[to][i], run->by_hand[of][j], 0)
    gcu_result r = GCU_SUCCESS;
    double t0 = bench_now_us();
    if (!barrier) {
        for (int i = 0; i < SWITCH_PARTS && r == GCU_SUCCESS; i++)
            if ((r = RECORD(from, i)) == GCU_SUCCESS)
                r = WAIT(to, i, from, i);
    } else {
        for (int i = 1; i < SWITCH_PARTS && r == GCU_SUCCESS; i++)
            if ((r = RECORD(from, i)) == GCU_SUCCESS)
                r = WAIT(from, 0, from, i);
        if (r == GCU_SUCCESS)
            r = RECORD(from, 0);
        for (int j = 0; j < SWITCH_PARTS && r == GCU_SUCCESS; j++)
            r = WAIT(to, j, from, 0);
    }
    *host = bench_now_us() - t0;
#undef RECORD
#undef WAIT
    return bench_cu(r, "a switch by hand (cuEventRecord, cuStreamWaitEvent)") ||
           (env->kernels && drain(env, run));
}

/* One rep's four switches from `first` on (turning: none always follows another) into t. */
#define SWITCH_KINDS 4
static int one_rep(const bench_env *env, switch_run *run, int from, unsigned first, double *t)
{
    double same_again;
    int rc = 0;
    for (unsigned k = 0; k < SWITCH_KINDS && !rc; k++) {
        unsigned which = (first + k) % SWITCH_KINDS;
        if (which == 0)
            rc = one_switch(env, run, from, GCTX_LAYOUTS_ORDER_ALL, &t[SW_HOST], &t[SW_GAP],
                            &t[SW_SAME]);
        else if (which == 1)
            rc = one_switch(env, run, from, GCTX_LAYOUTS_ORDER_BY_PART, &t[SW_BY_PART],
                            &t[SW_BY_PART_GAP], &same_again);
        else
            rc = one_by_hand(env, run, from, which == 3, &t[which == 3 ? SW_BARRIER : SW_BY_HAND]);
    }
    return rc;
}

/* Each column's row and side (0: a, 1: b), and for host times where their quiet reps go. */
static const struct {
    int row, side, quiet_row, quiet_side;
} columns[SW_CHECK] = {
    [SW_HOST] = {CR_SWITCH, 0, CR_SWITCH_OWN, 0},
    [SW_BY_PART] = {CR_SWITCH_BY_PART, 0, CR_SWITCH_BY_PART, 0},
    [SW_BY_HAND] = {CR_SWITCH, 1, CR_SWITCH_BY_PART, 1},
    [SW_BARRIER] = {CR_SWITCH_OWN, 1, CR_SWITCH_OWN, 1},
    [SW_GAP] = {CR_GAP, 0, -1, 0},
    [SW_BY_PART_GAP] = {CR_GAP_BY_PART, 0, -1, 0},
    [SW_SAME] = {CR_GAP, 1, -1, 0},
};

static bench_summary *side_of(bench_row *r, int side, int quiet)
{
    return quiet ? (side ? &r->b_quiet : &r->a_quiet) : side ? &r->b : &r->a;
}

/* v: room for SWITCH_VALUES values a rep. */
static int switches(const bench_env *env, unsigned reps, bench_pin *pin, cache_rows *rows,
                    double *v)
{
    switch_run run;
    double *check = v + SW_CHECK * reps, *scratch = v + SW_SCRATCH * reps;
    int rc = switch_begin(env, rows, &run);
    for (unsigned from = 0, i = 0; from < reps && !rc; from += SWITCH_MOVE_EVERY) {
        const unsigned to = reps - from < SWITCH_MOVE_EVERY ? reps : from + SWITCH_MOVE_EVERY;
        bench_pin_move_to_quietest(pin);
        bench_spin_us(SWITCH_SPIN_US);
        for (unsigned j = 0; j < WARMUPS + to - from && !rc; j++, i++) {
            double t[SW_CHECK + 1] = {0};
            t[SW_CHECK] = bench_pin_check_us();
            rc = one_rep(env, &run, (int)(i & 1), (i >> 1) % SWITCH_KINDS, t);
            for (unsigned c = 0; c <= SW_CHECK && j >= WARMUPS; c++)
                v[c * reps + from + j - WARMUPS] = t[c];
        }
    }
    bench_row *r = rows->rows;
    const double limit = rc ? 0 : bench_quiet_limit(check, reps);
    /* Quiet first: bench_summarize sorts a column in place. */
    for (int c = 0; c < SW_CHECK && !rc; c++)
        if (columns[c].quiet_row >= 0)
            rows->switch_quiet_reps = (unsigned)bench_summarize_quiet(
                v + c * reps, check, reps, limit, scratch,
                side_of(&r[columns[c].quiet_row], columns[c].quiet_side, 1));
    for (int c = 0; c < SW_CHECK && !rc && (c < SW_GAP || env->kernels); c++) {
        bench_summarize(v + c * reps, reps, side_of(&r[columns[c].row], columns[c].side, 0));
        r[columns[c].row].valid = 1;
    }
    if (!rc) {
        bench_summarize(check, reps, &rows->switch_check);
        r[CR_SWITCH_OWN].a = r[CR_SWITCH].a, r[CR_SWITCH_BY_PART].b = r[CR_SWITCH].b;
        r[CR_SWITCH_OWN].valid = r[CR_SWITCH_OWN].quiet = r[CR_SWITCH_BY_PART].quiet = 1;
        r[CR_GAP_BY_PART].b = r[CR_GAP].b;
    }
    for (int k = CR_GAP; k <= CR_GAP_BY_PART && !rc && env->kernels; k++)
        snprintf(r[k].note, sizeof r[k].note, "added %.2f%s", r[k].a.p50 - r[k].b.p50,
                 k == CR_GAP ? " (target <= 1 us)" : "");
    switch_end(env, &run);
    return rc;
}

/* 16 layouts of {8k, rest} (k x a 16th of the device elsewhere), from an empty cache and from
 * a full one, against the same splits, 32 contexts and streams by hand (planned by greenctx
 * off the clock); builds alternate which side goes first. */
#define LAYOUTS 16
#define LAYOUT_BUILDS 15
#define QUICK_LAYOUT_BUILDS 5
typedef struct layouts_run {
    unsigned counts[2 * LAYOUTS];
    raw_plan plans[LAYOUTS];
    raw_split split;
    raw_setup setups[LAYOUTS];
} layouts_run;

/* ms for the layouts from an empty cache, then from a full one; emptied again for by hand. */
static int layouts_through_greenctx(const bench_env *env, layouts_run *run, double ms[2])
{
    if (bench_gctx(gctx_cache_trim(env->device), "gctx_cache_trim"))
        return -1;
    for (int round = 0; round < 2; round++) {
        gctx_layouts *l;
        double t0 = bench_now_us();
        if (bench_gctx(gctx_layouts_create(env->device, run->counts, LAYOUTS, 2, NULL, &l),
                       "gctx_layouts_create"))
            return -1;
        ms[round] = (bench_now_us() - t0) / 1e3;
        gctx_layouts_release(l);
    }
    return bench_gctx(gctx_cache_trim(env->device), "gctx_cache_trim");
}

static int layouts_by_hand(const bench_env *env, layouts_run *run, double *ms)
{
    int rc = 0;
    unsigned made = 0;
    double t0 = bench_now_us();
    for (; made < LAYOUTS && !rc; made++)
        rc = raw_setup_build(env, &run->plans[made], &run->split, &run->setups[made]);
    *ms = (bench_now_us() - t0) / 1e3;
    while (made)
        raw_setup_teardown(env, &run->setups[--made]);
    return rc;
}

static int layouts_build(const bench_env *env, cache_rows *rows, double *v)
{
    layouts_run *run = bench_calloc(1, sizeof *run);
    if (!run)
        return -1;
    const unsigned builds = rows->layout_builds;
    double *cold = v, *warm = v + builds, *by_hand = v + 2 * builds;
    int rc = raw_split_init(env, &run->split) ||
             bench_gctx(gctx_cache_set_limit(env->device, 2 * LAYOUTS), "gctx_cache_set_limit");
    for (unsigned k = 0; k < LAYOUTS && !rc; k++) {
        run->counts[2 * k] = rows->layout_step * (k + 1), run->counts[2 * k + 1] = 0;
        rc = raw_plan_make(env, run->counts[2 * k], &run->plans[k]);
    }
    for (unsigned i = 0; i < builds && !rc; i++) {
        double ms[2];
        if (i & 1)
            rc = layouts_by_hand(env, run, &by_hand[i]) || layouts_through_greenctx(env, run, ms);
        else
            rc = layouts_through_greenctx(env, run, ms) || layouts_by_hand(env, run, &by_hand[i]);
        cold[i] = ms[0], warm[i] = ms[1];
    }
    if (!rc) {
        bench_summarize(cold, builds, &rows->rows[CR_LAYOUTS].a);
        bench_summarize(warm, builds, &rows->rows[CR_LAYOUTS_WARM].a);
        bench_summarize(by_hand, builds, &rows->rows[CR_LAYOUTS].b);
        rows->rows[CR_LAYOUTS].valid = rows->rows[CR_LAYOUTS_WARM].valid = 1;
    }
    raw_split_free(&run->split);
    free(run);
    return rc ? -1 : 0;
}

int cache_rows_measure(const bench_env *env, unsigned reps, bench_pin *pin, cache_rows *rows)
{
    memset(rows, 0, sizeof *rows);
    for (int k = 0; k < CR_NB_ROWS; k++) {
        bench_row *r = &rows->rows[k];
        snprintf(r->label, sizeof r->label, "%s", row_defs[k].label);
        r->keys = &row_defs[k].keys;
    }
    rows->rows[CR_MEMORY].digits = 3; /* a value per side, not a distribution */
    for (int k = CR_GAP; k <= CR_GAP_BY_PART; k++)
        snprintf(rows->rows[k].note, sizeof rows->rows[k].note, "needs a GPU (kernels)");
    /* The H200's sizes (16 and 64; layouts of 8 to 128), scaled down to a smaller device */
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    if (bench_gctx(gctx_partition_get_info(env->whole, &info), "gctx_partition_get_info"))
        return -1;
    unsigned unit = info.coscheduled_alignment ? info.coscheduled_alignment : 1;
    rows->small_sms = 16;
    rows->large_sms = 64 <= info.sm_count / 2 ? 64 : info.sm_count / 2 / unit * unit;
    rows->layout_step = (info.sm_count - info.sm_count % unit) / LAYOUTS / unit * unit;
    if (rows->layout_step < info.min_partition_sms) { /* an L4: not measured, said so */
        rows->layout_step = 0;
        for (int k = CR_LAYOUTS; k <= CR_LAYOUTS_WARM; k++)
            snprintf(rows->rows[k].note, sizeof rows->rows[k].note,
                     "not measured: 16 groups of this device's minimum partition don't fit");
    }
    rows->cycles = env->opt.quick ? QUICK_MEMORY_CYCLES : MEMORY_CYCLES;
    rows->layout_builds = env->opt.quick ? QUICK_LAYOUT_BUILDS : LAYOUT_BUILDS;
    unsigned limit;
    if (bench_gctx(gctx_cache_get_limit(env->device, &limit), "gctx_cache_get_limit"))
        return -1;
    /* Room for the longest: a cycle's time, SWITCH_VALUES a switch, 3 a layouts build. */
    const unsigned switch_reps = rows->switch_reps = SWITCH_REPS_PER_REP * reps;
    unsigned most = switch_reps > rows->cycles ? switch_reps : rows->cycles;
    size_t n = SWITCH_VALUES * (size_t)(most > rows->layout_builds ? most : rows->layout_builds);
    double *v = bench_calloc(n, sizeof *v);
    if (!v)
        return -1;
    bench_row *r = rows->rows;
    int rc = repartitions(env, rows, limit ? limit : 16, v, &r[CR_REPARTITION].a,
                          &r[CR_MEMORY].a) ||
             repartitions(env, rows, 0, v, &r[CR_REPARTITION].b, &r[CR_MEMORY].b) ||
             bench_gctx(gctx_cache_set_limit(env->device, limit ? limit : 16),
                        "gctx_cache_set_limit") ||
             switches(env, switch_reps, pin, rows, v) ||
             (rows->layout_step && layouts_build(env, rows, v));
    free(v);
    if (bench_gctx(gctx_cache_set_limit(env->device, limit), "gctx_cache_set_limit") ||
        bench_gctx(gctx_cache_trim(env->device), "gctx_cache_trim"))
        rc = -1;
    rows->valid = r[CR_REPARTITION].valid = r[CR_MEMORY].valid = !rc;
    return rc ? -1 : 0;
}

void cache_rows_print(const cache_rows *c)
{
    if (!c->valid)
        return;
    printf("\nre-partitioning: %u/rest <-> %u/rest, with the context cache and without "
           "(GREENCTX_CONTEXT_CACHE=0); times in us\n",
           c->small_sms, c->large_sms);
    bench_print_columns("", "cache p50", "none p50");
    bench_rows_print(c->rows, CR_SWITCH, 0);
    printf("   (over %u re-partitions; target with the cache: 0, at most 10 MB in 100,000; "
           "re-partition p50 <= 10 us)\n",
           c->cycles);
    bench_print_columns("", "greenctx", "by hand");
    bench_rows_print(c->rows + CR_SWITCH, CR_GAP - CR_SWITCH, 0);
    printf("   (%u reps; by hand: per partition one cuEventRecord and one cuStreamWaitEvent, as "
           "by part; the barrier: %d wait more,\n    its own by hand the same %d calls; target "
           "p50 <= 1 us, p99 <= 2 us)\n",
           c->switch_reps, SWITCH_PARTS - 1, 3 * SWITCH_PARTS - 1);
    bench_print_columns("the same over quiet reps", "greenctx", "by hand");
    bench_rows_print(c->rows + CR_SWITCH, CR_GAP - CR_SWITCH, 1);
    printf("   (quiet: %u of %u reps, whose host check right before read at most %.2fx the "
           "fastest, %.2f us; p50 %.2f us)\n",
           c->switch_quiet_reps, c->switch_reps, BENCH_QUIET_SLACK, c->switch_check.min,
           c->switch_check.p50);
    bench_print_columns("", "device gap", "one stream");
    bench_rows_print(c->rows + CR_GAP, CR_LAYOUTS - CR_GAP, 0);
    bench_print_columns("", "greenctx", "by hand");
    bench_rows_print(c->rows + CR_LAYOUTS, CR_NB_ROWS - CR_LAYOUTS, 0);
    printf("   (%u builds; by hand: the same splits, contexts and streams; target ratio <= 1.1)\n",
           c->layout_builds);
}

void cache_rows_json(json_writer *w, const cache_rows *c)
{
    json_object(w, "repartitioning");
    json_bool(w, "valid", c->valid);
    if (c->valid) {
        json_uint(w, "small_sms", c->small_sms);
        json_uint(w, "large_sms", c->large_sms);
        json_uint(w, "cycles", c->cycles);
        json_uint(w, "layout_switch_reps", c->switch_reps);
        bench_json_summary(w, "layout_switch_check_us", &c->switch_check);
        json_uint(w, "layout_switch_quiet_reps", c->switch_quiet_reps);
        json_uint(w, "layout_builds", c->layout_builds);
        bench_rows_json(w, c->rows, CR_NB_ROWS);
    }
    json_close(w);
}

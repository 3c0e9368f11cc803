/* Overhead: each greenctx operation against the raw driver calls doing the same, in this
 * process, interleaved rep by rep (the order swapped every rep) so that drift and caches hit
 * both alike; only the call itself is timed. Launch cost: empty kernels on a green stream and
 * an ordinary one, per launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_overhead.h"
#include "bench_pin.h"
#include "progress.h"

/* ---- the raw driver calls with no bookkeeping: what an application would write by hand */

int raw_plan_make(const bench_env *env, unsigned victim_sms, raw_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    gctx_group groups[2] = {{.num_sms = victim_sms}, {.backfill = 1}};
    gctx_split_plan sp = GCTX_SPLIT_PLAN_INIT;
    gctx_group_plan gp[2];
    if (bench_gctx(gctx_partition_plan(env->whole, groups, 2, NULL, &sp, gp),
                   "planning the split"))
        return -1;
    plan->path = sp.path;
    plan->sms[0] = gp[0].sm_count;
    plan->sms[1] = gp[1].sm_count;
    if (sp.path == GCTX_SPLIT_PATH_STRUCTURED) {
        plan->params[0].smCount = gp[0].sm_count;
        plan->params[1].flags = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
        return 0;
    }
    plan->granule = sp.granule_sms;
    plan->flags = sp.path == GCTX_SPLIT_PATH_FINE_GRANULES
                      ? GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
    plan->first_granules = sp.granule_sms ? gp[0].sm_count / sp.granule_sms : 0;
    return 0;
}

int raw_split_init(const bench_env *env, raw_split *split)
{
    memset(split, 0, sizeof *split);
    split->capacity = env->sm_count / 2 + 2;
    split->res = bench_calloc(split->capacity, sizeof *split->res);
    if (!split->res)
        return -1;
    return bench_cu(env->drv->cuDeviceGetDevResource(env->cu_device, &split->whole,
                                                     GCU_DEV_RESOURCE_TYPE_SM),
                    "cuDeviceGetDevResource");
}

void raw_split_free(raw_split *split)
{
    free(split->res);
    memset(split, 0, sizeof *split);
}

static int raw_split_run(const bench_env *env, const raw_plan *plan, raw_split *split)
{
    const raw_driver *drv = env->drv;
    gcu_dev_resource remainder;
    memset(&remainder, 0, sizeof remainder);
    if (plan->path == GCTX_SPLIT_PATH_STRUCTURED) {
        gcu_dev_sm_resource_group_params params[2];
        memcpy(params, plan->params, sizeof params);
        split->nb_res = 2, split->first_count = 1; /* a resource a group */
        return bench_cu(drv->cuDevSmResourceSplit(split->res, 2, &split->whole, &remainder, 0,
                                                  params),
                        "cuDevSmResourceSplit");
    }
    unsigned n = split->capacity - 1;
    if (bench_cu(drv->cuDevSmResourceSplitByCount(split->res, &n, &split->whole, &remainder,
                                                  plan->flags, plan->granule),
                 "cuDevSmResourceSplitByCount"))
        return -1;
    /* The rest group takes the split's leftover too, as greenctx's backfill does. */
    if (remainder.type == GCU_DEV_RESOURCE_TYPE_SM && remainder.u.sm.smCount > 0)
        split->res[n++] = remainder;
    split->nb_res = n;
    split->first_count = plan->first_granules;
    return 0;
}

/* Group g's resources of the split: the first first_count, or the others. */
static int raw_desc(const bench_env *env, raw_split *split, unsigned g, gcu_resource_desc *desc)
{
    unsigned first = g ? split->first_count : 0;
    unsigned count = g ? split->nb_res - split->first_count : split->first_count;
    return bench_cu(env->drv->cuDevResourceGenerateDesc(desc, &split->res[first], count),
                    "cuDevResourceGenerateDesc");
}

static int raw_context_create(const bench_env *env, gcu_resource_desc desc, CUgreenCtx *green)
{
    return bench_cu(env->drv->cuGreenCtxCreate(green, desc, env->cu_device,
                                               GCU_GREEN_CTX_DEFAULT_STREAM),
                    "cuGreenCtxCreate");
}

static int raw_stream_create(const bench_env *env, CUgreenCtx green, CUstream *stream)
{
    return bench_cu(env->drv->cuGreenCtxStreamCreate(stream, green, GCU_STREAM_NON_BLOCKING, 0),
                    "cuGreenCtxStreamCreate");
}

int raw_setup_build(const bench_env *env, const raw_plan *plan, raw_split *split, raw_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    if (raw_split_run(env, plan, split))
        return -1;
    for (unsigned g = 0; g < 2; g++)
        if (raw_desc(env, split, g, &setup->desc[g]) ||
            raw_context_create(env, setup->desc[g], &setup->green[g]) ||
            (env->drv->cuGreenCtxStreamCreate && /* 12.5+ */
             raw_stream_create(env, setup->green[g], &setup->stream[g]))) {
            raw_setup_teardown(env, setup);
            return -1;
        }
    return 0;
}

void raw_setup_teardown(const bench_env *env, raw_setup *setup)
{
    for (unsigned g = 0; g < 2; g++) {
        if (setup->stream[g])
            env->drv->cuStreamDestroy(setup->stream[g]);
        if (setup->green[g])
            env->drv->cuGreenCtxDestroy(setup->green[g]);
    }
    memset(setup, 0, sizeof *setup);
}

/* ---- greenctx against them ---- */

#define OV_REPS 200
#define OV_QUICK_REPS 50
#define OV_WARMUPS 5
#define OV_LAUNCHES 2000
#define OV_QUICK_LAUNCHES 500
#define OV_ROUNDS 7
#define OV_QUICK_ROUNDS 3
#define OV_SPIN_US 2000 /* before each timed block: the CPU at speed (bench_spin_us) */
#define OV_MOVE_EVERY 50 /* reps a block, each on the CPU quietest at its start */

/* The labels of the split and the re-partition are formats of the ratios' SMs. */
static const bench_row_keys lib_keys = {
    .a = "greenctx_us", .b = "raw_driver_us", .ratio = "ratio_p50",
    .a_quiet = "greenctx_quiet_us", .b_quiet = "raw_driver_quiet_us",
    .a_quiet_reps = "quiet_reps", .b_quiet_reps = "raw_driver_quiet_reps",
    .ratio_quiet = "ratio_quiet_p50"};
static const bench_row_keys launch_keys = {
    .a = "green_stream_us", .b = "ordinary_stream_us", .ratio = "ratio_p50"};
static const struct {
    const char *name, *label;
} ops[OV_NB_OPS] = {
    {"split", "split {%u, rest}"},
    {"context_create", "green context create (miss)"},
    {"context_destroy", "green context destroy"},
    {"stream_create", "stream create"},
    {"stream_destroy", "stream destroy"},
    {"setup", "2 partitions + context + stream"},
    {"teardown", "... torn down"},
    {"repartition", "re-partition %u/%u<->%u/%u cache"},
    {"launch_submit", "submit, per launch"},
    {"launch_submit_and_drain", "submit + drain, per launch"},
};
typedef struct ov_run {
    const bench_env *env;
    ov_result *res;
    gctx_group groups[2][2]; /* [ratio]: {victim, rest} and the other ratio */
    raw_plan plans[2];
    int alt_ok;
    raw_split split;
    gctx_partition *lib_part[2]; /* a split kept for the context and stream rows */
    gctx_context *lib_ctx;
    gcu_resource_desc raw_desc;
    CUgreenCtx raw_green;
    bench_pair lib_state;
    raw_setup raw_state;
    int lib_ratio, raw_ratio;
    bench_pin *pin; /* the timing thread's (bench_pin.h) */
    progress_meter progress; /* a step per measured row, the launches, the cache's rows */
} ov_run;

/* Does the operation once: us[0] its time, us[1] its undo's (rows in pairs). */
typedef int (*ov_fn)(ov_run *run, double us[2]);

/* us[0] the time of doing, us[1] of undoing right after it. */
#define TIME_DO_UNDO(us, doing, undoing)                                                       \
    do {                                                                                       \
        double t0_ = bench_now_us();                                                           \
        doing;                                                                                 \
        double t1_ = bench_now_us();                                                           \
        undoing;                                                                               \
        (us)[0] = t1_ - t0_, (us)[1] = bench_now_us() - t1_;                                   \
    } while (0)

/* The split, a context and a stream on each part. */
static int lib_setup_build(ov_run *run, int ratio, bench_pair *st)
{
    memset(st, 0, sizeof *st);
    if (bench_gctx(gctx_partition_split(run->env->whole, run->groups[ratio], 2, NULL, st->part,
                                        NULL, NULL, NULL),
                   "gctx_partition_split"))
        return -1;
    for (int g = 0; g < 2; g++)
        if (bench_gctx(gctx_context_create(st->part[g], NULL, &st->ctx[g]),
                       "gctx_context_create") ||
            bench_gctx(gctx_stream_create(st->ctx[g], NULL, &st->stream[g]), "gctx_stream_create"))
            return -1;
    return 0;
}

static int lib_split(ov_run *run, double us[2])
{
    gctx_partition *parts[2] = {NULL, NULL};
    gctx_status s;
    TIME_DO_UNDO(us, s = gctx_partition_split(run->env->whole, run->groups[0], 2, NULL, parts,
                                              NULL, NULL, NULL),
                 (gctx_partition_release(parts[0]), gctx_partition_release(parts[1])));
    return bench_gctx(s, "gctx_partition_split");
}

static int raw_split_op(ov_run *run, double us[2])
{
    int rc;
    TIME_DO_UNDO(us, rc = raw_split_run(run->env, &run->plans[0], &run->split), );
    return rc;
}

/* A cache miss every time; the cache full (fill_cache): every release destroys the oldest. */
static int lib_context(ov_run *run, double us[2])
{
    gctx_context *ctx = NULL;
    gctx_context_options fresh = GCTX_CONTEXT_OPTIONS_INIT;
    fresh.flags = GCTX_CONTEXT_FRESH;
    gctx_status s;
    TIME_DO_UNDO(us, s = gctx_context_create(run->lib_part[0], &fresh, &ctx),
                 gctx_context_release(ctx));
    return bench_gctx(s, "gctx_context_create");
}

static int raw_context(ov_run *run, double us[2])
{
    CUgreenCtx green = NULL;
    int rc;
    TIME_DO_UNDO(us, rc = raw_context_create(run->env, run->raw_desc, &green),
                 if (green) run->env->drv->cuGreenCtxDestroy(green));
    return rc;
}

static int lib_stream(ov_run *run, double us[2])
{
    gctx_stream *stream = NULL;
    gctx_status s;
    TIME_DO_UNDO(us, s = gctx_stream_create(run->lib_ctx, NULL, &stream),
                 gctx_stream_release(stream));
    return bench_gctx(s, "gctx_stream_create");
}

static int raw_stream(ov_run *run, double us[2])
{
    CUstream stream = NULL;
    int rc;
    TIME_DO_UNDO(us, rc = raw_stream_create(run->env, run->raw_green, &stream),
                 if (stream) run->env->drv->cuStreamDestroy(stream));
    return rc;
}

static int lib_setup_op(ov_run *run, double us[2])
{
    bench_pair st;
    int rc;
    TIME_DO_UNDO(us, rc = lib_setup_build(run, 0, &st), bench_pair_release(&st));
    return rc;
}

static int raw_setup_op(ov_run *run, double us[2])
{
    raw_setup st;
    int rc;
    TIME_DO_UNDO(us, rc = raw_setup_build(run->env, &run->plans[0], &run->split, &st),
                 raw_setup_teardown(run->env, &st));
    return rc;
}

/* Tear down what runs at one ratio and build the other. */
static int lib_repartition(ov_run *run, double us[2])
{
    int rc;
    TIME_DO_UNDO(us, bench_pair_release(&run->lib_state); run->lib_ratio ^= 1;
                 rc = lib_setup_build(run, run->lib_ratio, &run->lib_state), );
    return rc;
}

static int raw_repartition(ov_run *run, double us[2])
{
    int rc;
    TIME_DO_UNDO(us, raw_setup_teardown(run->env, &run->raw_state); run->raw_ratio ^= 1;
                 rc = raw_setup_build(run->env, &run->plans[run->raw_ratio], &run->split,
                                      &run->raw_state), );
    return rc;
}

/* The cache full of the context row's contexts: its releases pay the keeping and a destroy. */
static int fill_cache(ov_run *run)
{
    unsigned limit = 0;
    if (bench_gctx(gctx_cache_get_limit(run->env->device, &limit), "gctx_cache_get_limit"))
        return -1;
    for (unsigned i = 0; i < limit; i++) {
        double us[2];
        if (lib_context(run, us))
            return -1;
    }
    return 0;
}

/* How a row's two sides take turns: rep by rep, or in blocks (A B B A, halves mirrored
 * against drift) for a greenctx operation of microseconds beside a twin of milliseconds,
 * whose work between greenctx reps would leave every one of them cold: what a user who
 * re-partitions in a loop never pays. */
typedef enum ov_order { OV_INTERLEAVED, OV_BLOCKS } ov_order;

/* values[0] the doing, values[1] the undoing, checks the host check before each (bench_pin.h). */
typedef struct ov_side {
    ov_fn fn;
    double *values[2];
    double *checks;
} ov_side;

/* One rep of side, kept at k (< 0: a warm-up). */
static int rep_into(ov_run *run, const ov_side *side, long k)
{
    double us[2] = {0, 0};
    double checked = bench_pin_check_us();
    if (side->fn(run, us))
        return -1;
    if (k >= 0) {
        side->values[0][k] = us[0], side->values[1][k] = us[1];
        side->checks[k] = checked;
    }
    return 0;
}

/* Reps [from, to) of a and b (b->fn NULL: a alone), the order swapped every rep, after warm-ups. */
static int block(ov_run *run, const ov_side *a, const ov_side *b, unsigned from, unsigned to)
{
    const unsigned warm = run->res->warmups;
    bench_pin_move_to_quietest(run->pin);
    bench_spin_us(OV_SPIN_US);
    for (unsigned i = 0; i < warm + to - from; i++) {
        const ov_side *first = i & 1 && b->fn ? b : a, *second = first == a ? b : a;
        const long k = i < warm ? -1 : (long)(from + i - warm);
        if (rep_into(run, first, k) || (second->fn && rep_into(run, second, k)))
            return -1;
    }
    return 0;
}

/* a and b (b may be NULL) into rows op and, when pair, op + 1 (the undo). */
static int measure(ov_run *run, ov_op op, int pair, ov_order order, ov_fn a, ov_fn b)
{
    const unsigned reps = run->res->reps;
    progress_step(&run->progress, "%s", ops[op].name);
    bench_pin_free_born(run->pin);
    double *v = bench_calloc(7 * (size_t)reps, sizeof *v);
    if (!v)
        return -1;
    double *scratch = v + 6 * (size_t)reps;
    const ov_side sa = {a, {v, v + reps}, v + 4 * reps};
    const ov_side sb = {b, {v + 2 * reps, v + 3 * reps}, v + 5 * reps};
    const ov_side no = {.fn = NULL}; /* in blocks, each side alone: A B B A */
    const unsigned half = reps / 2;
    const int in_blocks = order == OV_BLOCKS && b;
    int rc = in_blocks && (block(run, &sa, &no, 0, half) || block(run, &sb, &no, 0, half) ||
                           block(run, &sb, &no, half, reps) || block(run, &sa, &no, half, reps));
    for (unsigned from = 0; from < reps && !in_blocks && !rc; from += OV_MOVE_EVERY)
        rc = block(run, &sa, &sb, from, reps - from < OV_MOVE_EVERY ? reps : from + OV_MOVE_EVERY);
    /* Interleaved, the sides shared each block's vCPU: one limit; in blocks, one each. */
    double limit_a = bench_quiet_limit(sa.checks, reps);
    double limit_b = b ? bench_quiet_limit(sb.checks, reps) : limit_a;
    if (!in_blocks)
        limit_a = limit_b = limit_a < limit_b ? limit_a : limit_b;
    for (int k = 0; k <= pair && !rc; k++) {
        bench_row *row = &run->res->rows[op + k];
        /* Quiet first: bench_summarize sorts a side's values in place. */
        bench_summarize_quiet(sa.values[k], sa.checks, reps, limit_a, scratch, &row->a_quiet);
        bench_summarize(sa.values[k], reps, &row->a);
        if (b) {
            bench_summarize_quiet(sb.values[k], sb.checks, reps, limit_b, scratch, &row->b_quiet);
            bench_summarize(sb.values[k], reps, &row->b);
        }
        row->valid = row->quiet = 1;
    }
    free(v);
    return rc ? -1 : 0;
}

/* Empty kernels on a green lane and an ordinary one, rounds alternating: per launch,
 * submission and drain. */
static int run_launches(ov_run *run)
{
    const bench_env *env = run->env;
    ov_result *res = run->res;
    if (!env->kernels) {
        for (int op = OV_LAUNCH_SUBMIT; op <= OV_LAUNCH_TOTAL; op++)
            snprintf(res->rows[op].note, sizeof res->rows[op].note,
                     "needs a GPU: this driver runs no kernels");
        return 0;
    }
    bench_lane lanes[2];
    memset(lanes, 0, sizeof lanes);
    double *v = bench_calloc(4 * (size_t)res->rounds, sizeof *v);
    int rc = !v || bench_lane_open(env, run->lib_part[0], BENCH_PRIORITY_NORMAL, &lanes[0]) ||
             bench_lane_open(env, NULL, BENCH_PRIORITY_NORMAL, &lanes[1]);
    for (unsigned r = 0; r <= res->rounds && !rc; r++) /* round 0 warms up */
        for (int k = 0; k < 2 && !rc; k++) {
            int l = (int)(r & 1) ^ k;
            if ((rc = bench_push(env, lanes[l].ctx)))
                break;
            double t0 = bench_now_us();
            for (unsigned i = 0; i < res->launches && !rc; i++) /* one warp: the launch's cost */
                rc = bench_cu(env->drv->cuLaunchKernel(lanes[l].mod.empty, 1, 1, 1, 32, 1, 1, 0,
                                                       lanes[l].stream, NULL, NULL),
                              "launching gc_empty");
            double t1 = bench_now_us();
            if (!rc)
                rc = bench_cu(env->drv->cuStreamSynchronize(lanes[l].stream), "the launches");
            double t2 = bench_now_us();
            bench_pop(env);
            if (r > 0) {
                v[(2 * l) * res->rounds + r - 1] = (t1 - t0) / res->launches;
                v[(2 * l + 1) * res->rounds + r - 1] = (t2 - t0) / res->launches;
            }
        }
    for (int k = 0; k < 2 && !rc; k++) {
        bench_row *row = &res->rows[OV_LAUNCH_SUBMIT + k];
        bench_summarize(v + (size_t)k * res->rounds, res->rounds, &row->a);
        bench_summarize(v + (size_t)(2 + k) * res->rounds, res->rounds, &row->b);
        row->valid = 1;
    }
    free(v);
    bench_lane_close(env, &lanes[0]);
    bench_lane_close(env, &lanes[1]);
    return rc ? -1 : 0;
}

static int prepare(ov_run *run)
{
    const bench_env *env = run->env;
    ov_result *res = run->res;
    /* The re-partition's other ratio: 4 times the victim's where that leaves half the device. */
    unsigned alt = res->victim_sms * 4 <= env->sm_count / 2 ? res->victim_sms * 4
                                                           : res->victim_sms / 2;
    run->groups[0][0] = (gctx_group){.num_sms = res->victim_sms};
    run->groups[1][0] = (gctx_group){.num_sms = alt};
    run->groups[0][1] = run->groups[1][1] = (gctx_group){.backfill = 1};
    if (raw_plan_make(env, res->victim_sms, &run->plans[0]))
        return -1;
    run->alt_ok = raw_plan_make(env, alt, &run->plans[1]) == 0;
    res->other_sms = run->plans[0].sms[1];
    res->alt_sms = alt;
    res->alt_other_sms = run->alt_ok ? run->plans[1].sms[1] : 0;
    const raw_plan *p = &run->plans[0];
    if (p->path == GCTX_SPLIT_PATH_STRUCTURED)
        snprintf(res->split_text, sizeof res->split_text,
                 "{%u, rest} -> %u + %u SMs: one cuDevSmResourceSplit", res->victim_sms, p->sms[0],
                 p->sms[1]);
    else
        snprintf(res->split_text, sizeof res->split_text,
                 "{%u, rest} -> %u + %u SMs: one cuDevSmResourceSplitByCount into %u-SM "
                 "granules%s",
                 res->victim_sms, p->sms[0], p->sms[1], p->granule,
                 p->flags ? " (co-scheduling ignored)" : "");
    if (raw_split_init(env, &run->split) || raw_split_run(env, &run->plans[0], &run->split) ||
        raw_desc(env, &run->split, 0, &run->raw_desc) ||
        raw_context_create(env, run->raw_desc, &run->raw_green) ||
        bench_gctx(gctx_partition_split(env->whole, run->groups[0], 2, NULL, run->lib_part, NULL,
                                        NULL, NULL),
                   "gctx_partition_split") ||
        bench_gctx(gctx_context_create(run->lib_part[0], NULL, &run->lib_ctx),
                   "gctx_context_create"))
        return -1;
    return 0;
}

int bench_overhead_run(const bench_env *env, ov_result *res)
{
    memset(res, 0, sizeof *res);
    res->reps = env->opt.reps ? env->opt.reps : env->opt.quick ? OV_QUICK_REPS : OV_REPS;
    res->warmups = OV_WARMUPS;
    res->launches = env->opt.quick ? OV_QUICK_LAUNCHES : OV_LAUNCHES;
    res->rounds = env->opt.quick ? OV_QUICK_ROUNDS : OV_ROUNDS;
    res->victim_sms = env->opt.nb_victim_sms ? env->opt.victim_sms[0] : 16;
    ov_run run;
    memset(&run, 0, sizeof run);
    run.env = env;
    run.res = res;
    /* Every row is host time: one CPU throughout (bench_pin.h), so that two runs compare. */
    bench_pin pin;
    bench_pin_begin(&pin);
    run.pin = &pin;
    res->host_cpu = pin.cpu;
    int rc = prepare(&run);
    for (int op = 0; op < OV_NB_OPS; op++) { /* labels of the ratios' SMs, once known */
        bench_row *r = &res->rows[op];
        r->name = ops[op].name;
        r->keys = op >= OV_LAUNCH_SUBMIT ? &launch_keys : &lib_keys;
        snprintf(r->label, sizeof r->label, ops[op].label, res->victim_sms, res->other_sms,
                 res->alt_sms, res->alt_other_sms);
    }
    progress_begin(&run.progress, "greenctx bench: overhead", 6 + run.alt_ok);
    rc = rc || measure(&run, OV_SPLIT, 0, OV_INTERLEAVED, lib_split, raw_split_op) ||
         fill_cache(&run) ||
         measure(&run, OV_CONTEXT_CREATE, 1, OV_INTERLEAVED, lib_context, raw_context) ||
         measure(&run, OV_STREAM_CREATE, 1, OV_INTERLEAVED, lib_stream,
                 env->drv->cuGreenCtxStreamCreate ? raw_stream : NULL) ||
         measure(&run, OV_SETUP, 1, OV_INTERLEAVED, lib_setup_op, raw_setup_op);
    if (!rc && run.alt_ok)
        rc = lib_setup_build(&run, 0, &run.lib_state) ||
             raw_setup_build(env, &run.plans[0], &run.split, &run.raw_state) ||
             measure(&run, OV_REPARTITION, 0, OV_BLOCKS, lib_repartition, raw_repartition);
    else if (!rc)
        snprintf(res->rows[OV_REPARTITION].note, sizeof res->rows[OV_REPARTITION].note,
                 "skipped: %u SMs is no legal second ratio on this device", res->alt_sms);
    bench_pin_free_born(&pin);
    if (!rc) {
        progress_step(&run.progress, "launch cost");
        rc = run_launches(&run);
    }
    bench_pin_free_born(&pin);
    if (!rc) {
        progress_step(&run.progress, "re-partitioning: the context cache and layouts");
        rc = cache_rows_measure(env, res->reps, &pin, &res->repartitioning);
    }
    bench_pair_release(&run.lib_state);
    raw_setup_teardown(env, &run.raw_state);
    gctx_context_release(run.lib_ctx);
    gctx_partition_release(run.lib_part[0]);
    gctx_partition_release(run.lib_part[1]);
    if (run.raw_green)
        env->drv->cuGreenCtxDestroy(run.raw_green);
    raw_split_free(&run.split);
    bench_pin_end(&pin);
    return rc ? -1 : 0;
}

/* ---- output ---- */

void bench_overhead_print(const ov_result *res)
{
    printf("\n== overhead: greenctx against the raw driver calls doing the same, in this "
           "process\n");
    printf("   split %s\n", res->split_text);
    printf("   %u reps, interleaved in blocks of %u (re-partition: in blocks, A B B A), %u "
           "warm-ups before each block; times in us; %s\n",
           res->reps, OV_MOVE_EVERY, res->warmups,
           res->host_cpu >= 0 ? "the thread pinned, to the quietest vCPU before each block"
                              : "not pinned");
    bench_print_columns("operation", "gctx p50", "raw p50");
    bench_rows_print(res->rows, OV_LAUNCH_SUBMIT, 0);
    printf("   target: ratio <= 1.05 for creation and the split (the raw driver's cost is the "
           "floor); re-partition through the cache p50 <= 10 us\n");
    bench_print_columns("the same over quiet reps", "gctx p50", "raw p50");
    bench_rows_print(res->rows, OV_LAUNCH_SUBMIT, 1);
    printf("   (quiet: the host check right before the rep read at most %.2fx the row's "
           "fastest, bench_pin.h; greenctx's reps / the raw driver's)\n",
           BENCH_QUIET_SLACK);
    printf("\nlaunch cost: empty kernel, %u launches x %u rounds, us per launch\n", res->launches,
           res->rounds);
    bench_print_columns("", "green p50", "ordinary");
    bench_rows_print(res->rows + OV_LAUNCH_SUBMIT, OV_NB_OPS - OV_LAUNCH_SUBMIT, 0);
    cache_rows_print(&res->repartitioning);
}

void bench_overhead_json(json_writer *w, const bench_env *env, const ov_result *res)
{
    json_object(w, "overhead");
    json_uint(w, "reps", res->reps);
    json_uint(w, "warmups", res->warmups);
    json_uint(w, "launches", res->launches);
    json_uint(w, "rounds", res->rounds);
    json_uint(w, "victim_sms", res->victim_sms);
    json_uint(w, "other_sms", res->other_sms);
    json_uint(w, "alt_sms", res->alt_sms);
    json_uint(w, "alt_other_sms", res->alt_other_sms);
    json_bool(w, "simulated", env->simulated);
    json_string(w, "split", res->split_text);
    json_int(w, "host_cpu", res->host_cpu);
    if (res->rows[OV_REPARTITION].valid) /* how that row was timed */
        json_string(w, "repartition_order", "blocks");
    bench_rows_json_array(w, "ops", res->rows, OV_NB_OPS);
    cache_rows_json(w, &res->repartitioning);
    json_close(w);
}

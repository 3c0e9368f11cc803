/*
 * bench elastic in one process: the calibration (each workload alone on each split's share),
 * then the arms on the same trace: every static split, no split, priority streams, chunked
 * prefill, and the controller over the same layouts.
 *
 * One host thread drives both workloads and never blocks on either: it polls their streams
 * (cuStreamQuery). The latency workload runs decode steps back to back, each at the batch the
 * trace gives at its start; the throughput workload keeps EL_THR_SLOTS prefill units queued.
 * A step's latency runs from when it was due (before any re-size) to its end as the host sees
 * it (el_step_latency_ms); the controller observes the step's own time (events). The
 * throughput is what completed over the arm's time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"

#define CAL_REPS 7
#define QUICK_CAL_REPS 3
#define HBM_BYTES_S 3.9e12 /* the H200's, as a copy kernel measured it */
#define DEFAULT_TARGET_X 1.5

static const unsigned lat_sizes[] = {16, 32, 48, 64, 80, 96, 112};
static const unsigned quick_lat_sizes[] = {16, 32, 64, 96, 112};

/* Where the two workloads' work goes: a layout's two partitions, or streams of the primary
 * context (every SM). */
typedef struct el_place {
    CUstream lat, thr;
    el_site *lat_site, *thr_site;
    unsigned lat_sms, thr_sms;
    int layout; /* -1: the primary context */
} el_place;

enum { PLACE_SHARED = 0, PLACE_PRIORITY = 1, PLACE_LAYOUT0 = 2 }; /* then the layouts */

typedef struct el_rig {
    const bench_env *env;
    el_shape shape;
    el_blas blas;
    el_sites sites;
    el_buffers buf;
    gctx_layouts *layouts;
    unsigned nb_layouts;
    CUstream primary[3]; /* normal, normal, high priority */
    el_place place[PLACE_LAYOUT0 + EL_MAX_LAYOUTS];
} el_rig;

void el_timeline_add(el_timeline *line, double t, unsigned lat_sms, unsigned thr_sms)
{
    if (line->count == EL_MAX_TIMELINE)
        return;
    line->t[line->count] = t;
    line->lat_sms[line->count] = lat_sms;
    line->thr_sms[line->count++] = thr_sms;
}

void el_arm_finish(el_arm *arm, double *step_ms, unsigned *batches, size_t nb_steps,
                   double target_ms, double *resize_us, size_t nb_resizes)
{
    arm->steps = nb_steps;
    arm->within_target = arm->tokens_within_target = 0;
    for (size_t i = 0; i < nb_steps; i++) {
        arm->within_target += step_ms[i] <= target_ms;
        arm->tokens_within_target += step_ms[i] <= target_ms ? batches[i] : 0;
    }
    bench_summarize_weighted(step_ms, batches, nb_steps, &arm->token_ms);
    bench_summarize(step_ms, nb_steps, &arm->step_ms);
    arm->resizes = (unsigned)nb_resizes;
    bench_summarize(resize_us, nb_resizes, &arm->resize_us);
}

/* ---- the rig: buffers, layouts, streams and places ---- */

static int primary_streams(el_rig *rig)
{
    const bench_env *env = rig->env;
    const raw_driver *drv = env->drv;
    int least = 0, greatest = 0;
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(drv->cuCtxGetStreamPriorityRange(&least, &greatest),
                      "cuCtxGetStreamPriorityRange");
    int priorities[3] = {0, 0, greatest};
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = bench_cu(drv->cuStreamCreateWithPriority(&rig->primary[i], GCU_STREAM_NON_BLOCKING,
                                                      priorities[i]),
                      "cuStreamCreateWithPriority");
    bench_pop(env);
    return rc;
}

static int layout_place(el_rig *rig, unsigned l, el_place *p)
{
    CUcontext ctx[2];
    CUstream st[2];
    unsigned sms[2];
    for (unsigned part = 0; part < 2; part++) {
        gctx_partition *partition;
        gctx_context *context;
        gctx_stream *stream;
        gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
        if (bench_gctx(gctx_layouts_get(rig->layouts, l, part, &partition, &context, &stream),
                       "gctx_layouts_get") ||
            bench_gctx(gctx_partition_get_info(partition, &info), "gctx_partition_get_info"))
            return -1;
        ctx[part] = gctx_context_cu_context(context);
        st[part] = gctx_stream_handle(stream);
        sms[part] = info.sm_count;
    }
    *p = (el_place){st[0], st[1], el_site_get(rig->env, &rig->sites, ctx[0], sms[0]),
                    el_site_get(rig->env, &rig->sites, ctx[1], sms[1]), sms[0], sms[1], (int)l};
    return p->lat_site && p->thr_site ? 0 : -1;
}

static void rig_close(el_rig *rig)
{
    const bench_env *env = rig->env;
    el_sites_close_blas(env, &rig->sites); /* first: a handle may still name a stream below */
    if (bench_push(env, env->primary) == 0) {
        for (int i = 0; i < 3; i++)
            if (rig->primary[i]) {
                env->drv->cuStreamSynchronize(rig->primary[i]);
                env->drv->cuStreamDestroy(rig->primary[i]);
            }
        /* the layouts' streams idle before their contexts' kernels unload */
        for (unsigned l = 0; l < rig->nb_layouts; l++) {
            const el_place *p = &rig->place[PLACE_LAYOUT0 + l];
            if (p->lat)
                env->drv->cuStreamSynchronize(p->lat);
            if (p->thr)
                env->drv->cuStreamSynchronize(p->thr);
        }
        bench_pop(env);
    }
    /* before the layouts: releasing them may destroy the contexts the kernels live in (the
     * context cache keeps 16) */
    el_sites_close(env, &rig->sites);
    gctx_layouts_release(rig->layouts);
    el_buffers_free(env, &rig->buf);
}

static int rig_open(el_rig *rig, const bench_env *env, const elastic_options *eo)
{
    memset(rig, 0, sizeof *rig);
    rig->env = env;
    rig->shape = (el_shape){eo->layers, eo->peak_batch, eo->context, eo->chunk, env->sm_count};
    const unsigned *sizes = env->opt.quick ? quick_lat_sizes : lat_sizes;
    unsigned nb = env->opt.quick ? sizeof quick_lat_sizes / sizeof quick_lat_sizes[0]
                                 : sizeof lat_sizes / sizeof lat_sizes[0];
    unsigned rows[2 * EL_MAX_LAYOUTS];
    for (unsigned i = 0; i < nb; i++)
        if (sizes[i] + 16 <= env->sm_count) { /* the throughput side keeps 16 at the least */
            rows[2 * rig->nb_layouts] = sizes[i];
            rows[2 * rig->nb_layouts++ + 1] = 0;
        }
    if (el_blas_open(env, eo->gemm, &rig->blas))
        return -1;
    rig->sites.blas = &rig->blas;
    el_site *primary = el_site_get(env, &rig->sites, env->primary, env->sm_count);
    if (!primary || primary_streams(rig))
        return -1;
    rig->place[PLACE_SHARED] = (el_place){rig->primary[0], rig->primary[1], primary, primary,
                                          env->sm_count, env->sm_count, -1};
    rig->place[PLACE_PRIORITY] = (el_place){rig->primary[2], rig->primary[1], primary, primary,
                                            env->sm_count, env->sm_count, -1};
    fprintf(stderr, "greenctx bench: elastic: filling %.1f GB of weights and KV cache\n",
            el_decode_bytes(&rig->shape, rig->shape.peak_batch) * 1e-9);
    if (el_buffers_make(env, &rig->shape, primary, rig->primary[0], &rig->buf))
        return -1;
    if (rig->nb_layouts == 0) {
        fprintf(stderr, "greenctx bench: elastic: %u SMs leave no split to sweep\n", env->sm_count);
        return -1;
    }
    if (bench_gctx(gctx_layouts_create(env->device, rows, rig->nb_layouts, 2, NULL, &rig->layouts),
                   "gctx_layouts_create of the static splits"))
        return -1;
    for (unsigned l = 0; l < rig->nb_layouts; l++)
        if (layout_place(rig, l, &rig->place[PLACE_LAYOUT0 + l]))
            return -1;
    return 0;
}

/* ---- calibration ---- */

static int calibrate(el_rig *rig, const elastic_options *eo, elastic_result *res)
{
    const bench_env *env = rig->env;
    unsigned reps = env->opt.quick ? QUICK_CAL_REPS : CAL_REPS;
    fprintf(stderr, "greenctx bench: elastic: calibrating each workload alone\n");
    res->nb_points = 0;
    for (unsigned i = 0; i <= rig->nb_layouts; i++) {
        /* the layouts' latency sides, then every SM */
        const el_place *p = i < rig->nb_layouts ? &rig->place[PLACE_LAYOUT0 + i]
                                                : &rig->place[PLACE_SHARED];
        if (p->layout >= 0 &&
            bench_gctx(gctx_layouts_switch(rig->layouts, (unsigned)p->layout, NULL),
                       "gctx_layouts_switch"))
            return -1;
        double decode_s, prefill_s;
        if (el_time_work(env, &rig->shape, &rig->buf, p->lat_site, p->lat, el_decode_step,
                         rig->shape.peak_batch, reps, &decode_s) ||
            el_time_work(env, &rig->shape, &rig->buf, p->thr_site, p->thr, el_prefill_fn,
                         rig->shape.chunk, reps, &prefill_s))
            return -1;
        res->cal_sms[i] = p->lat_sms;
        res->cal_decode_ms[i] = decode_s * 1e3;
        res->cal_prefill_ms[i] = prefill_s * 1e3; /* on p->thr_sms: the layout's other side */
        res->nb_points++;
    }
    double whole_ms = res->cal_decode_ms[rig->nb_layouts];
    res->target_given = eo->target_ms > 0;
    res->target_ms = res->target_given ? eo->target_ms : DEFAULT_TARGET_X * whole_ms;
    return 0;
}

/* The controller's prior from the calibration: decode on each latency side, prefill on each
 * throughput side (ascending SM counts), and the whole device for both. */
static int make_controller(const el_rig *rig, const elastic_result *res, gctx_controller **ctl)
{
    unsigned n = rig->nb_layouts, rows[2 * EL_MAX_LAYOUTS];
    el_prior prior[2] = {{.n = n + 1}, {.n = n + 1}};
    for (unsigned i = 0; i < n; i++) {
        const el_place *p = &rig->place[PLACE_LAYOUT0 + i];
        prior[0].sms[i] = p->lat_sms;
        prior[0].s[i] = res->cal_decode_ms[i] * 1e-3;
        /* the throughput sides shrink as the latency sides grow: reversed, they ascend */
        prior[1].sms[n - 1 - i] = p->thr_sms;
        prior[1].s[n - 1 - i] = res->cal_prefill_ms[i] * 1e-3;
        rows[2 * i] = p->lat_sms;
        rows[2 * i + 1] = p->thr_sms;
    }
    prior[0].sms[n] = prior[1].sms[n] = rig->env->sm_count;
    prior[0].s[n] = res->cal_decode_ms[n] * 1e-3;
    prior[1].s[n] = res->cal_prefill_ms[n] * 1e-3;
    return el_controller_make(&rig->shape, res->target_ms, prior, rows, n, rig->env->sm_count,
                              rig->env->sm_count == 132 ? HBM_BYTES_S : 0.0, 0, ctl);
}

/* ---- moving the work from one place to another ---- */

/* Each workload's stream in `to` waits for what was submitted to its stream in `from`, and
 * only that: decode and prefill share no data, so a burst's first decode step never queues
 * behind prefill's work. Layouts order themselves (by part: decode is part 0 of every
 * layout, prefill part 1); to or from the primary context's streams, events do. */
static int move(el_rig *rig, int from, int to)
{
    const el_place *a = &rig->place[from], *b = &rig->place[to];
    const raw_driver *drv = rig->env->drv;
    if (b->layout >= 0 &&
        bench_gctx(gctx_layouts_switch_ordered(rig->layouts, (unsigned)b->layout,
                                               GCTX_LAYOUTS_ORDER_BY_PART, NULL),
                   "gctx_layouts_switch_ordered"))
        return -1;
    if (a->layout >= 0 && b->layout >= 0)
        return 0;
    /* Each mark was made in its stream's context, and recording it needs none current: no
     * push and pop around it (with them, a move to or from the primary's streams took 7-10 us
     * on the H200 in the Poisson trace, where a move between layouts took 2-3). */
    CUevent marks[2] = {a->lat_site->lat_mark, a->thr_site->thr_mark};
    CUstream from_streams[2] = {a->lat, a->thr};
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = bench_cu(drv->cuEventRecord(marks[i], from_streams[i]), "cuEventRecord");
    CUstream to_streams[2] = {b->lat, b->thr};
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = bench_cu(drv->cuStreamWaitEvent(to_streams[i], marks[i], 0), "cuStreamWaitEvent");
    return rc;
}

/* ---- one arm ---- */

typedef struct el_loop {
    el_rig *rig;
    el_arm *arm;
    const el_trace *trace;
    double seconds, target_ms;
    gctx_controller *ctl; /* the controller arm's */
    unsigned chunk;       /* chunked prefill: tokens each decode step carries */
} el_loop;

static int query(const bench_env *env, CUstream stream, int *done)
{
    gcu_result r = env->drv->cuStreamQuery(stream);
    *done = r == GCU_SUCCESS;
    return r == GCU_SUCCESS || r == GCU_ERROR_NOT_READY ? 0 : bench_cu(r, "cuStreamQuery");
}

static float elapsed_ms(const bench_env *env, CUevent a, CUevent b)
{
    float ms = 0;
    return env->drv->cuEventElapsedTime(&ms, a, b) == GCU_SUCCESS ? ms : 0.0f;
}

static int launch_decode(el_loop *L, const el_place *p, unsigned batch)
{
    const bench_env *env = L->rig->env;
    const raw_driver *drv = env->drv;
    const el_shape *shape = &L->rig->shape;
    if (bench_push(env, p->lat_site->ctx)) /* the kernels' context, current for their launches */
        return -1;
    int rc = bench_cu(drv->cuEventRecord(p->lat_site->lat_start, p->lat), "cuEventRecord") ||
             el_decode_step(env, shape, &L->rig->buf, p->lat_site, p->lat, batch);
    for (unsigned l = 0; L->chunk && l < shape->layers && rc == 0; l++)
        rc = el_prefill_unit(env, shape, &L->rig->buf, p->lat_site, p->lat, l, L->chunk);
    rc = rc || bench_cu(drv->cuEventRecord(p->lat_site->lat_end, p->lat), "cuEventRecord");
    bench_pop(env);
    return rc;
}

static int launch_prefill(el_loop *L, const el_place *p, unsigned long long *next_unit)
{
    const bench_env *env = L->rig->env;
    const raw_driver *drv = env->drv;
    if (bench_push(env, p->thr_site->ctx)) /* the kernels' context, current for their launches */
        return -1;
    int rc = 0;
    for (unsigned s = 0; s < EL_THR_SLOTS && rc == 0; s++, (*next_unit)++)
        rc = bench_cu(drv->cuEventRecord(p->thr_site->thr_start[s], p->thr), "cuEventRecord") ||
             el_prefill_unit(env, &L->rig->shape, &L->rig->buf, p->thr_site, p->thr,
                             (unsigned)(*next_unit % L->rig->shape.layers), L->rig->shape.chunk) ||
             bench_cu(drv->cuEventRecord(p->thr_site->thr_end[s], p->thr), "cuEventRecord");
    bench_pop(env);
    return rc ? -1 : 0;
}

/* Candidate c of the controller: layout c, or (the last) "no split" on the primary's streams. */
static int place_of(const el_rig *rig, unsigned candidate)
{
    return candidate < rig->nb_layouts ? PLACE_LAYOUT0 + (int)candidate : PLACE_SHARED;
}

static int decide(el_loop *L, unsigned batch, int *cur, double t, double *resize_us,
                  size_t *nb_resizes)
{
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    if (bench_gctx(gctx_controller_set_demand(L->ctl, 0, batch), "gctx_controller_set_demand") ||
        bench_gctx(gctx_controller_decide(L->ctl, &d), "gctx_controller_decide"))
        return -1;
    int to = place_of(L->rig, d.candidate);
    if (to == *cur)
        return 0;
    double t0 = bench_now_us();
    if (move(L->rig, *cur, to))
        return -1;
    if (*nb_resizes < EL_MAX_RESIZES)
        resize_us[(*nb_resizes)++] = bench_now_us() - t0;
    *cur = to;
    el_timeline_add(&L->arm->timeline, t, L->rig->place[to].lat_sms, L->rig->place[to].thr_sms);
    return 0;
}

static int run_loop(el_loop *L, int start_place)
{
    el_rig *rig = L->rig;
    const bench_env *env = rig->env;
    size_t cap = 1 << 20, nb_steps = 0, nb_resizes = 0;
    double *steps = malloc(cap * sizeof *steps);
    unsigned *batches = malloc(cap * sizeof *batches);
    double *resizes = malloc(EL_MAX_RESIZES * sizeof *resizes);
    if (!steps || !batches || !resizes) {
        free(steps);
        free(batches);
        free(resizes);
        fprintf(stderr, "greenctx bench: out of memory\n");
        return -1;
    }
    int cur = start_place, lat_place = -1, thr_place = -1, rc = 0;
    unsigned lat_batch = 0; /* the batch of the step in flight */
    if (rig->place[cur].layout >= 0)
        rc = bench_gctx(gctx_layouts_switch(rig->layouts, (unsigned)rig->place[cur].layout, NULL),
                        "gctx_layouts_switch");
    el_timeline_add(&L->arm->timeline, 0, rig->place[cur].lat_sms,
                    L->chunk ? 0 : rig->place[cur].thr_sms);
    unsigned long long units = 0, next_unit = 0;
    double t0 = bench_now_us(), last_done = t0, due_us = t0;
    while (rc == 0) {
        double now_us = bench_now_us(), t = (now_us - t0) * 1e-6;
        int open = t < L->seconds, done;
        if (!open && lat_place < 0 && thr_place < 0)
            break;
        if (lat_place >= 0) {
            const el_place *p = &rig->place[lat_place];
            if ((rc = query(env, p->lat, &done)) || !done)
                goto throughput;
            double ms = elapsed_ms(env, p->lat_site->lat_start, p->lat_site->lat_end);
            last_done = bench_now_us();
            if (nb_steps < cap) {
                batches[nb_steps] = lat_batch;
                steps[nb_steps++] = el_step_latency_ms(ms, (last_done - due_us) * 1e-3);
            }
            if (L->ctl && lat_place == cur) /* the model wants the step's own time */
                rc = bench_gctx(gctx_controller_observe(L->ctl, 0, ms * 1e-3),
                                "gctx_controller_observe");
            lat_place = -1;
        }
        if (open && rc == 0) {
            due_us = bench_now_us();
            unsigned batch = el_trace_batch(L->trace, t);
            if (L->ctl)
                rc = decide(L, batch, &cur, t, resizes, &nb_resizes);
            if (rc == 0)
                rc = launch_decode(L, &rig->place[cur], batch);
            lat_place = cur;
            lat_batch = batch;
        }
    throughput:
        if (L->chunk || rc)
            continue;
        if (thr_place >= 0) {
            const el_place *p = &rig->place[thr_place];
            if ((rc = query(env, p->thr, &done)) || !done)
                continue;
            for (unsigned s = 0; s < EL_THR_SLOTS; s++) {
                double ms = elapsed_ms(env, p->thr_site->thr_start[s], p->thr_site->thr_end[s]);
                if (L->ctl && thr_place == cur && ms > 0)
                    rc |= bench_gctx(gctx_controller_observe(L->ctl, 1, ms * 1e-3),
                                     "gctx_controller_observe");
            }
            units += EL_THR_SLOTS;
            thr_place = -1;
            last_done = bench_now_us();
        }
        if (open && rc == 0) {
            rc = launch_prefill(L, &rig->place[cur], &next_unit);
            thr_place = cur;
        }
    }
    double seconds = (last_done - t0) * 1e-6;
    const el_shape *shape = &rig->shape;
    if (L->chunk)
        units = nb_steps * shape->layers; /* each step carried a chunk through every layer */
    unsigned tokens = L->chunk ? L->chunk : shape->chunk;
    L->arm->prefill_tokens_per_s =
        seconds > 0 ? units * (double)tokens / shape->layers / seconds : 0;
    L->arm->tflops = seconds > 0 ? units * el_prefill_flops(shape, tokens) / seconds * 1e-12 : 0;
    el_arm_finish(L->arm, steps, batches, nb_steps, L->target_ms, resizes, nb_resizes);
    free(steps);
    free(batches);
    free(resizes);
    return rc;
}

const char *const el_arm_kind_names[EL_NB_ARM_KINDS] = {
    "static", "no_split", "priority", "controller", "chunked", "2p_sliced", "2p_claims",
    "2p_mps", "2p_mps_threads", "2p_claims_controller", "2p_claims_controller_sliced"};

el_arm *el_arm_new(elastic_result *res, el_arm_kind kind, const char *name, const char *label)
{
    el_arm *a = &res->arm[res->nb_arms++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    snprintf(a->name, sizeof a->name, "%s", name ? name : el_arm_kind_names[kind]);
    snprintf(a->label, sizeof a->label, "%s", label);
    return a;
}

/* Every move the controller can make, once each way before its run, untimed, on idle streams
 * (they only add order): the first of each pays the driver's first-use costs, as the first
 * launch of a kernel does, which the warm-up keeps out of the re-sizes' figures. */
static int warm_moves(el_rig *rig, int start)
{
    int rc = 0;
    for (unsigned c = 0; c <= rig->nb_layouts && rc == 0; c++) {
        int to = place_of(rig, c);
        if (to != start)
            rc = move(rig, start, to) || move(rig, to, start);
    }
    return rc;
}

static int run_arm(el_rig *rig, const el_trace *trace, elastic_result *res, el_arm *arm,
                   int place, gctx_controller *ctl, unsigned chunk)
{
    progress_step(&res->progress, "%s", arm->label);
    el_loop L = {rig, arm, trace, res->seconds, res->target_ms, ctl, chunk};
    const el_place *p = &rig->place[place];
    if (arm->kind == EL_ARM_STATIC) {
        arm->lat_sms = p->lat_sms;
        arm->thr_sms = p->thr_sms;
    }
    /* a context current for the loop's queries and events (its launches push their own) */
    const bench_env *env = rig->env;
    int rc = bench_push(env, env->primary);
    if (rc == 0 && ctl)
        rc = warm_moves(rig, place);
    if (rc == 0) {
        rc = run_loop(&L, place);
        /* the next arm starts on an idle GPU; a failed wait is the arm's fault too */
        for (unsigned i = 0; i < 3; i++)
            rc |= bench_cu(env->drv->cuStreamSynchronize(rig->primary[i]), "the arm's end");
        for (unsigned l = 0; l < rig->nb_layouts; l++)
            rc |= bench_cu(env->drv->cuStreamSynchronize(rig->place[PLACE_LAYOUT0 + l].lat),
                           "the arm's end") |
                  bench_cu(env->drv->cuStreamSynchronize(rig->place[PLACE_LAYOUT0 + l].thr),
                           "the arm's end");
        bench_pop(env);
    }
    arm->ran = rc == 0;
    if (rc)
        snprintf(arm->why, sizeof arm->why, "failed: see the messages above");
    return rc;
}

int bench_elastic_one_process(const bench_env *env, const elastic_options *eo,
                              elastic_result *res)
{
    el_rig rig;
    el_trace trace;
    res->shape = (el_shape){eo->layers, eo->peak_batch, eo->context, eo->chunk, env->sm_count};
    res->trace = eo->trace;
    res->seconds = eo->seconds;
    res->seed = eo->seed;
    res->sm_count = env->sm_count;
    if (el_trace_make(&trace, eo->trace, eo->seconds, eo->peak_batch, eo->seed))
        return -1;
    int rc = rig_open(&rig, env, eo);
    el_blas_name(&rig.blas, res->gemm_impl, sizeof res->gemm_impl);
    res->gemm_cublas = rig.blas.used;
    if (rc == 0)
        rc = calibrate(&rig, eo, res);
    /* Once calibrated, every arm runs and the report says which failed (their messages are
     * above it). */
    int failed = 0;
    char name[48], label[96];
    /* A step per arm: the static splits, no split, priority, controller and three chunked;
     * then the two-process arms' six. */
    if (rc == 0)
        progress_begin(&res->progress, "greenctx bench: elastic",
                       rig.nb_layouts + 6 + (eo->one_process_only ? 0 : 6));
    for (unsigned l = 0; l < rig.nb_layouts && rc == 0; l++) {
        const el_place *p = &rig.place[PLACE_LAYOUT0 + l];
        snprintf(name, sizeof name, "static_%u", p->lat_sms);
        snprintf(label, sizeof label, "static split %u | %u", p->lat_sms, p->thr_sms);
        failed |= run_arm(&rig, &trace, res, el_arm_new(res, EL_ARM_STATIC, name, label),
                          PLACE_LAYOUT0 + (int)l, NULL, 0);
    }
    if (rc == 0) {
        failed |= run_arm(&rig, &trace, res,
                          el_arm_new(res, EL_ARM_NO_SPLIT, NULL, "no split (equal streams)"),
                          PLACE_SHARED, NULL, 0);
        failed |= run_arm(&rig, &trace, res,
                          el_arm_new(res, EL_ARM_PRIORITY, NULL, "priority streams"),
                          PLACE_PRIORITY, NULL, 0);
        gctx_controller *ctl = NULL;
        el_arm *a = el_arm_new(res, EL_ARM_CONTROLLER, NULL, "controller over layouts");
        if (make_controller(&rig, res, &ctl) == 0)
            failed |= run_arm(&rig, &trace, res, a, place_of(&rig, 0), ctl, 0);
        else {
            snprintf(a->why, sizeof a->why, "gctx_controller_create failed: see above");
            res->progress.total--; /* a step that does not run */
            failed = 1;
        }
        gctx_controller_release(ctl);
    }
    unsigned chunks[] = {eo->chunk / 2, eo->chunk, 2 * eo->chunk};
    for (unsigned i = 0; i < 3 && rc == 0; i++) {
        snprintf(name, sizeof name, "chunked_%u", chunks[i]);
        snprintf(label, sizeof label, "chunked prefill, %u tokens a step", chunks[i]);
        el_arm *a = el_arm_new(res, EL_ARM_CHUNKED, name, label);
        a->chunk = chunks[i];
        failed |= run_arm(&rig, &trace, res, a, PLACE_SHARED, NULL, chunks[i]);
    }
    res->failed |= failed;
    rig_close(&rig);
    el_trace_free(&trace);
    res->failed |= rc != 0;
    return rc;
}

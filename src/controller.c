/* The elastic controller: which candidate allocation the workloads run on, decided from the
 * model (controller_model.c), the targets and hysteresis. Its state changes only through its
 * calls, so a run is reproducible from its inputs. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "internal.h"

struct gctx_controller {
    gctx__object base;
    pthread_mutex_t lock;
    gctx__ctl_model model;
    int decided;         /* 0 until the first decision */
    unsigned active;
    unsigned challenger; /* the candidate that has beaten the active one ... */
    unsigned streak;     /* ... this many decisions in a row */
};

static void controller_destroy(gctx__object *object)
{
    gctx_controller *c = (gctx_controller *)object;
    gctx__ctl_model *m = &c->model;
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        free(m->workloads[w].sms);
        free(m->workloads[w].step_s);
    }
    free(m->rows);
    free(m->ratio);
    free(m->seen);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static gctx_status check_workload(const gctx_workload *w, unsigned index)
{
    if (w->kind != GCTX_WORKLOAD_LATENCY && w->kind != GCTX_WORKLOAD_THROUGHPUT)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: kind %d is neither GCTX_WORKLOAD_LATENCY nor "
                          "GCTX_WORKLOAD_THROUGHPUT", index, (int)w->kind);
    if (w->kind == GCTX_WORKLOAD_LATENCY && !(w->target_s > 0.0))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: a latency workload needs target_s > 0 (the step time "
                          "to hold, in seconds)", index);
    if (!(w->floor_per_s >= 0.0) || !(w->ref_demand > 0.0) || !(w->demand_weight >= 0.0) ||
        !(w->demand_weight <= 1.0) || !(w->bytes_per_step >= 0.0))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: floor_per_s %g and bytes_per_step %g must be >= 0, "
                          "ref_demand %g > 0, demand_weight %g within 0 to 1", index,
                          w->floor_per_s, w->bytes_per_step, w->ref_demand, w->demand_weight);
    if (w->nb_points == 0 || !w->prior_sms || !w->prior_step_s)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: the calibration prior needs nb_points >= 1 and both "
                          "prior_sms and prior_step_s (got %u, %s, %s)", index, w->nb_points,
                          w->prior_sms ? "set" : "NULL", w->prior_step_s ? "set" : "NULL");
    for (unsigned i = 0; i < w->nb_points; i++) {
        if (w->prior_sms[i] == 0 || (i && w->prior_sms[i] <= w->prior_sms[i - 1]))
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "workload %u: prior_sms must be ascending and nonzero; point %u "
                              "is %u", index, i, w->prior_sms[i]);
        if (!(w->prior_step_s[i] > 0.0) || !isfinite(w->prior_step_s[i]))
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "workload %u: prior_step_s[%u] is %g; step times are > 0 seconds",
                              index, i, w->prior_step_s[i]);
    }
    return GCTX_SUCCESS;
}

static gctx_status check_options(const gctx_controller_options *o)
{
    if (!(o->hysteresis >= 0.0) || !(o->learning_rate > 0.0) || !(o->learning_rate <= 1.0) ||
        !(o->latency_margin >= 1.0) || !(o->shared_slowdown >= 0.0) ||
        !(o->hbm_bytes_per_s >= 0.0) || (o->disjoint != 0 && o->disjoint != 1))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "controller options: hysteresis %g and shared_slowdown %g must be >= "
                          "0, learning_rate %g within (0, 1], latency_margin %g >= 1, "
                          "hbm_bytes_per_s %g >= 0, disjoint %d 0 or 1", o->hysteresis,
                          o->shared_slowdown, o->learning_rate, o->latency_margin,
                          o->hbm_bytes_per_s, o->disjoint);
    return GCTX_SUCCESS;
}

static gctx_status copy_workload(gctx__ctl_workload *to, const gctx_workload *from)
{
    size_t n = from->nb_points;
    to->sms = malloc(n * sizeof *to->sms);
    to->step_s = malloc(n * sizeof *to->step_s);
    if (!to->sms || !to->step_s)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a controller");
    memcpy(to->sms, from->prior_sms, n * sizeof *to->sms);
    memcpy(to->step_s, from->prior_step_s, n * sizeof *to->step_s);
    to->desc = *from;
    to->desc.prior_sms = to->sms;
    to->desc.prior_step_s = to->step_s;
    to->demand = from->ref_demand;
    to->ratio = 1.0;
    return GCTX_SUCCESS;
}

/* The rows, and a no-split row of zeros unless given or disjoint. */
static gctx_status copy_candidates(gctx__ctl_model *m, const unsigned *rows, unsigned nb_rows)
{
    const unsigned n = m->nb_workloads;
    m->no_split = nb_rows;
    unsigned widest = 0;
    for (unsigned c = 0; c < nb_rows; c++) {
        unsigned sum = 0, zeros = 0;
        for (unsigned w = 0; w < n; w++) {
            sum += rows[(size_t)c * n + w];
            zeros += rows[(size_t)c * n + w] == 0;
        }
        if (zeros == n && m->options.disjoint)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "candidate row %u is all zeros (\"no split\"), but options->disjoint "
                              "says the workloads can't share SMs: give each an SM count", c);
        if (zeros == n && m->no_split == nb_rows)
            m->no_split = c;
        widest = sum > widest ? sum : widest;
    }
    m->nb_candidates = nb_rows + (m->no_split == nb_rows && !m->options.disjoint);
    size_t cells = (size_t)m->nb_candidates * n;
    m->rows = calloc(cells, sizeof *m->rows);
    m->ratio = calloc(cells, sizeof *m->ratio);
    m->seen = calloc(cells, sizeof *m->seen);
    if (!m->rows || !m->ratio || !m->seen)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a controller");
    if (nb_rows) /* rows may be NULL then */
        memcpy(m->rows, rows, (size_t)nb_rows * n * sizeof *rows);
    if (m->options.device_sms == 0)
        m->options.device_sms = widest;
    if (m->options.device_sms == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "every candidate row is zeros and options.device_sms is 0: give the "
                          "device's SM count or at least one split");
    return GCTX_SUCCESS;
}

gctx_status gctx_controller_create(const gctx_workload *workloads, unsigned nb_workloads,
                                   const unsigned *candidates, unsigned nb_candidates,
                                   const gctx_controller_options *options,
                                   gctx_controller **controller)
{
    GCTX_TRY_OUTPUT(controller);
    if (!workloads || nb_workloads == 0 || nb_workloads > GCTX_CONTROLLER_MAX_WORKLOADS)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workloads is %s and nb_workloads %u: give 1 to %d workloads",
                          workloads ? "set" : "NULL", nb_workloads,
                          GCTX_CONTROLLER_MAX_WORKLOADS);
    if (!candidates && nb_candidates)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "candidates is NULL with nb_candidates %u", nb_candidates);
    gctx_controller_options opts = GCTX_CONTROLLER_OPTIONS_INIT;
    if (options)
        GCTX_TRY(gctx__sized_in(&opts, sizeof opts, options, GCTX__MIN_CONTROLLER_OPTIONS,
                                "options", "GCTX_CONTROLLER_OPTIONS_INIT"));
    GCTX_TRY(check_options(&opts));
    if (opts.disjoint && nb_candidates == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "no candidate rows, and options->disjoint leaves out \"no split\": "
                          "give at least one row of SM counts");
    gctx_workload local[GCTX_CONTROLLER_MAX_WORKLOADS];
    for (unsigned w = 0; w < nb_workloads; w++) {
        local[w] = (gctx_workload)GCTX_WORKLOAD_INIT;
        GCTX_TRY(gctx__sized_in(&local[w], sizeof local[w], &workloads[w], GCTX__MIN_WORKLOAD,
                                "workload", "GCTX_WORKLOAD_INIT"));
        GCTX_TRY(check_workload(&local[w], w));
    }
    gctx_controller *c = calloc(1, sizeof *c);
    if (!c)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a controller");
    pthread_mutex_init(&c->lock, NULL);
    gctx_status s;
    gctx__ctl_model *m = &c->model;
    m->nb_workloads = nb_workloads;
    m->options = opts;
    for (unsigned w = 0; w < nb_workloads; w++)
        GCTX_CHECK(copy_workload(&m->workloads[w], &local[w]), fail);
    GCTX_CHECK(copy_candidates(m, candidates, nb_candidates), fail);
    GCTX_CHECK(gctx__object_init(&c->base, GCTX__TYPE_CONTROLLER, controller_destroy), fail);
    *controller = gctx__handle_give(&c->base);
    return GCTX_SUCCESS;
fail:
    controller_destroy(&c->base);
    return s;
}

GCTX__HANDLE_REFS(controller, CONTROLLER)

static gctx_status resolve(const gctx_controller *handle, gctx_controller **out)
{
    *out = (gctx_controller *)handle;
    return gctx__handle_resolve(out, GCTX__TYPE_CONTROLLER, "controller");
}

static gctx_status resolve_workload(const gctx_controller *handle, unsigned workload,
                                    gctx_controller **out)
{
    GCTX_TRY(resolve(handle, out));
    if (workload >= (*out)->model.nb_workloads)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: the controller has %u (0 to %u)", workload,
                          (*out)->model.nb_workloads, (*out)->model.nb_workloads - 1);
    return GCTX_SUCCESS;
}

gctx_status gctx_controller_candidates(const gctx_controller *controller, unsigned *count)
{
    gctx_controller *c;
    GCTX_TRY(resolve(controller, &c));
    if (!count)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = c->model.nb_candidates;
    return GCTX_SUCCESS;
}

gctx_status gctx_controller_set_demand(gctx_controller *controller, unsigned workload,
                                       double demand)
{
    gctx_controller *c;
    GCTX_TRY(resolve_workload(controller, workload, &c));
    if (!(demand >= 0.0) || !isfinite(demand))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: demand %g; give 0 (idle) or more", workload, demand);
    pthread_mutex_lock(&c->lock);
    c->model.workloads[workload].demand = demand;
    pthread_mutex_unlock(&c->lock);
    return GCTX_SUCCESS;
}

gctx_status gctx_controller_observe(gctx_controller *controller, unsigned workload, double step_s)
{
    gctx_controller *c;
    GCTX_TRY(resolve_workload(controller, workload, &c));
    if (!(step_s > 0.0) || !isfinite(step_s))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workload %u: a step of %g s; measured steps take > 0 seconds",
                          workload, step_s);
    double modelled = 0.0;
    gctx_status s = GCTX_SUCCESS;
    pthread_mutex_lock(&c->lock);
    if (!c->decided)
        s = gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                       "a step observed before the first gctx_controller_decide: nothing is "
                       "active yet to learn about");
    else if (gctx__ctl_learn(&c->model, c->active, workload, step_s, &modelled) != 0)
        s = gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                       "workload %u: a step of %g s is more than %g times from the %g s its "
                       "prior predicts on the active candidate %u: refused (give seconds, "
                       "measured on that candidate)",
                       workload, step_s, GCTX__CTL_RATIO_LIMIT, modelled, c->active);
    pthread_mutex_unlock(&c->lock);
    return s;
}

typedef struct judged {
    double step_s[GCTX_CONTROLLER_MAX_WORKLOADS];
    double score;     /* throughput earned (or, none busy, the latency side's speed) */
    double violation; /* the worst latency (predicted x margin / target) or floor ratio */
    unsigned missed;  /* bit w: workload w misses its target here */
} judged;

static void judge(const gctx__ctl_model *m, unsigned c, judged *j)
{
    gctx__ctl_predict_row(m, c, 1, j->step_s);
    j->score = 0.0;
    j->violation = 0.0;
    j->missed = 0;
    double latency_speed = 0.0;
    int throughput_busy = 0;
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        const gctx__ctl_workload *wl = &m->workloads[w];
        double t = j->step_s[w], ratio = 0.0;
        if (wl->demand <= 0.0)
            continue; /* idle: its prediction is 0 */
        if (!(t > 0.0) || isnan(t))
            t = INFINITY; /* busy but no prediction: it misses any target */
        if (wl->desc.kind == GCTX_WORKLOAD_LATENCY) {
            ratio = t * m->options.latency_margin / wl->desc.target_s;
            latency_speed += wl->desc.target_s / t;
        } else {
            throughput_busy = 1;
            double whole = gctx__ctl_curve(wl, m->options.device_sms);
            j->score += isfinite(t) ? whole / t : 0.0;
            ratio = wl->desc.floor_per_s * t;
        }
        if (ratio > 1.0)
            j->missed |= 1u << w;
        j->violation = ratio > j->violation ? ratio : j->violation;
    }
    if (!throughput_busy)
        j->score = latency_speed;
}

static int better(const judged *a, const judged *b)
{
    int fa = a->missed == 0, fb = b->missed == 0;
    if (fa != fb)
        return fa;
    if (fa)
        return a->score > b->score;
    return a->violation < b->violation;
}

static void describe(const gctx__ctl_model *m, unsigned c, const judged *j, const char *why,
                     char *out, size_t size)
{
    int w0 = snprintf(out, size, "%s: ", why);
    size_t n = w0 > 0 && (size_t)w0 < size ? (size_t)w0 : size - 1;
    for (unsigned w = 0; w < m->nb_workloads && n + 1 < size; w++) {
        int k = snprintf(out + n, size - n, "%sw%u %u SMs %.3g ms%s", w ? ", " : "", w,
                         gctx__ctl_sms(m, c, w), j->step_s[w] * 1e3,
                         (j->missed >> w) & 1 ? " (misses its target)" : "");
        n = k > 0 && (size_t)k < size - n ? n + (size_t)k : size - 1;
    }
}

/* Moves at once to a candidate that meets targets the active one misses; for throughput only
 * after the same challenger has won by the hysteresis margin `dwell` decisions in a row. */
static const char *choose(gctx_controller *c, unsigned best, const judged *all)
{
    const gctx_controller_options *o = &c->model.options;
    const judged *now = &all[c->active], *top = &all[best];
    if (!c->decided) {
        c->active = best;
        return "first decision";
    }
    if (best == c->active) {
        c->streak = 0;
        return now->missed ? "no candidate meets every target; this one misses least" : "best";
    }
    if (now->missed && (top->missed == 0 || top->violation < now->violation * (1.0 - o->hysteresis))) {
        c->active = best;
        c->streak = 0;
        return top->missed ? "moved: misses its targets by less" : "moved: meets the targets";
    }
    /* A Schmitt trigger: left as soon as it misses a target, entered only with headroom. */
    if (!now->missed && top->score > now->score * (1.0 + o->hysteresis) &&
        top->violation * (1.0 + o->hysteresis) <= 1.0) {
        c->streak = c->challenger == best ? c->streak + 1 : 1;
        c->challenger = best;
        if (c->streak >= o->dwell) {
            c->active = best;
            c->streak = 0;
            return "moved: more throughput, held for the dwell";
        }
        return "stayed: a better candidate has not held for the dwell yet";
    }
    c->streak = 0;
    return top->score > now->score * (1.0 + o->hysteresis)
               ? "stayed: the better candidate is too close to a target"
               : "stayed: no candidate better by the hysteresis margin";
}

gctx_status gctx_controller_decide(gctx_controller *controller, gctx_controller_decision *decision)
{
    gctx_controller *c;
    GCTX_TRY(resolve(controller, &c));
    GCTX_TRY(gctx__sized_check(decision, GCTX__MIN_CONTROLLER_DECISION, "decision",
                               "GCTX_CONTROLLER_DECISION_INIT"));
    const gctx__ctl_model *m = &c->model;
    judged *all = malloc(m->nb_candidates * sizeof *all); /* fixed at creation */
    if (!all)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory deciding");
    pthread_mutex_lock(&c->lock);
    unsigned best = 0;
    for (unsigned k = 0; k < m->nb_candidates; k++) {
        judge(m, k, &all[k]);
        if (k && better(&all[k], &all[best]))
            best = k;
    }
    unsigned before = c->active;
    int first = !c->decided;
    const char *why = choose(c, best, all);
    c->decided = 1;
    gctx_controller_decision out = {.size = sizeof out, .candidate = c->active,
                                    .no_split = c->active == m->no_split,
                                    .changed = first || c->active != before,
                                    .unmet = all[best].missed ? all[c->active].missed : 0};
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        out.sm_counts[w] = gctx__ctl_sms(m, c->active, w);
        out.predicted_step_s[w] = all[c->active].step_s[w];
    }
    describe(m, c->active, &all[c->active], why, out.reason, sizeof out.reason);
    free(all);
    pthread_mutex_unlock(&c->lock);
    gctx__sized_out(decision, &out, sizeof out);
    return GCTX_SUCCESS;
}

gctx_status gctx_controller_predict(const gctx_controller *controller, unsigned candidate,
                                    unsigned workload, double *step_s)
{
    gctx_controller *c;
    GCTX_TRY(resolve_workload(controller, workload, &c));
    if (candidate >= c->model.nb_candidates || !step_s)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "candidate %u (the controller has %u) or step_s (%s)", candidate,
                          c->model.nb_candidates, step_s ? "set" : "NULL");
    double row[GCTX_CONTROLLER_MAX_WORKLOADS];
    pthread_mutex_lock(&c->lock);
    gctx__ctl_predict_row(&c->model, candidate, 1, row);
    pthread_mutex_unlock(&c->lock);
    *step_s = row[workload];
    return GCTX_SUCCESS;
}

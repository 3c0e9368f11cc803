/* The controller's cost model: pure arithmetic, tested without a GPU. */
#include <math.h>

#include "controller.h"

double gctx__ctl_curve(const gctx__ctl_workload *w, unsigned sms)
{
    const unsigned n = w->desc.nb_points;
    if (sms == 0)
        return INFINITY;
    if (sms <= w->sms[0])
        return w->step_s[0] * (double)w->sms[0] / (double)sms;
    for (unsigned i = 1; i < n; i++)
        if (sms <= w->sms[i]) {
            double span = (double)(w->sms[i] - w->sms[i - 1]);
            double at = (double)(sms - w->sms[i - 1]) / span;
            return w->step_s[i - 1] + at * (w->step_s[i] - w->step_s[i - 1]);
        }
    return w->step_s[n - 1];
}

/* How a workload's step grows with its demand: the demand-bound share scales, the rest not. */
static double demand_factor(const gctx__ctl_workload *w)
{
    double weight = w->desc.demand_weight;
    return (1.0 - weight) + weight * w->demand / w->desc.ref_demand;
}

/* SMs split compute, not HBM: when the busy workloads together ask for more bandwidth than
 * the device has, every one of them slows in proportion. */
static void stretch_for_bandwidth(const gctx__ctl_model *m, double *step_s)
{
    double hbm = m->options.hbm_bytes_per_s, asked = 0.0;
    if (hbm <= 0.0)
        return;
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        const gctx__ctl_workload *wl = &m->workloads[w];
        if (step_s[w] > 0.0 && isfinite(step_s[w]))
            asked += wl->desc.bytes_per_step * demand_factor(wl) / step_s[w];
    }
    if (asked <= hbm)
        return;
    for (unsigned w = 0; w < m->nb_workloads; w++)
        if (step_s[w] > 0.0)
            step_s[w] *= asked / hbm;
}

void gctx__ctl_predict_row(const gctx__ctl_model *m, unsigned c, int learned, double *step_s)
{
    unsigned busy = 0;
    for (unsigned w = 0; w < m->nb_workloads; w++)
        busy += m->workloads[w].demand > 0.0;
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        const gctx__ctl_workload *wl = &m->workloads[w];
        step_s[w] = 0.0;
        if (wl->demand <= 0.0)
            continue;
        step_s[w] = gctx__ctl_curve(wl, gctx__ctl_sms(m, c, w)) * demand_factor(wl);
        if (c == m->no_split)
            step_s[w] *= 1.0 + m->options.shared_slowdown * (double)(busy - 1);
    }
    stretch_for_bandwidth(m, step_s);
    if (!learned)
        return;
    for (unsigned w = 0; w < m->nb_workloads; w++) {
        size_t k = (size_t)c * m->nb_workloads + w;
        step_s[w] *= m->seen[k] ? m->ratio[k] : m->workloads[w].ratio;
    }
}

int gctx__ctl_learn(gctx__ctl_model *m, unsigned c, unsigned w, double step_s,
                    double *modelled_s)
{
    double modelled[GCTX_CONTROLLER_MAX_WORKLOADS];
    gctx__ctl_predict_row(m, c, 0, modelled);
    *modelled_s = modelled[w];
    if (!(modelled[w] > 0.0) || !isfinite(modelled[w]))
        return 0; /* idle, or no SMs: nothing it says about the curve */
    double r = step_s / modelled[w], lr = m->options.learning_rate;
    if (!(r <= GCTX__CTL_RATIO_LIMIT && r >= 1.0 / GCTX__CTL_RATIO_LIMIT))
        return -1;
    /* Averages of ratios within the limit stay within it: predictions stay finite. */
    size_t k = (size_t)c * m->nb_workloads + w;
    gctx__ctl_workload *wl = &m->workloads[w];
    m->ratio[k] = m->seen[k] ? (1.0 - lr) * m->ratio[k] + lr * r : r;
    m->seen[k]++;
    wl->ratio = wl->observations ? (1.0 - lr) * wl->ratio + lr * r : r;
    wl->observations++;
    return 0;
}

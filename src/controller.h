/* The elastic controller's model (controller.c, controller_model.c): pure. */
#ifndef GREENCTX_CONTROLLER_MODEL_H
#define GREENCTX_CONTROLLER_MODEL_H

#include "greenctx_controller.h"

/* The first published layouts of greenctx_controller.h's size-prefixed structs (sized.h). */
#define GCTX__MIN_WORKLOAD GCTX__SIZE_THROUGH(gctx_workload, bytes_per_step)
#define GCTX__MIN_CONTROLLER_OPTIONS GCTX__SIZE_THROUGH(gctx_controller_options, shared_slowdown)
#define GCTX__MIN_CONTROLLER_DECISION GCTX__SIZE_THROUGH(gctx_controller_decision, reason)

typedef struct gctx__ctl_workload {
    gctx_workload desc;   /* prior_sms / prior_step_s point at the arrays below */
    unsigned *sms;
    double *step_s;
    double demand;        /* starts at ref_demand */
    double ratio;         /* observed / modelled over every candidate: corrects unseen ones */
    unsigned observations;
} gctx__ctl_workload;

typedef struct gctx__ctl_model {
    unsigned nb_workloads, nb_candidates;
    gctx__ctl_workload workloads[GCTX_CONTROLLER_MAX_WORKLOADS];
    unsigned *rows;       /* [candidate * nb_workloads + workload] SMs; the no-split row is 0s */
    double *ratio;        /* [same]: observed / modelled on that candidate */
    unsigned *seen;       /* [same]: observations on that candidate */
    unsigned no_split;    /* the index of the no-split candidate */
    gctx_controller_options options; /* device_sms resolved */
} gctx__ctl_model;

/* The SMs workload w gets on candidate c: the whole device on the no-split candidate. */
static inline unsigned gctx__ctl_sms(const gctx__ctl_model *m, unsigned c, unsigned w)
{
    return c == m->no_split ? m->options.device_sms : m->rows[(size_t)c * m->nb_workloads + w];
}

/* The prior's step time: linear between points, ~ 1/sms below the first, flat above. */
double gctx__ctl_curve(const gctx__ctl_workload *w, unsigned sms);
/* Predicted step times on candidate c (0 idle, INFINITY without SMs); `learned`: corrected. */
void gctx__ctl_predict_row(const gctx__ctl_model *m, unsigned c, int learned, double *step_s);
/* Observed steps further than this from the prediction are refused: a unit mistake. */
#define GCTX__CTL_RATIO_LIMIT 1000.0
/* -1, nothing learned, beyond GCTX__CTL_RATIO_LIMIT; *modelled_s: the prior's prediction. */
int gctx__ctl_learn(gctx__ctl_model *m, unsigned c, unsigned w, double step_s,
                    double *modelled_s);

#endif

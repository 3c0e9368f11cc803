/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx_controller.h: policy, which allocation of SMs workloads should run on as their
 * load changes. Pure arithmetic over the caller's numbers: no driver call, no file, no claim;
 * the caller applies its decisions (gctx_layouts_switch in one process, gctx_claim_resize
 * across processes). The conventions of greenctx.h (included here) hold for every function
 * below. Part of libgreenctx, like greenctx_claims.h.
 */
#ifndef GREENCTX_CONTROLLER_H
#define GREENCTX_CONTROLLER_H

#include "greenctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Elastic partitions: a controller that sizes partitions as load changes                   */

/* A static split must be sized for the latency workload's peak, so SMs sit idle that a
 * throughput workload could use. The controller decides, each step or each interval, which
 * of a set of candidate allocations (the layouts of one process, or claim sizes across
 * processes) the workloads should run on, from:
 * - each workload's SM-scaling curve: a calibration prior (step times measured at a few SM
 *   counts, e.g. by `greenctx run --sweep` or `bench scaling`), corrected online by the step
 *   times the caller observes under each candidate;
 * - a bandwidth term: SMs do not partition HBM, so workloads that together ask for more than
 *   the peak all slow down in proportion;
 * - each workload's demand (queued work, batch), scaling its step time;
 * - targets: a latency workload's step time to hold, a throughput workload's floor.
 * It moves only when a candidate meets a target the current one breaks (at once), or promises
 * more throughput by the hysteresis margin for `dwell` decisions in a row, so noise never makes
 * it thrash. "No split" (every workload on every SM, time-sliced) is always a candidate.
 * It is pure arithmetic: deterministic given its inputs, no driver call; one controller is
 * not meant to be used by two threads at once (a mutex makes that safe, not useful). */
typedef struct gctx_controller gctx_controller;

#define GCTX_CONTROLLER_MAX_WORKLOADS 8

typedef enum gctx_workload_kind {
    GCTX_WORKLOAD_LATENCY = 0,   /* holds target_s */
    GCTX_WORKLOAD_THROUGHPUT = 1 /* as many steps as it can get, at least floor_per_s */
} gctx_workload_kind;

typedef struct gctx_workload {
    size_t size; /* sizeof(gctx_workload), set by GCTX_WORKLOAD_INIT */
    gctx_workload_kind kind;
    double target_s;            /* LATENCY: the step time to hold (> 0) */
    double floor_per_s;         /* THROUGHPUT: the fewest steps per second acceptable; 0: none */
    unsigned nb_points;         /* the calibration prior: at least 1 point */
    const unsigned *prior_sms;  /* ascending SM counts */
    const double *prior_step_s; /* the step time at each, at ref_demand (> 0) */
    double ref_demand;          /* the demand the prior was measured at (> 0) */
    double demand_weight;       /* the share of a step that grows with demand (0 to 1) */
    double bytes_per_step;      /* HBM bytes one step moves at ref_demand; 0: not counted */
} gctx_workload;
#define GCTX_WORKLOAD_INIT {sizeof(gctx_workload), GCTX_WORKLOAD_LATENCY, 0.0, 0.0, 0, NULL, NULL, 1.0, 1.0, 0.0}

typedef struct gctx_controller_options {
    size_t size;             /* sizeof(gctx_controller_options), set by the INIT macro */
    unsigned device_sms;     /* the SMs "no split" gives each workload; 0: the largest count
                                of any candidate row's sum */
    double hbm_bytes_per_s;  /* the device's memory bandwidth; 0: no bandwidth term */
    double hysteresis;       /* a move for throughput must promise this much more (0.05) */
    unsigned dwell;          /* decisions in a row a better candidate must win first (3) */
    double learning_rate;    /* the weight of each observed step in its correction (0.25) */
    double latency_margin;   /* a latency target counts as met when the predicted step times
                                this is within it (1.10) */
    double shared_slowdown;  /* "no split": a workload's step stretches by this for each other
                                busy workload (1.0: time-sliced) */
    int disjoint;            /* 1: the workloads can't share SMs (claims across processes,
                                which never overlap): no "no split" candidate, and a row of
                                zeros is refused */
} gctx_controller_options;
#define GCTX_CONTROLLER_OPTIONS_INIT {sizeof(gctx_controller_options), 0, 0.0, 0.05, 3, 0.25, 1.10, 1.0, 0}

/* candidates: nb_candidates rows of nb_workloads SM counts (row c gives workload w
 * candidates[c * nb_workloads + w] SMs); a row of zeros is "no split", added as the last
 * candidate when no row is (unless options->disjoint). The first decision takes the best
 * candidate at once. */
GCTX_API gctx_status gctx_controller_create(const gctx_workload *workloads, unsigned nb_workloads,
                                            const unsigned *candidates, unsigned nb_candidates,
                                            const gctx_controller_options *options,
                                            gctx_controller **controller);
GCTX_API gctx_controller *gctx_controller_retain(gctx_controller *controller);
GCTX_API void gctx_controller_release(gctx_controller *controller);
/* The number of candidates, "no split" included. */
GCTX_API gctx_status gctx_controller_candidates(const gctx_controller *controller,
                                                unsigned *count);
/* A workload's demand now (0: idle, it then constrains nothing and earns nothing). */
GCTX_API gctx_status gctx_controller_set_demand(gctx_controller *controller, unsigned workload,
                                                double demand);
/* A step of the workload measured (seconds) while it ran on the active candidate at its
 * current demand: corrects that candidate's prediction, and the workload's curve as a whole. */
GCTX_API gctx_status gctx_controller_observe(gctx_controller *controller, unsigned workload,
                                             double step_s);

typedef struct gctx_controller_decision {
    size_t size;             /* set by the caller: sizeof(gctx_controller_decision) */
    unsigned candidate;      /* the active candidate after this decision */
    int no_split;            /* 1: it is "no split" */
    int changed;             /* 1: it differs from the one before */
    unsigned unmet;          /* bit w: workload w's target is not met by the active candidate,
                                and no candidate meets every target */
    unsigned sm_counts[GCTX_CONTROLLER_MAX_WORKLOADS];     /* what each workload gets */
    double predicted_step_s[GCTX_CONTROLLER_MAX_WORKLOADS]; /* 0 for an idle workload */
    char reason[256];        /* one line: why this candidate */
} gctx_controller_decision;
#define GCTX_CONTROLLER_DECISION_INIT {sizeof(gctx_controller_decision), 0, 0, 0, 0, {0}, {0}, {0}}

GCTX_API gctx_status gctx_controller_decide(gctx_controller *controller,
                                            gctx_controller_decision *decision);
/* The step time the model predicts for a workload on a candidate at its current demand, with
 * what it has learned (0 for an idle workload). */
GCTX_API gctx_status gctx_controller_predict(const gctx_controller *controller, unsigned candidate,
                                             unsigned workload, double *step_s);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_CONTROLLER_H */

/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx_controller.h: policy, which allocation of SMs workloads should run on as their load
 * changes. Pure arithmetic over the caller's numbers (no driver call, no file, no claim); the
 * caller applies its decisions. The core's conventions (greenctx.h, included here) hold. Part
 * of libgreenctx. The model and its rules: docs/api.md, "greenctx_controller.h".
 */
#ifndef GREENCTX_CONTROLLER_H
#define GREENCTX_CONTROLLER_H

#include "greenctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Elastic partitions: a controller that sizes partitions as load changes ---- */
/* Deterministic given its inputs; not for two threads at once. */
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
    unsigned device_sms;     /* the SMs "no split" gives each; 0: the largest row's sum */
    double hbm_bytes_per_s;  /* the device's memory bandwidth; 0: no bandwidth term */
    double hysteresis;       /* a move for throughput must promise this much more (0.05) */
    unsigned dwell;          /* decisions in a row a better candidate must win first (3) */
    double learning_rate;    /* the weight of each observed step in its correction (0.25) */
    double latency_margin;   /* met when the predicted step x this is within target (1.10) */
    double shared_slowdown;  /* "no split": step stretch per other busy workload (1.0) */
    int disjoint;            /* 1: no SM shared (claims): no "no split", no row of zeros */
} gctx_controller_options;
#define GCTX_CONTROLLER_OPTIONS_INIT {sizeof(gctx_controller_options), 0, 0.0, 0.05, 3, 0.25, 1.10, 1.0, 0}

/* candidates: nb_candidates rows of nb_workloads SM counts; a row of zeros is "no split",
 * added last when no row is (unless options->disjoint). */
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
/* A step (seconds) measured on the active candidate: corrects the prediction and the curve. */
GCTX_API gctx_status gctx_controller_observe(gctx_controller *controller, unsigned workload,
                                             double step_s);

typedef struct gctx_controller_decision {
    size_t size;             /* set by the caller: sizeof(gctx_controller_decision) */
    unsigned candidate;      /* the active candidate after this decision */
    int no_split;            /* 1: it is "no split" */
    int changed;             /* 1: it differs from the one before */
    unsigned unmet;          /* bit w: w's target unmet, and no candidate meets every target */
    unsigned sm_counts[GCTX_CONTROLLER_MAX_WORKLOADS];     /* what each workload gets */
    double predicted_step_s[GCTX_CONTROLLER_MAX_WORKLOADS]; /* 0 for an idle workload */
    char reason[256];        /* one line: why this candidate */
} gctx_controller_decision;
#define GCTX_CONTROLLER_DECISION_INIT {sizeof(gctx_controller_decision), 0, 0, 0, 0, {0}, {0}, {0}}

GCTX_API gctx_status gctx_controller_decide(gctx_controller *controller,
                                            gctx_controller_decision *decision);
/* The step time predicted for a workload on a candidate now (0 when idle). */
GCTX_API gctx_status gctx_controller_predict(const gctx_controller *controller, unsigned candidate,
                                             unsigned workload, double *step_s);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_CONTROLLER_H */

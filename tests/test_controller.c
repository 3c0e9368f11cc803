/* The elastic controller against synthetic workloads whose true scaling curves are known:
 * a decode-shaped latency workload and a prefill-shaped throughput workload, with the H200's
 * measured curves (shared/measurements/h200-prefill-decode.md) as the truth and a prior that is
 * 25 % off, so the controller has to learn. No driver: the controller is pure arithmetic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "greenctx.h"
#include "greenctx_controller.h"
#include "harness.h"

enum { LAT = 0, THR = 1, NB_SPLITS = 7 };
#define DEVICE_SMS 132u

/* Decode, batch 128 at context 8192: step ms on 16, 32, 64, 96, 132 SMs. */
static const unsigned decode_sms[] = {16, 32, 64, 96, 132};
static const double decode_ms[] = {55.7, 27.9, 14.4, 11.6, 9.76};
/* Prefill chunks of 2048 tokens: tokens/s on 36 ... 132 SMs, as step times. */
static const unsigned prefill_sms[] = {36, 52, 68, 84, 100, 108, 116, 132};
static const double prefill_tok_s[] = {38604, 54426, 72776, 86043, 97703, 104107, 111919, 162391};

/* latency | throughput SMs; "no split" is appended by the controller as candidate 7. */
static const unsigned splits[NB_SPLITS * 2] = {16, 116, 24, 108, 32, 100, 48, 84,
                                              64, 68,  80, 52,  96, 36};

typedef struct world {
    double decode_s[5], prefill_s[8];
    gctx_workload truth[2];
    double noise;    /* relative, uniform in +-noise */
    unsigned seed;
} world;

static void world_init(world *w, double noise)
{
    for (int i = 0; i < 5; i++)
        w->decode_s[i] = decode_ms[i] * 1e-3;
    for (int i = 0; i < 8; i++)
        w->prefill_s[i] = 2048.0 / prefill_tok_s[i];
    gctx_workload init = GCTX_WORKLOAD_INIT;
    w->truth[LAT] = init;
    w->truth[LAT].kind = GCTX_WORKLOAD_LATENCY;
    w->truth[LAT].target_s = 0.020;
    w->truth[LAT].nb_points = 5;
    w->truth[LAT].prior_sms = decode_sms;
    w->truth[LAT].prior_step_s = w->decode_s;
    w->truth[LAT].demand_weight = 0.8;
    w->truth[THR] = init;
    w->truth[THR].kind = GCTX_WORKLOAD_THROUGHPUT;
    w->truth[THR].nb_points = 8;
    w->truth[THR].prior_sms = prefill_sms;
    w->truth[THR].prior_step_s = w->prefill_s;
    w->noise = noise;
    w->seed = 12345;
}

/* A latency workload with target_s and a throughput one, each on its own prior. */
static void two_workloads(gctx_workload wl[2], double target_s, const unsigned *lat_sms,
                          const double *lat_s, unsigned nb_lat, const unsigned *thr_sms,
                          const double *thr_s, unsigned nb_thr)
{
    gctx_workload init = GCTX_WORKLOAD_INIT;
    wl[LAT] = init;
    wl[LAT].kind = GCTX_WORKLOAD_LATENCY;
    wl[LAT].target_s = target_s;
    wl[LAT].nb_points = nb_lat;
    wl[LAT].prior_sms = lat_sms;
    wl[LAT].prior_step_s = lat_s;
    wl[THR] = init;
    wl[THR].kind = GCTX_WORKLOAD_THROUGHPUT;
    wl[THR].nb_points = nb_thr;
    wl[THR].prior_sms = thr_sms;
    wl[THR].prior_step_s = thr_s;
}

/* A controller made from the truth, with every prior step time 25 % too long. */
static void make_controller(const world *w, double prior_error, gctx_controller **out)
{
    static double decode_prior[5], prefill_prior[8];
    for (int i = 0; i < 5; i++)
        decode_prior[i] = w->decode_s[i] * prior_error;
    for (int i = 0; i < 8; i++)
        prefill_prior[i] = w->prefill_s[i] * prior_error;
    gctx_workload prior[2] = {w->truth[LAT], w->truth[THR]};
    prior[LAT].prior_step_s = decode_prior;
    prior[THR].prior_step_s = prefill_prior;
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = DEVICE_SMS;
    GT_ASSERT_STATUS(gctx_controller_create(prior, 2, splits, NB_SPLITS, &o, out), GCTX_SUCCESS);
}

/* The world's own controller: its predictions with nothing learned are the truth. */
static void make_truth(const world *w, gctx_controller **out) { make_controller(w, 1.0, out); }

/* A controller with a prior 25 % off, and the truth. */
static void make_pair(const world *w, gctx_controller **c, gctx_controller **truth)
{
    make_controller(w, 1.25, c);
    GT_CHECK();
    make_truth(w, truth);
}

static double next_noise(world *w)
{
    w->seed = w->seed * 1103515245u + 12345u;
    double u = (double)((w->seed >> 8) & 0xffff) / 65535.0; /* 0..1 */
    return 1.0 + w->noise * (2.0 * u - 1.0);
}

/* Sets both demands on the controller and the truth. */
static void set_demand(gctx_controller *c, gctx_controller *truth, double lat, double thr)
{
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, lat), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, THR, thr), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_set_demand(truth, LAT, lat), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_set_demand(truth, THR, thr), GCTX_SUCCESS);
}

/* One step: decide, run both workloads one step on the decision in the true world, observe. */
typedef struct step_result {
    gctx_controller_decision d;
    double true_s[2];
} step_result;

static void step(world *w, gctx_controller *c, gctx_controller *truth, step_result *r)
{
    gctx_controller_decision init = GCTX_CONTROLLER_DECISION_INIT;
    r->d = init;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &r->d), GCTX_SUCCESS);
    for (unsigned k = 0; k < 2; k++) {
        GT_ASSERT_STATUS(gctx_controller_predict(truth, r->d.candidate, k, &r->true_s[k]),
                         GCTX_SUCCESS);
        if (r->true_s[k] > 0.0)
            GT_ASSERT_STATUS(gctx_controller_observe(c, k, r->true_s[k] * next_noise(w)),
                             GCTX_SUCCESS);
    }
}

/* The best static choice in the true world at the truth's demand: the most throughput among
 * candidates that hold the latency target (with the controller's margin). */
static void best_static(gctx_controller *truth, unsigned *best_out, double *rate)
{
    unsigned n = 0, best = 0;
    double best_rate = -1.0;
    GT_ASSERT_STATUS(gctx_controller_candidates(truth, &n), GCTX_SUCCESS);
    for (unsigned k = 0; k < n; k++) {
        double lat, thr;
        GT_ASSERT_STATUS(gctx_controller_predict(truth, k, LAT, &lat), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_controller_predict(truth, k, THR, &thr), GCTX_SUCCESS);
        double r = thr > 0.0 && isfinite(thr) ? 1.0 / thr : 0.0;
        if (lat * 1.10 <= 0.020 && r > best_rate) {
            best_rate = r;
            best = k;
        }
    }
    *rate = best_rate;
    *best_out = best;
}

GT_TEST(converges_to_the_best_static_split_on_a_stationary_load)
{
    world w;
    world_init(&w, 0.03);
    gctx_controller *c, *truth;
    make_pair(&w, &c, &truth);
    GT_CHECK();
    set_demand(c, truth, 1.0, 1.0);
    double best_rate = 0.0;
    unsigned best = 0;
    best_static(truth, &best, &best_rate);
    GT_CHECK();
    GT_ASSERT_EQ_INT(best, 4); /* 64 | 68: 48 SMs miss 20 ms, 80 give prefill less */
    step_result r;
    for (int i = 0; i < 40; i++) {
        step(&w, c, truth, &r);
        GT_CHECK();
    }
    GT_ASSERT_EQ_INT(r.d.candidate, best);
    GT_ASSERT_EQ_INT(r.d.unmet, 0);
    GT_ASSERT(1.0 / r.true_s[THR] >= 0.97 * best_rate);
    GT_ASSERT_EQ_INT(r.d.sm_counts[LAT], 64);
    GT_ASSERT_EQ_INT(r.d.sm_counts[THR], 68);
    gctx_controller_release(c);
    gctx_controller_release(truth);
}

/* The latency workload at its peak for 1 decision in 5, at 10 % otherwise (20 decisions per
 * phase): the throughput workload gets much more than the best static split, and the latency
 * target holds from the first step of each burst. */
static void run_on_off(world *w, unsigned *decisions, double *thr_steps, unsigned *violations,
                       unsigned *late_moves)
{
    gctx_controller *c, *truth;
    make_pair(w, &c, &truth);
    GT_CHECK();
    *thr_steps = 0.0;
    *violations = 0;
    *late_moves = 0;
    unsigned n = 0;
    for (int cycle = 0; cycle < 4; cycle++)
        for (int i = 0; i < 100; i++) {
            int burst = i < 20;
            set_demand(c, truth, burst ? 1.0 : 0.1, 1.0);
            step_result r;
            step(w, c, truth, &r);
            GT_CHECK();
            decisions[n++] = r.d.candidate;
            /* time-weighted: each decision lasts one latency step of the peak */
            *thr_steps += 0.0144 / r.true_s[THR];
            *violations += r.true_s[LAT] > 0.020;
            /* after the first cycle (learning), the low phase reaches 16 | 116 by the dwell */
            if (cycle > 0 && !burst && i >= 20 + 5 && r.d.candidate != 0)
                (*late_moves)++;
        }
    gctx_controller_release(c);
    gctx_controller_release(truth);
}

GT_TEST(follows_an_on_off_load_and_beats_the_static_split)
{
    world w;
    world_init(&w, 0.03);
    unsigned decisions[400], again[400], violations, late, violations2, late2;
    double thr_steps, thr_steps2;
    run_on_off(&w, decisions, &thr_steps, &violations, &late);
    GT_CHECK();
    /* the static split that holds the peak: 64 | 68 for the same 400 decisions */
    double static_steps = 400 * 0.0144 / (2048.0 / 72776.0);
    GT_ASSERT(thr_steps >= 1.3 * static_steps);
    GT_ASSERT_EQ_INT(violations, 0);
    GT_ASSERT_EQ_INT(late, 0);
    GT_ASSERT_EQ_INT(decisions[120], 4); /* the first decision of the second burst */
    GT_ASSERT_EQ_INT(decisions[199], 0);
    /* deterministic: the same inputs give the same decisions */
    world_init(&w, 0.03);
    run_on_off(&w, again, &thr_steps2, &violations2, &late2);
    GT_CHECK();
    GT_ASSERT(memcmp(decisions, again, sizeof decisions) == 0);
}

/* Converged, then 500 more decisions with 8 % noise on every step: no move. */
static void count_changes_under_noise(double target_s, unsigned *changes, unsigned *active)
{
    world w;
    world_init(&w, 0.08);
    w.truth[LAT].target_s = target_s;
    gctx_controller *c, *truth;
    make_pair(&w, &c, &truth);
    GT_CHECK();
    set_demand(c, truth, 1.0, 1.0);
    step_result r;
    for (int i = 0; i < 60; i++) {
        step(&w, c, truth, &r);
        GT_CHECK();
    }
    *changes = 0;
    *active = r.d.candidate;
    for (int i = 0; i < 500; i++) {
        step(&w, c, truth, &r);
        GT_CHECK();
        *changes += r.d.changed;
    }
    gctx_controller_release(c);
    gctx_controller_release(truth);
}

GT_TEST(stays_put_under_noise)
{
    unsigned changes, active;
    count_changes_under_noise(0.020, &changes, &active);
    GT_CHECK();
    GT_ASSERT_EQ_INT(changes, 0);
    GT_ASSERT_EQ_INT(active, 4);
}

/* A candidate that meets the target by less than the hysteresis margin is not entered for
 * throughput (it would be left again at the first wobble); one with headroom is, after the
 * dwell, and not before. */
GT_TEST(enters_for_throughput_only_with_headroom_after_the_dwell)
{
    unsigned lat_sms[] = {48, 64}, thr_sms[] = {68, 84};
    double lat_s[] = {0.0211, 0.0144}, thr_s[] = {0.0281, 0.0238};
    gctx_workload wl[2];
    /* 48 SMs meet the target by 2 % at demand 1 */
    two_workloads(wl, 0.0211 * 1.10 * 1.02, lat_sms, lat_s, 2, thr_sms, thr_s, 2);
    unsigned rows[] = {64, 68, 48, 84};
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = DEVICE_SMS;
    gctx_controller *c;
    GT_ASSERT_STATUS(gctx_controller_create(wl, 2, rows, 2, &o, &c), GCTX_SUCCESS);
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, 1.2), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.candidate, 0);
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, 1.0), GCTX_SUCCESS);
    for (int i = 0; i < 10; i++) {
        GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(d.candidate, 0);
    }
    GT_ASSERT_CONTAINS(d.reason, "too close to a target");
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, 0.8), GCTX_SUCCESS);
    for (unsigned i = 1; i <= o.dwell; i++) {
        GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(d.candidate, i < o.dwell ? 0 : 1);
        GT_ASSERT_EQ_INT(d.changed, i == o.dwell);
    }
    GT_ASSERT_CONTAINS(d.reason, "moved: more throughput");
    /* and back at once when the target is at risk */
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, 1.2), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.candidate, 0);
    GT_ASSERT_CONTAINS(d.reason, "moved: meets the targets");
    gctx_controller_release(c);
}

GT_TEST(says_which_target_it_cannot_meet)
{
    world w;
    world_init(&w, 0.0);
    w.truth[LAT].target_s = 0.005; /* the whole H200 alone takes 9.76 ms */
    gctx_controller *c;
    make_truth(&w, &c);
    GT_CHECK();
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.unmet, 1u << LAT);
    GT_ASSERT_EQ_INT(d.candidate, 6); /* 96 | 36: the fastest decode beside a busy prefill */
    GT_ASSERT_CONTAINS(d.reason, "w0 96 SMs");
    GT_ASSERT_CONTAINS(d.reason, "misses its target");
    /* a target it can meet is met, and unmet says nothing */
    gctx_controller_release(c);
    world_init(&w, 0.0);
    make_truth(&w, &c);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.unmet, 0);
    GT_ASSERT(d.predicted_step_s[LAT] * 1.10 <= 0.020);
    gctx_controller_release(c);
}

GT_TEST(no_split_is_always_a_candidate)
{
    world w;
    world_init(&w, 0.0);
    gctx_controller *c;
    make_truth(&w, &c);
    GT_CHECK();
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_controller_candidates(c, &n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, NB_SPLITS + 1);
    /* the throughput workload idle: decode alone gets every SM */
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, THR, 0.0), GCTX_SUCCESS);
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.no_split, 1);
    GT_ASSERT_EQ_INT(d.candidate, NB_SPLITS);
    GT_ASSERT_EQ_INT(d.sm_counts[LAT], DEVICE_SMS);
    GT_ASSERT(fabs(d.predicted_step_s[LAT] - 0.00976) < 1e-9);
    GT_ASSERT(d.predicted_step_s[THR] == 0.0);
    gctx_controller_release(c);
    /* a row of zeros given by the caller is used as the no-split candidate, not added again */
    unsigned rows[] = {0, 0, 64, 68};
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = DEVICE_SMS;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, rows, 2, &o, &c), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_candidates(c, &n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, 2);
    gctx_controller_release(c);
}

/* Claims across processes never overlap: a disjoint controller offers its rows only, and
 * keeps to them where "no split" would have won (the throughput workload idle). */
GT_TEST(disjoint_workloads_have_no_no_split_candidate)
{
    world w;
    world_init(&w, 0.0);
    unsigned rows[] = {16, 116, 64, 68};
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = DEVICE_SMS;
    o.disjoint = 1;
    gctx_controller *c;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, rows, 2, &o, &c), GCTX_SUCCESS);
    unsigned n = 0;
    GT_ASSERT_STATUS(gctx_controller_candidates(c, &n), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(n, 2);
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, THR, 0.0), GCTX_SUCCESS);
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.no_split, 0);
    GT_ASSERT(d.candidate < 2);
    GT_ASSERT_EQ_INT(d.sm_counts[LAT] + d.sm_counts[THR], DEVICE_SMS);
    gctx_controller_release(c);
    unsigned zeros[] = {0, 0, 64, 68};
    c = NULL;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, zeros, 2, &o, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "row 0 is all zeros");
    GT_ASSERT(c == NULL);
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, NULL, 0, &o, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "give at least one row");
    o.disjoint = 2;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, rows, 2, &o, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "disjoint 2 0 or 1");
}

GT_TEST(predictions_follow_the_prior_demand_and_bandwidth)
{
    unsigned sms[] = {32, 64};
    double step_s[] = {0.004, 0.002};
    gctx_workload wl[2] = {GCTX_WORKLOAD_INIT, GCTX_WORKLOAD_INIT};
    wl[0].target_s = 1.0;
    wl[0].nb_points = 2;
    wl[0].prior_sms = sms;
    wl[0].prior_step_s = step_s;
    wl[0].demand_weight = 0.5;
    wl[1] = wl[0];
    wl[1].kind = GCTX_WORKLOAD_THROUGHPUT;
    unsigned rows[] = {16, 64, 48, 64, 64, 64, 100, 28};
    gctx_controller *c;
    GT_ASSERT_STATUS(gctx_controller_create(wl, 2, rows, 4, NULL, &c), GCTX_SUCCESS);
    double t;
    GT_ASSERT_STATUS(gctx_controller_predict(c, 0, 0, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.008) < 1e-12); /* below the first point: ideal scaling */
    GT_ASSERT_STATUS(gctx_controller_predict(c, 1, 0, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.003) < 1e-12); /* halfway between 32 and 64 */
    GT_ASSERT_STATUS(gctx_controller_predict(c, 3, 0, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.002) < 1e-12); /* above the last point: no gain assumed */
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, 0, 3.0), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_predict(c, 2, 0, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.002 * 2.0) < 1e-12); /* half the step grows with demand: 0.5 + 1.5 */
    /* no split (candidate 4): every SM, stretched for the other busy workload */
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, 0, 1.0), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_predict(c, 4, 1, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.004) < 1e-12); /* 128 SMs (the widest row) flat at 2 ms, times 2 */
    gctx_controller_release(c);
    /* two workloads asking 1 and 4 TB/s of a 4 TB/s device both slow by 5/4 */
    wl[0].bytes_per_step = 2e9;
    wl[1].bytes_per_step = 8e9;
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.hbm_bytes_per_s = 4e12;
    GT_ASSERT_STATUS(gctx_controller_create(wl, 2, rows, 4, &o, &c), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_predict(c, 2, 0, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.0025) < 1e-12);
    GT_ASSERT_STATUS(gctx_controller_predict(c, 2, 1, &t), GCTX_SUCCESS);
    GT_ASSERT(fabs(t - 0.0025) < 1e-12);
    /* learning: a step observed 2x the model doubles that candidate's prediction at once, and
     * moves the others (never observed) by the workload's correction */
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    double before, after, other;
    GT_ASSERT_STATUS(gctx_controller_predict(c, d.candidate, 1, &before), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_observe(c, 1, 2.0 * before), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_predict(c, d.candidate, 1, &after), GCTX_SUCCESS);
    GT_ASSERT(fabs(after - 2.0 * before) < 1e-12);
    GT_ASSERT_STATUS(gctx_controller_predict(c, d.candidate == 0 ? 1 : 0, 1, &other),
                     GCTX_SUCCESS);
    GT_ASSERT(other > 0.0);
    gctx_controller_release(c);
}

/* The audit's case (issue 28 m5): with learning_rate 1 one absurd finite step made the latency
 * workload's prediction inf, the next NaN, and a NaN latency workload was judged idle and
 * moved to 16 SMs (60 ms against its 20 ms target). */
GT_TEST(absurd_observations_are_refused_and_predictions_stay_finite)
{
    unsigned lat_sms[] = {16, 64, 132}, thr_sms[] = {16, 132};
    double lat_s[] = {0.060, 0.015, 0.010}, thr_s[] = {0.1, 0.0125};
    gctx_workload wl[2];
    two_workloads(wl, 0.020, lat_sms, lat_s, 3, thr_sms, thr_s, 2);
    unsigned rows[] = {16, 116, 64, 68};
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = 132;
    o.learning_rate = 1.0;
    o.disjoint = 1;
    gctx_controller *c;
    GT_ASSERT_STATUS(gctx_controller_create(wl, 2, rows, 2, &o, &c), GCTX_SUCCESS);
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.sm_counts[LAT], 64);
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 1e307), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "workload 0: a step of 1e+307 s is more than 1000 "
                                          "times from the 0.015 s its prior predicts");
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 1e-9), GCTX_ERROR_INVALID_ARGUMENT);
    /* Within the bound: learnt, and every prediction stays finite. */
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 0.015 * 999), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 0.015), GCTX_SUCCESS);
    for (unsigned k = 0; k < 2; k++)
        for (unsigned w = 0; w < 2; w++) {
            double t;
            GT_ASSERT_STATUS(gctx_controller_predict(c, k, w, &t), GCTX_SUCCESS);
            GT_ASSERT(t > 0.0 && isfinite(t));
        }
    for (int i = 0; i < 4; i++)
        GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.sm_counts[LAT], 64); /* still meets its 20 ms target */
    GT_ASSERT_EQ_INT(d.unmet, 0);
    GT_ASSERT(d.predicted_step_s[LAT] > 0.0 && isfinite(d.predicted_step_s[LAT]));
    gctx_controller_release(c);
}

/* No candidate rows (NULL, 0): only "no split". UBSan saw memcpy(rows, NULL, 0) here. */
GT_TEST(no_candidates_but_no_split)
{
    world w;
    world_init(&w, 0.0);
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.device_sms = DEVICE_SMS;
    gctx_controller *c;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, NULL, 0, &o, &c), GCTX_SUCCESS);
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(d.candidate, 0);
    GT_ASSERT_EQ_INT(d.sm_counts[LAT], DEVICE_SMS);
    gctx_controller_release(c);
}

GT_TEST(bad_arguments_are_refused_with_a_reason)
{
    world w;
    world_init(&w, 0.0);
    gctx_controller *c = (gctx_controller *)0x1;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 0, splits, NB_SPLITS, NULL, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "give 1 to 8 workloads");
    GT_ASSERT(c == (gctx_controller *)0x1);
    gctx_workload bad[2] = {w.truth[LAT], w.truth[THR]};
    bad[LAT].target_s = 0.0;
    GT_ASSERT_STATUS(gctx_controller_create(bad, 2, splits, NB_SPLITS, NULL, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "workload 0: a latency workload needs target_s > 0");
    unsigned descending[] = {64, 32};
    double times[] = {0.01, 0.02};
    bad[LAT] = w.truth[LAT];
    bad[THR].nb_points = 2;
    bad[THR].prior_sms = descending;
    bad[THR].prior_step_s = times;
    GT_ASSERT_STATUS(gctx_controller_create(bad, 2, splits, NB_SPLITS, NULL, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "workload 1: prior_sms must be ascending");
    unsigned zeros[] = {0, 0};
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, zeros, 1, NULL, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "options.device_sms is 0");
    gctx_controller_options o = GCTX_CONTROLLER_OPTIONS_INIT;
    o.latency_margin = 0.5;
    GT_ASSERT_STATUS(gctx_controller_create(w.truth, 2, splits, NB_SPLITS, &o, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "latency_margin 0.5 >= 1");
    GT_ASSERT(c == (gctx_controller *)0x1);

    make_truth(&w, &c);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 0.01), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "before the first gctx_controller_decide");
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, 2, 1.0), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "workload 2: the controller has 2 (0 to 1)");
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, -1.0), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_controller_set_demand(c, LAT, NAN), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_controller_decision small = GCTX_CONTROLLER_DECISION_INIT;
    small.size = 8;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &small), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_CONTROLLER_DECISION_INIT");
    gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_controller_observe(c, LAT, 0.0), GCTX_ERROR_INVALID_ARGUMENT);
    double t;
    GT_ASSERT_STATUS(gctx_controller_predict(c, 99, LAT, &t), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_controller_release(c);
    GT_ASSERT_STATUS(gctx_controller_decide(c, &d), GCTX_ERROR_INVALID_HANDLE);
}

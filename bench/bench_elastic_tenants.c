/*
 * bench elastic in two processes: a decode tenant and a prefill tenant (bench_elastic_worker.c),
 * started, released together and read through tenant_proc.c and
 * its MPS daemon (tenant_mps.c). The decode tenant starts first, so that its claim is taken
 * before the prefill tenant's "rest". Every arm runs in a registry of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"
#include "tenant_proc.h"

#define READY_TIMEOUT_MS 120000
#define FINISH_SLACK_MS 60000
#define START_AHEAD_MS 200

typedef struct el_side {
    el_arm *arm;
    int decode;
    double t_sms[EL_MAX_TIMELINE];
    unsigned sms[EL_MAX_TIMELINE];
    unsigned nb_sms;
    unsigned long long gemms;
    double seconds;
} el_side;

static int own_line(void *ctx, const char *line)
{
    el_side *side = ctx;
    el_arm *a = side->arm;
    bench_summary resizes;
    double t;
    unsigned sms;
    if (tenant_summary_line(line, "el_step", &a->step_ms)) {
        a->steps = a->step_ms.n;
    } else if (tenant_summary_line(line, "el_token", &a->token_ms) ||
               sscanf(line, "el_within %llu %llu", &a->within_target,
                      &a->tokens_within_target) == 2 ||
               sscanf(line, "el_rate %llu %lf", &side->gemms, &side->seconds) == 2 ||
               tenant_summary_line(line, "el_kernel", &a->thr_kernel_ms)) {
    } else if (tenant_summary_line(line, "el_resize", &resizes)) {
        if (side->decode) { /* the decode tenant's re-sizes are the arm's */
            a->resizes = (unsigned)resizes.n;
            a->resize_us = resizes;
        } else {
            a->thr_resize_us = resizes;
        }
    } else if (sscanf(line, "el_contexts_made %llu", &a->contexts_made[!side->decode]) == 1) {
    } else if (tenant_summary_line(line, "el_grant", &resizes)) {
        if (side->decode)
            a->grant_ms = resizes;
    } else if (sscanf(line, "el_sms %lf %u", &t, &sms) == 2) {
        if (side->nb_sms < EL_MAX_TIMELINE) {
            side->t_sms[side->nb_sms] = t;
            side->sms[side->nb_sms++] = sms;
        }
    } else {
        return 0;
    }
    return 1;
}

/* The two tenants' SM counts, merged in time order (each starts with its first count). */
static void merge_timelines(el_arm *a, const el_side *lat, const el_side *thr)
{
    unsigned i = 0, j = 0;
    unsigned cur_lat = lat->nb_sms ? lat->sms[0] : 0, cur_thr = thr->nb_sms ? thr->sms[0] : 0;
    a->timeline.count = 0;
    while (i < lat->nb_sms || j < thr->nb_sms) {
        int take_lat = j == thr->nb_sms || (i < lat->nb_sms && lat->t_sms[i] <= thr->t_sms[j]);
        double t = take_lat ? lat->t_sms[i] : thr->t_sms[j];
        if (take_lat)
            cur_lat = lat->sms[i++];
        else
            cur_thr = thr->sms[j++];
        el_timeline_add(&a->timeline, t, cur_lat, cur_thr);
    }
}

typedef struct el_two {
    const bench_env *env;
    const elastic_options *eo;
    const elastic_result *res;
    tenant_run run;
    char prior[2][512];
} el_two;

static char **worker_argv(const el_two *two, int decode, const char *on, int elastic,
                          char store[16][32])
{
    static char *argv[48];
    const elastic_options *eo = two->eo;
    const el_shape *s = &two->res->shape;
    int n = 0;
    snprintf(store[0], 32, "%d", two->env->device);
    snprintf(store[1], 32, "%d", two->run.duration_ms);
    snprintf(store[2], 32, "%llu", eo->seed);
    snprintf(store[3], 32, "%u", s->layers);
    snprintf(store[4], 32, "%u", s->peak_batch);
    snprintf(store[5], 32, "%u", s->context);
    snprintf(store[6], 32, "%u", s->chunk);
    snprintf(store[7], 32, "%.6f", two->res->target_ms);
    char *fixed[] = {"greenctx-bench", "--device", store[0], "elastic-worker",
                     "--role", decode ? "decode" : "prefill", "--on", (char *)on, "--ms", store[1], "--registry", (char *)two->run.paths->registry,
                     "--trace", (char *)el_trace_name(eo->trace), "--seed", store[2],
                     "--layers", store[3], "--batch", store[4], "--context", store[5],
                     "--chunk", store[6], "--target-ms", store[7],
                     "--prior", (char *)two->prior[0], "--prior-prefill", (char *)two->prior[1],
                     "--gemm", two->res->gemm_cublas ? "cublas" : "own"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    if (elastic)
        argv[n++] = "--elastic";
    argv[n] = NULL;
    return argv;
}

static int run_pair(const el_two *two, el_arm *arm, const char *lat_on, int mps, int lat_pct,
                    int elastic)
{
    const char *thr_on = strcmp(lat_on, "primary") ? "rest" : "primary";
    tenant_spec specs[2] = {{lat_pct, mps}, {lat_pct ? 100 - lat_pct : 0, mps}};
    el_side sides[2] = {{arm, 1, {0}, {0}, 0, 0, 0}, {arm, 0, {0}, {0}, 0, 0, 0}};
    tenant_proc procs[2];
    char store[16][32];
    int started = 0, rc = 0;
    for (; started < 2 && rc == 0; started++) {
        int decode = started == 0;
        char **argv = worker_argv(two, decode, decode ? lat_on : thr_on, elastic, store);
        rc = tenant_launch(&two->run, &specs[started], decode ? "decode tenant" : "prefill tenant",
                           argv, &procs[started], READY_TIMEOUT_MS);
        procs[started].own_line = own_line;
        procs[started].own_ctx = &sides[started];
    }
    if (rc) {
        for (int i = 0; i < started - 1; i++)
            tenant_kill(&procs[i]);
        return -1;
    }
    long long start = bench_wall_ns() + START_AHEAD_MS * 1000000LL;
    rc = tenant_go(&procs[0], start) || tenant_go(&procs[1], start);
    for (int i = 0; i < 2; i++)
        rc |= tenant_finish(&procs[i], two->run.duration_ms + FINISH_SLACK_MS);
    if (rc)
        return -1;
    arm->lat_sms = procs[0].sms;
    arm->thr_sms = procs[1].sms;
    double units = sides[1].gemms / (double)EL_NB_MATRICES;
    const el_shape *s = &two->res->shape;
    if (sides[1].seconds > 0) {
        arm->prefill_tokens_per_s = units * s->chunk / s->layers / sides[1].seconds;
        arm->tflops = units * el_prefill_flops(s, s->chunk) / sides[1].seconds * 1e-12;
    }
    merge_timelines(arm, &sides[0], &sides[1]);
    return 0;
}

static void priors(el_two *two)
{
    const elastic_result *res = two->res;
    size_t n0 = 0, n1 = 0;
    unsigned last = res->nb_points - 1; /* every SM */
    for (unsigned i = 0; i < res->nb_points; i++)
        n0 += (size_t)snprintf(two->prior[0] + n0, sizeof two->prior[0] - n0, "%s%u:%.5f",
                               i ? "," : "", res->cal_sms[i], res->cal_decode_ms[i]);
    /* the prefill sides, ascending: the reverse of the decode sides, then every SM */
    for (unsigned k = last; k-- > 0;)
        n1 += (size_t)snprintf(two->prior[1] + n1, sizeof two->prior[1] - n1, "%s%u:%.5f",
                               n1 ? "," : "", res->sm_count - res->cal_sms[k],
                               res->cal_prefill_ms[k]);
    snprintf(two->prior[1] + n1, sizeof two->prior[1] - n1, ",%u:%.5f", res->sm_count,
             res->cal_prefill_ms[last]);
}

void bench_elastic_two_process(const bench_env *env, const elastic_options *eo,
                               elastic_result *res)
{
    tenant_paths paths;
    el_pick_best(res);
    /* the static claims take the best static split's decode share */
    unsigned lat = res->best_static >= 0 ? res->arm[res->best_static].lat_sms : env->sm_count / 2;
    int pct = (int)(100.0 * lat / env->sm_count + 0.5);
    char lat_count[16], lat_min[16], label[96];
    snprintf(lat_count, sizeof lat_count, "%u", lat);
    snprintf(lat_min, sizeof lat_min, "%u", res->cal_sms[0]);
    /* The kinds from EL_ARM_2P_SLICED on; label: a format of lat, or of the percentages */
    const struct {
        const char *label, *lat_on;
        int mps, pct, elastic;
    } plan[6] = {
        {"2 processes, no MPS (time-sliced)", "primary", 0, 0, 0},
        {"2 processes, static claims %u | rest, MPS", lat_count, 1, 0, 0},
        {"2 processes, MPS", "primary", 1, 0, 0},
        {"2 processes, MPS, active threads %d %% | %d %%", "primary", 1, pct, 0},
        {"2 processes, claims resized (controller), MPS", lat_min, 1, 0, 1},
        {"2 processes, claims resized, no MPS", lat_min, 0, 0, 1},
    };
    el_arm *arms[6];
    for (int i = 0; i < 6; i++) {
        if (plan[i].pct)
            snprintf(label, sizeof label, plan[i].label, pct, 100 - pct);
        else
            snprintf(label, sizeof label, plan[i].label, lat);
        arms[i] = el_arm_new(res, (el_arm_kind)(EL_ARM_2P_SLICED + i), NULL, label);
        arms[i]->thread_percentage = plan[i].pct;
    }
    if (tenant_paths_make(&paths)) {
        for (int i = 0; i < 6; i++)
            snprintf(arms[i]->why, sizeof arms[i]->why, "the run's directories: see above");
        res->failed = 1;
        return;
    }
    tenant_mps mps;
    tenant_mps_start(&paths, &mps);
    res->mps_available = mps.available;
    res->mps_started = mps.started;
    snprintf(res->mps_why, sizeof res->mps_why, "%s", mps.why);
    el_two two = {env, eo, res, {"/proc/self/exe", &paths, (int)(res->seconds * 1e3)},
                  {{0}}};
    priors(&two);
    for (int i = 0; i < 6; i++) /* the steps that will not run */
        res->progress.total -= plan[i].mps && !mps.available;
    for (int i = 0; i < 6; i++) {
        if (plan[i].mps && !mps.available) {
            snprintf(arms[i]->why, sizeof arms[i]->why, "MPS is not available: %.300s", mps.why);
            continue;
        }
        progress_step(&res->progress, "%s", arms[i]->label);
        arms[i]->ran = !run_pair(&two, arms[i], plan[i].lat_on, plan[i].mps, plan[i].pct,
                                 plan[i].elastic);
        if (!arms[i]->ran) {
            snprintf(arms[i]->why, sizeof arms[i]->why, "failed: see the messages above");
            res->failed = 1;
        }
    }
    tenant_mps_stop(&mps);
    tenant_paths_remove(&paths);
}

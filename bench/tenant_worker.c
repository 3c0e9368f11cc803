/*
 * One tenant of `greenctx bench tenants`: `greenctx [--device N] bench tenant-worker --role R
 * --work W --on CONTEXT --ms DURATION --fault-at-ms T --victim-sms N --registry DIR`, started
 * by the bench, never by hand (it is not in the usage).
 *
 * It makes its context (the primary, or a claim of the run's registry and the claim's green
 * context), loads the kernels, fills its buffers and warms up, says "ready SMS" on stdout,
 * waits for "go START_NS" on stdin, busy-waits until that wall-clock instant, runs its role
 * for the duration and writes its result lines, then "done". Errors go to stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_commands.h"
#include "bench_hog.h"
#include "bench_tenants.h"
#include "greenctx_claims.h"

#define VICTIM_WARMUPS 20
#define VICTIM_SETTLE 5
#define LAUNCHER_WARMUPS 100
#define READ_BYTES (64ull << 20)
#define READ_SEED 0x5eed0003u
#define HOG_WARMUP_S 0.05

typedef struct worker {
    bench_env env;
    tenant_role role;
    tenant_work work;
    const char *on, *aside, *registry;
    unsigned victim_sms;
    int duration_ms, fault_at_ms;
    gctx_claim *claim;
    bench_lane lane;
    gcu_deviceptr out, src, partial; /* the victim's */
    unsigned grid;
    bench_hog_work hog_work;
    double *latency_us;
    size_t capacity;
} worker;

static void usage(FILE *out) { fputs("tenant-worker: started by bench tenants\n", out); }

static int parse(int argc, char **argv, greenctx_tool_options *opts, worker *w)
{
    int role = TENANT_NB_ROLES, work = TENANT_WORK_FMA;
    unsigned ms = 0, fault_at = 0;
    const bench_arg table[] = {
        BENCH_CHOICE("--role", "victim, hog, launcher, faulter or probe", &role,
                     tenant_role_names),
        BENCH_CHOICE("--work", "fma, read or copy", &work, tenant_work_names),
        BENCH_TEXT("--on", "primary or a claim request", &w->on),
        BENCH_UINT("--ms", "milliseconds", &ms, 1, 600000),
        BENCH_UINT("--fault-at-ms", "milliseconds", &fault_at, 0, 600000),
        BENCH_UINT("--victim-sms", "an SM count", &w->victim_sms, 1, 1024),
        BENCH_TEXT("--registry", "a directory", &w->registry),
        BENCH_TEXT("--aside", "a claim request held aside while --on's is claimed", &w->aside),
    };
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    int rc = bench_args_parse(&args, table, BENCH_NB(table), usage, NULL, NULL);
    if (rc != GREENCTX_EXIT_OK)
        return rc == BENCH_HELP_SHOWN ? GREENCTX_EXIT_USAGE : rc;
    w->role = (tenant_role)role;
    w->work = (tenant_work)work;
    w->duration_ms = (int)ms;
    w->fault_at_ms = (int)fault_at;
    if (w->role == TENANT_NB_ROLES || !w->on || !w->registry || !w->duration_ms ||
        !w->victim_sms) {
        return greenctx_args_bad(&args, "tenant-worker needs --role, --on, --ms, --victim-sms "
                                 "and --registry (it is started by bench tenants)");
    }
    return GREENCTX_EXIT_OK;
}

static int open_context(worker *w)
{
    if (!strcmp(w->on, "primary"))
        return bench_lane_primary(&w->env, BENCH_PRIORITY_NORMAL, &w->lane);
    gctx_claim_options options = GCTX_CLAIM_OPTIONS_INIT;
    options.runtime_dir = w->registry;
    options.label = "bench tenants";
    char what[96];
    gctx_claim *aside = NULL;
    snprintf(what, sizeof what, "claiming %s SMs aside for the %s", w->aside ? w->aside : "",
             tenant_role_name(w->role));
    if (w->aside && bench_gctx(gctx_claim_acquire(w->env.device, w->aside, &options, &aside),
                               what))
        return -1;
    snprintf(what, sizeof what, "claiming %s SMs for the %s", w->on, tenant_role_name(w->role));
    gctx_status s = gctx_claim_acquire(w->env.device, w->on, &options, &w->claim);
    gctx_claim_release(aside);
    if (bench_gctx(s, what))
        return -1;
    return bench_lane_claim(&w->env, w->claim, &w->lane);
}

/* ---- the victim ---- */

static int victim_request(worker *w)
{
    const bench_env *env = &w->env;
    const bench_lane *lane = &w->lane;
    int rc = w->work == TENANT_WORK_FMA
                 ? bench_fma(env, &lane->mod, lane->stream, w->grid, w->out, w->grid,
                             TENANT_VICTIM_ITERS, 0)
                 : bench_sum(env, &lane->mod, lane->stream, w->grid, w->src, READ_BYTES / 16,
                             w->partial, 0);
    return rc ? rc : bench_cu(env->drv->cuStreamSynchronize(lane->stream), "a victim request");
}

static int victim_open(worker *w)
{
    const bench_env *env = &w->env;
    w->grid = w->victim_sms * BENCH_FULL_BLOCKS_SM;
    /* One request per gap at the least: the loop ends at the duration or here. */
    w->capacity = (size_t)(w->duration_ms * 1e3 / TENANT_VICTIM_GAP_US) + 16;
    if (!(w->latency_us = calloc(w->capacity, sizeof *w->latency_us))) {
        fprintf(stderr, "greenctx bench: out of memory\n");
        return -1;
    }
    if (w->work == TENANT_WORK_FMA)
        return bench_alloc(env, &w->out, (size_t)w->grid * BENCH_BLOCK * 4, "the victim");
    if (bench_alloc(env, &w->src, READ_BYTES, "the victim's input") ||
        bench_alloc(env, &w->partial, (size_t)w->grid * BENCH_SUM_WARPS * 4, "the victim"))
        return -1;
    return bench_fill(env, &w->lane.mod, w->lane.stream, w->src, READ_BYTES / 4, READ_SEED) ||
           bench_cu(env->drv->cuStreamSynchronize(w->lane.stream), "filling the victim's input");
}

static int victim_run(worker *w, long long end_ns)
{
    /* The first requests after the idle wait for the start run on clocks that are still
     * ramping up: they are not measured. */
    for (int i = 0; i < VICTIM_SETTLE; i++)
        if (victim_request(w))
            return -1;
    size_t n = 0;
    while (n < w->capacity && bench_wall_ns() < end_ns) {
        double t0 = bench_now_us();
        if (victim_request(w))
            return -1;
        w->latency_us[n++] = bench_now_us() - t0;
        bench_spin_us(TENANT_VICTIM_GAP_US);
    }
    const char *what = w->work == TENANT_WORK_FMA ? "the fma victim" : "the read victim";
    int rc = w->work == TENANT_WORK_FMA
                 ? bench_check_fma(&w->env, w->out, w->grid, w->grid, TENANT_VICTIM_ITERS, what)
                 : bench_check_sum(&w->env, w->partial, w->grid, 0, READ_BYTES / 16, READ_SEED,
                                   what);
    if (rc)
        return -1;
    bench_summary s;
    bench_summarize(w->latency_us, n, &s);
    tenant_say_summary("latency", &s);
    return 0;
}

/* ---- the hog ---- */

static bench_hog_kind hog_kind(const worker *w)
{
    return w->work == TENANT_WORK_COPY ? BENCH_HOG_COPY : BENCH_HOG_FMA;
}

static int hog_run(worker *w, long long end_ns)
{
    bench_hog hog;
    if (bench_hog_start(&hog, &w->env, &w->lane, &w->hog_work, hog_kind(w)))
        return -1;
    while (bench_wall_ns() < end_ns) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (bench_hog_stop(&hog))
        return -1;
    tenant_say("rate %llu %.6f %.6g", hog.units, hog.seconds,
               bench_hog_unit_amount(&w->hog_work, hog_kind(w)));
    return 0;
}

/* ---- the fault arm ---- */

/* A small kernel and its synchronize, unprinted: failures are what the launcher counts. */
static gcu_result small_kernel(const worker *w)
{
    const raw_driver *drv = w->env.drv;
    gcu_result r = drv->cuLaunchKernel(w->lane.mod.empty, 1, 1, 1, 32, 1, 1, 0, w->lane.stream,
                                       NULL, NULL);
    return r ? r : drv->cuStreamSynchronize(w->lane.stream);
}

static int launcher_run(worker *w, long long end_ns)
{
    unsigned long long ok = 0, failed = 0;
    long long first_fail_ns = 0;
    gcu_result first = GCU_SUCCESS;
    while (bench_wall_ns() < end_ns) {
        gcu_result r = small_kernel(w);
        if (r == GCU_SUCCESS) {
            ok++;
        } else if (failed++ == 0) {
            first_fail_ns = bench_wall_ns();
            first = r;
        }
    }
    tenant_say("launches %llu %llu %lld %d", ok, failed, first_fail_ns, (int)first);
    /* What a tenant is told: the library's line naming who faulted, where it can know. */
    if (failed && w->claim) {
        gctx_claim_report_fault(w->claim, (int)first);
        const char *said = gctx_last_error();
        char line[512];
        snprintf(line, sizeof line, "%s", said && *said ? said : "(the library said nothing)");
        for (char *c = line; *c; c++) /* one line of the protocol */
            if (*c == '\n' || *c == '\r')
                *c = ' ';
        tenant_say("message %s", line);
    }
    return 0;
}

static int faulter_run(worker *w, long long start_ns)
{
    const raw_driver *drv = w->env.drv;
    while (bench_wall_ns() < start_ns + w->fault_at_ms * 1000000LL) {
    }
    long long at = bench_wall_ns();
    gcu_result r = bench_fault(&w->env, &w->lane.mod, w->lane.stream, TENANT_FAULT_ADDRESS);
    if (r == GCU_SUCCESS)
        r = drv->cuStreamSynchronize(w->lane.stream);
    tenant_say("fault %lld %d", at, (int)r);
    if (r != GCU_SUCCESS && w->claim)
        gctx_claim_report_fault(w->claim, (int)r);
    return 0;
}

static int probe_run(worker *w)
{
    gcu_result r = small_kernel(w);
    tenant_say("probe %d %lld", (int)r, bench_wall_ns());
    return 0;
}

/* ---- the protocol ---- */

static int prepare(worker *w)
{
    if (w->role == TENANT_VICTIM) {
        if (victim_open(w))
            return -1;
        for (int i = 0; i < VICTIM_WARMUPS; i++)
            if (victim_request(w))
                return -1;
    } else if (w->role == TENANT_HOG) {
        double rate;
        if (bench_hog_work_init(&w->env, &w->lane.mod, w->lane.stream, &w->hog_work) ||
            bench_hog_alone(&w->env, &w->lane, &w->hog_work, hog_kind(w), HOG_WARMUP_S, &rate))
            return -1;
    } else if (w->role == TENANT_LAUNCHER || w->role == TENANT_FAULTER) {
        for (int i = 0; i < (w->role == TENANT_LAUNCHER ? LAUNCHER_WARMUPS : 1); i++)
            if (bench_cu(small_kernel(w), "a warm-up kernel"))
                return -1;
    }
    return 0;
}

static int run_role(worker *w, long long start_ns)
{
    long long end_ns = start_ns + w->duration_ms * 1000000LL;
    switch (w->role) {
    case TENANT_VICTIM: return victim_run(w, end_ns);
    case TENANT_HOG: return hog_run(w, end_ns);
    case TENANT_LAUNCHER: return launcher_run(w, end_ns);
    case TENANT_FAULTER: return faulter_run(w, start_ns);
    default: return probe_run(w);
    }
}

static void close_worker(worker *w)
{
    bench_free(&w->env, &w->out);
    bench_free(&w->env, &w->src);
    bench_free(&w->env, &w->partial);
    bench_hog_work_free(&w->env, &w->hog_work);
    bench_lane_close(&w->env, &w->lane);
    gctx_claim_release(w->claim);
    free(w->latency_us);
    bench_env_close(&w->env);
}

int bench_tenant_worker(int argc, char **argv, greenctx_tool_options *opts)
{
    worker w;
    memset(&w, 0, sizeof w);
    int rc = parse(argc, argv, opts, &w);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    long long start_ns = 0;
    rc = bench_env_open(&w.env, opts->device);
    if (rc == 0 && !w.env.kernels) {
        fprintf(stderr, "greenctx bench: tenant-worker: this driver runs no kernels\n");
        rc = -1;
    }
    if (rc == 0)
        rc = open_context(&w) || bench_push(&w.env, w.lane.ctx);
    if (rc == 0) { /* the lane's context is current for every launch from this thread */
        rc = prepare(&w) || tenant_ready(w.lane.sms, &start_ns) || run_role(&w, start_ns);
        bench_pop(&w.env);
    }
    if (rc == 0)
        tenant_say("done");
    close_worker(&w);
    return rc ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

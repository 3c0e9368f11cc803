/*
 * The arms of `bench tenants`, run one after the other, each with fresh processes: the alone
 * references, the pairs without MPS, the fault arm without MPS, then the pairs under MPS and
 * the fault arm under MPS last (a fault under MPS takes the server down with it; it runs only
 * on the bench's own daemon, never on one that other clients may be using).
 *
 * A pair: the victim starts first, so that with claims it takes its SMs ("16") before the
 * hog takes the rest; once both are ready, both get the same wall-clock start, a fifth of a
 * second ahead. Every arm runs in a registry of its own run (a directory under the run's
 * temporary root), so other tenants' claims never change the split being measured.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_tenants.h"
#include "greenctx_claims.h"
#include "progress.h"

#define DURATION_MS 3000
#define QUICK_DURATION_MS 1000
#define READY_TIMEOUT_MS 60000
#define FINISH_SLACK_MS 60000
#define START_AHEAD_MS 200
#define PROBE_DEADLINE_MS 15000
#define PROBE_PAUSE_US 100000

#define FMA TENANT_WORK_FMA
#define READ TENANT_WORK_READ
#define COPY TENANT_WORK_COPY

/* The arms. on: 'v' the victim's claim, 'r' the rest, 'p' the primary context, 0 the side
 * does not run. number, the label's: 'v' the victim's SMs, 'r' the rest, 'd' the device's,
 * '%' the active-thread percentages (which that arm sets), 0 none. A hog alone on the rest
 * holds the victim's claim aside (tenant_spec.aside). */
static const struct arm_row {
    const char *name, *label;
    char number, victim_on, hog_on;
    tenant_work victim_work, hog_work;
    int mps, victim_ref, hog_ref;
} arm_rows[TA_NB_ARMS] = {
    {"victim_alone", "victim alone, claim %u", 'v', 'v', 0, FMA, FMA, 0, -1, -1},
    {"hog_alone_claim", "hog alone, claim %u", 'r', 0, 'r', FMA, FMA, 0, -1, -1},
    {"hog_alone_primary", "hog alone, primary (%u SMs)", 'd', 0, 'p', FMA, FMA, 0, -1, -1},
    {"no_mps_primary", "no MPS, primary | primary", 0, 'p', 'p', FMA, FMA, 0, TA_VICTIM_ALONE,
     TA_HOG_ALONE_PRIMARY},
    {"no_mps_claims", "no MPS, claims %u | rest", 'v', 'v', 'r', FMA, FMA, 0, TA_VICTIM_ALONE,
     TA_HOG_ALONE_CLAIM},
    {"mps_primary", "MPS, primary | primary", 0, 'p', 'p', FMA, FMA, 1, TA_VICTIM_ALONE,
     TA_HOG_ALONE_PRIMARY},
    {"mps_thread_percentage", "MPS, active threads %d%% | %d%%", '%', 'p', 'p', FMA, FMA, 1,
     TA_VICTIM_ALONE, TA_HOG_ALONE_CLAIM},
    {"mps_claims", "MPS, claims %u | rest", 'v', 'v', 'r', FMA, FMA, 1, TA_VICTIM_ALONE,
     TA_HOG_ALONE_CLAIM},
    {"read_victim_alone", "read victim alone, claim %u", 'v', 'v', 0, READ, FMA, 0, -1, -1},
    {"copy_hog_alone", "copy hog alone, claim %u", 'r', 0, 'r', FMA, COPY, 0, -1, -1},
    {"mps_claims_copy", "MPS, claims %u | rest, copy hog", 'v', 'v', 'r', READ, COPY, 1,
     TA_READ_ALONE, TA_COPY_ALONE},
};

static tenant_arm_def arm_defs[TA_NB_ARMS];
static char victim_request[16], labels[TA_NB_ARMS][96];

static const tenant_spec none = {TENANT_NB_ROLES, TENANT_WORK_FMA, NULL, 0, 0, NULL};

static tenant_spec side(char on, tenant_role role, tenant_work work, int mps)
{
    const char *where = on == 'v' ? victim_request : on == 'r' ? "rest" : "primary";
    return on ? (tenant_spec){role, work, where, 0, mps, NULL} : none;
}

const tenant_arm_def *tenant_arm(tenant_arm_id id, unsigned victim_sms, unsigned sm_count)
{
    const int pct = (int)((100.0 * victim_sms / sm_count) + 0.5);
    snprintf(victim_request, sizeof victim_request, "%u", victim_sms);
    for (int i = 0; i < TA_NB_ARMS; i++) {
        const struct arm_row *r = &arm_rows[i];
        tenant_arm_def *d = &arm_defs[i];
        *d = (tenant_arm_def){r->name, labels[i], r->mps, r->victim_ref, r->hog_ref,
                              side(r->victim_on, TENANT_VICTIM, r->victim_work, r->mps),
                              side(r->hog_on, TENANT_HOG, r->hog_work, r->mps)};
        if (r->hog_on == 'r' && !r->victim_on)
            d->hog.aside = victim_request;
        unsigned n = r->number == 'v' ? victim_sms : r->number == 'r' ? sm_count - victim_sms
                                                                       : sm_count;
        if (r->number == '%') {
            d->victim.thread_percentage = pct;
            d->hog.thread_percentage = 100 - pct;
            snprintf(labels[i], sizeof labels[i], r->label, pct, 100 - pct);
        } else {
            snprintf(labels[i], sizeof labels[i], r->label, n);
        }
    }
    return &arm_defs[id];
}

double tenant_hog_rate(const tenant_report *hog)
{
    double units_per_s = hog->seconds > 0 ? (double)hog->units / hog->seconds : 0;
    return units_per_s * hog->unit_amount * 1e-9;
}

double tenant_victim_ratio(const tenants_result *res, tenant_arm_id id)
{
    const tenant_arm_def *d = &arm_defs[id];
    const tenant_cell *c = &res->arm[id];
    if (!c->ran || !c->has_victim)
        return 0;
    if (d->victim_reference < 0) /* an alone arm is its own reference */
        return 1.0;
    if (!res->arm[d->victim_reference].ran)
        return 0;
    return bench_ratio(c->victim.latency_us.p99,
                       res->arm[d->victim_reference].victim.latency_us.p99);
}

double tenant_hog_ratio(const tenants_result *res, tenant_arm_id id)
{
    const tenant_arm_def *d = &arm_defs[id];
    const tenant_cell *c = &res->arm[id];
    if (!c->ran || !c->has_hog)
        return 0;
    if (d->hog_reference < 0)
        return 1.0;
    if (!res->arm[d->hog_reference].ran)
        return 0;
    return bench_ratio(tenant_hog_rate(&c->hog), tenant_hog_rate(&res->arm[d->hog_reference].hog));
}

static int finish_timeout(const tenant_run *run) { return run->duration_ms + FINISH_SLACK_MS; }

/* Starts the tenants in order, then gives them one start. */
static int start_all(const tenant_run *run, const tenant_spec *specs[], tenant_proc procs[],
                     int n)
{
    for (int i = 0; i < n; i++)
        if (tenant_start(run, specs[i], &procs[i], READY_TIMEOUT_MS)) {
            for (int j = 0; j < i; j++)
                tenant_kill(&procs[j]);
            return -1;
        }
    long long start = bench_wall_ns() + START_AHEAD_MS * 1000000LL;
    int rc = 0;
    for (int i = 0; i < n; i++)
        rc |= tenant_go(&procs[i], start);
    if (rc)
        for (int i = 0; i < n; i++)
            tenant_kill(&procs[i]);
    return rc;
}

static int run_arm(const tenant_run *run, const tenant_arm_def *d, tenant_cell *cell)
{
    const tenant_spec *specs[2];
    tenant_report *reports[2];
    int n = 0;
    if ((cell->has_victim = d->victim.role != TENANT_NB_ROLES)) {
        specs[n] = &d->victim;
        reports[n++] = &cell->victim;
    }
    if ((cell->has_hog = d->hog.role != TENANT_NB_ROLES)) {
        specs[n] = &d->hog;
        reports[n++] = &cell->hog;
    }
    tenant_proc procs[2];
    if (start_all(run, specs, procs, n))
        return -1;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        rc |= tenant_finish(&procs[i], finish_timeout(run));
        *reports[i] = procs[i].report;
    }
    cell->ran = rc == 0;
    return rc;
}

/* New tenants, one process after the other, until one's first kernel runs. */
static void probe_until_running(const tenant_run *run, int mps, tenant_fault_cell *cell)
{
    tenant_spec probe = side('v', TENANT_PROBE, FMA, mps);
    long long deadline = cell->faulter.fault_ns + PROBE_DEADLINE_MS * 1000000LL;
    fprintf(stderr, "greenctx bench: tenants: new tenants until one runs (their failures, if "
                    "any, are expected)\n");
    for (long long now; (now = bench_wall_ns()) < deadline;) {
        /* A server taken down by the fault may hang a new client: never past the deadline. */
        int left_ms = (int)((deadline - now) / 1000000LL) + 1;
        tenant_proc proc;
        cell->probe_attempts++;
        if (tenant_start(run, &probe, &proc, left_ms) == 0 && tenant_go(&proc, 0) == 0 &&
            tenant_finish(&proc, left_ms) == 0 && proc.report.probe_result == 0) {
            cell->probe_done_ns = proc.report.done_ns;
            return;
        }
        tenant_kill(&proc);
        usleep(PROBE_PAUSE_US);
    }
}

static int run_fault(const tenant_run *run, int mps, tenant_fault_cell *cell)
{
    tenant_spec faulter = side('v', TENANT_FAULTER, FMA, mps);
    tenant_spec launcher = side('r', TENANT_LAUNCHER, FMA, mps);
    const tenant_spec *specs[2] = {&faulter, &launcher};
    tenant_proc procs[2];
    if (start_all(run, specs, procs, 2))
        return -1;
    int rc = tenant_finish(&procs[0], finish_timeout(run));
    cell->faulter = procs[0].report;
    if (rc == 0 && cell->faulter.fault_result == 0) {
        fprintf(stderr, "greenctx bench: the store to address %#llx did not fault\n",
                TENANT_FAULT_ADDRESS);
        rc = -1;
    }
    if (rc == 0)
        probe_until_running(run, mps, cell);
    rc |= tenant_finish(&procs[1], finish_timeout(run));
    cell->launcher = procs[1].report;
    cell->ran = rc == 0;
    return rc;
}

static void not_run(char *why, size_t size, const char *reason)
{
    snprintf(why, size, "%s", reason);
}

/* Claims other tenants hold on this GPU: the figures then include their work. */
static unsigned foreign_claims(int device)
{
    unsigned count = 0;
    return gctx_claim_list(device, NULL, NULL, 0, &count, NULL) == GCTX_SUCCESS ? count : 0;
}

int bench_tenants_run(const bench_env *env, const char *worker, tenants_result *res)
{
    memset(res, 0, sizeof *res);
    res->victim_sms = env->opt.nb_victim_sms ? env->opt.victim_sms[0] : 16;
    res->sm_count = env->sm_count;
    res->hog_sms = env->sm_count - res->victim_sms;
    res->duration_ms = env->opt.quick ? QUICK_DURATION_MS : DURATION_MS;
    res->fault_at_ms = res->duration_ms / 3;
    res->victim_iters = TENANT_VICTIM_ITERS;
    res->foreign_claims = foreign_claims(env->device);
    tenant_arm(TA_VICTIM_ALONE, res->victim_sms, env->sm_count);
    tenant_paths paths;
    if (tenant_paths_make(&paths))
        return -1;
    tenant_mps mps;
    tenant_mps_start(&paths, &mps);
    res->mps_available = mps.available;
    res->mps_started = mps.started;
    snprintf(res->mps_pipe, sizeof res->mps_pipe, "%s", paths.mps_pipe);
    snprintf(res->mps_why, sizeof res->mps_why, "%s", mps.why);
    tenant_run run = {worker ? worker : "/proc/self/exe", env, &paths, res->victim_sms,
                      res->duration_ms, res->fault_at_ms};
    char why[1700], not_ours[1700];
    snprintf(why, sizeof why, "MPS is not available: %s", mps.why);
    /* A fault under MPS reaches every client of the server: never on someone's daemon. */
    snprintf(not_ours, sizeof not_ours, "the MPS daemon on %s is not this run's, and a fault "
             "under MPS reaches every client of its server; with no daemon running, the bench "
             "starts its own and measures this", paths.mps_pipe);
    /* One step per arm that runs: the pairs, and a fault arm in each pass that has one. */
    progress_meter progress;
    unsigned steps = 1 + (mps.available && mps.started);
    for (int id = 0; id < TA_NB_ARMS; id++)
        steps += !arm_defs[id].mps || mps.available;
    progress_begin(&progress, "greenctx bench: tenants", steps);
    for (int pass = 0; pass < 2; pass++) { /* without MPS, then under it */
        for (int id = 0; id < TA_NB_ARMS; id++) {
            const tenant_arm_def *d = &arm_defs[id];
            tenant_cell *cell = &res->arm[id];
            if (d->mps != pass)
                continue;
            if (d->mps && !mps.available) {
                not_run(cell->why, sizeof cell->why, why);
            } else {
                progress_step(&progress, "%s", d->label);
                if (run_arm(&run, d, cell))
                    not_run(cell->why, sizeof cell->why, "failed: see the messages above");
            }
            res->failed |= !cell->ran;
        }
        tenant_fault_cell *fault = &res->fault[pass];
        if (pass && !mps.available) {
            not_run(fault->why, sizeof fault->why, why);
            res->failed = 1;
        } else if (pass && !mps.started) {
            not_run(fault->why, sizeof fault->why, not_ours);
        } else {
            progress_step(&progress, "fault arm, %s", pass ? "MPS" : "no MPS");
            if (run_fault(&run, pass, fault)) {
                not_run(fault->why, sizeof fault->why, "failed: see the messages above");
                res->failed = 1;
            }
        }
    }
    for (int id = 0; id < TA_NB_ARMS; id++)
        if (res->arm[id].ran && arm_defs[id].hog.role != TENANT_NB_ROLES &&
            !strcmp(arm_defs[id].hog.on, "rest"))
            res->hog_sms = res->arm[id].hog.sms;
    tenant_mps_stop(&mps);
    tenant_paths_remove(&paths);
    return res->failed ? -1 : 0;
}

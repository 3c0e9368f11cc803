/* `bench tenants` as a table, as JSON and as chart rows. */
#include <stdio.h>

#include "bench_kernels.h"
#include "bench_tenants.h"

static const tenant_arm_id compute_arms[] = {
    TA_VICTIM_ALONE, TA_HOG_ALONE_CLAIM, TA_HOG_ALONE_PRIMARY, TA_SLICED_PRIMARY,
    TA_SLICED_CLAIMS, TA_MPS_PRIMARY,    TA_MPS_THREADS,       TA_MPS_CLAIMS};
static const tenant_arm_id memory_arms[] = {TA_READ_ALONE, TA_COPY_ALONE, TA_MPS_CLAIMS_COPY};

static const char *hog_unit(const tenant_arm_def *d)
{
    return d->hog.work == TENANT_WORK_COPY ? "GB/s" : "GFLOP/s";
}

static void print_ratio(double r)
{
    if (r > 0)
        printf("  %9.2f", r);
    else
        printf("  %9s", "");
}

static void print_arm(const tenants_result *res, tenant_arm_id id)
{
    const tenant_arm_def *d = tenant_arm(id, res->victim_sms, res->sm_count);
    const tenant_cell *c = &res->arm[id];
    printf("  %-38s", d->label);
    if (!c->ran) {
        printf("  not run: %s\n", c->why);
        return;
    }
    char sms[32];
    if (c->has_victim && c->has_hog)
        snprintf(sms, sizeof sms, "%u | %u", c->victim.sms, c->hog.sms);
    else
        snprintf(sms, sizeof sms, "%u", c->has_victim ? c->victim.sms : c->hog.sms);
    printf("  %-9s", sms);
    if (c->has_victim)
        printf("  %7.0f / %-7.0f", c->victim.latency_us.p50, c->victim.latency_us.p99);
    else
        printf("  %17s", "");
    print_ratio(tenant_victim_ratio(res, id));
    if (c->has_hog)
        printf("  %9.0f %-7s", tenant_hog_rate(&c->hog), hog_unit(d));
    else
        printf("  %17s", "");
    print_ratio(tenant_hog_ratio(res, id));
    printf("\n");
}

static void print_header_row(void)
{
    printf("  %-38s  %-9s  %17s  %9s  %17s  %9s\n", "arrangement", "SMs", "victim p50 / p99 us",
           "p99/alone", "hog", "hog/alone");
}

static void print_fault(const tenants_result *res)
{
    printf("\n== fault: tenant A faults on claim %u (a kernel stores to address %#llx) %.1f s in;"
           "\n   tenant B launches small kernels on claim rest for %.1f s; then new tenants "
           "(fresh processes) until one's first kernel runs\n",
           res->victim_sms, TENANT_FAULT_ADDRESS, res->fault_at_ms / 1000.0,
           res->duration_ms / 1000.0);
    printf("  %-8s  %-11s  %12s  %12s  %-26s  %s\n", "", "A's fault", "B ok", "B failed",
           "B's first failure after", "a new tenant runs after");
    for (int m = 0; m < 2; m++) {
        const tenant_fault_cell *f = &res->fault[m];
        printf("  %-8s", m ? "MPS" : "no MPS");
        if (!f->ran) {
            printf("  not run: %s\n", f->why);
            continue;
        }
        char first[48] = "-", again[64] = "not within 15 s";
        if (f->launcher.failed)
            snprintf(first, sizeof first, "%.3f s (CUDA error %d)",
                     (f->launcher.first_fail_ns - f->faulter.fault_ns) * 1e-9,
                     f->launcher.first_fail_result);
        if (f->probe_done_ns)
            snprintf(again, sizeof again, "%.3f s (%d process%s)",
                     (f->probe_done_ns - f->faulter.fault_ns) * 1e-9, f->probe_attempts,
                     f->probe_attempts == 1 ? "" : "es");
        char fault[16];
        snprintf(fault, sizeof fault, "error %d", f->faulter.fault_result);
        printf("  %-11s  %12llu  %12llu  %-26s  %s\n", fault, f->launcher.ok, f->launcher.failed,
               first, again);
        if (f->launcher.message[0])
            printf("            B was told: %s\n", f->launcher.message);
    }
    for (int m = 0; m < 2; m++)
        if (res->fault[m].ran) {
            printf("  (error %d: %s)\n", res->fault[m].faulter.fault_result,
                   raw_result_name(res->fault[m].faulter.fault_result));
            break;
        }
}

void bench_tenants_print(const bench_env *env, const tenants_result *res)
{
    printf("\n== tenants: two processes on one GPU, %.1f s each, starting at the same instant\n",
           res->duration_ms / 1000.0);
    printf("victim: one FMA kernel at a time (%u blocks x %u threads, %u steps x 4 chains), "
           "%.1f ms apart; latency = host clock around launch + synchronize\n",
           res->victim_sms * BENCH_FULL_BLOCKS_SM, BENCH_BLOCK, res->victim_iters,
           TENANT_VICTIM_GAP_US / 1000.0);
    printf("hog: large FMA units back to back; claims: greenctx claims in a registry of this "
           "run; ratios: p99 over the victim alone, rate over the hog alone in the same SMs\n");
    if (res->mps_available)
        printf("MPS: %s (pipe %s)\n",
               res->mps_started ? "a daemon of this run, quit at the end" : "the running daemon",
               res->mps_pipe);
    else
        printf("MPS: not available: %s\n", res->mps_why);
    if (res->foreign_claims)
        printf("warning: other tenants hold %u claim(s) on this GPU: their work is in these "
               "figures\n", res->foreign_claims);
    (void)env;
    print_header_row();
    for (size_t i = 0; i < sizeof compute_arms / sizeof compute_arms[0]; i++)
        print_arm(res, compute_arms[i]);
    printf("\n== memory-bound pair: the victim sums 64 MiB per request on its SMs, the hog "
           "copies 1 GiB per unit (HBM bandwidth is not split by SMs)\n");
    print_header_row();
    for (size_t i = 0; i < sizeof memory_arms / sizeof memory_arms[0]; i++)
        print_arm(res, memory_arms[i]);
    print_fault(res);
}

static void json_report(json_writer *w, const char *name, const tenant_report *r, int victim)
{
    json_object(w, name);
    json_uint(w, "sms", r->sms);
    if (victim) {
        bench_json_summary(w, "latency_us", &r->latency_us);
    } else {
        json_uint(w, "units", r->units);
        json_fixed(w, "seconds", r->seconds, 6);
        json_fixed(w, "unit_amount", r->unit_amount, 6);
        json_fixed(w, "rate", tenant_hog_rate(r), 3);
    }
    json_close(w);
}

/* Seconds from `from` to `to` (ns), or null when `to` never came. */
static void json_seconds_after(json_writer *w, const char *key, long long to, long long from)
{
    if (to)
        json_fixed(w, key, (double)(to - from) * 1e-9, 6);
    else
        json_null(w, key);
}

static void json_fault(json_writer *w, const tenant_fault_cell *f, int mps)
{
    json_object(w, NULL);
    json_bool(w, "mps", mps);
    json_bool(w, "ran", f->ran);
    json_string(w, "why_not", f->ran ? NULL : f->why);
    if (f->ran) {
        json_int(w, "fault_result", f->faulter.fault_result);
        json_uint(w, "other_ok", f->launcher.ok);
        json_uint(w, "other_failed", f->launcher.failed);
        json_int(w, "other_first_failure_result", f->launcher.first_fail_result);
        json_seconds_after(w, "other_first_failure_s",
                           f->launcher.failed ? f->launcher.first_fail_ns : 0,
                           f->faulter.fault_ns);
        json_seconds_after(w, "new_tenant_runs_after_s", f->probe_done_ns, f->faulter.fault_ns);
        json_int(w, "new_tenant_attempts", f->probe_attempts);
        json_string(w, "other_was_told", f->launcher.message[0] ? f->launcher.message : NULL);
    }
    json_close(w);
}

void bench_tenants_json(json_writer *w, const tenants_result *res)
{
    json_object(w, "tenants");
    json_uint(w, "victim_sms", res->victim_sms);
    json_uint(w, "hog_sms", res->hog_sms);
    json_fixed(w, "seconds", res->duration_ms / 1000.0, 3);
    json_uint(w, "victim_iters", res->victim_iters);
    json_fixed(w, "victim_gap_us", TENANT_VICTIM_GAP_US, 1);
    json_uint(w, "foreign_claims", res->foreign_claims);
    json_object(w, "mps");
    json_bool(w, "available", res->mps_available);
    json_bool(w, "started", res->mps_started);
    json_string(w, "pipe_dir", res->mps_pipe);
    json_string(w, "why_not", res->mps_available ? NULL : res->mps_why);
    json_close(w);
    json_array(w, "arms");
    for (int id = 0; id < TA_NB_ARMS; id++) {
        const tenant_arm_def *d = tenant_arm(id, res->victim_sms, res->sm_count);
        const tenant_cell *c = &res->arm[id];
        json_object(w, NULL);
        json_string(w, "name", d->name);
        json_string(w, "label", d->label);
        json_bool(w, "mps", d->mps);
        json_bool(w, "ran", c->ran);
        json_string(w, "why_not", c->ran ? NULL : c->why);
        if (c->ran && c->has_victim) {
            json_string(w, "victim_on", d->victim.on);
            json_string(w, "victim_work", tenant_work_name(d->victim.work));
            json_report(w, "victim", &c->victim, 1);
        }
        if (c->ran && c->has_hog) {
            json_string(w, "hog_on", d->hog.on);
            json_string(w, "hog_work", tenant_work_name(d->hog.work));
            json_string(w, "hog_unit", hog_unit(d));
            json_report(w, "hog", &c->hog, 0);
        }
        json_fixed(w, "victim_p99_vs_alone", tenant_victim_ratio(res, id), 4);
        json_fixed(w, "hog_vs_alone", tenant_hog_ratio(res, id), 4);
        json_close(w);
    }
    json_close(w);
    json_array(w, "fault");
    for (int m = 0; m < 2; m++)
        json_fault(w, &res->fault[m], m);
    json_close(w);
    json_close(w);
}

static void chart_panel(const tenants_result *res, const tenant_arm_id *ids, size_t n,
                        const char *title, bench_chart *chart)
{
    if (chart->nb_dist == CHART_MAX_DIST)
        return;
    chart_dist *dist = &chart->dist[chart->nb_dist++];
    snprintf(dist->title, sizeof dist->title, "%s", title);
    for (size_t i = 0; i < n; i++) {
        const tenant_cell *c = &res->arm[ids[i]];
        if (c->ran && c->has_victim)
            bench_chart_row(dist, tenant_arm(ids[i], res->victim_sms, res->sm_count)->label,
                            &c->victim.latency_us, 1);
    }
}

void bench_tenants_chart(const tenants_result *res, bench_chart *chart)
{
    char title[160];
    snprintf(title, sizeof title, "tenants: FMA victim latency (us) on %u SMs beside an FMA hog "
             "in another process", res->victim_sms);
    chart_panel(res, compute_arms, sizeof compute_arms / sizeof compute_arms[0], title, chart);
    snprintf(title, sizeof title, "tenants: read victim latency (us), 64 MiB per request, "
             "beside a copy hog");
    chart_panel(res, memory_arms, sizeof memory_arms / sizeof memory_arms[0], title, chart);
}

/* Isolation results as a table, as JSON and as chart panels. */
#include <stdio.h>
#include <string.h>

#include "bench_isolation.h"

static const iso_cell *cell_of(const iso_result *res, int hog, iso_arm arm, iso_victim v)
{
    return &res->cell[iso_arm_has_hog(arm) ? 1 + hog : ISO_HOG_NONE][arm][v];
}

static double p99_vs(const iso_result *res, const iso_cell *c, iso_arm ref, iso_victim v)
{
    return bench_ratio(c->latency_us.p99, res->cell[ISO_HOG_NONE][ref][v].latency_us.p99);
}

static void print_ratio(double r)
{
    if (r > 0)
        printf(" %8.2f", r);
    else
        printf(" %8s", "-");
}

static void print_cell(const iso_result *res, int hog, iso_arm arm, iso_victim v)
{
    const iso_cell *c = cell_of(res, hog, arm, v);
    if (!c->valid)
        return;
    const bench_summary *l = &c->latency_us, *s = &c->start_us;
    printf("%-7s %-5s %-27s %8.1f %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f %7.1f |",
           iso_victim_name(v), iso_arm_has_hog(arm) ? bench_hog_name(hog) : "-",
           iso_arm_label(arm), l->p50, l->p99, l->p999, l->max, s->p50, s->p99, s->p999, s->max);
    print_ratio(p99_vs(res, c, ISO_ALONE_FULL, v));
    print_ratio(p99_vs(res, c, ISO_ALONE_PART, v));
    printf("\n");
}

static void print_hog_row(const char *hog, const char *arm, unsigned sms, double rate,
                          double full, double part, double unit, const bench_env *env, int fma)
{
    printf("%-5s %-27s %4u %10.1f %10.1f %7.3f %8.3f", hog, arm, sms, rate,
           rate * unit * 1e-9, bench_ratio(rate, full), (double)sms / env->sm_count);
    print_ratio(bench_ratio(rate, part));
    printf("  %s\n", fma ? "GFLOP/s" : "GB/s");
}

void bench_isolation_print(const bench_env *env, const iso_result *res)
{
    printf("\n== isolation: victim in %u SMs, hog in the other %u (one split of %u SMs)\n",
           res->victim_sms, res->hog_sms, env->sm_count);
    for (int v = 0; v < ISO_NB_VICTIMS; v++)
        printf("   %s\n", res->victim_text[v]);
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        printf("   %s\n", res->hog_text[h]);
    printf("   %u reps per row after %u warm-ups, closed loop with random host gaps of 0-200 us; "
           "times in us\n",
           res->reps, res->warmups);
    printf("   latency: events around each submission; start: host launch to first block "
           "start, beyond the idle minimum\n\n");
    printf("%-7s %-5s %-27s %8s %7s %7s %7s | %7s %7s %7s %7s | %8s %8s\n", "victim", "hog", "arm",
           "lat p50", "p99", "p99.9", "max", "start50", "p99", "p99.9", "max", "p99/full",
           "p99/part");
    for (int v = 0; v < ISO_NB_VICTIMS; v++) {
        print_cell(res, 0, ISO_ALONE_FULL, v);
        print_cell(res, 0, ISO_ALONE_PART, v);
        for (int h = 0; h < BENCH_NB_HOGS; h++)
            for (int arm = 0; arm < ISO_NB_ARMS; arm++)
                if (iso_arm_has_hog(arm))
                    print_cell(res, h, arm, v);
    }
    printf("   target: 'green' p99/part <= 1.10 (the victim as if alone in its partition)\n");
    printf("\nhog throughput (share: vs alone on the whole GPU; expected: its SMs / %u)\n",
           env->sm_count);
    printf("%-5s %-27s %4s %10s %10s %7s %8s %8s\n", "hog", "arm", "SMs", "units/s", "rate",
           "share", "expected", "vs part");
    for (int h = 0; h < BENCH_NB_HOGS; h++) {
        double full = res->hog_alone_full[h], part = res->hog_alone_part[h], u = res->hog_unit[h];
        const char *name = bench_hog_name(h);
        int fma = h == BENCH_HOG_FMA;
        print_hog_row(name, "alone, whole GPU", env->sm_count, full, full, 0, u, env, fma);
        print_hog_row(name, "alone, its partition", res->hog_sms, part, full, part, u, env, fma);
        for (int arm = 0; arm < ISO_NB_ARMS; arm++)
            if (iso_arm_has_hog(arm)) {
                unsigned sms = iso_hog_sms(res, arm, env->sm_count);
                print_hog_row(name, iso_arm_label(arm), sms, res->hog_rate[h][arm], full,
                              sms == res->hog_sms ? part : 0, u, env, fma);
            }
    }
    printf("   a memory-bound hog is not expected to follow its SM share: SMs split, memory "
           "bandwidth does not\n");
}

void bench_isolation_json(json_writer *w, const bench_env *env, const iso_result *res)
{
    json_object(w, NULL);
    json_uint(w, "victim_sms", res->victim_sms);
    json_uint(w, "hog_sms", res->hog_sms);
    json_uint(w, "reps", res->reps);
    json_uint(w, "warmups", res->warmups);
    json_object(w, "victims");
    for (int v = 0; v < ISO_NB_VICTIMS; v++)
        json_string(w, iso_victim_name(v), res->victim_text[v]);
    json_close(w);
    json_object(w, "hogs");
    for (int h = 0; h < BENCH_NB_HOGS; h++) {
        json_object(w, bench_hog_name(h));
        json_string(w, "text", res->hog_text[h]);
        json_fixed(w, "unit", res->hog_unit[h], 0);
        json_string(w, "unit_kind", h == BENCH_HOG_FMA ? "flop" : "bytes");
        json_fixed(w, "alone_full_units_per_s", res->hog_alone_full[h], 4);
        json_fixed(w, "alone_partition_units_per_s", res->hog_alone_part[h], 4);
        json_close(w);
    }
    json_close(w);
    json_array(w, "cells");
    for (int hog = -1; hog < BENCH_NB_HOGS; hog++)
        for (int arm = 0; arm < ISO_NB_ARMS; arm++)
            for (int v = 0; v < ISO_NB_VICTIMS; v++) {
                if ((hog < 0) == iso_arm_has_hog(arm))
                    continue;
                const iso_cell *c = cell_of(res, hog, arm, v);
                if (!c->valid)
                    continue;
                json_object(w, NULL);
                json_string(w, "arm", iso_arm_name(arm));
                json_string(w, "hog", hog < 0 ? NULL : bench_hog_name(hog));
                json_string(w, "victim", iso_victim_name(v));
                bench_json_summary(w, "latency_us", &c->latency_us);
                bench_json_summary(w, "start_delay_us", &c->start_us);
                json_fixed(w, "clock_drift_us", c->drift_us, 3);
                json_fixed(w, "p99_vs_alone_full", p99_vs(res, c, ISO_ALONE_FULL, v), 4);
                json_fixed(w, "p99_vs_alone_partition", p99_vs(res, c, ISO_ALONE_PART, v), 4);
                json_close(w);
            }
    json_close(w);
    json_array(w, "hog_throughput");
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        for (int arm = 0; arm < ISO_NB_ARMS; arm++) {
            if (!iso_arm_has_hog(arm))
                continue;
            unsigned sms = iso_hog_sms(res, arm, env->sm_count);
            double rate = res->hog_rate[h][arm];
            json_object(w, NULL);
            json_string(w, "hog", bench_hog_name(h));
            json_string(w, "arm", iso_arm_name(arm));
            json_uint(w, "hog_sms", sms);
            json_fixed(w, "units_per_s", rate, 4);
            json_fixed(w, "vs_alone_full", bench_ratio(rate, res->hog_alone_full[h]), 4);
            json_fixed(w, "expected_share", (double)sms / env->sm_count, 4);
            json_fixed(w, "vs_alone_partition",
                       sms == res->hog_sms ? bench_ratio(rate, res->hog_alone_part[h]) : 0.0, 4);
            json_close(w);
        }
    json_close(w);
    json_close(w);
}

void bench_isolation_chart(const iso_result *res, bench_chart *chart)
{
    for (int h = 0; h < BENCH_NB_HOGS; h++)
        for (int v = 0; v < ISO_NB_VICTIMS; v++) {
            if (chart->nb_dist == CHART_MAX_DIST)
                return;
            chart_dist *d = &chart->dist[chart->nb_dist++];
            memset(d, 0, sizeof *d);
            snprintf(d->title, sizeof d->title,
                     "%s victim (%u SMs) beside the %s hog: latency per submission, us",
                     iso_victim_name(v), res->victim_sms, bench_hog_name(h));
            for (int arm = 0; arm < ISO_NB_ARMS; arm++) {
                const iso_cell *c = cell_of(res, h, arm, v);
                if (c->valid)
                    bench_chart_row(d, iso_arm_label(arm), &c->latency_us, 1);
            }
        }
}

/* What every benchmark shares: medians and tail percentiles of repeated measurements, and
 * the output: the header, the rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "numbers.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between the order statistics around rank q * (n - 1): with 500
 * samples p99.9 lies between the two largest, which is all 500 samples can say. */
static double percentile(const double *sorted, size_t n, double q)
{
    double rank = q * (double)(n - 1);
    size_t lo = (size_t)rank;
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = rank - (double)lo;
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

void bench_summarize(double *values, size_t n, bench_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(values, n, sizeof *values, compare_doubles);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    out->n = n;
    out->min = values[0];
    out->p50 = percentile(values, n, 0.50);
    out->p99 = percentile(values, n, 0.99);
    out->p999 = percentile(values, n, 0.999);
    out->max = values[n - 1];
    out->mean = sum / (double)n;
}

double bench_ratio(double a, double b) { return b > 0 ? a / b : 0; }

void bench_json_summary(json_writer *w, const char *name, const bench_summary *s)
{
    json_object(w, name);
    json_uint(w, "n", s->n);
    json_fixed(w, "min", s->min, 4);
    json_fixed(w, "p50", s->p50, 4);
    json_fixed(w, "p99", s->p99, 4);
    json_fixed(w, "p999", s->p999, 4);
    json_fixed(w, "max", s->max, 4);
    json_fixed(w, "mean", s->mean, 4);
    json_close(w);
}

void bench_print_header(const bench_env *env)
{
    char version[16];
    printf("greenctx bench: %s (%u SMs), driver %s, %s\n", env->gpu_name, env->sm_count,
           greenctx_format_driver_version(env->driver_version, version, sizeof version),
           env->date);
    printf("command: %s\n", env->command);
    if (env->simulated)
        printf("simulated: timings meaningless\n");
}

void bench_print_columns(const char *label, const char *a, const char *b)
{
    printf("%-34s %10s %10s | %10s %10s | %7s\n", label, a, "p99", b, "p99", "ratio");
}

/* A side's p50 and p99, "-" in both where there is none. */
static void print_side(const bench_summary *s)
{
    if (s->n)
        printf(" %10.2f %10.2f |", s->p50, s->p99);
    else
        printf(" %10s %10s |", "-", "-");
}

static void print_row(const bench_row *r, int quiet)
{
    const bench_summary *a = quiet ? &r->a_quiet : &r->a, *b = quiet ? &r->b_quiet : &r->b;
    char tail[200] = "";
    if (quiet && r->b.n)
        snprintf(tail, sizeof tail, "  %zu / %zu reps", a->n, b->n);
    else if (quiet)
        snprintf(tail, sizeof tail, "  %zu reps", a->n);
    else if (r->note[0])
        snprintf(tail, sizeof tail, "  %s", r->note);
    printf("%-34s", r->label);
    if (r->digits) {
        printf(" %10.*f %10s | %10.*f %10s |\n", r->digits, a->p50, "", r->digits, b->p50, "");
        return;
    }
    print_side(a);
    print_side(b);
    if (a->n && b->n)
        printf(" %7.3f%s\n", bench_ratio(a->p50, b->p50), tail);
    else
        printf(" %7s%s\n", "-", tail);
}

void bench_rows_print(const bench_row *rows, size_t n, int quiet)
{
    for (const bench_row *r = rows; r < rows + n; r++)
        if (!r->valid && !quiet)
            printf("%-34s %s\n", r->label, r->note[0] ? r->note : "not measured");
        else if (r->valid && (!quiet || r->quiet))
            print_row(r, quiet);
}

static void summary_json(json_writer *w, const char *key, const bench_summary *s, int digits)
{
    if (key && digits)
        json_fixed(w, key, s->p50, digits);
    else if (key)
        bench_json_summary(w, key, s);
}

static void row_json(json_writer *w, const bench_row *r)
{
    const bench_row_keys *k = r->keys;
    summary_json(w, k->a, &r->a, r->digits);
    if (k->a_p50)
        json_fixed(w, k->a_p50, r->a.p50, 3);
    if (r->b.n) {
        summary_json(w, k->b, &r->b, r->digits);
        if (k->ratio)
            json_fixed(w, k->ratio, bench_ratio(r->a.p50, r->b.p50), 6);
    }
    if (!r->quiet)
        return;
    if (k->a_quiet_reps)
        json_uint(w, k->a_quiet_reps, r->a_quiet.n);
    summary_json(w, k->a_quiet, &r->a_quiet, 0);
    if (!r->b.n)
        return;
    if (k->b_quiet_reps)
        json_uint(w, k->b_quiet_reps, r->b_quiet.n);
    summary_json(w, k->b_quiet, &r->b_quiet, 0);
    if (k->ratio_quiet && r->a_quiet.n && r->b_quiet.n) /* no ratio of an empty side */
        json_fixed(w, k->ratio_quiet, bench_ratio(r->a_quiet.p50, r->b_quiet.p50), 6);
}

void bench_rows_json(json_writer *w, const bench_row *rows, size_t n)
{
    for (const bench_row *r = rows; r < rows + n; r++)
        if (r->valid)
            row_json(w, r);
}

void bench_rows_json_array(json_writer *w, const char *name, const bench_row *rows, size_t n)
{
    json_array(w, name);
    for (const bench_row *r = rows; r < rows + n; r++) {
        json_object(w, NULL);
        json_string(w, "op", r->name);
        json_bool(w, "valid", r->valid);
        if (r->valid)
            row_json(w, r);
        else
            json_string(w, "note", r->note);
        json_close(w);
    }
    json_close(w);
}

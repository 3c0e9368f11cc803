/* Medians and tail percentiles of repeated measurements. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

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

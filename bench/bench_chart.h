/* What `--svg` draws, independent of which benchmark produced it: distributions (one row of
 * percentiles per arm) and curves (a value per SM count). bench_svg.c writes it. */
#ifndef GREENCTX_BENCH_CHART_H
#define GREENCTX_BENCH_CHART_H

#include "bench.h"

#define CHART_MAX_ROWS 8
#define CHART_MAX_POINTS 12
#define CHART_MAX_DIST 24
#define CHART_MAX_CURVES 4

typedef struct chart_row {
    char label[64];
    double p50, p99, p999, max;
} chart_row;

typedef struct chart_dist {
    char title[160];
    chart_row rows[CHART_MAX_ROWS];
    unsigned nb_rows;
} chart_dist; /* values in microseconds, drawn on a log axis */

typedef struct chart_curve {
    char title[160];
    char y_label[64];
    double x[CHART_MAX_POINTS], y[CHART_MAX_POINTS];
    double ideal[CHART_MAX_POINTS]; /* the physical limit at each x; 0 where none */
    unsigned nb_points;
} chart_curve;

typedef struct bench_chart {
    chart_dist dist[CHART_MAX_DIST];
    unsigned nb_dist;
    chart_curve curve[CHART_MAX_CURVES];
    unsigned nb_curves;
} bench_chart;

/* Writes the chart as one SVG file, headed by the GPU, driver, date and command line.
 * Returns 0, or -1 after printing why. */
int bench_svg_write(const char *path, const bench_env *env, const bench_chart *chart);

/* ---- bench_report.c: what every benchmark prints the same way ---- */

/* A row of d from s, its values times scale (to microseconds); none when d is full or s empty. */
void bench_chart_row(chart_dist *d, const char *label, const bench_summary *s, double scale);

/* "greenctx bench: GPU (N SMs), driver V, DATE", the command line, and on a simulated driver
 * "simulated: timings meaningless". */
void bench_print_header(const bench_env *env);

/* A benchmark's result (its tables printed as it ran) and its two printers: the JSON
 * document's members after "meta", the chart (NULL: it draws none). */
typedef struct bench_report {
    const char *schema; /* "greenctx.bench.NAME/VERSION" */
    const void *result;
    void (*json)(json_writer *w, const bench_env *env, const void *result);
    void (*chart)(const bench_env *env, const void *result, bench_chart *chart);
} bench_report;

/* With --json the JSON document on stdout; the chart into --svg ("chart: FILE" after the
 * tables). 0, or -1 after saying why. */
int bench_report_write(const bench_env *env, const bench_report *r);

#endif

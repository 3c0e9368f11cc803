/* What `--svg` draws (bench_svg.c): distributions (percentiles per arm), curves (per SM count). */
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

/* One SVG file, headed by the GPU, driver, date and command line; -1 after saying why. */
int bench_svg_write(const char *path, const bench_env *env, const bench_chart *chart);

/* ---- bench_report.c ---- */

/* "greenctx bench: GPU (N SMs), driver V, DATE", the command, and when simulated
 * "simulated: timings meaningless". */
void bench_print_header(const bench_env *env);

#endif

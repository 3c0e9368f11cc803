/* `greenctx bench`: what the benchmark files share. Kernels and the raw baselines go through
 * the raw driver table (raw_driver.h: the public API has no launch); every partition, green
 * context and stream through the public API, so that they measure what a user gets. */
#ifndef GREENCTX_BENCH_H
#define GREENCTX_BENCH_H

#include <stddef.h>

#include "raw_driver.h"
#include "json.h"

#define BENCH_MAX_VICTIM_SMS 8

typedef struct bench_options {
    unsigned reps; /* 0: each benchmark's default */
    int quick;
    int json;
    const char *svg_path;
    unsigned victim_sms[BENCH_MAX_VICTIM_SMS];
    unsigned nb_victim_sms; /* 0: the default (16) */
} bench_options;

typedef struct bench_env {
    const raw_driver *drv;
    int device;
    gcu_device cu_device;
    char gpu_name[256];
    int driver_version;
    unsigned sm_count;
    int simulated; /* --sim, or a driver that runs no kernels: timings mean nothing */
    int kernels;   /* 1 when the driver loads and runs kernels */
    CUcontext primary;
    gctx_partition *whole; /* every SM of the device */
    char date[40];         /* UTC, ISO 8601 */
    char command[1024];    /* the command line, as typed */
    bench_options opt;
} bench_env;

/* ---- bench_env.c ---- */

/* The driver, the device's facts, its primary context, whether kernels run; -1 after why. */
int bench_env_open(bench_env *env, int device);
void bench_env_close(bench_env *env);
/* "meta":{gpu, device, sm_count, driver, date, simulated, quick, command} */
void bench_json_meta(json_writer *w, const bench_env *env);

/* ---- bench_calls.c ---- */

/* 0 when r is CUDA_SUCCESS; else prints "greenctx bench: WHAT: CUDA_ERROR_..." and returns -1. */
int bench_cu(gcu_result r, const char *what);
/* 0 on GCTX_SUCCESS; else prints what and gctx_last_error() and returns -1. */
int bench_gctx(gctx_status s, const char *what);
int bench_push(const bench_env *env, CUcontext ctx);
void bench_pop(const bench_env *env);

/* Monotonic us for intervals; wall-clock ns to compare with the GPU's %globaltimer. */
double bench_now_us(void);
long long bench_wall_ns(void);
/* Busy-waits: nanosleep overshoots by tens of microseconds, the scale being measured. */
void bench_spin_us(double us);
/* xorshift64*: reproducible host-side randomness. */
unsigned long long bench_random(unsigned long long *state);

/* NULL after saying so. */
void *bench_calloc(size_t n, size_t size);
/* In the primary context (green contexts share its memory). */
int bench_alloc(const bench_env *env, gcu_deviceptr *ptr, size_t bytes, const char *what);
void bench_free(const bench_env *env, gcu_deviceptr *ptr);
/* Device memory into dst, after the work queued before it (cuMemcpyDtoH is synchronous). */
int bench_read(const bench_env *env, void *dst, gcu_deviceptr src, size_t bytes, const char *what);
/* Zeroes bytes (a multiple of 4) synchronously: only while no benchmark work is queued. */
int bench_zero(const bench_env *env, gcu_deviceptr ptr, size_t bytes);

/* One ratio made with the public API: two partitions, a context and a stream on each. */
typedef struct bench_pair {
    gctx_partition *part[2];
    gctx_context *ctx[2];
    gctx_stream *stream[2];
} bench_pair;
/* Releases what pair holds (a half-made pair too) and zeroes it. */
void bench_pair_release(bench_pair *pair);

/* ---- bench_svg.c: what `--svg` draws, distributions (percentiles per arm) and curves (per SM
 * count) ---- */

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

/* ---- bench_report.c: statistics, and the rows, table and JSON of two-sided benchmarks ---- */

typedef struct bench_summary {
    size_t n;
    double min, p50, p99, p999, max, mean;
} bench_summary;

/* Sorts values in place; percentiles interpolate between order statistics; n 0: all 0. */
void bench_summarize(double *values, size_t n, bench_summary *out);
/* a / b, or 0 when b is 0. */
double bench_ratio(double a, double b);
/* "name":{"n":..,"min":..,...} */
void bench_json_summary(json_writer *w, const char *name, const bench_summary *s);

/* A row's JSON keys (NULL: not written). */
typedef struct bench_row_keys {
    const char *a, *b, *ratio, *a_p50, *a_quiet, *b_quiet, *a_quiet_reps, *b_quiet_reps,
        *ratio_quiet;
} bench_row_keys;

/* The greenctx side against a reference (b.n 0: none), each over every rep and (quiet) over
 * its quiet reps (bench_pin.h). digits: a value per side (its p50), not a distribution. The
 * note follows the figures, or stands in their place when not measured. */
typedef struct bench_row {
    const char *name; /* in an array of rows: the row's "op" */
    char label[48];
    const bench_row_keys *keys;
    int valid, quiet, digits;
    bench_summary a, b, a_quiet, b_quiet;
    char note[160];
} bench_row;

/* "greenctx bench: GPU (N SMs), driver V, DATE", the command, and when simulated
 * "simulated: timings meaningless". */
void bench_print_header(const bench_env *env);
/* "LABEL  A-p50  p99 | B-p50  p99 | ratio" */
void bench_print_columns(const char *label, const char *a, const char *b);
/* p50 and p99 of both sides and the ratio of the p50s, or over the quiet reps (quiet). */
void bench_rows_print(const bench_row *rows, size_t n, int quiet);
/* The rows' members into the open object. */
void bench_rows_json(json_writer *w, const bench_row *rows, size_t n);
/* "name":[{"op":..,"valid":..,<the row's members> or "note":..}, ...] */
void bench_rows_json_array(json_writer *w, const char *name, const bench_row *rows, size_t n);

#endif

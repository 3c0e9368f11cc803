/*
 * `greenctx bench`: what the benchmark files share (the device, its driver table, lanes,
 * timing and error helpers).
 *
 * The public API has no kernel launch, so the benchmarks launch their kernels, and make the
 * raw baselines they compare with, through the raw driver table (raw_driver.h, shared with
 * the tests), resolved from the driver file the library loaded. Every partition, green
 * context and green stream is still made through the public API, so the benchmarks measure
 * what a user of greenctx gets.
 */
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

/* Loads the driver, takes the device's facts and its primary context, and finds out whether
 * kernels run (the simulated driver answers CUDA_ERROR_NOT_SUPPORTED). Prints why on failure
 * and returns -1. */
int bench_env_open(bench_env *env, int device);
void bench_env_close(bench_env *env);
/* Writes "meta":{gpu, device, sm_count, driver, date, simulated, quick, command}. */
void bench_json_meta(json_writer *w, const bench_env *env);

/* ---- bench_calls.c ---- */

/* 0 when r is CUDA_SUCCESS; else prints "greenctx bench: WHAT: CUDA_ERROR_..." and returns -1. */
int bench_cu(gcu_result r, const char *what);
/* 0 on GCTX_SUCCESS; else prints what and gctx_last_error() and returns -1. */
int bench_gctx(gctx_status s, const char *what);
int bench_push(const bench_env *env, CUcontext ctx);
void bench_pop(const bench_env *env);

/* Host clocks: monotonic microseconds for intervals, wall-clock nanoseconds to compare with
 * the GPU's %globaltimer. */
double bench_now_us(void);
long long bench_wall_ns(void);
/* Busy-waits: nanosleep overshoots by tens of microseconds, the scale being measured. */
void bench_spin_us(double us);
/* xorshift64*: reproducible host-side randomness. */
unsigned long long bench_random(unsigned long long *state);

/* n zeroed items of size bytes on the host; NULL after saying so. */
void *bench_calloc(size_t n, size_t size);
/* Device memory, in the primary context (green contexts share the primary's memory). */
int bench_alloc(const bench_env *env, gcu_deviceptr *ptr, size_t bytes, const char *what);
void bench_free(const bench_env *env, gcu_deviceptr *ptr);
/* Zeroes bytes (a multiple of 4) synchronously: only while no benchmark work is queued. */
int bench_zero(const bench_env *env, gcu_deviceptr ptr, size_t bytes);

/* One ratio made with the public API: two partitions, a context and a stream on each. */
typedef struct bench_pair {
    gctx_partition *part[2];
    gctx_context *ctx[2];
    gctx_stream *stream[2];
} bench_pair;
/* Releases what pair holds (any of it may be NULL, so a half-made pair too) and zeroes it. */
void bench_pair_release(bench_pair *pair);

/* ---- bench_stats.c ---- */

typedef struct bench_summary {
    size_t n;
    double min, p50, p99, p999, max, mean;
} bench_summary;

/* Sorts values in place and fills the summary (percentiles interpolate between order
 * statistics). n == 0 gives all zeros. */
void bench_summarize(double *values, size_t n, bench_summary *out);
/* a / b, or 0 when b is 0 (a missing reference prints as "-"). */
double bench_ratio(double a, double b);
/* Writes "name":{"n":..,"min":..,...} (values as given, no unit conversion). */
void bench_json_summary(json_writer *w, const char *name, const bench_summary *s);

/* ---- bench_report.c: rows, the table and the JSON of every two-sided benchmark ---- */

/* Where a row goes in the JSON document (NULL: not written): each side's summary, the ratio of
 * their p50s, a's p50 alone, each side over its quiet reps and their count. */
typedef struct bench_row_keys {
    const char *a, *b, *ratio, *a_p50, *a_quiet, *b_quiet, *a_quiet_reps, *b_quiet_reps,
        *ratio_quiet;
} bench_row_keys;

/* A row: the greenctx side against a reference (b.n == 0: none), each over every rep and over
 * its quiet reps (bench_pin.h; quiet: those were kept). digits: a value per side (its p50)
 * with that many digits, not a distribution. The note is printed after the figures, or in
 * their place when the row was not measured. */
typedef struct bench_row {
    const char *name; /* in an array of rows: the row's "op" */
    char label[48];
    const bench_row_keys *keys;
    int valid, quiet, digits;
    bench_summary a, b, a_quiet, b_quiet;
    char note[160];
} bench_row;

/* The columns' header: "LABEL  A-p50  p99 | B-p50  p99 | ratio". */
void bench_print_columns(const char *label, const char *a, const char *b);
/* Each row's p50 and p99 of both sides and the ratio of the p50s ("-" for a side without
 * any), or (quiet) over the quiet reps, rows without them left out. */
void bench_rows_print(const bench_row *rows, size_t n, int quiet);
/* The rows' members into the open object, each row's where its keys say. */
void bench_rows_json(json_writer *w, const bench_row *rows, size_t n);
/* "name":[{"op":..,"valid":..,<the row's members> or "note":..}, ...] */
void bench_rows_json_array(json_writer *w, const char *name, const bench_row *rows, size_t n);

#endif

/* `greenctx bench scaling`: compute- and memory-bound kernels on partitions of k SMs. */
#ifndef GREENCTX_BENCH_SCALING_H
#define GREENCTX_BENCH_SCALING_H

#include "bench.h"

#define SCALING_MAX_POINTS 8

typedef struct scaling_point {
    unsigned sms;
    int whole_gpu;       /* an ordinary stream, the reference */
    int fine_granules;   /* the count needed 2-SM units (co-scheduling given up) */
    int valid;
    char note[120];      /* why a size was skipped */
    double fma_ms;       /* median */
    double fma_tflops;
    double fma_per_sm;   /* GFLOP/s per SM */
    double efficiency;   /* per-SM throughput vs the whole GPU's: 1.0 is linear scaling */
    double copy_ms;      /* median */
    double copy_gbs;     /* bytes read + written per second, GB/s */
    double copy_vs_full;
} scaling_point;

typedef struct scaling_result {
    scaling_point points[SCALING_MAX_POINTS];
    unsigned nb_points;
    unsigned reps;
    char fma_text[200], copy_text[200];
} scaling_result;

int bench_scaling_run(const bench_env *env, scaling_result *res);
void bench_scaling_print(const scaling_result *res);
/* The "scaling" member of the bench document. */
void bench_scaling_json(json_writer *w, const scaling_result *res);
void bench_scaling_chart(const bench_env *env, const scaling_result *res, bench_chart *chart);

#endif

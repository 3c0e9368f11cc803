/*
 * `greenctx bench overlap`: an NCCL all-reduce beside cuBLAS GEMMs on two GPUs, arranged
 * every way a user might (ordinary streams, NCCL's CTA limit, green partitions of C SMs for
 * the communication with and without the CTA limit and cuBLAS's SM-count target), measured
 * side by side in one run, and the arrangement to use for a given mix.
 */
#ifndef GREENCTX_BENCH_OVERLAP_H
#define GREENCTX_BENCH_OVERLAP_H

#include "bench_chart.h"
#include "bench_kernels.h"
#include "overlap_libs.h"

#define OLAP_GPUS 2
#define OLAP_MAX_SIZES 4
#define OLAP_MAX_SMS 8
/* per C: ordinary streams with maxCTAs = C, and the four green variants */
#define OLAP_ARMS_PER_SMS 5
#define OLAP_MAX_ARMS (1 + OLAP_ARMS_PER_SMS * OLAP_MAX_SMS)

typedef struct olap_options {
    size_t sizes[OLAP_MAX_SIZES]; /* all-reduce message sizes, bytes */
    unsigned nb_sizes;
    unsigned sms[OLAP_MAX_SMS]; /* C: the communication partition's SM counts */
    unsigned nb_sms;
    unsigned m, n, k;           /* the GEMM: bf16 inputs and output, fp32 compute */
    unsigned mix_gemms, mix_allreduces; /* per step; 0 allreduces: balanced (see below) */
    unsigned reps;              /* all-reduces timed per arm; 0: by size and --quick */
    int quick;
} olap_options;

typedef enum olap_kind {
    OLAP_PLAIN = 0,         /* both on ordinary streams of the primary context */
    OLAP_PLAIN_MAXCTAS = 1, /* the same, NCCL limited to maxCTAs = C */
    OLAP_GREEN = 2          /* all-reduce in a partition of C SMs, GEMM in the rest */
} olap_kind;

typedef struct olap_arm {
    olap_kind kind;
    unsigned comm_sms;    /* C: the partition (green) or the CTA limit (plain maxCTAs) */
    unsigned compute_sms; /* SMs the GEMM may use: the rest, or the whole GPU */
    unsigned max_ctas;    /* NCCL's maxCTAs; 0: NCCL's default */
    unsigned sm_target;   /* cublasSetSmCountTarget on the GEMM's handle; 0: not set */
    char label[64];
    int measured;
    bench_summary ar_us;       /* all-reduce beside the GEMM (GPU 0's events) */
    bench_summary ar_alone_us; /* alone in the same SMs, same communicator */
    double gemm_tflops;        /* beside the all-reduces (GPU 0) */
    double gemm_alone_tflops;  /* alone in its SMs with the same target */
    double step_ms, step_min_ms, step_max_ms; /* the mix, both done: median over steps */
} olap_arm;

typedef struct olap_size_result {
    size_t bytes;
    unsigned reps, steps;
    unsigned mix_gemms, mix_allreduces;
    double ar_whole_us;        /* p50 alone on an ordinary stream, NCCL's default */
    olap_arm arms[OLAP_MAX_ARMS];
    unsigned nb_arms;
    int best_step;   /* the arm with the shortest step; -1 when none ran */
    int best_p99;    /* the shortest all-reduce p99 keeping the GEMM >= 0.9 of whole; or -1 */
} olap_size_result;

typedef struct olap_result {
    char gpu_name[OLAP_GPUS][256];
    unsigned sm_count[OLAP_GPUS];
    int nccl_version, cublas_version;
    char nccl_path[512], cublas_path[512];
    int init_changed_context; /* NCCL's init left another context current (then restored) */
    unsigned m, n, k;
    double gemm_whole_tflops; /* alone on an ordinary stream of the whole GPU, no target */
    olap_size_result sizes[OLAP_MAX_SIZES];
    unsigned nb_sizes;
    double seconds; /* the whole run */
} olap_result;

/* The GEMM rate beside the all-reduces that counts as keeping the GEMM: the second pick. */
#define OLAP_GEMM_KEEP 0.9

/* bench_overlap.c: every arm for every size, on devices device and device + 1. */
int bench_overlap_run(const bench_env env[OLAP_GPUS], const olap_libs *libs,
                      const olap_options *opt, olap_result *res);

/* bench_overlap_report.c */
/* Picks best_step and best_p99 of every size. */
void bench_overlap_advise(olap_result *res);
/* bench_report's printers of an olap_result; the JSON's member is "overlap". */
void bench_overlap_print(const bench_env *env, const void *result);
void bench_overlap_json(json_writer *w, const bench_env *env, const void *result);
void bench_overlap_chart(const bench_env *env, const void *result, bench_chart *chart);
/* The line a user copies into a program for an arm: the split, NCCL's config, cuBLAS. */
void bench_overlap_advice_line(const olap_arm *arm, char *buf, size_t size);

#endif

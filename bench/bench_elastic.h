/*
 * `greenctx bench elastic`: a latency workload shaped like LLM decode beside a throughput
 * workload shaped like prefill, on the same arrival trace in every arm: static splits (swept),
 * no split, priority streams, chunked prefill and the controller over layouts in one process;
 * time-slicing, static claims, MPS, MPS with the active-thread percentage and the controller
 * over claims in two processes (bench_elastic_tenants.c, through tenant_proc.c).
 *
 * The model: `layers` bf16 layers shaped like Llama-3-8B (hidden 4096, 32 query / 8 KV heads
 * of 128, FFN 14336), random weights. A decode step, for each layer: the four GEMV-shaped
 * weight reads (QKV, O, gate+up, down) for the batch and the decode attention over each
 * sequence's KV cache (`context` positions): memory bound. A prefill unit: one layer's four
 * GEMMs for `chunk` tokens on the same weights: compute bound. The kernels are this bench's
 * own (bench/kernels/elastic_kernels.cu; the simulated driver models them).
 */
#ifndef GREENCTX_BENCH_ELASTIC_H
#define GREENCTX_BENCH_ELASTIC_H

#include "bench_chart.h"
#include "greenctx_controller.h"
#include "overlap_libs.h"
#include "progress.h"

/* bench/kernels/elastic_kernels.ptx, compiled in (cmake/embed.cmake). */
extern const char bench_elastic_ptx[];

/* elastic_model.c: the kernels' entry names, and their cost model given to the simulated
 * driver when it is the one loaded (nothing on a GPU). */
enum { EL_NB_KERNELS = 4 };
extern const char *const el_kernel_names[EL_NB_KERNELS];
void el_register_sim_models(void);

#define EL_HIDDEN 4096u
#define EL_Q_HEADS 32u
#define EL_KV_HEADS 8u
#define EL_HEAD_DIM 128u
#define EL_FFN 14336u
#define EL_MAX_LAYERS 8u
#define EL_NB_MATRICES 4u /* QKV, O, gate+up, down */

/* ---- traces (bench_elastic_trace.c) ---- */

typedef enum el_trace_kind {
    EL_TRACE_ONOFF = 0,  /* peak for 1 s of every 5, 10 % of it otherwise */
    EL_TRACE_DUTY50,     /* peak for 2.5 s of every 5, 10 % otherwise */
    EL_TRACE_POISSON,    /* requests arriving as a Poisson process, the on/off trace's mean */
    EL_TRACE_STATIONARY, /* the on/off trace's mean load, constant */
    EL_NB_TRACES
} el_trace_kind;

#define EL_PERIOD_S 5.0
#define EL_LOW_LOAD 0.10
#define EL_REQUEST_S 0.5 /* how long a Poisson request stays in the batch */

typedef struct el_trace {
    el_trace_kind kind;
    double seconds;
    unsigned peak_batch;
    unsigned long long seed;
    double *arrivals; /* Poisson: sorted arrival times, seconds from the start */
    unsigned nb_arrivals;
} el_trace;

/* The traces' names by kind, NULL-terminated (a bench_arg's choices). */
extern const char *const el_trace_names[EL_NB_TRACES + 1];
const char *el_trace_name(el_trace_kind kind);
/* The mean load (share of the peak batch) of a kind's trace. */
double el_trace_mean_load(el_trace_kind kind);
/* Deterministic given its arguments. -1 when out of memory (printed). */
int el_trace_make(el_trace *trace, el_trace_kind kind, double seconds, unsigned peak_batch,
                  unsigned long long seed);
void el_trace_free(el_trace *trace);
/* The latency workload's batch t seconds into the run: 1 .. peak_batch. */
unsigned el_trace_batch(const el_trace *trace, double t);

/* ---- the workloads (bench_elastic_work.c) ---- */

typedef struct el_shape {
    unsigned layers, peak_batch, context, chunk;
    unsigned device_sms; /* the attention's split is sized for the device, the same in every arm */
} el_shape;

typedef struct el_buffers {
    gcu_deviceptr w[EL_MAX_LAYERS][EL_NB_MATRICES];
    gcu_deviceptr k[EL_MAX_LAYERS], v[EL_MAX_LAYERS];
    gcu_deviceptr x, q, y, part; /* decode's inputs and outputs */
    gcu_deviceptr a, c;          /* prefill's tokens and outputs */
} el_buffers;

/* Which GEMMs prefill and decode run: cuBLAS (tensor cores) when asked or found, else the
 * bench's own CUDA-core kernels. */
typedef enum el_gemm_kind { EL_GEMM_AUTO = 0, EL_GEMM_OWN, EL_GEMM_CUBLAS } el_gemm_kind;
typedef struct el_blas {
    olap_libs libs;
    int used;      /* 0: the own kernels */
    char why[1200]; /* auto without cuBLAS: why not */
} el_blas;

/* Loads cuBLAS and checks that it makes a handle, for EL_GEMM_CUBLAS, and for EL_GEMM_AUTO on
 * a GPU when it is found (else why says why not). -1 after a message when cuBLAS was asked
 * for and fails. */
int el_blas_open(const bench_env *env, el_gemm_kind kind, el_blas *blas);
/* What ran, for the report. */
const char *el_blas_name(const el_blas *blas, char *buf, size_t size);

/* The kernels loaded in one context, and the events work there is timed with. */
#define EL_THR_SLOTS 4 /* prefill units queued at a time in one process */
typedef struct el_site {
    CUcontext ctx;
    unsigned sms;         /* the context's: cuBLAS's SM-count target */
    const el_blas *blas;  /* the process's, or NULL */
    /* cuBLAS's handles, made with the site's context current, as a program confined to it
     * makes them: cuBLAS then picks kernels that context can launch (a claim on fine granules
     * launches no cluster of more than 2 SMs). One for each workload, since decode and
     * prefill run at once and a handle's workspace serves one stream. */
    olap_cublas_handle handle, decode_handle;
    gcu_module module;
    gcu_function fill, gemv, attn, gemm;
    CUevent lat_start, lat_end, thr_start[EL_THR_SLOTS], thr_end[EL_THR_SLOTS];
    CUevent lat_mark, thr_mark; /* where a move's new streams wait */
} el_site;

#define EL_MAX_SITES 40
typedef struct el_sites {
    el_site site[EL_MAX_SITES];
    unsigned count;
    const el_blas *blas; /* given to every site */
} el_sites;

/* The site of ctx (sms SMs), loading the kernels and making the events there the first time.
 * NULL after a message. */
el_site *el_site_get(const bench_env *env, el_sites *sites, CUcontext ctx, unsigned sms);
void el_sites_close(const bench_env *env, el_sites *sites);
/* The sites' cuBLAS handles: before the streams they may name go. */
void el_sites_close_blas(const bench_env *env, el_sites *sites);

/* Bytes a decode step reads at a batch; FLOPs of one prefill unit (a layer, chunk tokens). */
double el_decode_bytes(const el_shape *shape, unsigned batch);
double el_prefill_flops(const el_shape *shape, unsigned tokens);

/* A workload's prior: step seconds on each SM count, the counts ascending. */
#define EL_MAX_PRIOR 16
typedef struct el_prior {
    unsigned sms[EL_MAX_PRIOR];
    double s[EL_MAX_PRIOR];
    unsigned n;
} el_prior;

/* The controller over decode (prior[0], target_ms) and prefill (prior[1]), for one process
 * and two alike: rows (decode SMs, prefill SMs each); hbm 0: no bandwidth term. */
int el_controller_make(const el_shape *shape, double target_ms, const el_prior prior[2],
                       const unsigned *rows, unsigned nb_rows, unsigned device_sms, double hbm,
                       int disjoint, gctx_controller **ctl);

/* Each layer matrix W[rows][cols] (out features x in features): QKV, O, gate+up, down. */
extern const unsigned el_matrix_rows[EL_NB_MATRICES], el_matrix_cols[EL_NB_MATRICES];
/* The attention's split of each sequence's context over blocks at a batch: sized for the
 * device (shape->device_sms), the same in every arm; at least 64 positions a split. */
unsigned el_attn_splits(const el_shape *shape, unsigned batch);
/* The bytes of each buffer el_buffers_make allocates: enough for every launch of the run
 * (batches up to the peak, prefill up to 2 x chunk tokens for chunked prefill). */
typedef struct el_sizes {
    size_t weight[EL_NB_MATRICES], kv; /* kv: each of K and V, per layer */
    size_t x, q, y, part, a, c;
} el_sizes;
void el_buffer_sizes(const el_shape *shape, el_sizes *sizes);

/* Allocates and fills (with the site's kernels, on stream; synchronized) every buffer. */
int el_buffers_make(const bench_env *env, const el_shape *shape, const el_site *site,
                    CUstream stream, el_buffers *buf);
void el_buffers_free(const bench_env *env, el_buffers *buf);

/* Launches (no synchronization) one decode step of batch rows, every layer. */
int el_decode_step(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                   const el_site *site, CUstream stream, unsigned batch);
/* Launches one of them: the matrix-th GEMM (0 .. EL_NB_MATRICES - 1). */
int el_prefill_gemm(const bench_env *env, const el_buffers *buf, const el_site *site,
                    CUstream stream, unsigned layer, unsigned matrix, unsigned tokens);
/* Launches the prefill GEMMs of one layer (`layer`) for tokens tokens. */
int el_prefill_unit(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                    const el_site *site, CUstream stream, unsigned layer, unsigned tokens);

/* Times one call of work on a stream with the site's lat events, after two untimed ones: the
 * median of reps (each as el_step_latency_ms takes it: events, or the host's time if longer),
 * in seconds. */
typedef int (*el_work_fn)(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                          const el_site *site, CUstream stream, unsigned arg);
int el_time_work(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                 const el_site *site, CUstream stream, el_work_fn fn, unsigned arg,
                 unsigned reps, double *median_s);
/* el_prefill_unit of layer 0, as an el_work_fn (el_decode_step is one as it is). */
int el_prefill_fn(const bench_env *env, const el_shape *shape, const el_buffers *buf,
                  const el_site *site, CUstream stream, unsigned tokens);

/* ---- arms and results ---- */

typedef enum el_arm_kind {
    EL_ARM_STATIC = 0,   /* one process, a layout fixed for the run */
    EL_ARM_NO_SPLIT,     /* one process, both on every SM, streams of equal priority */
    EL_ARM_PRIORITY,     /* one process, every SM, decode on the high-priority stream */
    EL_ARM_CONTROLLER,   /* one process, gctx_controller choosing the layout each step */
    EL_ARM_CHUNKED,      /* one process, one stream: each decode step carries a prefill chunk */
    EL_ARM_2P_SLICED,    /* two processes, no MPS: time-sliced on every SM */
    EL_ARM_2P_CLAIMS,    /* two processes, static claims under MPS */
    EL_ARM_2P_MPS,       /* two processes, MPS, every SM each */
    EL_ARM_2P_THREADS,   /* two processes, MPS with the active-thread percentage */
    EL_ARM_2P_ELASTIC,   /* two processes, claims resized by the tenants, under MPS */
    EL_ARM_2P_ELASTIC_SLICED, /* the same without MPS: the protocol's costs, time-sliced */
    EL_NB_ARM_KINDS
} el_arm_kind;

#define EL_MAX_ARMS 24
#define EL_MAX_TIMELINE 400
#define EL_MAX_RESIZES 4096

typedef struct el_timeline {
    double t[EL_MAX_TIMELINE]; /* seconds from the start */
    unsigned lat_sms[EL_MAX_TIMELINE], thr_sms[EL_MAX_TIMELINE];
    unsigned count;
} el_timeline;

typedef struct el_arm {
    el_arm_kind kind;
    char name[48];  /* for JSON: "static_32", "controller", "2p_mps_threads", ... */
    char label[96]; /* for the table */
    unsigned lat_sms, thr_sms; /* what the arm gives each (static ones); 0: every SM / varies */
    unsigned chunk;            /* chunked prefill's tokens per step */
    int thread_percentage;     /* 2p_threads: the latency tenant's (the other gets the rest) */
    int ran;
    char why[400];             /* when it did not run: why */
    bench_summary step_ms;     /* the latency workload's step times */
    /* The same per output token (each step counted once for each token of its batch): the
     * latency a request sees, and what the target is held to. A step-weighted p99 would
     * count an arm that makes fewer, slower steps at low load against it. */
    bench_summary token_ms;
    unsigned long long steps, within_target, tokens_within_target;
    double prefill_tokens_per_s, tflops;
    unsigned resizes;
    bench_summary resize_us;   /* host time of each re-size */
    bench_summary grant_ms;    /* across processes: a growing claim's wait for its SMs */
    bench_summary thr_kernel_ms; /* across processes: the shrinking tenant's GEMM kernels */
    bench_summary thr_resize_us; /* across processes: the prefill tenant's re-sizes */
    unsigned long long contexts_made[2]; /* across processes, during the run: decode, prefill */
    el_timeline timeline;
} el_arm;

typedef struct el_target_check {
    const char *what;
    int applies; /* 0: not for this trace, or an arm it needs did not run */
    int met;      /* the rule on the figures; printed as met / not met only when measured */
    int measured; /* 0: the simulator's figures, so no verdict is printed ("simulated") */
    char detail[200];
} el_target_check;

#define EL_NB_CHECKS 5
#define EL_MAX_LAYOUTS 8

typedef struct elastic_result {
    el_shape shape;
    el_trace_kind trace;
    double seconds;
    unsigned long long seed;
    double target_ms;      /* the latency workload's step-time target */
    int target_given;      /* --target-ms, else 1.5 x the peak step on every SM */
    /* calibration: decode at peak batch and prefill units, alone, per SM count */
    unsigned nb_points;
    unsigned cal_sms[EL_MAX_LAYOUTS + 1];
    double cal_decode_ms[EL_MAX_LAYOUTS + 1], cal_prefill_ms[EL_MAX_LAYOUTS + 1];
    unsigned sm_count;
    char gemm_impl[1400];  /* which GEMM ran */
    int gemm_cublas;       /* 1: cuBLAS (the tenants use it too) */
    int mps_available, mps_started;
    char mps_why[1600];
    el_arm arm[EL_MAX_ARMS];
    unsigned nb_arms;
    int best_static, best_chunked; /* arm indices; -1: none ran */
    int best_static_within;        /* 1: the best static split holds the target */
    el_target_check check[EL_NB_CHECKS];
    int failed;
    progress_meter progress; /* a step per arm, on stderr */
} elastic_result;

/* bench_elastic_work.c: a decode step's latency: from when it was due (before a re-size that it waits behind) to its
 * end as the host saw it; not less than its events' time, which is all the simulated driver
 * (whose kernels take no host time) gives. */
double el_step_latency_ms(double event_ms, double host_ms);
/* The kinds' names (the JSON's "kind"). */
extern const char *const el_arm_kind_names[EL_NB_ARM_KINDS];
/* The next arm of res, zeroed, with its kind, name (NULL: the kind's) and label. */
el_arm *el_arm_new(elastic_result *res, el_arm_kind kind, const char *name, const char *label);
/* The arm's figures, from its samples (step times in ms, re-size costs in us). */
void el_arm_finish(el_arm *arm, double *step_ms, unsigned *batches, size_t nb_steps,
                   double target_ms, double *resize_us, size_t nb_resizes);
void el_timeline_add(el_timeline *line, double t, unsigned lat_sms, unsigned thr_sms);

/* ---- the run (bench_elastic.c): one-process arms and the calibration ---- */

typedef struct elastic_options {
    el_trace_kind trace;
    double seconds;        /* per arm */
    double target_ms;      /* 0: the default */
    unsigned layers, peak_batch, context, chunk;
    unsigned long long seed;
    int one_process_only;  /* --arms 1p */
    el_gemm_kind gemm;     /* --gemm */
    const char *json_path; /* --json-file: the JSON document there too */
} elastic_options;

/* Runs everything, prints (text or JSON), draws (--svg); closes env. An exit code. */
int bench_elastic(bench_env *env, const elastic_options *eo);

int bench_elastic_one_process(const bench_env *env, const elastic_options *eo,
                              elastic_result *res);

/* ---- two processes (bench_elastic_tenants.c) ---- */

/* The parent holds no context while this runs. */
void bench_elastic_two_process(const bench_env *env, const elastic_options *eo,
                               elastic_result *res);

/* ---- the report (bench_elastic_report.c) ---- */

void el_pick_best(elastic_result *res);
void el_check_targets(const bench_env *env, elastic_result *res);
/* bench_report's printers of an elastic_result. */
void bench_elastic_print(const bench_env *env, const void *result);
void bench_elastic_json(json_writer *w, const bench_env *env, const void *result);
void bench_elastic_chart(const bench_env *env, const void *result, bench_chart *chart);

#endif

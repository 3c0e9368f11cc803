/*
 * Overlap: an NCCL all-reduce between two GPUs beside cuBLAS GEMMs on the same GPUs.
 *
 * One process drives both GPUs (one communicator per GPU, made in one NCCL group). Per arm:
 * - the all-reduce beside the GEMM: a feeder thread keeps GEMMs queued on both GPUs' compute
 *   streams while the main thread runs the all-reduce in a closed loop (each one waited for),
 *   timed by events on GPU 0's communication stream behind a short gate kernel (so the host's
 *   enqueue is not in the time); the GEMM rate is what the feeder got (GPU 0's events around
 *   its GEMMs);
 * - the step: a fixed mix of GEMMs and all-reduces queued at once, interleaved in proportion,
 *   timed on the host until both are done (median over steps);
 * - the references: the same all-reduce alone in the same SMs with the same communicator, and
 *   the GEMM alone in its SMs with the same SM-count target.
 * Results are checked on the host: the all-reduce's sum at sampled words on both GPUs, sampled
 * GEMM entries against a double-precision dot product.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "bench_overlap.h"

#define GEMM_IN_FLIGHT 3u
#define AR_WARMUPS 10
#define AR_SMALL_BYTES (16u << 20) /* at most: a latency-bound size, timed more often */
#define AR_REPS_SMALL 2000
#define AR_REPS_LARGE 200
#define AR_QUICK_REPS_SMALL 200
#define AR_QUICK_REPS_LARGE 20
#define STEPS 7
#define QUICK_STEPS 3
#define GEMM_ALONE_S 0.5
#define QUICK_GEMM_ALONE_S 0.1
/* GEMMs before anything is timed: the GPUs' clocks ramp up from idle and cuBLAS loads its
 * kernels on first use, both of which would land in the first GEMM reference. */
#define CLOCK_RAMP_S 1.0
#define QUICK_CLOCK_RAMP_S 0.5
#define GEMM_WARMUPS 3 /* after each change of stream or SM-count target */
#define CHECK_SAMPLES 8
/* The gate ahead of each timed all-reduce: one block of the FMA chain, about 65 us on an H200
 * (8 chunks of 2000 steps), longer than NCCL takes to enqueue an all-reduce on the host. */
#define GATE_CHUNKS 8
#define GATE_ITERS 2000
#define MIX_MAX_ALLREDUCES 100000u /* a balanced mix's bound (no timings: the simulator) */
/* The all-reduce's inputs: GPU 0 sends 1.5 everywhere, GPU 1 2.25; the sum is exact. */
static const float ar_input[OLAP_GPUS] = {1.5f, 2.25f};
#define AR_SUM 3.75f

typedef struct olap_gpu {
    const bench_env *env;
    olap_cublas_handle blas;
    gcu_deviceptr a, b, c, send, recv, gate_out;
    bench_lane plain_comm, plain_compute;
    bench_lane green_comm, green_compute; /* of the C being measured */
    gctx_partition *parts[2];
    olap_nccl_comm comm_default, comm_limited; /* limited: maxCTAs = the C being measured */
} olap_gpu;

typedef struct olap_run {
    const olap_libs *L;
    const olap_options *opt;
    olap_result *res;
    olap_gpu gpu[OLAP_GPUS];
    uint16_t *host_a, *host_b; /* the GEMM's inputs, bf16 */
    size_t max_bytes;
    /* what the arm being measured uses */
    bench_lane *comm_lane[OLAP_GPUS], *compute_lane[OLAP_GPUS];
    olap_nccl_comm comm[OLAP_GPUS];
    size_t bytes;
    progress_meter progress; /* one step per arm */
} olap_run;

/* ---- errors ---------------------------------------------------------------------------- */

static int lib_failed(const char *what, const char *text, const char *type, int code)
{
    fprintf(stderr, "greenctx bench overlap: %s: %s (%s %d)\n", what, text, type, code);
    return -1;
}

static int nccl_ok(const olap_run *run, olap_nccl_result r, const char *what)
{
    return r == OLAP_NCCL_SUCCESS
               ? 0
               : lib_failed(what, run->L->ncclGetErrorString(r), "ncclResult", r);
}

static int blas_ok(const olap_run *run, olap_cublas_status s, const char *what)
{
    return s == OLAP_CUBLAS_SUCCESS
               ? 0
               : lib_failed(what, run->L->cublasGetStatusString(s), "cublasStatus", s);
}

/* ---- bf16 data ------------------------------------------------------------------------- */

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int make_inputs(olap_run *run)
{
    const olap_options *o = run->opt;
    size_t na = (size_t)o->m * o->k, nb = (size_t)o->k * o->n;
    run->host_a = malloc(na * sizeof *run->host_a);
    run->host_b = malloc(nb * sizeof *run->host_b);
    if (!run->host_a || !run->host_b) {
        fprintf(stderr, "greenctx bench overlap: out of host memory for the GEMM's inputs\n");
        return -1;
    }
    unsigned long long rng = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < na; i++)
        run->host_a[i] = to_bf16((float)((bench_random(&rng) >> 40) * 0x1p-23 - 1.0));
    for (size_t i = 0; i < nb; i++)
        run->host_b[i] = to_bf16((float)((bench_random(&rng) >> 40) * 0x1p-23 - 1.0));
    return 0;
}

/* ---- per GPU: memory, cuBLAS, lanes ---------------------------------------------------- */

static int upload(olap_run *run, olap_gpu *g, const uint16_t *host, gcu_deviceptr dst,
                  unsigned rows, unsigned cols)
{
    if (bench_push(g->env, g->env->primary))
        return -1;
    int rc = blas_ok(run, run->L->cublasSetMatrix((int)rows, (int)cols, 2, host, (int)rows,
                                                  (void *)(uintptr_t)dst, (int)rows),
                     "cublasSetMatrix (the GEMM's inputs)");
    bench_pop(g->env);
    return rc;
}

static int gpu_open(olap_run *run, olap_gpu *g, const bench_env *env, unsigned index)
{
    const olap_options *o = run->opt;
    g->env = env;
    size_t bf = 2;
    if (bench_alloc(env, &g->a, (size_t)o->m * o->k * bf, "the GEMM's A") ||
        bench_alloc(env, &g->b, (size_t)o->k * o->n * bf, "the GEMM's B") ||
        bench_alloc(env, &g->c, (size_t)o->m * o->n * bf, "the GEMM's C") ||
        bench_alloc(env, &g->send, run->max_bytes, "the all-reduce's input") ||
        bench_alloc(env, &g->recv, run->max_bytes, "the all-reduce's output") ||
        bench_alloc(env, &g->gate_out, BENCH_BLOCK * sizeof(float), "the gate kernel"))
        return -1;
    float v = ar_input[index];
    unsigned bits;
    memcpy(&bits, &v, sizeof bits);
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuMemsetD32(g->send, bits, run->max_bytes / 4),
                      "cuMemsetD32 (the all-reduce's input)");
    /* The memset runs on the legacy stream, which the benchmark's streams never wait for. */
    if (rc == 0)
        rc = bench_cu(env->drv->cuStreamSynchronize(NULL), "cuStreamSynchronize (a memset)");
    if (rc == 0)
        rc = blas_ok(run, run->L->cublasCreate_v2(&g->blas), "cublasCreate");
    bench_pop(env);
    if (rc || upload(run, g, run->host_a, g->a, o->m, o->k) ||
        upload(run, g, run->host_b, g->b, o->k, o->n))
        return -1;
    if (index == 0) {
        int version = 0;
        if (run->L->cublasGetVersion_v2(g->blas, &version) == OLAP_CUBLAS_SUCCESS)
            run->res->cublas_version = version;
    }
    return bench_lane_primary(env, BENCH_PRIORITY_NORMAL, &g->plain_comm) ||
           bench_lane_primary(env, BENCH_PRIORITY_NORMAL, &g->plain_compute);
}

static void green_close(olap_gpu *g)
{
    bench_lane_close(g->env, &g->green_comm);
    bench_lane_close(g->env, &g->green_compute);
    gctx_partition_release(g->parts[0]);
    gctx_partition_release(g->parts[1]);
    g->parts[0] = g->parts[1] = NULL;
}

static void gpu_close(const olap_run *run, olap_gpu *g)
{
    if (!g->env)
        return;
    /* cuBLAS first: its handle may still name a stream of the lanes below. */
    if (g->blas && bench_push(g->env, g->env->primary) == 0) {
        run->L->cublasSetStream_v2(g->blas, NULL);
        run->L->cublasDestroy_v2(g->blas);
        bench_pop(g->env);
    }
    green_close(g);
    bench_lane_close(g->env, &g->plain_comm);
    bench_lane_close(g->env, &g->plain_compute);
    gcu_deviceptr *bufs[] = {&g->a, &g->b, &g->c, &g->send, &g->recv, &g->gate_out};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        bench_free(g->env, bufs[i]);
}

/* {C, rest} on each GPU, a green context and stream on each part. */
static int green_open(olap_run *run, unsigned comm_sms)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        olap_gpu *g = &run->gpu[i];
        gctx_group groups[2] = {{.num_sms = comm_sms}, {.backfill = 1}};
        char what[96];
        snprintf(what, sizeof what, "splitting GPU %d into {%u, rest}", g->env->device, comm_sms);
        if (bench_gctx(gctx_partition_split(g->env->whole, groups, 2, NULL, g->parts, NULL, NULL,
                                            NULL),
                       what) ||
            bench_lane_green(g->env, g->parts[0], BENCH_PRIORITY_NORMAL, &g->green_comm) ||
            bench_lane_green(g->env, g->parts[1], BENCH_PRIORITY_NORMAL, &g->green_compute))
            return -1;
    }
    return 0;
}

/* ---- NCCL ------------------------------------------------------------------------------ */

/* One communicator per GPU in one group; max_ctas 0 leaves NCCL's default. NCCL's init makes
 * contexts current on this thread: gctx_current_context_save/restore put the caller's back. */
static int comms_make(olap_run *run, unsigned max_ctas, int limited)
{
    const olap_libs *L = run->L;
    olap_nccl_unique_id id;
    olap_nccl_config config = {sizeof(olap_nccl_config), OLAP_NCCL_API_MAGIC,
                               OLAP_NCCL_CONFIG_VERSION, 1, OLAP_NCCL_CONFIG_UNDEF_INT,
                               OLAP_NCCL_CONFIG_UNDEF_INT, OLAP_NCCL_CONFIG_UNDEF_INT, NULL};
    if (max_ctas)
        config.maxCTAs = (int)max_ctas;
    CUcontext saved;
    if (bench_gctx(gctx_current_context_save(&saved), "saving the current context") ||
        nccl_ok(run, L->ncclGetUniqueId(&id), "ncclGetUniqueId") ||
        nccl_ok(run, L->ncclGroupStart(), "ncclGroupStart"))
        return -1;
    int rc = 0;
    for (unsigned i = 0; i < OLAP_GPUS && !rc; i++) {
        olap_gpu *g = &run->gpu[i];
        olap_nccl_comm *comm = limited ? &g->comm_limited : &g->comm_default;
        /* NCCL takes the device from the current context (the runtime's current device). */
        if ((rc = bench_push(g->env, g->env->primary)))
            break;
        rc = nccl_ok(run, L->ncclCommInitRankConfig(comm, OLAP_GPUS, id, (int)i, &config),
                     "ncclCommInitRankConfig");
        bench_pop(g->env);
    }
    rc |= nccl_ok(run, L->ncclGroupEnd(), "ncclGroupEnd (communicator init)");
    int changed = 0;
    rc |= bench_gctx(gctx_current_context_restore(saved, &changed),
                     "restoring the current context after NCCL's init");
    run->res->init_changed_context |= changed;
    return rc ? -1 : 0;
}

static void comms_destroy(olap_run *run, int limited)
{
    CUcontext saved;
    int have = gctx_current_context_save(&saved) == GCTX_SUCCESS;
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        olap_nccl_comm *comm = limited ? &run->gpu[i].comm_limited : &run->gpu[i].comm_default;
        if (*comm)
            run->L->ncclCommDestroy(*comm);
        *comm = NULL;
    }
    if (have)
        gctx_current_context_restore(saved, NULL);
}

static int allreduce(olap_run *run)
{
    const olap_libs *L = run->L;
    size_t count = run->bytes / sizeof(float);
    int rc = nccl_ok(run, L->ncclGroupStart(), "ncclGroupStart");
    for (unsigned i = 0; i < OLAP_GPUS && !rc; i++)
        rc = nccl_ok(run,
                     L->ncclAllReduce((const void *)(uintptr_t)run->gpu[i].send,
                                      (void *)(uintptr_t)run->gpu[i].recv, count,
                                      OLAP_NCCL_FLOAT32, OLAP_NCCL_SUM, run->comm[i],
                                      run->comm_lane[i]->stream),
                     "ncclAllReduce");
    int ended = nccl_ok(run, L->ncclGroupEnd(), "ncclGroupEnd (all-reduce)");
    return rc || ended ? -1 : 0;
}

/* ---- cuBLAS ---------------------------------------------------------------------------- */

static int gemm(olap_run *run, unsigned i)
{
    const olap_options *o = run->opt;
    olap_gpu *g = &run->gpu[i];
    static const float one = 1.0f, zero = 0.0f;
    if (bench_push(g->env, g->env->primary)) /* cuBLAS works in its device's context */
        return -1;
    int rc = blas_ok(run,
                     run->L->cublasGemmEx(g->blas, OLAP_CUBLAS_OP_N, OLAP_CUBLAS_OP_N, (int)o->m,
                                          (int)o->n, (int)o->k, &one, (void *)(uintptr_t)g->a,
                                          OLAP_CUDA_R_16BF, (int)o->m, (void *)(uintptr_t)g->b,
                                          OLAP_CUDA_R_16BF, (int)o->k, &zero,
                                          (void *)(uintptr_t)g->c, OLAP_CUDA_R_16BF, (int)o->m,
                                          OLAP_CUBLAS_COMPUTE_32F, OLAP_CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
    bench_pop(g->env);
    return rc;
}

/* The GEMM's stream and SM-count target (0: cuBLAS's default, every SM of the device), then a
 * few GEMMs so that whatever cuBLAS picks for them is loaded before anything is timed. */
static int gemm_setup(olap_run *run, unsigned target)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        olap_gpu *g = &run->gpu[i];
        if (bench_push(g->env, g->env->primary))
            return -1;
        int rc = blas_ok(run, run->L->cublasSetStream_v2(g->blas, run->compute_lane[i]->stream),
                         "cublasSetStream") ||
                 blas_ok(run, run->L->cublasSetSmCountTarget(g->blas, (int)target),
                         "cublasSetSmCountTarget");
        bench_pop(g->env);
        for (unsigned w = 0; w < GEMM_WARMUPS && !rc; w++)
            rc = gemm(run, i);
        if (rc || bench_cu(g->env->drv->cuStreamSynchronize(run->compute_lane[i]->stream),
                           "the GEMM's warm-up"))
            return -1;
    }
    return 0;
}

static double gemm_flop(const olap_options *o) { return 2.0 * o->m * o->n * o->k; }

/* ---- the GEMM feeder thread ------------------------------------------------------------ */

typedef struct feeder {
    olap_run *run;
    pthread_t thread;
    atomic_int stop;
    atomic_uint launched; /* GEMM pairs queued so far */
    atomic_int failed;
    int running;
    double tflops;
} feeder;

static int feed(feeder *f, CUevent ring[OLAP_GPUS][GEMM_IN_FLIGHT])
{
    olap_run *run = f->run;
    const raw_driver *drv = run->gpu[0].env->drv;
    const bench_lane *lane0 = run->compute_lane[0];
    if (bench_cu(drv->cuEventRecord(lane0->start, lane0->stream), "cuEventRecord (GEMM start)"))
        return -1;
    unsigned long long n = 0;
    for (; !atomic_load(&f->stop); n++) {
        for (unsigned i = 0; i < OLAP_GPUS; i++) {
            CUevent slot = ring[i][n % GEMM_IN_FLIGHT];
            if (n >= GEMM_IN_FLIGHT && bench_cu(drv->cuEventSynchronize(slot), "a GEMM"))
                return -1;
            if (gemm(run, i) || bench_cu(drv->cuEventRecord(slot, run->compute_lane[i]->stream),
                                         "cuEventRecord (GEMM)"))
                return -1;
        }
        atomic_fetch_add(&f->launched, 1);
    }
    double ms;
    if (bench_cu(drv->cuEventRecord(lane0->end, lane0->stream), "cuEventRecord (GEMM end)") ||
        bench_lane_elapsed(run->gpu[0].env, lane0, &ms))
        return -1;
    f->tflops = ms > 0 ? (double)n * gemm_flop(run->opt) / (ms * 1e-3) * 1e-12 : 0;
    return 0;
}

static void *feeder_main(void *arg)
{
    feeder *f = arg;
    olap_run *run = f->run;
    CUevent ring[OLAP_GPUS][GEMM_IN_FLIGHT];
    memset(ring, 0, sizeof ring);
    int rc = 0;
    for (unsigned i = 0; i < OLAP_GPUS && !rc; i++) {
        const bench_env *env = run->gpu[i].env;
        if ((rc = bench_push(env, run->compute_lane[i]->ctx)))
            break;
        for (unsigned s = 0; s < GEMM_IN_FLIGHT && !rc; s++)
            rc = bench_cu(env->drv->cuEventCreate(&ring[i][s], GCU_EVENT_DISABLE_TIMING),
                          "cuEventCreate");
        bench_pop(env);
    }
    if (!rc)
        rc = feed(f, ring);
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        const bench_env *env = run->gpu[i].env;
        env->drv->cuStreamSynchronize(run->compute_lane[i]->stream);
        for (unsigned s = 0; s < GEMM_IN_FLIGHT; s++)
            if (ring[i][s])
                env->drv->cuEventDestroy(ring[i][s]);
    }
    atomic_store(&f->failed, rc != 0); /* also ends feeder_start's wait */
    return NULL;
}

static void feeder_init(feeder *f, olap_run *run)
{
    memset(f, 0, sizeof *f);
    f->run = run;
    atomic_init(&f->stop, 0);
    atomic_init(&f->launched, 0);
    atomic_init(&f->failed, 0);
}

/* Starts the feeder and returns once it has GEMMs queued on both GPUs. */
static int feeder_start(feeder *f, olap_run *run)
{
    feeder_init(f, run);
    if (pthread_create(&f->thread, NULL, feeder_main, f) != 0) {
        fprintf(stderr, "greenctx bench overlap: could not start the GEMM thread\n");
        return -1;
    }
    f->running = 1;
    while (atomic_load(&f->launched) < GEMM_IN_FLIGHT && !atomic_load(&f->failed))
        bench_spin_us(50);
    return atomic_load(&f->failed) ? -1 : 0;
}

static int feeder_stop(feeder *f)
{
    if (!f->running)
        return 0;
    atomic_store(&f->stop, 1);
    pthread_join(f->thread, NULL);
    f->running = 0;
    return atomic_load(&f->failed) ? -1 : 0;
}

/* ---- measurements ---------------------------------------------------------------------- */

static int sync_all(olap_run *run)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        const raw_driver *drv = run->gpu[i].env->drv;
        if (bench_cu(drv->cuStreamSynchronize(run->comm_lane[i]->stream), "the all-reduce") ||
            bench_cu(drv->cuStreamSynchronize(run->compute_lane[i]->stream), "the GEMM"))
            return -1;
    }
    return 0;
}

/* A short kernel ahead of the start event holds each GPU's communication stream while the
 * host enqueues the all-reduce, so that the events time the all-reduce on the GPUs and not
 * NCCL's launch on the host; both GPUs get one, so neither starts ahead (where the driver runs
 * no kernels there is no gate). */
static int gate(olap_run *run)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        const bench_env *env = run->gpu[i].env;
        const bench_lane *lane = run->comm_lane[i];
        if (env->kernels && bench_fma(env, &lane->mod, lane->stream, 1, run->gpu[i].gate_out,
                                      GATE_CHUNKS, GATE_ITERS, 0))
            return -1;
    }
    return 0;
}

/* Closed loop: each all-reduce waited for on both GPUs; us gets reps times. */
static int ar_series(olap_run *run, unsigned reps, bench_summary *out)
{
    const bench_lane *lane = run->comm_lane[0];
    const raw_driver *drv = run->gpu[0].env->drv;
    double *us = malloc(reps * sizeof *us);
    if (!us)
        return -1;
    int rc = 0;
    for (unsigned r = 0; r < AR_WARMUPS + reps && !rc; r++) {
        double ms = 0;
        rc = gate(run) ||
             bench_cu(drv->cuEventRecord(lane->start, lane->stream), "cuEventRecord") ||
             allreduce(run) ||
             bench_cu(drv->cuEventRecord(lane->end, lane->stream), "cuEventRecord") ||
             bench_lane_elapsed(run->gpu[0].env, lane, &ms) ||
             bench_cu(run->gpu[1].env->drv->cuStreamSynchronize(run->comm_lane[1]->stream),
                      "the all-reduce on the second GPU");
        if (r >= AR_WARMUPS)
            us[r - AR_WARMUPS] = ms * 1e3;
    }
    if (!rc)
        bench_summarize(us, reps, out);
    free(us);
    return rc;
}

/* GEMMs alone on the compute lanes for seconds: GPU 0's rate. */
static int gemm_for(olap_run *run, double seconds, double *tflops)
{
    feeder f;
    if (feeder_start(&f, run)) {
        feeder_stop(&f);
        return -1;
    }
    bench_spin_us(seconds * 1e6);
    if (feeder_stop(&f))
        return -1;
    *tflops = f.tflops;
    return 0;
}

static int gemm_alone(olap_run *run, double *tflops)
{
    return gemm_for(run, run->opt->quick ? QUICK_GEMM_ALONE_S : GEMM_ALONE_S, tflops);
}

/* The mix queued at once, GEMMs and all-reduces interleaved in proportion; host time from the
 * first submission until both GPUs are done with both. */
static int step_once(olap_run *run, unsigned gemms, unsigned allreduces, double *ms)
{
    if (sync_all(run))
        return -1;
    double t0 = bench_now_us();
    unsigned g = 0, a = 0;
    while (g < gemms || a < allreduces) {
        int next_gemm = g < gemms && (a >= allreduces ||
                                      (2ull * g + 1) * allreduces <= (2ull * a + 1) * gemms);
        int rc = 0;
        if (next_gemm) {
            for (unsigned i = 0; i < OLAP_GPUS && !rc; i++)
                rc = gemm(run, i);
            g++;
        } else {
            rc = allreduce(run);
            a++;
        }
        if (rc)
            return -1;
    }
    if (sync_all(run))
        return -1;
    *ms = (bench_now_us() - t0) * 1e-3;
    return 0;
}

static int steps(olap_run *run, const olap_size_result *sr, olap_arm *arm)
{
    double ms[STEPS + 1];
    unsigned n = sr->steps;
    for (unsigned s = 0; s <= n; s++) /* the first is a warm-up */
        if (step_once(run, sr->mix_gemms, sr->mix_allreduces, &ms[s]))
            return -1;
    bench_summary sum;
    bench_summarize(ms + 1, n, &sum);
    arm->step_ms = sum.p50;
    arm->step_min_ms = sum.min;
    arm->step_max_ms = sum.max;
    return 0;
}

/* ---- checks ---------------------------------------------------------------------------- */

static int read_back(const olap_gpu *g, void *host, gcu_deviceptr src, size_t bytes)
{
    if (bench_push(g->env, g->env->primary))
        return -1;
    int rc = bench_cu(g->env->drv->cuMemcpyDtoH(host, src, bytes), "cuMemcpyDtoH (a check)");
    bench_pop(g->env);
    return rc;
}

static int check_allreduce(olap_run *run, const char *arm)
{
    size_t words = run->bytes / 4;
    for (unsigned i = 0; i < OLAP_GPUS; i++)
        for (unsigned s = 0; s < CHECK_SAMPLES; s++) {
            size_t w = s == CHECK_SAMPLES - 1 ? words - 1 : (words / CHECK_SAMPLES) * s + s;
            float v = 0;
            if (read_back(&run->gpu[i], &v, run->gpu[i].recv + w * 4, 4))
                return -1;
            if (v != AR_SUM) {
                fprintf(stderr, "greenctx bench overlap: %s: the all-reduce's word %zu on GPU %d "
                                "is %g, expected %g\n",
                        arm, w, run->gpu[i].env->device, v, AR_SUM);
                return -1;
            }
        }
    return 0;
}

static int check_gemm(olap_run *run, const char *arm)
{
    const olap_options *o = run->opt;
    unsigned long long rng = 0x5eedULL;
    for (unsigned s = 0; s < CHECK_SAMPLES; s++) {
        size_t r = bench_random(&rng) % o->m, c = bench_random(&rng) % o->n;
        double ref = 0, mag = 0;
        for (size_t l = 0; l < o->k; l++) {
            double p = from_bf16(run->host_a[r + l * o->m]) * from_bf16(run->host_b[l + c * o->k]);
            ref += p;
            mag += fabs(p);
        }
        for (unsigned i = 0; i < OLAP_GPUS; i++) {
            uint16_t h = 0;
            if (read_back(&run->gpu[i], &h, run->gpu[i].c + 2 * (r + c * (size_t)o->m), 2))
                return -1;
            double got = from_bf16(h);
            /* bf16 output (8 bits of mantissa) of an fp32 sum */
            if (!(fabs(got - ref) <= 0x1p-7 * fabs(ref) + 0x1p-10 * mag)) {
                fprintf(stderr, "greenctx bench overlap: %s: GEMM entry (%zu, %zu) on GPU %d is "
                                "%g, expected %g\n",
                        arm, r, c, run->gpu[i].env->device, got, ref);
                return -1;
            }
        }
    }
    return 0;
}

/* ---- arms ------------------------------------------------------------------------------ */

static void use_lanes(olap_run *run, int green, int limited)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        olap_gpu *g = &run->gpu[i];
        run->comm_lane[i] = green ? &g->green_comm : &g->plain_comm;
        run->compute_lane[i] = green ? &g->green_compute : &g->plain_compute;
        run->comm[i] = limited ? g->comm_limited : g->comm_default;
    }
}

static unsigned ar_reps(const olap_run *run, size_t bytes)
{
    if (run->opt->reps)
        return run->opt->reps;
    int small = bytes <= AR_SMALL_BYTES;
    if (run->opt->quick)
        return small ? AR_QUICK_REPS_SMALL : AR_QUICK_REPS_LARGE;
    return small ? AR_REPS_SMALL : AR_REPS_LARGE;
}

static int zero_outputs(olap_run *run)
{
    for (unsigned i = 0; i < OLAP_GPUS; i++)
        if (bench_zero(run->gpu[i].env, run->gpu[i].recv, run->max_bytes))
            return -1;
    return 0;
}

/* The all-reduce alone on the lanes and communicator chosen. */
static int ar_alone(olap_run *run, size_t bytes, bench_summary *out)
{
    run->bytes = bytes;
    return sync_all(run) || ar_series(run, ar_reps(run, bytes), out) ? -1 : 0;
}

static void arm_label(olap_arm *arm)
{
    int n = 0;
    if (arm->kind == OLAP_GREEN)
        n = snprintf(arm->label, sizeof arm->label, "green %u | %u", arm->comm_sms,
                     arm->compute_sms);
    else
        n = snprintf(arm->label, sizeof arm->label, "ordinary streams");
    if (arm->max_ctas && n > 0 && (size_t)n < sizeof arm->label)
        n += snprintf(arm->label + n, sizeof arm->label - n, ", maxCTAs %u", arm->max_ctas);
    if (arm->sm_target && n > 0 && (size_t)n < sizeof arm->label)
        snprintf(arm->label + n, sizeof arm->label - n, ", SM target %u", arm->sm_target);
}

/* One arm: the all-reduce beside the GEMM, the step, the checks. Lanes, communicator and the
 * GEMM's target are chosen by the caller. */
static int measure_arm(olap_run *run, olap_size_result *sr, olap_arm *arm)
{
    arm_label(arm);
    progress_step(&run->progress, "%zu bytes: %s", sr->bytes, arm->label);
    feeder f;
    feeder_init(&f, run);
    run->bytes = sr->bytes;
    if (zero_outputs(run) || gemm_setup(run, arm->sm_target) || feeder_start(&f, run)) {
        feeder_stop(&f);
        return -1;
    }
    int rc = ar_series(run, sr->reps, &arm->ar_us);
    rc |= feeder_stop(&f);
    arm->gemm_tflops = f.tflops;
    if (rc || steps(run, sr, arm) || check_allreduce(run, arm->label) ||
        check_gemm(run, arm->label))
        return -1;
    arm->measured = 1;
    return 0;
}

/* Every arm of one C: ordinary streams with maxCTAs = C, and the green partition of C SMs
 * with and without maxCTAs and the GEMM's SM-count target. */
static int run_sms(olap_run *run, unsigned ci)
{
    const olap_options *o = run->opt;
    unsigned c = o->sms[ci];
    if (green_open(run, c) || comms_make(run, c, 1))
        return -1;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    if (bench_gctx(gctx_partition_get_info(run->gpu[0].parts[1], &info), "the GEMM's partition"))
        return -1;
    unsigned rest = info.sm_count;
    double alone[2]; /* the GEMM alone in the rest: no target, target = rest */
    use_lanes(run, 1, 0);
    for (int t = 0; t < 2; t++)
        if (gemm_setup(run, t ? rest : 0) || gemm_alone(run, &alone[t]))
            return -1;
    for (unsigned s = 0; s < run->res->nb_sizes; s++) {
        olap_size_result *sr = &run->res->sizes[s];
        olap_arm *arms = &sr->arms[1 + ci * OLAP_ARMS_PER_SMS];
        bench_summary plain_alone, green_alone[2];
        use_lanes(run, 0, 1);
        if (ar_alone(run, sr->bytes, &plain_alone))
            return -1;
        for (int limited = 0; limited < 2; limited++) {
            use_lanes(run, 1, limited);
            if (ar_alone(run, sr->bytes, &green_alone[limited]))
                return -1;
        }
        arms[0] = (olap_arm){.kind = OLAP_PLAIN_MAXCTAS, .comm_sms = c,
                             .compute_sms = run->res->sm_count[0], .max_ctas = c,
                             .ar_alone_us = plain_alone,
                             .gemm_alone_tflops = run->res->gemm_whole_tflops};
        use_lanes(run, 0, 1);
        if (measure_arm(run, sr, &arms[0]))
            return -1;
        for (int v = 0; v < 4; v++) {
            int limited = v & 1, target = v >> 1;
            olap_arm *arm = &arms[1 + v];
            *arm = (olap_arm){.kind = OLAP_GREEN, .comm_sms = c, .compute_sms = rest,
                              .max_ctas = limited ? c : 0, .sm_target = target ? rest : 0,
                              .ar_alone_us = green_alone[limited],
                              .gemm_alone_tflops = alone[target]};
            use_lanes(run, 1, limited);
            if (measure_arm(run, sr, arm))
                return -1;
        }
        sr->nb_arms = 1 + (ci + 1) * OLAP_ARMS_PER_SMS;
    }
    comms_destroy(run, 1);
    use_lanes(run, 0, 0); /* off the green streams before they go */
    if (gemm_setup(run, 0))
        return -1;
    for (unsigned i = 0; i < OLAP_GPUS; i++)
        green_close(&run->gpu[i]);
    return 0;
}

/* The references on the whole GPU and the mix of each size, then the ordinary arm. */
static int run_plain(olap_run *run)
{
    olap_result *res = run->res;
    const olap_options *o = run->opt;
    use_lanes(run, 0, 0);
    double ramp;
    if (gemm_setup(run, 0) ||
        gemm_for(run, run->opt->quick ? QUICK_CLOCK_RAMP_S : CLOCK_RAMP_S, &ramp) ||
        gemm_alone(run, &res->gemm_whole_tflops))
        return -1;
    double gemm_ms = gemm_flop(o) / (res->gemm_whole_tflops * 1e12) * 1e3;
    for (unsigned s = 0; s < res->nb_sizes; s++) {
        olap_size_result *sr = &res->sizes[s];
        olap_arm *arm = &sr->arms[0];
        *arm = (olap_arm){.kind = OLAP_PLAIN, .compute_sms = res->sm_count[0],
                          .gemm_alone_tflops = res->gemm_whole_tflops};
        if (ar_alone(run, sr->bytes, &arm->ar_alone_us))
            return -1;
        sr->ar_whole_us = arm->ar_alone_us.p50;
        sr->mix_gemms = o->mix_gemms;
        sr->mix_allreduces = o->mix_allreduces;
        if (!sr->mix_allreduces) { /* balanced: the all-reduces alone take as long as the GEMMs */
            double r = o->mix_gemms * gemm_ms * 1e3 / sr->ar_whole_us;
            sr->mix_allreduces = !(r >= 1) ? 1 : r > MIX_MAX_ALLREDUCES ? MIX_MAX_ALLREDUCES
                                                                         : (unsigned)lround(r);
        }
        if (measure_arm(run, sr, arm))
            return -1;
        sr->nb_arms = 1;
    }
    return 0;
}

int bench_overlap_run(const bench_env env[OLAP_GPUS], const olap_libs *libs,
                      const olap_options *opt, olap_result *res)
{
    double t0 = bench_now_us();
    olap_run *run = calloc(1, sizeof *run);
    if (!run)
        return -1;
    run->L = libs;
    run->opt = opt;
    run->res = res;
    res->m = opt->m, res->n = opt->n, res->k = opt->k;
    res->nccl_version = libs->nccl_version;
    snprintf(res->nccl_path, sizeof res->nccl_path, "%s", libs->nccl_path);
    snprintf(res->cublas_path, sizeof res->cublas_path, "%s", libs->cublas_path);
    res->nb_sizes = opt->nb_sizes;
    for (unsigned s = 0; s < opt->nb_sizes; s++) {
        res->sizes[s].bytes = opt->sizes[s];
        res->sizes[s].reps = ar_reps(run, opt->sizes[s]);
        res->sizes[s].steps = opt->quick ? QUICK_STEPS : STEPS;
        res->sizes[s].best_step = res->sizes[s].best_p99 = -1;
        if (opt->sizes[s] > run->max_bytes)
            run->max_bytes = opt->sizes[s];
    }
    for (unsigned i = 0; i < OLAP_GPUS; i++) {
        snprintf(res->gpu_name[i], sizeof res->gpu_name[i], "%s", env[i].gpu_name);
        res->sm_count[i] = env[i].sm_count;
    }
    progress_begin(&run->progress, "greenctx bench overlap",
                         opt->nb_sizes * (1 + opt->nb_sms * OLAP_ARMS_PER_SMS));
    int rc = make_inputs(run);
    for (unsigned i = 0; i < OLAP_GPUS && !rc; i++)
        rc = gpu_open(run, &run->gpu[i], &env[i], i);
    if (!rc)
        rc = comms_make(run, 0, 0) || run_plain(run);
    for (unsigned c = 0; c < opt->nb_sms && !rc; c++)
        rc = run_sms(run, c);
    comms_destroy(run, 1);
    comms_destroy(run, 0);
    for (unsigned i = 0; i < OLAP_GPUS; i++)
        gpu_close(run, &run->gpu[i]);
    free(run->host_a);
    free(run->host_b);
    free(run);
    res->seconds = (bench_now_us() - t0) * 1e-6;
    return rc ? -1 : 0;
}

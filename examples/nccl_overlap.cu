/* nccl_overlap [C] [MIB]: communication beside computation on two GPUs, each split with one
 * gctx_partition_split into C SMs (default 16) for an fp32 all-reduce of MIB MiB (default 32,
 * NCCL) and the rest for bf16 GEMMs (cuBLAS) at the same time. NCCL's communicator init
 * changes the calling thread's current context (nvidia/nccl #1736, #2231): the program keeps
 * its own with gctx_current_context_save / _restore. Both results are checked on the host:
 * "OK" (exit 0), "MISMATCH" (1), or exit 77 with fewer than two GPUs. NCCL_NVLS_ENABLE=0. */
#include <cuda_bf16.h>
#include <nccl.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "example_check.h"

#define NCCL_CHECK(call) CHECK_RESULT(ncclResult_t, call, ncclSuccess, ncclGetErrorString)

enum { GPUS = 2, GEMM_N = 4096, GEMM_ITERS = 20, AR_ITERS = 40, SAMPLES = 64 };

/* What one GPU holds: its two partitions' contexts and streams, cuBLAS, the buffers. */
struct gpu {
    gctx_context *comm_ctx, *compute_ctx;
    gctx_stream *comm_stream, *compute_stream;
    unsigned comm_sms, compute_sms;
    cublasHandle_t blas;
    float *send, *recv, *c;
    __nv_bfloat16 *a, *b;
    cudaEvent_t ar_start, ar_stop, gemm_start, gemm_stop; /* in the green contexts */
};

/* Each GPU: {C, rest} in one split, a green context and a stream on each. */
static void split_gpu(int device, unsigned comm_sms, struct gpu *g)
{
    gctx_partition *whole, *parts[2];
    gctx_group groups[2] = {GCTX_GROUP_INIT, GCTX_GROUP_INIT};
    groups[0].num_sms = comm_sms; /* C SMs for NCCL */
    groups[1].backfill = 1;       /* num_sms 0 + backfill: every SM left, for cuBLAS */
    GCTX_CHECK(gctx_partition_from_device(device, &whole));
    GCTX_CHECK(gctx_partition_split(whole, groups, 2, NULL, parts, NULL, NULL, NULL));
    GCTX_CHECK(gctx_context_create(parts[0], NULL, &g->comm_ctx));
    GCTX_CHECK(gctx_context_create(parts[1], NULL, &g->compute_ctx));
    GCTX_CHECK(gctx_stream_create(g->comm_ctx, NULL, &g->comm_stream));
    GCTX_CHECK(gctx_stream_create(g->compute_ctx, NULL, &g->compute_stream));
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GCTX_CHECK(gctx_context_get_info(g->comm_ctx, &info));
    g->comm_sms = info.sm_count;
    GCTX_CHECK(gctx_context_get_info(g->compute_ctx, &info));
    g->compute_sms = info.sm_count;
    /* The contexts keep what they were made from alive. */
    gctx_partition_release(parts[0]);
    gctx_partition_release(parts[1]);
    gctx_partition_release(whole);
}

/* The all-reduce's inputs: exact in fp32, so is their sum. */
static float input(int device, size_t i) { return (float)(i % 251) + 0.5f * (float)device; }

static void fill_gpu(int device, struct gpu *g, size_t count, const __nv_bfloat16 *a,
                     const __nv_bfloat16 *b)
{
    size_t nn = (size_t)GEMM_N * GEMM_N;
    float *host = (float *)malloc(count * sizeof(float));
    CHECK(host != NULL, malloc, "out of host memory");
    for (size_t i = 0; i < count; i++)
        host[i] = input(device, i);
    CUDA_CHECK(cudaMalloc(&g->send, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&g->recv, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(g->send, host, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(g->recv, 0, count * sizeof(float)));
    free(host);
    CUDA_CHECK(cudaMalloc(&g->a, nn * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&g->b, nn * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&g->c, nn * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(g->a, a, nn * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g->b, b, nn * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    /* cuBLAS works in the primary context cudart has current; only its stream is green. */
    CUBLAS_CHECK(cublasCreate(&g->blas));
    CUBLAS_CHECK(cublasSetStream(g->blas, raw(g->compute_stream)));
    make_event(g->comm_ctx, &g->ar_start);
    make_event(g->comm_ctx, &g->ar_stop);
    make_event(g->compute_ctx, &g->gemm_start);
    make_event(g->compute_ctx, &g->gemm_stop);
}

static void allreduce(struct gpu *gpus, ncclComm_t *comms, size_t count)
{
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < GPUS; d++)
        NCCL_CHECK(ncclAllReduce(gpus[d].send, gpus[d].recv, count, ncclFloat32, ncclSum,
                                 comms[d], raw(gpus[d].comm_stream)));
    NCCL_CHECK(ncclGroupEnd());
}

static void gemm(int device, struct gpu *g)
{
    const float one = 1.0f, zero = 0.0f;
    CUDA_CHECK(cudaSetDevice(device));
    CUBLAS_CHECK(cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one,
                              g->a, CUDA_R_16BF, GEMM_N, g->b, CUDA_R_16BF, GEMM_N, &zero, g->c,
                              CUDA_R_32F, GEMM_N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* Runs AR_ITERS all-reduces and, when with_gemm, GEMM_ITERS GEMMs on both GPUs, all queued at
 * once; returns GPU 0's all-reduce time per operation and GEMM time per GEMM (ms). */
static void run(struct gpu *gpus, ncclComm_t *comms, size_t count, int with_gemm, float *ar_ms,
                float *gemm_ms)
{
    struct gpu *g0 = &gpus[0];
    CUDA_CHECK(cudaEventRecord(g0->ar_start, raw(g0->comm_stream)));
    if (with_gemm) {
        CUDA_CHECK(cudaEventRecord(g0->gemm_start, raw(g0->compute_stream)));
        for (int i = 0; i < GEMM_ITERS; i++)
            for (int d = 0; d < GPUS; d++)
                gemm(d, &gpus[d]);
        CUDA_CHECK(cudaEventRecord(g0->gemm_stop, raw(g0->compute_stream)));
    }
    for (int i = 0; i < AR_ITERS; i++)
        allreduce(gpus, comms, count);
    CUDA_CHECK(cudaEventRecord(g0->ar_stop, raw(g0->comm_stream)));
    for (int d = 0; d < GPUS; d++) {
        GCTX_CHECK(gctx_stream_synchronize(gpus[d].comm_stream));
        GCTX_CHECK(gctx_stream_synchronize(gpus[d].compute_stream));
    }
    *ar_ms = elapsed_ms(g0->comm_ctx, g0->ar_start, g0->ar_stop) / AR_ITERS;
    *gemm_ms = with_gemm ? elapsed_ms(g0->compute_ctx, g0->gemm_start, g0->gemm_stop) / GEMM_ITERS
                         : 0;
}

static int check_allreduce(struct gpu *gpus, size_t count)
{
    float *host = (float *)malloc(count * sizeof(float));
    CHECK(host != NULL, malloc, "out of host memory");
    int bad = 0;
    for (int d = 0; d < GPUS; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemcpy(host, gpus[d].recv, count * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count && !bad; i++)
            if (host[i] != input(0, i) + input(1, i)) {
                printf("GPU %d: all-reduce word %zu is %g, expected %g\n", d, i, host[i],
                       input(0, i) + input(1, i));
                bad = 1;
            }
    }
    free(host);
    printf("all-reduce: %zu words on both GPUs: %s\n", count, bad ? "MISMATCH" : "OK");
    return bad;
}

static int check_gemm(struct gpu *gpus, const __nv_bfloat16 *a, const __nv_bfloat16 *b)
{
    int bad = 0;
    double worst = 0;
    srand(7);
    for (int s = 0; s < SAMPLES; s++) {
        int r = rand() % GEMM_N, c = rand() % GEMM_N;
        double ref = 0, mag = 0;
        for (int l = 0; l < GEMM_N; l++) {
            double p = (double)__bfloat162float(a[r + (size_t)l * GEMM_N]) *
                       (double)__bfloat162float(b[l + (size_t)c * GEMM_N]);
            ref += p;
            mag += fabs(p);
        }
        for (int d = 0; d < GPUS; d++) {
            float got;
            CUDA_CHECK(cudaSetDevice(d));
            CUDA_CHECK(cudaMemcpy(&got, gpus[d].c + r + (size_t)c * GEMM_N, sizeof got,
                                  cudaMemcpyDeviceToHost));
            double err = fabs(got - ref) / (mag > 0 ? mag : 1);
            worst = err > worst ? err : worst;
            bad |= err > 1e-4; /* fp32 accumulation of exact bf16 products: ~1e-6 */
        }
    }
    printf("GEMM: %d entries on both GPUs (worst error %.2g of sum|a*b|): %s\n", SAMPLES, worst,
           bad ? "MISMATCH" : "OK");
    return bad;
}

int main(int argc, char **argv)
{
    unsigned comm_sms = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16;
    size_t count = (argc > 2 ? strtoull(argv[2], NULL, 10) : 32) << 20 >> 2; /* MiB of floats */

    /* NVLink multicast can take every GPU of a shared host out of service: keep it off, and
     * set it before NCCL reads its environment. */
    const char *nvls = getenv("NCCL_NVLS_ENABLE");
    if (nvls && strcmp(nvls, "0") != 0) {
        fprintf(stderr, "nccl_overlap: NCCL_NVLS_ENABLE=%s: this example runs NCCL only with "
                        "NVLink multicast off; unset it or set it to 0\n",
                nvls);
        return 1;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 1);

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < GPUS) {
        printf("nccl_overlap: needs 2 GPUs, this machine has %d: SKIP\n", ndev);
        return 77;
    }
    int nccl_version = 0;
    NCCL_CHECK(ncclGetVersion(&nccl_version));
    printf("greenctx %s, NCCL %d, NCCL_NVLS_ENABLE=0, %u SMs for NCCL, %zu MiB all-reduce, "
           "%dx%dx%d bf16 GEMMs\n",
           gctx_version_string(), nccl_version, comm_sms, count * 4 >> 20, GEMM_N, GEMM_N,
           GEMM_N);

    size_t nn = (size_t)GEMM_N * GEMM_N;
    __nv_bfloat16 *a = (__nv_bfloat16 *)malloc(nn * sizeof *a);
    __nv_bfloat16 *b = (__nv_bfloat16 *)malloc(nn * sizeof *b);
    CHECK(a && b, malloc, "out of host memory");
    srand(1);
    for (size_t i = 0; i < nn; i++) {
        a[i] = __float2bfloat16((float)rand() / RAND_MAX * 2.0f - 1.0f);
        b[i] = __float2bfloat16((float)rand() / RAND_MAX * 2.0f - 1.0f);
    }

    struct gpu gpus[GPUS];
    memset(gpus, 0, sizeof gpus);
    for (int d = 0; d < GPUS; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaFree(0)); /* the primary context, before greenctx retains it */
        split_gpu(d, comm_sms, &gpus[d]);
        fill_gpu(d, &gpus[d], count, a, b);
        printf("GPU %d: NCCL on %u SMs, cuBLAS on %u SMs (one split: disjoint)\n", d,
               gpus[d].comm_sms, gpus[d].compute_sms);
    }

    /* NCCL's init changes this thread's current context; put ours back. */
    CUDA_CHECK(cudaSetDevice(0));
    CUcontext saved;
    GCTX_CHECK(gctx_current_context_save(&saved));
    ncclComm_t comms[GPUS];
    int devices[GPUS] = {0, 1};
    NCCL_CHECK(ncclCommInitAll(comms, GPUS, devices));
    int changed = 0;
    GCTX_CHECK(gctx_current_context_restore(saved, &changed));
    CUcontext now;
    CU_CHECK(cuCtxGetCurrent(&now));
    printf("ncclCommInitAll %s this thread's current context; after "
           "gctx_current_context_restore it is the one saved: %s\n",
           changed ? "changed" : "did not change", now == saved ? "yes" : "NO");
    int failed = now != saved;

    float ar_alone, ar_beside, gemm_none, gemm_beside;
    run(gpus, comms, count, 0, &ar_alone, &gemm_none); /* warm-up: NCCL's first launch */
    run(gpus, comms, count, 0, &ar_alone, &gemm_none);
    run(gpus, comms, count, 1, &ar_beside, &gemm_beside); /* warm-up: cuBLAS's first launch */
    /* Zero the outputs, so the check sees what the timed round wrote. The memsets run on the
     * legacy stream, which green streams never wait for: wait for them here. */
    for (int d = GPUS - 1; d >= 0; d--) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemset(gpus[d].recv, 0, count * sizeof(float)));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    run(gpus, comms, count, 1, &ar_beside, &gemm_beside);
    printf("all-reduce in %u SMs: %.1f us alone, %.1f us beside the GEMMs (%.2fx)\n",
           gpus[0].comm_sms, ar_alone * 1e3, ar_beside * 1e3, ar_beside / ar_alone);
    printf("GEMM in %u SMs beside the all-reduces: %.3f ms, %.0f TFLOP/s\n", gpus[0].compute_sms,
           gemm_beside, 2.0 * GEMM_N * GEMM_N * GEMM_N / (gemm_beside * 1e-3) * 1e-12);

    failed |= check_allreduce(gpus, count);
    failed |= check_gemm(gpus, a, b);

    for (int d = 0; d < GPUS; d++) {
        NCCL_CHECK(ncclCommDestroy(comms[d]));
        CUDA_CHECK(cudaSetDevice(d));
        CUBLAS_CHECK(cublasDestroy(gpus[d].blas));
        cudaEvent_t events[] = {gpus[d].ar_start, gpus[d].ar_stop, gpus[d].gemm_start,
                                gpus[d].gemm_stop};
        for (cudaEvent_t e : events)
            CUDA_CHECK(cudaEventDestroy(e));
        cudaFree(gpus[d].send), cudaFree(gpus[d].recv);
        cudaFree(gpus[d].a), cudaFree(gpus[d].b), cudaFree(gpus[d].c);
        gctx_stream_release(gpus[d].comm_stream);
        gctx_stream_release(gpus[d].compute_stream);
        gctx_context_release(gpus[d].comm_ctx);
        gctx_context_release(gpus[d].compute_ctx);
    }
    free(a);
    free(b);
    printf("%s\n", failed ? "MISMATCH" : "OK");
    return failed;
}

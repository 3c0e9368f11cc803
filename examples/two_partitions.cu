/* two_partitions [SMS_A]: split one GPU into two disjoint SM partitions with greenctx, A of
 * SMS_A SMs (default 32) and B of every SM left, and run at the same time a cudart kernel on A
 * and a cuBLAS SGEMM on B, each on the raw stream greenctx hands back. Both results are checked
 * on the host: "OK" and exit 0, or what went wrong and exit 1. */
#include <math.h>
#include <stdint.h>

#include "example_check.h"

enum { SMID_SLOTS = 1024 }; /* one flag per possible %smid value */
enum { MAX_SMS = 1024 };

/* One element of workload A: the kernel computes it, the host checks it with the same code. */
__host__ __device__ static float fma_chain_of(float v, int iters, float a, float b)
{
    for (int k = 0; k < iters; k++)
        v = fmaf(v, a, b);
    return v;
}

/* Workload A: a chain of FMAs per element, still running while the GEMM runs. Thread 0 of each
 * block marks its SM, to show that this cudart launch stayed inside partition A. */
__global__ void fma_chain(const float *x, float *y, int n, int iters, float a, float b,
                          unsigned *sm_flags)
{
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        sm_flags[smid % SMID_SLOTS] = 1;
    }
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = fma_chain_of(x[i], iters, a, b);
}

/* Reproducible inputs in [-1, 1), and the places the host checks: a multiplicative hash. */
static uint32_t hash(uint32_t i) { return i * 2654435761u; }
static float input(uint32_t i) { return (float)(hash(i) >> 8) / 8388608.0f - 1.0f; }

/* Prints sorted SM ids as ranges: "0-15 32-47". */
static void print_sm_ids(const unsigned *ids, unsigned n)
{
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        if (j == i)
            printf(" %u", ids[i]);
        else
            printf(" %u-%u", ids[i], ids[j]);
        i = j + 1;
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    unsigned sms_a = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 32;
    int failed = 0;

    /* cudart works in the device's primary context (cudaMalloc, cudaMemcpy, cublasCreate): make
     * it exist and current first. Green contexts share its address space, so memory allocated
     * here is usable by work on any partition. */
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(0));

    int driver_version = 0;
    gctx_device_info dev = GCTX_DEVICE_INFO_INIT;
    GCTX_CHECK(gctx_driver_version(&driver_version));
    GCTX_CHECK(gctx_device_get_info(0, &dev));
    printf("greenctx %s, driver %d.%d, device 0: %s, %u SMs\n", gctx_version_string(),
           driver_version / 1000, driver_version % 1000 / 10, dev.name, dev.sm_count);

    /* One split: A of sms_a SMs, and B, a discovery group with backfill: every SM left. */
    gctx_partition *device = NULL, *parts[2] = {NULL, NULL};
    gctx_group groups[2] = {GCTX_GROUP_INIT, GCTX_GROUP_INIT};
    groups[0].num_sms = sms_a;
    groups[1].backfill = 1;
    GCTX_CHECK(gctx_partition_from_device(0, &device));
    GCTX_CHECK(gctx_partition_split(device, groups, 2, NULL, parts, NULL, NULL, NULL));

    gctx_context *ctx[2] = {NULL, NULL};
    gctx_stream *stream[2] = {NULL, NULL};
    static unsigned observed[2][MAX_SMS];
    unsigned observed_n[2];
    for (int p = 0; p < 2; p++) {
        GCTX_CHECK(gctx_context_create(parts[p], NULL, &ctx[p]));
        GCTX_CHECK(gctx_stream_create(ctx[p], NULL, &stream[p]));

        gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
        GCTX_CHECK(gctx_partition_get_info(parts[p], &info));
        GCTX_CHECK(gctx_stream_observe_sms(stream[p], observed[p], MAX_SMS, &observed_n[p]));
        if (observed_n[p] > MAX_SMS)
            observed_n[p] = MAX_SMS;
        printf("partition %c: %u SMs; its stream runs on %u SMs:", "AB"[p], info.sm_count,
               observed_n[p]);
        print_sm_ids(observed[p], observed_n[p]);
    }

    /* One split's outputs share no SM; seeing it on the hardware is the point of the demo. */
    static unsigned char in_a[MAX_SMS];
    for (unsigned i = 0; i < observed_n[0]; i++)
        in_a[observed[0][i] % MAX_SMS] = 1;
    unsigned shared = 0;
    for (unsigned i = 0; i < observed_n[1]; i++)
        shared += in_a[observed[1][i] % MAX_SMS];
    printf("partitions share %u SMs: %s\n", shared, shared ? "MISMATCH" : "disjoint");
    failed |= shared != 0;

    /* ---- Inputs, in the primary context. ---- */
    const int n = 1 << 22, iters = 4096;
    const float fa = 0.999f, fb = 0.001f;
    const int gm = 4096; /* the GEMM is gm x gm x gm */
    const size_t vec_bytes = (size_t)n * sizeof(float);
    const size_t mat_bytes = (size_t)gm * gm * sizeof(float);

    float *hx = (float *)malloc(vec_bytes), *hy = (float *)malloc(vec_bytes);
    float *ha = (float *)malloc(mat_bytes), *hb = (float *)malloc(mat_bytes);
    float *hc = (float *)malloc(mat_bytes);
    CHECK(hx && hy && ha && hb && hc, malloc, "out of host memory");
    for (int i = 0; i < n; i++)
        hx[i] = input((uint32_t)i);
    for (size_t i = 0; i < (size_t)gm * gm; i++) {
        ha[i] = input((uint32_t)i);
        hb[i] = input((uint32_t)(i + 1));
    }

    float *dx, *dy, *da, *db, *dc;
    unsigned *dflags;
    CUDA_CHECK(cudaMalloc((void **)&dx, vec_bytes));
    CUDA_CHECK(cudaMalloc((void **)&dy, vec_bytes));
    CUDA_CHECK(cudaMalloc((void **)&da, mat_bytes));
    CUDA_CHECK(cudaMalloc((void **)&db, mat_bytes));
    CUDA_CHECK(cudaMalloc((void **)&dc, mat_bytes));
    CUDA_CHECK(cudaMalloc((void **)&dflags, SMID_SLOTS * sizeof(unsigned)));
    /* Synchronous copies and memset, complete before they return: green streams never
     * synchronise with the legacy default stream they would otherwise order against. */
    CUDA_CHECK(cudaMemcpy(dx, hx, vec_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(da, ha, mat_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, hb, mat_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dflags, 0, SMID_SLOTS * sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());

    /* The cuBLAS handle is made in the primary context too; only its stream is green. Pedantic
     * math keeps the SGEMM in plain FP32 (no TF32), so the host check can be tight. */
    cublasHandle_t blas;
    CUBLAS_CHECK(cublasCreate(&blas));
    CUBLAS_CHECK(cublasSetStream(blas, raw(stream[1])));
    CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH));

    /* ---- Both workloads at once: enqueue both, then wait for both. ---- */
    /* A cudart launch runs in its stream's context (cudart's kernels are context-independent
     * since CUDA 12): in green context A, on A's SMs only, though the primary context is
     * current. The grid has blocks for every SM of the device; A's SMs take them all. */
    const float one = 1.0f, zero = 0.0f;
    fma_chain<<<8 * (int)dev.sm_count, 256, 0, raw(stream[0])>>>(dx, dy, n, iters, fa, fb, dflags);
    CUDA_CHECK(cudaGetLastError());
    CUBLAS_CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, gm, gm, gm, &one, da, gm, db, gm,
                             &zero, dc, gm));
    for (int p = 0; p < 2; p++)
        GCTX_CHECK(gctx_stream_synchronize(stream[p]));

    /* ---- Where the cudart kernel ran: inside A's observed SMs? ---- */
    unsigned hflags[SMID_SLOTS];
    CUDA_CHECK(cudaMemcpy(hflags, dflags, sizeof hflags, cudaMemcpyDeviceToHost));
    unsigned ran = 0, outside = 0;
    for (unsigned i = 0; i < SMID_SLOTS; i++)
        if (hflags[i]) {
            ran++;
            outside += !in_a[i % MAX_SMS];
        }
    printf("A: fma_chain ran on %u SMs, %u outside partition A: %s\n", ran, outside,
           outside ? "MISMATCH" : "OK");
    failed |= outside != 0 || ran == 0;

    /* ---- Check A: 4096 elements (the host does the same FMAs; fmaf is exact on both). ---- */
    CUDA_CHECK(cudaMemcpy(hy, dy, vec_bytes, cudaMemcpyDeviceToHost));
    int bad_a = 0;
    for (int k = 0; k < 4096; k++) {
        int i = k == 0 ? n - 1 : (int)(hash((uint32_t)k) % (uint32_t)n);
        float want = fma_chain_of(hx[i], iters, fa, fb);
        if (fabsf(hy[i] - want) > 1e-6f * fabsf(want)) {
            if (bad_a++ < 5)
                fprintf(stderr, "A: y[%d] = %.9g, want %.9g\n", i, hy[i], want);
        }
    }
    printf("A: check of 4096 elements: %s\n", bad_a ? "MISMATCH" : "OK");
    failed |= bad_a != 0;

    /* ---- Check B: 4096 entries of C = A*B (column-major), in double on the host.
     * The tolerance scales with sum |a_ik * b_kj|, the size of the rounding error of an FP32
     * sum of gm terms. ---- */
    CUDA_CHECK(cudaMemcpy(hc, dc, mat_bytes, cudaMemcpyDeviceToHost));
    int bad_b = 0;
    double worst = 0.0;
    for (int k = 0; k < 4096; k++) {
        int i = (int)(hash((uint32_t)k) % (uint32_t)gm);
        int j = (int)(hash((uint32_t)k + 7) % (uint32_t)gm);
        double want = 0.0, mag = 0.0;
        for (int l = 0; l < gm; l++) {
            double t = (double)ha[(size_t)l * gm + i] * (double)hb[(size_t)j * gm + l];
            want += t;
            mag += fabs(t);
        }
        double got = hc[(size_t)j * gm + i], err = fabs(got - want) / mag;
        if (err > worst)
            worst = err;
        if (err > 1e-5) {
            if (bad_b++ < 5)
                fprintf(stderr, "B: C[%d,%d] = %.9g, want %.9g\n", i, j, got, want);
        }
    }
    printf("B: check of 4096 entries (worst error %.2e of sum|a*b|): %s\n", worst,
           bad_b ? "MISMATCH" : "OK");
    failed |= bad_b != 0;

    /* ---- Release everything: cuBLAS and cudart's objects first, then greenctx's (a stream's
     * release waits for its work; each object keeps what it was made from alive, so the
     * greenctx order is free). ---- */
    CUBLAS_CHECK(cublasDestroy(blas));
    void *device_buffers[] = {dx, dy, da, db, dc, dflags};
    for (void *p : device_buffers)
        CUDA_CHECK(cudaFree(p));
    for (int p = 0; p < 2; p++) {
        gctx_stream_release(stream[p]);
        gctx_context_release(ctx[p]);
        gctx_partition_release(parts[p]);
    }
    gctx_partition_release(device);
    free(hx), free(hy), free(ha), free(hb), free(hc);

    printf("%s\n", failed ? "MISMATCH" : "OK");
    return failed ? 1 : 0;
}

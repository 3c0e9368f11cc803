// The kernels of `greenctx bench elastic`, shipped as PTX in bench/bench_elastic_ptx.c
// (regenerate with bench/kernels/gen_ptx.sh). A module of their own: the simulated driver
// models these (sim/sim_kernels.c) but not the other benchmarks' kernels, which must keep
// answering "needs a GPU" there.
//
// bf16 is handled as raw 16-bit words: bf16 -> fp32 is a shift, fp32 -> bf16 a truncation,
// so the PTX needs no bf16 instruction (those need sm_80) and loads back to sm_70. Arithmetic
// is fp32 on the CUDA cores, accumulated in fp32.

__device__ __forceinline__ float bf(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ __forceinline__ float bf_lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

// The same mixing as bench_kernels.cu's pattern(): inputs are never all zeros.
__device__ __forceinline__ unsigned mix(unsigned long long i, unsigned seed)
{
    unsigned x = (unsigned)i * 2654435761u ^ (unsigned)(i >> 32) ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return x;
}

// Small bf16 values in [-2^-6, 2^-6): weights, activations and KV entries that keep every
// sum finite.
extern "C" __global__ void gce_fill_bf16(unsigned short *buf, unsigned long long n, unsigned seed)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        float v = ((float)(mix(i, seed) & 0xffffu) - 32768.0f) * (1.0f / 2097152.0f);
        buf[i] = (unsigned short)(__float_as_uint(v) >> 16);
    }
}

__device__ __forceinline__ float dot8(uint4 w, uint4 x)
{
    return bf_lo(w.x) * bf_lo(x.x) + bf_hi(w.x) * bf_hi(x.x) + bf_lo(w.y) * bf_lo(x.y) +
           bf_hi(w.y) * bf_hi(x.y) + bf_lo(w.z) * bf_lo(x.z) + bf_hi(w.z) * bf_hi(x.z) +
           bf_lo(w.w) * bf_lo(x.w) + bf_hi(w.w) * bf_hi(x.w);
}

// Decode's weight reads: y[b][r] = sum_c W[r][c] * x[b][c] for b < batch, W bf16 [rows][cols]
// row-major (cols a multiple of 8), x bf16 [batch][cols], y fp32 [batch][rows]. A warp per
// row; each pass over W serves GEMV_BATCH rows of the batch, so W is read ceil(batch / 32)
// times (once up to a batch of 32). Memory bound at small batches; at large ones the
// activations' reads (through L1, batch of them per weight) and the CUDA cores bound it, where
// a tensor-core GEMM would still be memory bound.
#define GEMV_BATCH 32
extern "C" __global__ void __launch_bounds__(256)
    gce_gemv(const uint4 *__restrict__ W, const uint4 *__restrict__ x, float *y, unsigned rows,
             unsigned cols, unsigned batch)
{
    unsigned lane = threadIdx.x & 31u;
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned warps = (gridDim.x * blockDim.x) >> 5, vecs = cols / 8;
    for (unsigned b0 = 0; b0 < batch; b0 += GEMV_BATCH)
        for (unsigned r = warp; r < rows; r += warps) {
            float acc[GEMV_BATCH];
#pragma unroll
            for (int b = 0; b < GEMV_BATCH; b++)
                acc[b] = 0.0f;
            const uint4 *row = W + (unsigned long long)r * vecs;
            for (unsigned v = lane; v < vecs; v += 32) {
                uint4 w = row[v];
#pragma unroll
                for (int b = 0; b < GEMV_BATCH; b++)
                    if (b0 + b < batch)
                        acc[b] += dot8(w, x[(unsigned long long)(b0 + b) * vecs + v]);
            }
#pragma unroll
            for (int b = 0; b < GEMV_BATCH; b++) {
                float s = acc[b];
                for (int o = 16; o; o >>= 1)
                    s += __shfl_xor_sync(0xffffffffu, s, o);
                if (lane == 0 && b0 + b < batch)
                    y[(unsigned long long)(b0 + b) * rows + r] = s;
            }
        }
}

// One position of decode attention for the 4 query heads of a KV head: the lane holds 4 of
// the 128 dimensions; an online softmax (running max m, sum l, weighted values acc).
__device__ __forceinline__ void attend(uint2 kk, uint2 vv, const float (&qf)[4][4], float (&m)[4],
                                       float (&l)[4], float (&acc)[4][4])
{
    float kf[4] = {bf_lo(kk.x), bf_hi(kk.x), bf_lo(kk.y), bf_hi(kk.y)};
    float vf[4] = {bf_lo(vv.x), bf_hi(vv.x), bf_lo(vv.y), bf_hi(vv.y)};
#pragma unroll
    for (int g = 0; g < 4; g++) {
        float sc = qf[g][0] * kf[0] + qf[g][1] * kf[1] + qf[g][2] * kf[2] + qf[g][3] * kf[3];
        for (int o = 16; o; o >>= 1)
            sc += __shfl_xor_sync(0xffffffffu, sc, o);
        sc *= 0.08838834764831845f; // 1 / sqrt(128)
        float mn = fmaxf(m[g], sc), corr = __expf(m[g] - mn), e = __expf(sc - mn);
        l[g] = l[g] * corr + e;
#pragma unroll
        for (int d = 0; d < 4; d++)
            acc[g][d] = acc[g][d] * corr + e * vf[d];
        m[g] = mn;
    }
}

// Decode attention with grouped queries (4 query heads per KV head, head dim 128), split
// over the context (flash-decoding): block (b, h, s) reads positions [s * per, (s + 1) * per)
// of sequence b's K and V for KV head h (bf16 [batch][kv_heads][ctx][128] each) once, with an
// online softmax per query head, and writes its partial (max, sum, 128 weighted values) for
// each of the 4 heads to part[((b * kv_heads + h) * splits + s) * 4 + g][130]. The combine of
// the splits (a read of 0.1 % of the bytes) is left out: the step's cost is the KV read.
extern "C" __global__ void __launch_bounds__(256, 3)
    gce_decode_attn(const uint2 *__restrict__ q, const uint2 *__restrict__ k,
                    const uint2 *__restrict__ v, float *part, unsigned ctx, unsigned kv_heads,
                    unsigned splits)
{
    __shared__ float s_m[8][4], s_l[8][4], s_acc[8][4][128];
    unsigned s = blockIdx.x % splits, bh = blockIdx.x / splits;
    unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    float qf[4][4], m[4], l[4], acc[4][4];
#pragma unroll
    for (int g = 0; g < 4; g++) {
        uint2 qq = q[((unsigned long long)bh * 4 + g) * 32 + lane];
        qf[g][0] = bf_lo(qq.x), qf[g][1] = bf_hi(qq.x), qf[g][2] = bf_lo(qq.y), qf[g][3] = bf_hi(qq.y);
        m[g] = -1e30f, l[g] = 0.0f;
#pragma unroll
        for (int d = 0; d < 4; d++)
            acc[g][d] = 0.0f;
    }
    unsigned per = (ctx + splits - 1) / splits, p1 = min(ctx, (s + 1) * per);
    const uint2 *kb = k + (unsigned long long)bh * ctx * 32, *vb = v + (unsigned long long)bh * ctx * 32;
    // Four of this warp's positions at a time: their loads are in flight together.
    unsigned p = s * per + warp;
    for (; p + 24 < p1; p += 32) {
        uint2 kk[4], vv[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            kk[u] = kb[(unsigned long long)(p + 8 * u) * 32 + lane];
            vv[u] = vb[(unsigned long long)(p + 8 * u) * 32 + lane];
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            attend(kk[u], vv[u], qf, m, l, acc);
    }
    for (; p < p1; p += 8)
        attend(kb[(unsigned long long)p * 32 + lane], vb[(unsigned long long)p * 32 + lane], qf, m,
               l, acc);
#pragma unroll
    for (int g = 0; g < 4; g++) {
        if (lane == 0)
            s_m[warp][g] = m[g], s_l[warp][g] = l[g];
#pragma unroll
        for (int d = 0; d < 4; d++)
            s_acc[warp][g][lane * 4 + d] = acc[g][d];
    }
    __syncthreads();
    for (unsigned o = threadIdx.x; o < 4 * 128; o += blockDim.x) {
        unsigned g = o / 128, d = o % 128;
        float mx = -1e30f, sum = 0.0f, val = 0.0f;
        for (int w = 0; w < 8; w++)
            mx = fmaxf(mx, s_m[w][g]);
        for (int w = 0; w < 8; w++) {
            float c = s_l[w][g] > 0.0f ? __expf(s_m[w][g] - mx) : 0.0f;
            sum += s_l[w][g] * c;
            val += s_acc[w][g][d] * c;
        }
        float *out = part + ((unsigned long long)blockIdx.x * 4 + g) * 130;
        out[2 + d] = val;
        if (d == 0)
            out[0] = mx, out[1] = sum;
    }
}

// Prefill's GEMMs: C[m][n] = sum_k A[m][k] * W[n][k], A bf16 [M][K] (the tokens), W bf16
// [N][K] (the same weights decode reads), C fp32 [M][N]. Block t computes the 64 x 64 tile
// (t / tiles_n, t % tiles_n), 4 x 4 outputs a thread, through shared memory 32 deep in k.
// A plain CUDA-core kernel (no tensor cores): compute bound, as prefill is, but well below
// cuBLAS's rate.
#define TILE 64
#define TILE_K 32
extern "C" __global__ void __launch_bounds__(256)
    gce_gemm(const unsigned short *__restrict__ A, const unsigned short *__restrict__ W, float *C,
             unsigned M, unsigned N, unsigned K)
{
    __shared__ float As[TILE_K][TILE + 4], Ws[TILE_K][TILE + 4];
    unsigned tiles_n = (N + TILE - 1) / TILE;
    unsigned m0 = (blockIdx.x / tiles_n) * TILE, n0 = (blockIdx.x % tiles_n) * TILE;
    unsigned tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j] = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += TILE_K) {
        for (unsigned i = threadIdx.x; i < TILE * TILE_K; i += blockDim.x) {
            unsigned r = i / TILE_K, c = i % TILE_K;
            As[c][r] = m0 + r < M && k0 + c < K ? bf(A[(unsigned long long)(m0 + r) * K + k0 + c]) : 0.0f;
            Ws[c][r] = n0 + r < N && k0 + c < K ? bf(W[(unsigned long long)(n0 + r) * K + k0 + c]) : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (unsigned kk = 0; kk < TILE_K; kk++) {
            float a[4], w[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                a[i] = As[kk][ty * 4 + i], w[i] = Ws[kk][tx * 4 + i];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] += a[i] * w[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (m0 + ty * 4 + i < M && n0 + tx * 4 + j < N)
                C[(unsigned long long)(m0 + ty * 4 + i) * N + n0 + tx * 4 + j] = acc[i][j];
}

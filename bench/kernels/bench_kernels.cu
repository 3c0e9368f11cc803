// The kernels of `greenctx bench`, for reference: greenctx-bench ships them as PTX
// (bench_kernels.ptx, compiled in by cmake/embed.cmake) so that it builds without nvcc;
// gen_ptx.sh regenerates it. bench/bench_kernels.c mirrors pattern() and the FMA chain on the
// host to check results.

// Nanoseconds, shared by every SM: lets a kernel say when its first block started and its
// last block ended, independently of the events around it.
__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Inputs are never zeros: zeros hide unwritten outputs and can run faster than real data.
__device__ __forceinline__ unsigned pattern(unsigned long long i, unsigned seed)
{
    unsigned x = (unsigned)i * 2654435761u ^ (unsigned)(i >> 32) ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return x | 1u;
}

// stamps[0]: ~(earliest block start), stamps[1]: latest block end; NULL: no stamps. The start
// is stored complemented so that one zeroing memset prepares both slots for atomicMax.
__device__ __forceinline__ void stamp_start(unsigned long long *stamps)
{
    if (stamps && threadIdx.x == 0)
        atomicMax(&stamps[0], ~globaltimer());
}

__device__ __forceinline__ void stamp_end(unsigned long long *stamps)
{
    if (stamps) {
        __syncthreads();
        if (threadIdx.x == 0)
            atomicMax(&stamps[1], globaltimer());
    }
}

extern "C" __global__ void gc_fill(unsigned *buf, unsigned long long n, unsigned seed)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += stride)
        buf[i] = pattern(i, seed);
}

// Four independent FMA chains per thread keep every FP32 pipe busy at 2 to 8 blocks of 256
// threads per SM. A contracting map (a < 1) keeps values finite for any length. Block b
// runs the chunks b, b + gridDim.x, ...: iters steps each.
#define FMA_A 0.99993896484375f /* 1 - 2^-14 */
#define FMA_B 0.000244140625f   /* 2^-12 */
extern "C" __global__ void __launch_bounds__(256, 8)
    gc_fma(float *out, unsigned chunks, unsigned iters, unsigned long long *stamps)
{
    stamp_start(stamps);
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    float x0 = (float)(gid & 1023u) * 0.0009765625f;
    float x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
    for (unsigned c = blockIdx.x; c < chunks; c += gridDim.x)
        for (unsigned i = 0; i < iters; i++) {
            x0 = fmaf(x0, FMA_A, FMA_B);
            x1 = fmaf(x1, FMA_A, FMA_B);
            x2 = fmaf(x2, FMA_A, FMA_B);
            x3 = fmaf(x3, FMA_A, FMA_B);
        }
    out[gid] = (x0 + x1) + (x2 + x3);
    stamp_end(stamps);
}

// One step of a decode-like chain: stream a slice of "weights" once and reduce it. Each
// warp writes its own sum (no atomics, so nothing needs zeroing between launches):
// partial[blockIdx.x * warps_per_block + warp].
extern "C" __global__ void __launch_bounds__(256)
    gc_sum(const uint4 *__restrict__ src, unsigned long long nvec, unsigned *partial,
           unsigned long long *stamps)
{
    stamp_start(stamps);
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) +
               (d.x + d.y + d.z + d.w);
    }
    for (; i < nvec; i += stride) {
        uint4 a = src[i];
        acc += a.x + a.y + a.z + a.w;
    }
    for (int offset = 16; offset; offset >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if ((threadIdx.x & 31u) == 0)
        partial[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = acc;
    stamp_end(stamps);
}

// Streaming copy, four 16-byte loads in flight per thread before the stores.
extern "C" __global__ void __launch_bounds__(256)
    gc_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, unsigned long long nvec)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < nvec; i += stride)
        dst[i] = src[i];
}

// Launch cost: nothing to do.
extern "C" __global__ void gc_empty(void) {}

// A fatal fault on purpose (bench/compare/tenants.py's fault arm): a store to an address no
// allocation has (0x10), which the GPU reports as CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void gc_fault(unsigned *where) { *where = 1u; }

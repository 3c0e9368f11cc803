/*
 * The benchmark kernels (bench/kernels/bench_kernels.cu, shipped as bench_kernels.ptx and
 * compiled in as bench_ptx by cmake/embed.cmake):
 * loading them into a context, launching them, and checking their results on the host.
 */
#ifndef GREENCTX_BENCH_KERNELS_H
#define GREENCTX_BENCH_KERNELS_H

#include "bench.h"

extern const char bench_ptx[];

#define BENCH_BLOCK 256u        /* threads per block of every kernel */
#define BENCH_FULL_BLOCKS_SM 8u /* blocks of BENCH_BLOCK that fill an SM (2048 threads) */
#define BENCH_SUM_WARPS (BENCH_BLOCK / 32u)

/* A module is per context: one is loaded in every context that launches. */
typedef struct bench_module {
    gcu_module module;
    gcu_function fill, fma, sum, copy, empty;
} bench_module;

/* Loads the PTX with ctx pushed. Returns 0, or -1 after printing why; *not_supported is set
 * to 1 when the driver runs no kernels at all (CUDA_ERROR_NOT_SUPPORTED), in which case
 * nothing is printed. not_supported may be NULL. */
int bench_module_load(const bench_env *env, CUcontext ctx, bench_module *mod, int *not_supported);
void bench_module_unload(const bench_env *env, CUcontext ctx, bench_module *mod);

/* Launches grid blocks of BENCH_BLOCK threads of fn (no synchronisation; an error of the
 * launch call itself is printed with what). */
int bench_launch(const bench_env *env, gcu_function fn, unsigned grid, CUstream stream,
                 void **params, const char *what);
/* Launches (no synchronisation; errors of the launch call itself are printed). */
int bench_fill(const bench_env *env, const bench_module *mod, CUstream stream, gcu_deviceptr buf,
               unsigned long long words, unsigned seed);
/* grid blocks of the FMA chain; block b runs the chunks b, b + grid, ... < chunks, iters steps
 * each. stamps: 0 or a slot of two 64-bit words (see bench_stamps_start). */
int bench_fma(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
              gcu_deviceptr out, unsigned chunks, unsigned iters, gcu_deviceptr stamps);
/* grid blocks sum vecs 16-byte vectors from src into partial[grid * BENCH_SUM_WARPS]. */
int bench_sum(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
              gcu_deviceptr src, unsigned long long vecs, gcu_deviceptr partial,
              gcu_deviceptr stamps);
int bench_copy(const bench_env *env, const bench_module *mod, CUstream stream, unsigned grid,
               gcu_deviceptr src, gcu_deviceptr dst, unsigned long long vecs);
int bench_empty(const bench_env *env, const bench_module *mod, CUstream stream);

/* A stamp slot as the kernels leave it holds the first block's start (stored inverted, so
 * an atomic max keeps the earliest) and the last block's end, in %globaltimer nanoseconds;
 * the start and the end, read back. */
unsigned long long bench_stamps_start(const unsigned long long slot[2]);
unsigned long long bench_stamps_end(const unsigned long long slot[2]);

/* Host mirrors and checks: each copies a few outputs back (after the work is synchronised)
 * and compares them with the host's value; on a mismatch prints what and returns -1. */
unsigned bench_pattern(unsigned long long i, unsigned seed);
int bench_check_fma(const bench_env *env, gcu_deviceptr out, unsigned grid, unsigned chunks,
                    unsigned iters, const char *what);
/* src holds bench_pattern(i, seed) for i from first_word on; the partials of one sum of
 * vecs vectors from there must add up to the host's sum (mod 2^32). */
int bench_check_sum(const bench_env *env, gcu_deviceptr partial, unsigned grid,
                    unsigned long long first_word, unsigned long long vecs, unsigned seed,
                    const char *what);
/* dst must hold bench_pattern(i, seed) at a few places. */
int bench_check_copy(const bench_env *env, gcu_deviceptr dst, unsigned long long words,
                     unsigned seed, const char *what);

/* ---- bench_lane.c: a lane, somewhere to run benchmark work (a context, one stream on it, the
 * kernels loaded there and a pair of timing events) ---- */

enum { BENCH_PRIORITY_NORMAL = 0, BENCH_PRIORITY_HIGH = 1, BENCH_PRIORITY_LOW = 2 };

typedef struct bench_lane {
    gctx_context *green; /* NULL: an ordinary stream of the primary context */
    gctx_stream *gstream;
    CUcontext ctx;
    CUstream stream;
    unsigned sms; /* the SMs its work may use */
    bench_module mod;
    CUevent start, end;
} bench_lane;

/* An ordinary non-blocking stream of the primary context. */
int bench_lane_primary(const bench_env *env, int priority, bench_lane *lane);
/* A green context on partition and a stream of it, made with the public API. */
int bench_lane_green(const bench_env *env, gctx_partition *partition, int priority,
                     bench_lane *lane);
void bench_lane_close(const bench_env *env, bench_lane *lane);

/* Records lane->start / lane->end on the lane's stream. */
int bench_lane_mark(const bench_env *env, const bench_lane *lane, CUevent event);
/* Waits for lane->end; *ms = elapsed from start to end. */
int bench_lane_elapsed(const bench_env *env, const bench_lane *lane, double *ms);

#endif

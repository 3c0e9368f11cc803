/* The benchmark kernels (bench/kernels/bench_kernels.cu, compiled in as PTX, bench_ptx):
 * loading, launching, and checking their results on the host. */
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

/* 0, or -1 after printing why; not_supported (may be NULL): set to 1, nothing printed, when
 * the driver runs no kernels (CUDA_ERROR_NOT_SUPPORTED). */
int bench_module_load(const bench_env *env, CUcontext ctx, bench_module *mod, int *not_supported);
void bench_module_unload(const bench_env *env, CUcontext ctx, bench_module *mod);

/* The launches: grid blocks of BENCH_BLOCK threads, no synchronisation. */
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

/* A stamp slot's first block start (stored inverted: an atomic max keeps the earliest) and
 * last block end, %globaltimer ns. */
unsigned long long bench_stamps_start(const unsigned long long slot[2]);
unsigned long long bench_stamps_end(const unsigned long long slot[2]);

/* Host mirrors and checks of a few outputs, the work synchronised: -1 after saying what. */
int bench_check_fma(const bench_env *env, gcu_deviceptr out, unsigned grid, unsigned chunks,
                    unsigned iters, const char *what);
/* The partials of vecs vectors of bench_fill's pattern from first_word: the host's sum. */
int bench_check_sum(const bench_env *env, gcu_deviceptr partial, unsigned grid,
                    unsigned long long first_word, unsigned long long vecs, unsigned seed,
                    const char *what);
/* dst must hold bench_fill's pattern (of seed) at a few places. */
int bench_check_copy(const bench_env *env, gcu_deviceptr dst, unsigned long long words,
                     unsigned seed, const char *what);

/* ---- a lane: a context, a stream, the kernels loaded, timing events ---- */

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

/* A lane in a green context of partition, or on an ordinary stream of the primary context
 * (partition NULL); -1 after saying why, nothing left open. */
int bench_lane_open(const bench_env *env, gctx_partition *partition, int priority,
                    bench_lane *lane);
void bench_lane_close(const bench_env *env, bench_lane *lane);

int bench_lane_mark(const bench_env *env, const bench_lane *lane, CUevent event);
/* Waits for lane->end; *ms from start to end. */
int bench_lane_elapsed(const bench_env *env, const bench_lane *lane, double *ms);

#endif

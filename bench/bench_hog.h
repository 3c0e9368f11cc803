/* The hog: a background thread that keeps a lane's SMs (or the memory system) busy with
 * back-to-back units of work until told to stop, and says how many units per second it got. */
#ifndef GREENCTX_BENCH_HOG_H
#define GREENCTX_BENCH_HOG_H

#include <pthread.h>
#include <stdatomic.h>

#include "bench_lane.h"

typedef enum bench_hog_kind {
    BENCH_HOG_FMA = 0,  /* compute-bound: long FMA-chain blocks filling every SM */
    BENCH_HOG_COPY = 1, /* memory-bound: a streaming copy of a large buffer */
    BENCH_NB_HOGS = 2
} bench_hog_kind;

/* Buffers and sizes of a unit of hog work; a unit is the same work on every lane, so units
 * per second compare across partitions. */
typedef struct bench_hog_work {
    gcu_deviceptr fma_out;            /* one float per thread of the largest grid */
    unsigned fma_chunks, fma_iters;   /* per unit */
    gcu_deviceptr src, dst;
    unsigned long long copy_words;    /* per unit: copy_words * 4 bytes read and written */
    unsigned seed;
} bench_hog_work;

typedef struct bench_hog {
    const bench_env *env;
    const bench_lane *lane;
    const bench_hog_work *work;
    bench_hog_kind kind;
    pthread_t thread;
    int running;
    atomic_int stop;
    int failed;
    unsigned long long units; /* launched and completed between the start and end events */
    double seconds;
} bench_hog;

int bench_hog_work_init(const bench_env *env, const bench_module *mod, CUstream stream,
                        bench_hog_work *work);
void bench_hog_work_free(const bench_env *env, bench_hog_work *work);
const char *bench_hog_name(bench_hog_kind kind);
/* One line: what a unit is ("fma: 0.93 TFLOP per unit, grid = 8 blocks x 256 per SM"). */
void bench_hog_describe(const bench_hog_work *work, bench_hog_kind kind, char *buf, size_t size);
/* What a unit does, in FLOP (fma) or bytes moved (copy). */
double bench_hog_unit_amount(const bench_hog_work *work, bench_hog_kind kind);

int bench_hog_start(bench_hog *hog, const bench_env *env, const bench_lane *lane,
                    const bench_hog_work *work, bench_hog_kind kind);
/* Stops after the units in flight (at most a few milliseconds), joins, and checks the hog's
 * output. Returns -1 if the hog failed. */
int bench_hog_stop(bench_hog *hog);
double bench_hog_rate(const bench_hog *hog);
/* The hog alone on lane for seconds: units per second. */
int bench_hog_alone(const bench_env *env, const bench_lane *lane, const bench_hog_work *work,
                    bench_hog_kind kind, double seconds, double *rate);

#endif

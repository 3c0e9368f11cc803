/* A lane: somewhere to run benchmark work (a context, one stream on it, the kernels loaded
 * there and a pair of timing events). */
#ifndef GREENCTX_BENCH_LANE_H
#define GREENCTX_BENCH_LANE_H

#include "bench_kernels.h"

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

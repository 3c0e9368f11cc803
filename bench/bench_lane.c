/* Lanes: a context, a stream, the kernels and timing events, made and torn down together. */
#include <string.h>

#include "bench_kernels.h"

static int priority_value(const bench_env *env, int priority, int *value)
{
    int least = 0, greatest = 0;
    *value = 0;
    if (priority == BENCH_PRIORITY_NORMAL)
        return 0;
    if (bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuCtxGetStreamPriorityRange(&least, &greatest),
                      "cuCtxGetStreamPriorityRange");
    bench_pop(env);
    *value = priority == BENCH_PRIORITY_HIGH ? greatest : least;
    return rc;
}

/* Kernels (where the driver runs any) and events, in the lane's context. */
static int finish_lane(const bench_env *env, bench_lane *lane)
{
    if (env->kernels && bench_module_load(env, lane->ctx, &lane->mod, NULL))
        return -1;
    if (bench_push(env, lane->ctx))
        return -1;
    int rc = bench_cu(env->drv->cuEventCreate(&lane->start, GCU_EVENT_DEFAULT), "cuEventCreate");
    if (rc == 0)
        rc = bench_cu(env->drv->cuEventCreate(&lane->end, GCU_EVENT_DEFAULT), "cuEventCreate");
    bench_pop(env);
    return rc;
}

int bench_lane_primary(const bench_env *env, int priority, bench_lane *lane)
{
    memset(lane, 0, sizeof *lane);
    lane->ctx = env->primary;
    lane->sms = env->sm_count;
    int value;
    if (priority_value(env, priority, &value) || bench_push(env, env->primary))
        return -1;
    int rc = bench_cu(env->drv->cuStreamCreateWithPriority(&lane->stream, GCU_STREAM_NON_BLOCKING,
                                                           value),
                      "cuStreamCreateWithPriority");
    bench_pop(env);
    if (rc == 0)
        rc = finish_lane(env, lane);
    if (rc)
        bench_lane_close(env, lane);
    return rc;
}

int bench_lane_green(const bench_env *env, gctx_partition *partition, int priority,
                     bench_lane *lane)
{
    gctx_stream_options options = GCTX_STREAM_OPTIONS_INIT;
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    memset(lane, 0, sizeof *lane);
    if (bench_gctx(gctx_context_create(partition, NULL, &lane->green), "a green context"))
        return -1;
    int rc = priority_value(env, priority, &options.priority);
    if (rc == 0)
        rc = bench_gctx(gctx_stream_create(lane->green, &options, &lane->gstream),
                        "a green context's stream");
    if (rc == 0)
        rc = bench_gctx(gctx_context_get_info(lane->green, &info), "a green context's facts");
    if (rc == 0) {
        lane->ctx = gctx_context_cu_context(lane->green);
        lane->stream = gctx_stream_handle(lane->gstream);
        lane->sms = info.sm_count;
        rc = finish_lane(env, lane);
    }
    if (rc)
        bench_lane_close(env, lane);
    return rc;
}

void bench_lane_close(const bench_env *env, bench_lane *lane)
{
    const raw_driver *drv = env->drv;
    if (lane->ctx && bench_push(env, lane->ctx) == 0) {
        if (lane->stream)
            drv->cuStreamSynchronize(lane->stream);
        if (lane->start)
            drv->cuEventDestroy(lane->start);
        if (lane->end)
            drv->cuEventDestroy(lane->end);
        if (!lane->green && lane->stream)
            drv->cuStreamDestroy(lane->stream);
        bench_pop(env);
    }
    bench_module_unload(env, lane->ctx, &lane->mod);
    gctx_stream_release(lane->gstream);
    gctx_context_release(lane->green);
    memset(lane, 0, sizeof *lane);
}

int bench_lane_mark(const bench_env *env, const bench_lane *lane, CUevent event)
{
    return bench_cu(env->drv->cuEventRecord(event, lane->stream), "cuEventRecord");
}

int bench_lane_elapsed(const bench_env *env, const bench_lane *lane, double *ms)
{
    float elapsed = 0;
    if (bench_cu(env->drv->cuEventSynchronize(lane->end), "waiting for benchmark work") ||
        bench_cu(env->drv->cuEventElapsedTime(&elapsed, lane->start, lane->end),
                 "cuEventElapsedTime"))
        return -1;
    *ms = elapsed;
    return 0;
}

/* Streams on green contexts: creation on every driver, adoption, lookup, teardown in order. */
#include <stdlib.h>

#include "context_cache.h"
#include "log.h"

static void stream_destroy(gctx__object *object)
{
    gctx_stream *st = (gctx_stream *)object;
    const gctx__driver *drv;
    if (st->owned && gctx__driver_loaded(&drv)) {
        /* The driver would destroy a stream with work in flight; let the work finish first.
         * Drained, it may wait with its context for the context's next stream instead. */
        gcu_result r = drv->cuStreamSynchronize(st->handle);
        if (r != GCU_SUCCESS)
            gctx__release_count_failure(GCTX__RELEASE_STREAM, "cuStreamSynchronize", r);
        if (r != GCU_SUCCESS || !gctx__cache_keep_stream(st->context, st->handle, st->priority))
            GCTX__RELEASE(drv, STREAM, stream, st->handle);
    }
    gctx__context_release(st->context);
    free(st);
}

static gctx_status new_stream(CUstream handle, gctx_context *context, int owned, gctx_stream **out)
{
    gctx_stream *st = calloc(1, sizeof *st);
    if (!st)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a stream");
    *st = (gctx_stream){.handle = handle, .context = context, .owned = owned};
    gctx_status s = gctx__object_init(&st->base, GCTX__TYPE_STREAM, stream_destroy);
    if (s != GCTX_SUCCESS) {
        free(st);
        return s;
    }
    gctx__object_retain(&context->base);
    *out = st;
    return GCTX_SUCCESS;
}

/* Before 12.5 the only way: a stream made while the converted green context is current
 * belongs to that green context. The caller's context stack is restored. */
static gctx_status create_in_current(const gctx__driver *drv, gctx_context *context, int priority,
                                     CUstream *handle)
{
    GCTX_TRY(gctx__push_context(drv, context->driver.context));
    gcu_result r = drv->cuStreamCreateWithPriority(handle, GCU_STREAM_NON_BLOCKING, priority);
    gctx_status s = gctx__pop_context(
        drv, gctx__check_cuda(r, "cuStreamCreateWithPriority in the green context"));
    if (s != GCTX_SUCCESS && r == GCU_SUCCESS)
        GCTX__RELEASE(drv, STREAM, stream, *handle);
    return s;
}

gctx_status gctx_stream_create(gctx_context *context, const gctx_stream_options *options,
                               gctx_stream **stream)
{
    GCTX_TRY(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"));
    GCTX_TRY_OUTPUT(stream);
    gctx_stream_options opts = GCTX_STREAM_OPTIONS_INIT;
    if (options)
        GCTX_TRY(gctx__sized_in(&opts, sizeof opts, options, GCTX__MIN_STREAM_OPTIONS, "options",
                                "GCTX_STREAM_OPTIONS_INIT"));
    if (opts.blocking)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "a green context's streams can't be blocking: the driver refuses them "
                          "(CUDA_ERROR_INVALID_VALUE); leave blocking at 0 and order work with "
                          "events");
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    CUstream handle = NULL;
    int checked = 0;
    if (gctx__cache_take_stream(context, opts.priority, &handle, &checked)) {
        /* A drained stream synchronizes at once (check_cached, context.c), unless checked. */
        gcu_result r = checked ? GCU_SUCCESS : drv->cuStreamSynchronize(handle);
        if (r != GCU_SUCCESS) {
            GCTX__RELEASE(drv, STREAM, stream, handle);
            return gctx__check_cuda(r, "cuStreamSynchronize of a drained stream the context "
                                       "kept");
        }
    } else if (drv->cuGreenCtxStreamCreate) {
        gcu_result r = drv->cuGreenCtxStreamCreate(&handle, context->driver.green,
                                                   GCU_STREAM_NON_BLOCKING, opts.priority);
        GCTX__DEBUG_CALL("cuGreenCtxStreamCreate", r);
        GCTX_TRY(gctx__check_cuda(r, "cuGreenCtxStreamCreate(priority %d)", opts.priority));
    } else {
        GCTX_TRY(create_in_current(drv, context, opts.priority, &handle));
    }
    gctx_stream *st = NULL; /* gcc 13 -O3 sees it as maybe unset after new_stream */
    gctx_status s = new_stream(handle, context, 1, &st);
    if (s != GCTX_SUCCESS) {
        GCTX__RELEASE(drv, STREAM, stream, handle);
        return s;
    }
    st->priority = opts.priority;
    *stream = gctx__handle_give(&st->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_stream_get_green_context(CUstream stream, CUgreenCtx *green)
{
    GCTX_TRY_OUTPUT(green);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    CUgreenCtx g = NULL;
    GCTX_TRY(gctx__check_cuda(drv->cuStreamGetGreenCtx(stream, &g), "cuStreamGetGreenCtx"));
    *green = g;
    return GCTX_SUCCESS;
}

gctx_status gctx_stream_adopt(CUstream stream, gctx_stream **out)
{
    if (!stream)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "stream is NULL: the legacy default stream belongs to no green context");
    if (!out)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "out is NULL");
    CUgreenCtx green = NULL; /* gcc 13 -O3 sees it as maybe unset after the lookup */
    GCTX_TRY(gctx_stream_get_green_context(stream, &green));
    if (!green)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the stream belongs to an ordinary context, not a green one: its work "
                          "runs on every SM");
    gctx_context *handle, *context;
    GCTX_TRY(gctx_context_adopt(green, &handle));
    context = handle;
    gctx_status s;
    gctx_stream *st = NULL;
    GCTX_CHECK(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"), done);
    GCTX_CHECK(new_stream(stream, context, 0, &st), done);
    *out = gctx__handle_give(&st->base);
done:
    gctx_context_release(handle); /* the stream holds its context now, or nothing does */
    return s;
}

GCTX__HANDLE_REFS(stream, STREAM)

GCTX__RAW_HANDLE(CUstream, gctx_stream_handle, stream, STREAM, stream->handle)

gctx_status gctx_stream_context(gctx_stream *stream, gctx_context **context)
{
    GCTX_TRY(gctx__handle_resolve(&stream, GCTX__TYPE_STREAM, "stream"));
    GCTX_TRY_OUTPUT(context);
    gctx__object_retain(&stream->context->base);
    *context = gctx__handle_give(&stream->context->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_stream_priority(const gctx_stream *stream, int *priority)
{
    GCTX_TRY(gctx__handle_resolve(&stream, GCTX__TYPE_STREAM, "stream"));
    GCTX_TRY_OUTPUT(priority);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    return gctx__check_cuda(drv->cuStreamGetPriority(stream->handle, priority),
                            "cuStreamGetPriority");
}

gctx_status gctx_stream_synchronize(gctx_stream *stream)
{
    GCTX_TRY(gctx__handle_resolve(&stream, GCTX__TYPE_STREAM, "stream"));
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    return gctx__check_cuda(drv->cuStreamSynchronize(stream->handle), "cuStreamSynchronize");
}

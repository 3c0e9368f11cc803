/* Events: ordering work across partitions without a host sync. */
#include <stdlib.h>

#include "partition.h"

static void event_destroy(gctx__object *object)
{
    gctx_event *ev = (gctx_event *)object;
    const gctx__driver *drv;
    if (gctx__driver_loaded(&drv))
        GCTX__RELEASE(drv, EVENT, event, ev->handle);
    gctx__context_release(ev->context);
    free(ev);
}

gctx_status gctx_event_create(gctx_context *context, gctx_event **event)
{
    GCTX_TRY(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"));
    GCTX_TRY_OUTPUT(event);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    gctx_status s;
    gctx_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making an event");
    /* cuEventCreate works on the current context: make it the green one, then restore. */
    GCTX_CHECK(gctx__push_context(drv, context->driver.context), fail);
    gcu_result r = drv->cuEventCreate(&ev->handle, GCU_EVENT_DISABLE_TIMING);
    if (r != GCU_SUCCESS)
        ev->handle = NULL; /* none made: nothing to destroy */
    GCTX_CHECK(gctx__pop_context(drv, gctx__check_cuda(r, "cuEventCreate")), fail);
    GCTX_CHECK(gctx__object_init(&ev->base, GCTX__TYPE_EVENT, event_destroy), fail);
    ev->context = context;
    gctx__object_retain(&context->base);
    *event = gctx__handle_give(&ev->base);
    return GCTX_SUCCESS;
fail:
    if (ev->handle)
        GCTX__RELEASE(drv, EVENT, event, ev->handle);
    free(ev);
    return s;
}

GCTX__HANDLE_REFS(event, EVENT)

GCTX__RAW_HANDLE(CUevent, gctx_event_handle, event, EVENT, event->handle)

/* Checks two handles and loads the driver: the start of every call below. */
static gctx_status begin(void *a, gctx__type ta, const char *na, void *b, gctx__type tb,
                         const char *nb, const gctx__driver **drv)
{
    GCTX_TRY(gctx__handle_resolve(a, ta, na));
    GCTX_TRY(gctx__handle_resolve(b, tb, nb));
    return gctx__driver_load_green(drv);
}

gctx_status gctx_event_record(gctx_event *event, gctx_stream *stream)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(&event, GCTX__TYPE_EVENT, "event", &stream, GCTX__TYPE_STREAM, "stream", &drv));
    return gctx__check_cuda(drv->cuEventRecord(event->handle, stream->handle), "cuEventRecord");
}

gctx_status gctx_event_record_context(gctx_event *event, gctx_context *context)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(&event, GCTX__TYPE_EVENT, "event", &context, GCTX__TYPE_CONTEXT, "context",
                   &drv));
    return gctx__check_cuda(drv->cuGreenCtxRecordEvent(context->driver.green, event->handle),
                            "cuGreenCtxRecordEvent");
}

gctx_status gctx_stream_wait_event(gctx_stream *stream, gctx_event *event)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(&stream, GCTX__TYPE_STREAM, "stream", &event, GCTX__TYPE_EVENT, "event", &drv));
    return gctx__check_cuda(drv->cuStreamWaitEvent(stream->handle, event->handle, 0),
                            "cuStreamWaitEvent");
}

gctx_status gctx_context_wait_event(gctx_context *context, gctx_event *event)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(&context, GCTX__TYPE_CONTEXT, "context", &event, GCTX__TYPE_EVENT, "event",
                   &drv));
    return gctx__check_cuda(drv->cuGreenCtxWaitEvent(context->driver.green, event->handle),
                            "cuGreenCtxWaitEvent");
}

gctx_status gctx_event_synchronize(gctx_event *event)
{
    GCTX_TRY(gctx__handle_resolve(&event, GCTX__TYPE_EVENT, "event"));
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    return gctx__check_cuda(drv->cuEventSynchronize(event->handle), "cuEventSynchronize");
}

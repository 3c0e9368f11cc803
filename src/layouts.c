/* Layouts: partitionings of one device made up front, so that a switch between them makes no
 * driver object, only events (hand_over): microseconds, not milliseconds. */
#include <pthread.h>
#include <stdlib.h>

#include "partition.h"

/* One partition of one layout: callers get lent handles, so no stray release drops them. */
typedef struct slot {
    gctx_partition *partition;
    gctx_context *context;
    gctx_stream *stream;
    gctx_event *event; /* recorded on the stream when switching away */
    CUstream raw_stream;
    CUevent raw_event;
} slot;

struct gctx_layouts {
    gctx__object base;
    int device;
    unsigned nb_layouts, nb_parts;
    slot *slots; /* nb_parts per layout, layout after layout */
    pthread_mutex_t lock;
    unsigned active;
};

static slot *slot_of(const gctx_layouts *l, unsigned layout, unsigned part)
{
    return &l->slots[(size_t)layout * l->nb_parts + part];
}

/* Drops the layouts' reference of an object, and the lent handle callers used (the same
 * object may sit in several slots: unlending twice is harmless). */
static void drop(gctx__object *object)
{
    if (!object)
        return;
    gctx__handle_unlend(object);
    gctx__object_release(object);
}

static void layouts_destroy(gctx__object *object)
{
    gctx_layouts *l = (gctx_layouts *)object;
    size_t n = l->slots ? (size_t)l->nb_layouts * l->nb_parts : 0;
    for (size_t i = 0; i < n; i++) {
        slot *k = &l->slots[i];
        drop((gctx__object *)k->event); /* each object's first member is its base */
        drop((gctx__object *)k->stream);
        drop((gctx__object *)k->context);
        drop((gctx__object *)k->partition);
    }
    free(l->slots);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

/* A create call's handle, kept as an object reference; the handle given back. */
static void *keep(void *handle, gctx__type type)
{
    void *object = handle;
    if (gctx__handle_resolve(&object, type, "a handle the layouts made") != GCTX_SUCCESS)
        return NULL; /* cannot happen: it was just made */
    gctx__object_retain(object);
    gctx__handle_release(handle, type);
    return object;
}

static gctx_status check_counts(const unsigned *sm_counts, unsigned nb_layouts, unsigned nb_parts)
{
    if (!sm_counts || nb_layouts == 0 || nb_parts == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "sm_counts is %s, nb_layouts %u, nb_parts %u: give nb_layouts rows of "
                          "nb_parts SM counts (both at least 1)",
                          sm_counts ? "set" : "NULL", nb_layouts, nb_parts);
    for (unsigned l = 0; l < nb_layouts; l++)
        for (unsigned i = 0; i + 1 < nb_parts; i++)
            if (sm_counts[(size_t)l * nb_parts + i] == 0)
                return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                                  "layout %u, partition %u: an SM count of 0 (the rest) can only "
                                  "be the last partition's",
                                  l, i);
    return GCTX_SUCCESS;
}

/* One layout: the split, and a context, a stream and an event on each partition. */
static gctx_status build_layout(gctx_layouts *l, gctx_partition *device, unsigned layout,
                                const unsigned *counts, const gctx_context_options *options)
{
    const unsigned n = l->nb_parts;
    const int rest = counts[n - 1] == 0;
    const unsigned nb_groups = rest ? n - 1 : n;
    gctx_group *groups = calloc(nb_groups ? nb_groups : 1, sizeof *groups); /* reserved: 0 */
    gctx_partition **parts = calloc(n, sizeof *parts);
    gctx_status s = GCTX_SUCCESS;
    if (!groups || !parts) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making layouts");
        goto done;
    }
    for (unsigned i = 0; i < nb_groups; i++)
        groups[i].num_sms = counts[i];
    if (nb_groups == 0) {
        parts[0] = gctx_partition_retain(device); /* one partition of every SM */
    } else {
        s = gctx_partition_split(device, groups, nb_groups, NULL, parts,
                                 rest ? &parts[n - 1] : NULL, NULL, NULL);
        if (s == GCTX_SUCCESS && rest && !parts[n - 1])
            s = gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                           "its last partition is the rest (0), but the others take every SM");
    }
    for (unsigned i = 0; i < n; i++)
        slot_of(l, layout, i)->partition = parts[i] ? keep(parts[i], GCTX__TYPE_PARTITION) : NULL;
    for (unsigned i = 0; i < n && s == GCTX_SUCCESS; i++) {
        slot *k = slot_of(l, layout, i);
        gctx_context *context = NULL;
        gctx_stream *stream = NULL;
        gctx_event *event = NULL;
        GCTX_CHECK(gctx_context_create(gctx__handle_lend(&k->partition->base), options, &context),
                   done);
        k->context = keep(context, GCTX__TYPE_CONTEXT);
        GCTX_CHECK(gctx_stream_create(gctx__handle_lend(&k->context->base), NULL, &stream), done);
        k->stream = keep(stream, GCTX__TYPE_STREAM);
        GCTX_CHECK(gctx_event_create(gctx__handle_lend(&k->context->base), &event), done);
        k->event = keep(event, GCTX__TYPE_EVENT);
        k->raw_stream = k->stream->handle;
        k->raw_event = k->event->handle;
    }
done:
    if (s != GCTX_SUCCESS)
        gctx__append_error("making layout %u of %u", layout, l->nb_layouts);
    free(parts);
    free(groups);
    return s;
}

gctx_status gctx_layouts_create(int device, const unsigned *sm_counts, unsigned nb_layouts,
                                unsigned nb_parts, const gctx_context_options *options,
                                gctx_layouts **layouts)
{
    GCTX_TRY_OUTPUT(layouts);
    GCTX_TRY(check_counts(sm_counts, nb_layouts, nb_parts));
    gctx_partition *whole = NULL;
    GCTX_TRY(gctx_partition_from_device(device, &whole));
    gctx_status s = GCTX_SUCCESS;
    size_t n = (size_t)nb_layouts * nb_parts;
    gctx_layouts *l = calloc(1, sizeof *l);
    if (l) {
        l->device = device;
        l->nb_layouts = nb_layouts;
        l->nb_parts = nb_parts;
        pthread_mutex_init(&l->lock, NULL);
        l->slots = calloc(n, sizeof *l->slots);
    }
    if (!l || !l->slots) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making %u layouts", nb_layouts);
        goto done;
    }
    for (unsigned k = 0; k < nb_layouts; k++)
        GCTX_CHECK(build_layout(l, whole, k, &sm_counts[(size_t)k * nb_parts], options), done);
    s = gctx__object_init(&l->base, GCTX__TYPE_LAYOUTS, layouts_destroy);
done:
    gctx_partition_release(whole);
    if (s == GCTX_SUCCESS)
        *layouts = gctx__handle_give(&l->base);
    else if (l)
        layouts_destroy(&l->base);
    return s;
}

GCTX__HANDLE_REFS(layouts, LAYOUTS)

static gctx_status record(const gctx__driver *drv, const gctx_layouts *l, unsigned layout,
                          unsigned part)
{
    const slot *k = slot_of(l, layout, part);
    return gctx__check_cuda(drv->cuEventRecord(k->raw_event, k->raw_stream),
                            "cuEventRecord on layout %u's stream %u", layout, part);
}

/* Stream `part` of `layout` waits for the last event of `of_part` of `of`. */
static gctx_status wait_for(const gctx__driver *drv, const gctx_layouts *l, unsigned layout,
                            unsigned part, unsigned of, unsigned of_part)
{
    return gctx__check_cuda(drv->cuStreamWaitEvent(slot_of(l, layout, part)->raw_stream,
                                                   slot_of(l, of, of_part)->raw_event, 0),
                            "cuStreamWaitEvent: layout %u's stream %u for layout %u's stream %u",
                            layout, part, of, of_part);
}

/* By part: new stream i waits for old stream i only. All: the old streams are funnelled into
 * old stream 0, and every new stream waits for its one event: n records and 2n - 1 waits, not
 * n + n^2. Funnelling orders later work on old stream 0 after its siblings' (nobody submits
 * there after a switch), and cannot deadlock: every wait is for an event recorded before it.
 * A failure part way leaves only waits that add order. Lock held. */
static gctx_status hand_over(const gctx__driver *drv, const gctx_layouts *l, unsigned from,
                             unsigned to, unsigned flags)
{
    const unsigned n = l->nb_parts;
    const int by_part = flags & GCTX_LAYOUTS_ORDER_BY_PART;
    for (unsigned i = by_part ? 0 : 1; i < n; i++) {
        GCTX_TRY(record(drv, l, from, i));
        GCTX_TRY(by_part ? wait_for(drv, l, to, i, from, i) : wait_for(drv, l, from, 0, from, i));
    }
    if (by_part)
        return GCTX_SUCCESS;
    GCTX_TRY(record(drv, l, from, 0));
    for (unsigned j = 0; j < n; j++)
        GCTX_TRY(wait_for(drv, l, to, j, from, 0));
    return GCTX_SUCCESS;
}

gctx_status gctx_layouts_switch_ordered(gctx_layouts *layouts, unsigned index, unsigned flags,
                                        gctx_stream **streams)
{
    GCTX_TRY(gctx__handle_resolve(&layouts, GCTX__TYPE_LAYOUTS, "layouts"));
    if (flags & ~(unsigned)GCTX_LAYOUTS_ORDER_BY_PART)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "flags 0x%x has bits that are not GCTX_LAYOUTS_ORDER_* flags: give "
                          "GCTX_LAYOUTS_ORDER_ALL (0: every new stream after every old one) or "
                          "GCTX_LAYOUTS_ORDER_BY_PART (0x%x: new stream i after old stream i)",
                          flags, (unsigned)GCTX_LAYOUTS_ORDER_BY_PART);
    if (index >= layouts->nb_layouts)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "layout %u does not exist: there are %u (0 to %u)", index,
                          layouts->nb_layouts, layouts->nb_layouts - 1);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    pthread_mutex_lock(&layouts->lock);
    gctx_status s = index == layouts->active
                        ? GCTX_SUCCESS
                        : hand_over(drv, layouts, layouts->active, index, flags);
    if (s == GCTX_SUCCESS)
        layouts->active = index;
    pthread_mutex_unlock(&layouts->lock);
    if (s != GCTX_SUCCESS) {
        gctx__append_error("switching to layout %u: it is not active; retry, or synchronize "
                           "the active layout's streams first",
                           index);
        return s;
    }
    if (streams)
        for (unsigned i = 0; i < layouts->nb_parts; i++)
            streams[i] = gctx__handle_lend(&slot_of(layouts, index, i)->stream->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_layouts_switch(gctx_layouts *layouts, unsigned index, gctx_stream **streams)
{
    return gctx_layouts_switch_ordered(layouts, index, GCTX_LAYOUTS_ORDER_ALL, streams);
}

gctx_status gctx_layouts_get(const gctx_layouts *layouts, unsigned layout, unsigned part,
                             gctx_partition **partition, gctx_context **context,
                             gctx_stream **stream)
{
    GCTX_TRY(gctx__handle_resolve(&layouts, GCTX__TYPE_LAYOUTS, "layouts"));
    if (layout >= layouts->nb_layouts || part >= layouts->nb_parts)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "layout %u, partition %u does not exist: there are %u layouts of %u "
                          "partitions",
                          layout, part, layouts->nb_layouts, layouts->nb_parts);
    const slot *k = slot_of(layouts, layout, part);
    if (partition)
        *partition = gctx__handle_lend(&k->partition->base);
    if (context)
        *context = gctx__handle_lend(&k->context->base);
    if (stream)
        *stream = gctx__handle_lend(&k->stream->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_layouts_get_active(gctx_layouts *layouts, unsigned *index)
{
    GCTX_TRY(gctx__handle_resolve(&layouts, GCTX__TYPE_LAYOUTS, "layouts"));
    GCTX_TRY_OUTPUT(index);
    pthread_mutex_lock(&layouts->lock);
    *index = layouts->active;
    pthread_mutex_unlock(&layouts->lock);
    return GCTX_SUCCESS;
}

/* Streams and events. A stream keeps a clock that only modelled kernels advance: an event
 * records it, so two events of one stream time the modelled work between them. Spinning
 * kernels take real time instead, one after another on their stream, so that a program (or a
 * pacer) waits for its work as on a GPU. A context's default streams share one queue; streams
 * do not slow each other down. */
#include <string.h>

#include "clock.h"
#include "greenctx_sim.h"
#include "sim_internal.h"

#define SIM_WAITS_KEPT 16

typedef struct sim_stream {
    sim_slot slot;
    int dev;
    CUgreenCtx green; /* NULL for a primary-context stream */
    unsigned long long green_id; /* its sim_green's id: a context made later in the same slot,
                                    even with the same handle, is another one */
    unsigned flags;
    int priority;
    /* Per cuStreamWaitEvent, the stream its event was last recorded on (the last few). */
    unsigned waits;
    CUstream waited_for[SIM_WAITS_KEPT];
    double clock_ns; /* the modelled work submitted so far */
    long long done_ns; /* when its spinning work ends (CLOCK_MONOTONIC) */
} sim_stream;

typedef struct sim_event {
    sim_slot slot;
    int dev;
    unsigned flags;
    bool recorded;
    CUstream recorded_on; /* by cuEventRecord; NULL after a green-context record */
    double at_ns;         /* its stream's clock when recorded */
    long long done_ns;    /* when the work before it ends (CLOCK_MONOTONIC) */
} sim_event;

static sim_pool streams = {.item_size = sizeof(sim_stream), .tag = SIM_TAG_STREAM};
static sim_pool events = {.item_size = sizeof(sim_event), .tag = SIM_TAG_EVENT};

/* The range measured on the H200. */
enum { SIM_PRIORITY_LEAST = 0, SIM_PRIORITY_GREATEST = -5 };

static bool is_default_stream(CUstream s) { return (uintptr_t)s <= 2; /* NULL, legacy, per-thread */ }

/* A stream cuStreamCreate made; NULL for the default streams and invalid handles. */
static sim_stream *created_stream(CUstream s)
{
    return is_default_stream(s) ? NULL : sim_pool_get(&streams, (uintptr_t)s);
}

static sim_event *event_get(CUevent e) { return sim_pool_get(&events, (uintptr_t)e); }

static long long primary_done_ns[SIM_MAX_DEVICES]; /* the primary contexts' default streams */
/* cuLaunchKernel and cuEventRecord calls on a default stream: [0] legacy, [1] per-thread. */
static long default_calls[2][2];

void sim_streams_reset(void)
{
    sim_pool_clear(&streams);
    sim_pool_clear(&events);
    memset(primary_done_ns, 0, sizeof primary_done_ns);
    memset(default_calls, 0, sizeof default_calls);
}

/* The green context a stream was made in while it lives; NULL for a primary-context stream. */
static sim_green *stream_green(const sim_stream *s)
{
    sim_green *g = sim_green_get(s->green);
    return g && g->id == s->green_id ? g : NULL;
}

/* What a stream answers once its green context is destroyed: 709 up to 13.0 (freed with it),
 * 917 from 13.1 (detached). Found at use: destroying a context needs nothing of its streams. */
static gcu_result stream_gone(const sim_stream *s)
{
    if (!s->green || stream_green(s))
        return GCU_SUCCESS;
    return sim_version_at_least(13010) ? GCU_ERROR_STREAM_DETACHED : GCU_ERROR_CONTEXT_IS_DESTROYED;
}

/* A stream a 13.0 driver freed with its green context is no longer live. */
static bool stream_counts(const void *s)
{
    return stream_gone(s) != GCU_ERROR_CONTEXT_IS_DESTROYED;
}

int sim_streams_live(void) { return sim_pool_live(&streams, stream_counts); }

int sim_events_live(void) { return sim_pool_live(&events, NULL); }

gcu_result sim_stream_ctx(CUstream s, sim_ctx *out)
{
    if (is_default_stream(s))
        return sim_ctx_current(out);
    const sim_stream *st = created_stream(s);
    if (!st)
        return GCU_ERROR_INVALID_HANDLE;
    gcu_result gone = stream_gone(st);
    if (gone != GCU_SUCCESS)
        return gone;
    *out = (sim_ctx){st->dev, stream_green(st)};
    return GCU_SUCCESS;
}

void sim_stream_advance(CUstream s, double ns)
{
    sim_stream *st = created_stream(s);
    if (st)
        st->clock_ns += ns;
}

/* When the spinning work queued on stream s (of context c) so far ends. */
static long long *done_at(CUstream s, const sim_ctx *c)
{
    sim_stream *st = created_stream(s);
    if (st)
        return &st->done_ns;
    return c->green ? &c->green->default_done_ns : &primary_done_ns[c->dev];
}

void sim_stream_run(CUstream s, const sim_ctx *c, long long ns)
{
    long long *done = done_at(s, c), now = clock_now_ns();
    *done = (*done > now ? *done : now) + ns;
}

void sim_count_default_stream(int sym, CUstream s)
{
    int call = sym == SIM_SYM_cuEventRecord;
    if (is_default_stream(s) && (call || sym == SIM_SYM_cuLaunchKernel))
        default_calls[call][s == SIM_STREAM_PER_THREAD]++;
}

GCTXSIM_API long gctxsim_default_stream_calls(const char *symbol, CUstream which)
{
    if (!symbol || (which != SIM_STREAM_LEGACY && which != SIM_STREAM_PER_THREAD))
        return -1;
    int call = strcmp(symbol, "cuEventRecord") == 0;
    if (!call && strcmp(symbol, "cuLaunchKernel") != 0)
        return -1;
    sim_lock();
    long n = default_calls[call][which == SIM_STREAM_PER_THREAD];
    sim_unlock();
    return n;
}

/* When the spinning work of every stream of context c ends. */
static long long ctx_done_ns(const sim_ctx *c)
{
    long long done = *done_at(NULL, c);
    for (uint32_t i = 0; i < streams.count; i++) {
        const sim_stream *s = sim_pool_at(&streams, i);
        if (s && s->dev == c->dev && s->done_ns > done &&
            (c->green ? stream_green(s) == c->green : !s->green))
            done = s->done_ns;
    }
    return done;
}

static gcu_result stream_new(CUstream *out, const sim_ctx *c, unsigned flags, int priority)
{
    uintptr_t handle;
    sim_stream *s = sim_pool_alloc(&streams, &handle);
    if (!s)
        return GCU_ERROR_OUT_OF_MEMORY;
    s->dev = c->dev;
    s->green = c->green ? (CUgreenCtx)sim_pool_handle(&sim_greens, c->green) : NULL;
    s->green_id = c->green ? c->green->id : 0;
    s->flags = flags;
    /* Out-of-range priorities are clamped, as the driver documents. */
    s->priority = priority > SIM_PRIORITY_LEAST ? SIM_PRIORITY_LEAST
                  : priority < SIM_PRIORITY_GREATEST ? SIM_PRIORITY_GREATEST
                                                     : priority;
    *out = (CUstream)handle;
    return GCU_SUCCESS;
}

/* cuStreamCreate[WithPriority]: in the current context, maybe a converted green context. */
static gcu_result create_in_current(int sym, CUstream *stream, unsigned flags, int priority)
{
    SIM_BEGIN_SYM(sym, true);
    SIM_FAIL_IF(!stream || (flags & ~(unsigned)GCU_STREAM_NON_BLOCKING), GCU_ERROR_INVALID_VALUE);
    SIM_CTX(c, sim_ctx_current(&c));
    SIM_CHECK(stream_new(stream, &c, flags, priority));
    SIM_END();
}

gcu_result sim_cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    SIM_BEGIN(cuCtxGetStreamPriorityRange);
    if (least)
        *least = SIM_PRIORITY_LEAST;
    if (greatest)
        *greatest = SIM_PRIORITY_GREATEST;
    SIM_END();
}

gcu_result sim_cuStreamCreate(CUstream *stream, unsigned int flags)
{
    return create_in_current(SIM_SYM_cuStreamCreate, stream, flags, 0);
}

gcu_result sim_cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int prio)
{
    return create_in_current(SIM_SYM_cuStreamCreateWithPriority, stream, flags, prio);
}

gcu_result sim_cuGreenCtxStreamCreate(CUstream *stream, CUgreenCtx ctx, unsigned int flags,
                                      int priority)
{
    SIM_BEGIN_ARGS(cuGreenCtxStreamCreate, !stream || flags != GCU_STREAM_NON_BLOCKING);
    SIM_LOOKUP(sim_green, g, sim_green_get(ctx));
    sim_ctx c = {g->dev, g};
    SIM_CHECK(stream_new(stream, &c, flags, priority));
    SIM_END();
}

gcu_result sim_cuStreamDestroy(CUstream stream)
{
    SIM_BEGIN(cuStreamDestroy);
    SIM_LOOKUP(sim_stream, s, created_stream(stream));
    /* 13.0 freed it with its green context and says so; 13.1 destroys it as any other. */
    if (stream_gone(s) == GCU_ERROR_CONTEXT_IS_DESTROYED)
        rc = GCU_ERROR_CONTEXT_IS_DESTROYED;
    sim_pool_free(s);
    SIM_END();
}

/* What a synchronize or query (sym) waits for, its end into *done: the stream's work so far,
 * the work before the event's record, or every stream's of the current context. */
static gcu_result work_done(int sym, CUstream stream, CUevent event, long long *done)
{
    SIM_BEGIN_SYM(sym, true);
    sim_ctx c;
    const sim_event *e = event_get(event);
    if (sym == SIM_SYM_cuEventSynchronize || sym == SIM_SYM_cuEventQuery) {
        SIM_FAIL_IF(!e, GCU_ERROR_INVALID_HANDLE);
        *done = e->done_ns;
    } else if (sym == SIM_SYM_cuCtxSynchronize) {
        SIM_CHECK(sim_ctx_current(&c));
        *done = ctx_done_ns(&c);
    } else {
        SIM_CHECK(sim_stream_ctx(stream, &c));
        *done = *done_at(stream, &c);
    }
    SIM_END();
}

/* A synchronize sleeps until that work is done (lock not held: other threads call the driver
 * meanwhile); a query answers NOT_READY before. */
static gcu_result wait_or_query(int sym, CUstream stream, CUevent event)
{
    long long done = 0;
    gcu_result rc = work_done(sym, stream, event, &done);
    bool wait = sym != SIM_SYM_cuStreamQuery && sym != SIM_SYM_cuEventQuery;
    if (rc == GCU_SUCCESS && wait)
        clock_sleep_until(done);
    else if (rc == GCU_SUCCESS && done > clock_now_ns())
        rc = GCU_ERROR_NOT_READY;
    return rc;
}

gcu_result sim_cuCtxSynchronize(void) { return wait_or_query(SIM_SYM_cuCtxSynchronize, NULL, NULL); }

gcu_result sim_cuStreamSynchronize(CUstream stream)
{
    return wait_or_query(SIM_SYM_cuStreamSynchronize, stream, NULL);
}

gcu_result sim_cuStreamQuery(CUstream stream)
{
    return wait_or_query(SIM_SYM_cuStreamQuery, stream, NULL);
}

gcu_result sim_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    SIM_BEGIN_ARGS(cuStreamWaitEvent, flags > 1);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    SIM_LOOKUP(const sim_event, e, event_get(event));
    sim_stream *s = created_stream(stream);
    if (s)
        s->waited_for[s->waits++ % SIM_WAITS_KEPT] = e->recorded_on;
    SIM_END();
}

GCTXSIM_API int gctxsim_stream_waits(CUstream stream, CUstream *waited_for, int capacity)
{
    sim_lock();
    const sim_stream *s = created_stream(stream);
    unsigned waits = s ? s->waits : 0, kept = waits < SIM_WAITS_KEPT ? waits : SIM_WAITS_KEPT;
    for (unsigned i = 0; waited_for && i < kept && (int)i < capacity; i++)
        waited_for[i] = s->waited_for[(waits - kept + i) % SIM_WAITS_KEPT];
    sim_unlock();
    return s ? (int)waits : -1;
}

gcu_result sim_cuStreamGetPriority(CUstream stream, int *priority)
{
    SIM_BEGIN_ARGS(cuStreamGetPriority, !priority);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    const sim_stream *s = created_stream(stream); /* NULL: a default stream */
    *priority = s ? s->priority : 0;
    SIM_END();
}

gcu_result sim_cuStreamGetFlags(CUstream stream, unsigned int *flags)
{
    SIM_BEGIN_ARGS(cuStreamGetFlags, !flags);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    const sim_stream *s = created_stream(stream);
    *flags = s ? s->flags : 0;
    SIM_END();
}

gcu_result sim_cuStreamGetGreenCtx(CUstream stream, CUgreenCtx *ctx)
{
    SIM_BEGIN_ARGS(cuStreamGetGreenCtx, !ctx);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    *ctx = c.green ? (CUgreenCtx)sim_pool_handle(&sim_greens, c.green) : NULL;
    SIM_END();
}

gcu_result sim_cuStreamGetDevResource(CUstream stream, gcu_dev_resource *resource,
                                      gcu_dev_resource_type type)
{
    SIM_BEGIN(cuStreamGetDevResource);
    /* Streams expose only their SMs; workqueue types are refused (13.1 docs). */
    SIM_FAIL_IF(type != GCU_DEV_RESOURCE_TYPE_SM, GCU_ERROR_INVALID_RESOURCE_TYPE);
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    SIM_CHECK(sim_res_of_context(resource, (int)type, &c));
    SIM_END();
}

/* ---- events ------------------------------------------------------------------------------ */

gcu_result sim_cuEventCreate(CUevent *event, unsigned int flags)
{
    SIM_BEGIN_ARGS(cuEventCreate, !event || flags > 7);
    SIM_CTX(c, sim_ctx_current(&c));
    uintptr_t handle;
    sim_event *e = sim_pool_alloc(&events, &handle);
    SIM_FAIL_IF(!e, GCU_ERROR_OUT_OF_MEMORY);
    e->dev = c.dev;
    e->flags = flags;
    *event = (CUevent)handle;
    SIM_END();
}

gcu_result sim_cuEventDestroy(CUevent event)
{
    SIM_BEGIN(cuEventDestroy);
    SIM_LOOKUP(sim_event, e, event_get(event));
    sim_pool_free(e);
    SIM_END();
}

gcu_result sim_cuEventRecord(CUevent event, CUstream stream)
{
    SIM_BEGIN(cuEventRecord);
    SIM_LOOKUP(sim_event, e, event_get(event));
    SIM_CTX(c, sim_stream_ctx(stream, &c));
    SIM_FAIL_IF(c.dev != e->dev, GCU_ERROR_INVALID_HANDLE);
    sim_count_default_stream(SIM_SYM_cuEventRecord, stream);
    e->recorded = true;
    e->recorded_on = stream;
    const sim_stream *s = created_stream(stream);
    e->at_ns = s ? s->clock_ns : 0.0;
    e->done_ns = *done_at(stream, &c);
    SIM_END();
}

gcu_result sim_cuEventSynchronize(CUevent event)
{
    return wait_or_query(SIM_SYM_cuEventSynchronize, NULL, event);
}

gcu_result sim_cuEventQuery(CUevent event) { return wait_or_query(SIM_SYM_cuEventQuery, NULL, event); }

gcu_result sim_cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    SIM_BEGIN_ARGS(cuEventElapsedTime, !ms);
    const sim_event *a = event_get(start), *b = event_get(end);
    SIM_FAIL_IF(!a || !b || !a->recorded || !b->recorded ||
                    ((a->flags | b->flags) & GCU_EVENT_DISABLE_TIMING),
                GCU_ERROR_INVALID_HANDLE);
    *ms = b->at_ns > a->at_ns ? (float)((b->at_ns - a->at_ns) * 1e-6) : 0.0f;
    SIM_END();
}

gcu_result sim_cuGreenCtxRecordEvent(CUgreenCtx ctx, CUevent event)
{
    SIM_BEGIN(cuGreenCtxRecordEvent);
    const sim_green *g = sim_green_get(ctx);
    sim_event *e = event_get(event);
    /* The event must belong to the green context's primary context. */
    SIM_FAIL_IF(!g || !e || g->dev != e->dev, GCU_ERROR_INVALID_HANDLE);
    e->recorded = true;
    e->recorded_on = NULL;
    e->at_ns = 0.0;
    e->done_ns = ctx_done_ns(&(sim_ctx){g->dev, (sim_green *)g}); /* all its work */
    SIM_END();
}

gcu_result sim_cuGreenCtxWaitEvent(CUgreenCtx ctx, CUevent event)
{
    SIM_BEGIN(cuGreenCtxWaitEvent);
    SIM_FAIL_IF(!sim_green_get(ctx) || !event_get(event), GCU_ERROR_INVALID_HANDLE);
    SIM_END();
}

/* The guard for programs that know nothing of it: greenctx run --class. docs/tenants.md
 * ("The guard") says how a best-effort program is paced (a cap on launches in flight and a
 * duty cycle per 10 ms period, never starved) and how a latency program's steps are sampled.
 *
 * Async copies count as launches: a copy hog loads HBM through the context's SMs as a kernel
 * does. A launch's marker event goes on its own stream, a NULL one being the per-thread default
 * stream when the program's launch function is the driver's per-thread one. The steps go to
 * the claim from the pacer thread, never from the program's. An unguarded program is handed
 * the driver's own functions; the exported names cost it one atomic load (`active`). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "run_preload.h"
#include "run_steps.h"

#define PERIOD_NS 10000000ll /* the duty cycle's period, and how often the guard is asked */
#define RING 32              /* the largest cap the guard gives (level 1) */
#define REST_SLICE_NS 1000000ll /* a rest looks at the guard's duty again every 1 ms */
#define EVENT_FLAGS 0x3u     /* CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING */
#define LEGACY_FLAG 0x1ull     /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */
#define PER_THREAD_FLAG 0x2ull /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define PER_THREAD_STREAM ((CUstream)0x2) /* CU_STREAM_PER_THREAD */

typedef cu_result (*event_fn)(CUevent event);
#define NOT_READY 600 /* CUDA_ERROR_NOT_READY */
typedef cu_result (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                               void **params, void **extra);
typedef struct launch_config { /* CUlaunchConfig */
    unsigned grid[3], block[3], shmem;
    CUstream stream;
    void *attrs;
    unsigned nb_attrs;
} launch_config;
typedef cu_result (*launch_ex_fn)(const launch_config *config, void *f, void **params,
                                  void **extra);
typedef cu_result (*graph_launch_fn)(void *exec, CUstream stream);
typedef cu_result (*copy_fn)(unsigned long long dst, unsigned long long src, size_t bytes,
                             CUstream stream);
typedef cu_result (*stream_fn)(CUstream stream);
typedef cu_result (*void_fn)(void);

/* One device's pace: what the guard allows (the pacer thread's), the ring (under lock, taken
 * only while paced) and a latency program's open step. */
typedef struct pace {
    gctx_claim *claim;          /* guarded: best-effort (paced) or latency (sampled); else NULL */
    int sampled;                /* a latency program: its steps are reported */
    atomic_uint cap, duty;      /* launches in flight (0: no cap); per mille of each period */
    atomic_llong held_ns;       /* launches held back since the pacer last reported it */
    atomic_llong step_ns;       /* the open step's first launch (monotonic); 0: none open */
    atomic_llong waited_ns;     /* a best-effort program's last wait for its work returned */
    atomic_int let_go;          /* the guard let go since a launch was last held */
    run_steps steps;            /* closed steps in ms */
    unsigned long steps_lost;   /* dropped: more than RUN_STEPS in one report's time */
    pthread_mutex_t lock;
    CUevent ring[RING];         /* made on first use, in the launching thread's context */
    unsigned head, count;       /* the events in flight: ring[head], ... */
    long long period_ns;        /* the duty cycle's current period began */
    unsigned launched;          /* launches in it */
} pace;

static pace paces[RUN_MAX_DEVICES];
static atomic_int active; /* some device is paced now, or sampled: the wrappers look further */
static struct {
    cu_result (*create)(CUevent *event, unsigned flags);
    cu_result (*record)(CUevent event, CUstream stream);
    event_fn sync, query;
} ev;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static int any_guarded; /* a device of this program is guarded (start) */
static pthread_t pacer;
static int pacer_running;
static atomic_int stopping;

/* ---- the pacer thread: the guard's advice every period ---------------------------------- */

static int any_active(void)
{
    for (unsigned i = 0; i < run.nb_devices; i++) {
        pace *p = &paces[i];
        if (p->sampled || atomic_load(&p->cap) || atomic_load(&p->duty) < 1000)
            return 1;
    }
    return 0;
}

static void ask_guard(pace *p)
{
    long long held = atomic_exchange(&p->held_ns, 0);
    if (held)
        gctx_claim_report_held(p->claim, held / 1e6);
    gctx_guard_advice a = GCTX_GUARD_ADVICE_INIT;
    /* A guard that can't be read holds nothing back: advice, never a reason to stop. */
    if (gctx_claim_guard(p->claim, NULL, &a) != GCTX_SUCCESS || !a.level)
        a.max_outstanding = 0, a.duty_permille = 1000;
    unsigned duty = a.duty_permille ? a.duty_permille : 1000;
    atomic_store(&p->cap, a.max_outstanding);
    atomic_store(&p->duty, duty);
    /* The pace starts afresh when the guard holds launches again: free time is never rested for. */
    if (!a.max_outstanding && duty >= 1000)
        atomic_store(&p->let_go, 1);
}

static void report_step(float ms, void *claim) { gctx_claim_report_step(claim, ms); }

/* A period, or less when a latency tenant publishes (the first paced device's watch). */
static void wait_period(void)
{
    for (unsigned i = 0; i < run.nb_devices; i++)
        if (paces[i].claim && !paces[i].sampled &&
            gctx_claim_guard_wait(paces[i].claim, (int)(PERIOD_NS / 1000000)) == GCTX_SUCCESS)
            return;
    clock_sleep_until(clock_now_ns() + PERIOD_NS);
}

static void *pacer_main(void *arg)
{
    (void)arg;
    for (; !atomic_load(&stopping); wait_period()) {
        for (unsigned i = 0; i < run.nb_devices; i++) {
            pace *p = &paces[i];
            if (p->claim && p->sampled) /* the steps closed since the last report, to the claim */
                p->steps_lost += run_steps_read(&p->steps, report_step, p->claim);
            else if (p->claim)
                ask_guard(p);
        }
        atomic_store(&active, any_active());
    }
    return NULL;
}

/* At exit, before the claims go back (run_claims_at_exit, registered earlier, runs later). */
static void stop_at_exit(void)
{
    atomic_store(&active, 0);
    atomic_store(&stopping, 1);
    if (pacer_running && !pthread_equal(pacer, pthread_self()))
        pthread_join(pacer, NULL);
    pacer_running = 0;
    for (unsigned i = 0; i < run.nb_devices; i++) {
        unsigned long lost = paces[i].steps_lost + atomic_load(&paces[i].steps.lost);
        if (lost)
            fprintf(stderr,
                    "greenctx run: device %d: %lu of the program's steps were not sampled "
                    "(more than %d closed within 10 ms); the guard went by the others\n",
                    run.devices[i].ordinal, lost, RUN_STEPS);
    }
}

/* A forked child has no pacer thread: nothing may stay held back in it. */
static void forked_child(void)
{
    atomic_store(&active, 0);
    pacer_running = 0;
    for (unsigned i = 0; i < RUN_MAX_DEVICES; i++) {
        atomic_store(&paces[i].cap, 0);
        atomic_store(&paces[i].duty, 1000);
        atomic_store(&paces[i].step_ns, 0);
        pthread_mutex_init(&paces[i].lock, NULL);
    }
}

/* The legacy stream's functions: NULL is the legacy stream to ev.record, as to -lcuda's. */
static void *driver_fn(const char *name)
{
    void *fn = NULL;
    return run.drv.getproc(name, &fn, 12000, LEGACY_FLAG, NULL) == CU_OK ? fn : NULL;
}

static void start(void)
{
    for (unsigned i = 0; i < run.nb_devices; i++) {
        pace *p = &paces[i];
        atomic_store(&p->duty, 1000);
        pthread_mutex_init(&p->lock, NULL);
        const run_member *m = &run.devices[i].joined;
        gctx_tenant_class k = m->claim ? m->claim_info.tenant_class : GCTX_TENANT_UNGUARDED;
        if (k == GCTX_TENANT_UNGUARDED)
            continue;
        p->claim = m->claim;
        p->sampled = k == GCTX_TENANT_LATENCY;
        any_guarded = 1;
    }
    *(void **)&ev.create = driver_fn("cuEventCreate");
    *(void **)&ev.record = driver_fn("cuEventRecord");
    *(void **)&ev.sync = driver_fn("cuEventSynchronize");
    *(void **)&ev.query = driver_fn("cuEventQuery");
    pthread_atfork(NULL, NULL, forked_child);
    atomic_store(&active, any_active());
    if (!any_guarded || !ev.create || !ev.record || !ev.sync || !ev.query)
        return;
    if (atexit(stop_at_exit) != 0 || pthread_create(&pacer, NULL, pacer_main, NULL) != 0)
        run_die("the thread of the guard (pacing, or the steps it reports) could not start");
    pacer_running = 1;
}

/* 1 when a device of this program is guarded (setup made). */
static int guarded(void)
{
    run_setup();
    pthread_once(&started, start);
    return any_guarded;
}

/* ---- around a launch ---------------------------------------------------------------------- */

/* The pace of the device whose context is current: where the launch goes. */
static pace *current_pace(void)
{
    if (run.nb_devices == 1)
        return paces[0].claim ? &paces[0] : NULL;
    CUcontext ctx = NULL;
    run_device *d = run.drv.get_current(&ctx) == CU_OK ? run_device_of_context(ctx) : NULL;
    return d && paces[d - run.devices].claim ? &paces[d - run.devices] : NULL;
}

/* The oldest launch in flight has finished (its wait's time is held back). */
static void wait_oldest(pace *p)
{
    ev.sync(p->ring[p->head]);
    p->head = (p->head + 1) % RING;
    p->count--;
}

/* The newest launch in flight is still running. */
static int still_running(const pace *p)
{
    return p->count && ev.query(p->ring[(p->head + p->count - 1) % RING]) == NOT_READY;
}

/* Holds the launch back as the guard says (lock held; t0: the launch's call): past the
 * period's duty share, the work in flight finishes and the GPU rests until its busy time is
 * that share; at the cap, the oldest launch finishes first. */
static void hold(pace *p, unsigned cap, unsigned duty, long long t0)
{
    int afresh = atomic_exchange(&p->let_go, 0); /* the period's launches went unheld */
    long long since = t0 - p->period_ns, now;
    int resting = !afresh && duty < 1000 && p->launched && since >= PERIOD_NS * duty / 1000;
    /* Past the period, its work ran as long as some still runs, else until the last wait. */
    int running = resting && (since < PERIOD_NS || still_running(p));
    long long end = running ? t0 : atomic_load(&p->waited_ns);
    if (resting && end - p->period_ns >= since * duty / 1000) {
        while (p->count)
            wait_oldest(p);
        long long busy = (running ? clock_now_ns() : end) - p->period_ns;
        while ((duty = atomic_load(&p->duty)) < 1000 &&
               (now = clock_now_ns()) < p->period_ns + busy * 1000 / (duty ? duty : 1))
            clock_sleep_until(now + REST_SLICE_NS);
        p->period_ns = clock_now_ns();
        p->launched = 0;
    } else if (afresh || since >= PERIOD_NS) {
        p->period_ns = t0;
        p->launched = 0;
    }
    while (cap && p->count >= cap)
        wait_oldest(p);
    atomic_fetch_add(&p->held_ns, clock_now_ns() - t0);
}

/* After the launch: an event marks its end in the ring (lock held). */
static void mark(pace *p, CUstream stream, int per_thread)
{
    if (p->count == RING)
        wait_oldest(p);
    unsigned slot = (p->head + p->count) % RING;
    if (!p->ring[slot] && ev.create(&p->ring[slot], EVENT_FLAGS) != CU_OK) {
        p->ring[slot] = NULL;
        return; /* not paced this once: the launch itself is the program's */
    }
    if (ev.record(p->ring[slot], !stream && per_thread ? PER_THREAD_STREAM : stream) == CU_OK)
        p->count++;
    p->launched++;
}

/* A step opens at the first launch after the last wait. */
static void open_step(pace *p)
{
    long long none = 0;
    if (!atomic_load_explicit(&p->step_ns, memory_order_relaxed))
        atomic_compare_exchange_strong(&p->step_ns, &none, clock_now_ns());
}

/* The launch or async copy `call`, held back and marked as the guard says. */
#define PACED_LAUNCH(stream, per_thread, call)                                                 \
    do {                                                                                       \
        pace *p_ = atomic_load_explicit(&active, memory_order_relaxed) ? current_pace() : NULL; \
        if (!p_)                                                                               \
            return call;                                                                       \
        if (p_->sampled) {                                                                     \
            open_step(p_);                                                                     \
            return call;                                                                       \
        }                                                                                      \
        unsigned cap_ = atomic_load(&p_->cap), duty_ = atomic_load(&p_->duty);                 \
        if (!cap_ && duty_ >= 1000)                                                            \
            return call;                                                                       \
        long long t0_ = clock_now_ns();                                                        \
        /* Held across the call: a pageable copy may block the host meanwhile. */              \
        pthread_mutex_lock(&p_->lock);                                                         \
        hold(p_, cap_, duty_, t0_);                                                            \
        cu_result r_ = call;                                                                   \
        if (r_ == CU_OK)                                                                       \
            mark(p_, stream, per_thread);                                                      \
        pthread_mutex_unlock(&p_->lock);                                                       \
        return r_;                                                                             \
    } while (0)

/* After the program waited for its work: the open step closes; a paced program's work ended. */
static cu_result waited(cu_result r)
{
    if (!atomic_load_explicit(&active, memory_order_relaxed))
        return r;
    pace *p = current_pace();
    if (p && !p->sampled && r == CU_OK)
        atomic_store(&p->waited_ns, clock_now_ns());
    long long t0 = p && p->sampled ? atomic_exchange(&p->step_ns, 0) : 0;
    if (t0 && r == CU_OK)
        run_steps_put(&p->steps, (float)((clock_now_ns() - t0) / 1e6));
    return r;
}

/* ---- the wrappers ------------------------------------------------------------------------ */

/* Per call, its driver functions: [0] the exported name's, [1] the exported _ptsz name's,
 * [2] and [3] what cuGetProcAddress handed out (default stream legacy, per thread). No memsets:
 * frameworks fill tensors with kernels, and no memset hog was measured. */
enum { LAUNCH, LAUNCH_EX, GRAPH_LAUNCH, COPY, COPY_DTOD, STREAM_SYNC, CTX_SYNC, EVENT_SYNC,
       NB_CALLS };
/* cuGetProcAddress's base names; the exported names add `exported_as` (then _ptsz). */
static const char *const names[NB_CALLS] = {
    "cuLaunchKernel",    "cuLaunchKernelEx",    "cuGraphLaunch",    "cuMemcpyAsync",
    "cuMemcpyDtoDAsync", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"};
static const char *const exported_as[NB_CALLS] = {[COPY_DTOD] = "_v2"};
static _Atomic(void *) real[NB_CALLS][4];

/* The driver function behind an exported name (v 1: _ptsz), found at its first call. */
static void *exported_real(int call, int v)
{
    void *fn = atomic_load_explicit(&real[call][v], memory_order_relaxed);
    if (fn)
        return fn;
    guarded();
    if (run.drv.getproc(names[call], &fn, 12000, v ? PER_THREAD_FLAG : LEGACY_FLAG, NULL) !=
            CU_OK ||
        !fn)
        run_die("the CUDA driver (%s) has no %s%s%s, which the program calls",
                gctx_driver_path(), names[call], exported_as[call] ? exported_as[call] : "",
                v ? "_ptsz" : "");
    atomic_store(&real[call][v], fn);
    return fn;
}

#define REAL(call, v, type) ((type)((v) < 2 ? exported_real(call, v) : atomic_load(&real[call][v])))

/* An async copy (call: COPY or COPY_DTOD, one prototype), paced as a launch. */
#define COPY_WRAPPER(copy, call, v)                                                            \
    copy(unsigned long long dst, unsigned long long src, size_t bytes, CUstream stream)        \
    {                                                                                          \
        PACED_LAUNCH(stream, (v) & 1, REAL(call, v, copy_fn)(dst, src, bytes, stream));        \
    }
/* The wrappers of variant v, named the driver's name and `suffix`, declared `kind`: */
#define STREAM_WRAPPERS(kind, suffix, v)                                                       \
    kind cuLaunchKernel##suffix(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,   \
                                unsigned by, unsigned bz, unsigned shmem, CUstream stream,     \
                                void **params, void **extra)                                   \
    {                                                                                          \
        PACED_LAUNCH(stream, (v) & 1,                                                          \
                     REAL(LAUNCH, v, launch_fn)(f, gx, gy, gz, bx, by, bz, shmem, stream,      \
                                                params, extra));                               \
    }                                                                                          \
    kind cuLaunchKernelEx##suffix(const launch_config *config, void *f, void **params,         \
                                  void **extra)                                                \
    {                                                                                          \
        PACED_LAUNCH(config ? config->stream : NULL, (v) & 1,                                  \
                     REAL(LAUNCH_EX, v, launch_ex_fn)(config, f, params, extra));              \
    }                                                                                          \
    kind cuGraphLaunch##suffix(void *exec, CUstream stream)                                    \
    {                                                                                          \
        PACED_LAUNCH(stream, (v) & 1, REAL(GRAPH_LAUNCH, v, graph_launch_fn)(exec, stream));  \
    }                                                                                          \
    COPY_WRAPPER(kind cuMemcpyAsync##suffix, COPY, v)                                          \
    COPY_WRAPPER(kind cuMemcpyDtoDAsync_v2##suffix, COPY_DTOD, v)                              \
    kind cuStreamSynchronize##suffix(CUstream stream)                                          \
    {                                                                                          \
        return waited(REAL(STREAM_SYNC, v, stream_fn)(stream));                                \
    }
/* The waits of no stream (no _ptsz name). */
#define WAIT_WRAPPERS(kind, suffix, v)                                                         \
    kind cuCtxSynchronize##suffix(void) { return waited(REAL(CTX_SYNC, v, void_fn)()); }       \
    kind cuEventSynchronize##suffix(CUevent event)                                             \
    {                                                                                          \
        return waited(REAL(EVENT_SYNC, v, event_fn)(event));                                   \
    }

/* Exported (-lcuda calls them by name; _ptsz under --default-stream per-thread) and handed out
 * by cuGetProcAddress (_legacy, _per_thread). */
#define EXPORTED RUN_EXPORT cu_result
#define HANDED static cu_result
STREAM_WRAPPERS(EXPORTED, , 0)
WAIT_WRAPPERS(EXPORTED, , 0)
STREAM_WRAPPERS(EXPORTED, _ptsz, 1)
STREAM_WRAPPERS(HANDED, _legacy, 2)
WAIT_WRAPPERS(HANDED, _legacy, 2)
STREAM_WRAPPERS(HANDED, _per_thread, 3)
WAIT_WRAPPERS(HANDED, _per_thread, 3)

/* NULL: no such name (the waits of no stream have no _ptsz one). */
#define WRAPPERS(name, ptsz) {(void *)name, ptsz, (void *)name##_legacy, (void *)name##_per_thread}
static void *const wrappers[NB_CALLS][4] = {
    [LAUNCH] = WRAPPERS(cuLaunchKernel, (void *)cuLaunchKernel_ptsz),
    [LAUNCH_EX] = WRAPPERS(cuLaunchKernelEx, (void *)cuLaunchKernelEx_ptsz),
    [GRAPH_LAUNCH] = WRAPPERS(cuGraphLaunch, (void *)cuGraphLaunch_ptsz),
    [COPY] = WRAPPERS(cuMemcpyAsync, (void *)cuMemcpyAsync_ptsz),
    [COPY_DTOD] = WRAPPERS(cuMemcpyDtoDAsync_v2, (void *)cuMemcpyDtoDAsync_v2_ptsz),
    [STREAM_SYNC] = WRAPPERS(cuStreamSynchronize, (void *)cuStreamSynchronize_ptsz),
    [CTX_SYNC] = WRAPPERS(cuCtxSynchronize, NULL),
    [EVENT_SYNC] = WRAPPERS(cuEventSynchronize, NULL),
};
#undef WRAPPERS

/* The call of an exported name (`exported`) or cuGetProcAddress base name; *v 1: _ptsz. */
static int call_of(const char *name, int exported, int *v)
{
    for (int call = 0; call < NB_CALLS; call++) {
        size_t n = strlen(names[call]);
        const char *as = exported && exported_as[call] ? exported_as[call] : "";
        if (strncmp(name, names[call], n) != 0 || strncmp(name + n, as, strlen(as)) != 0)
            continue;
        const char *rest = name + n + strlen(as);
        if (!*rest || (wrappers[call][1] && strcmp(rest, "_ptsz") == 0)) {
            *v = *rest != '\0';
            return call;
        }
    }
    return -1;
}

void *run_pace_hook_for_symbol(const char *name)
{
    int v, call = call_of(name, 1, &v);
    return call >= 0 && guarded() ? wrappers[call][v] : NULL;
}

void *run_pace_hook_for_proc(const char *symbol, int version, unsigned long long flags,
                             void *driver_fn)
{
    int v, call = call_of(symbol, 0, &v);
    /* Below 3.2 cuMemcpyDtoDAsync is the 32-bit-pointer function, not the one wrapped. */
    if (call < 0 || v || (call == COPY_DTOD && version < 3020) || !guarded())
        return NULL;
    /* Flags 0 leave the default stream to the driver: what it handed out tells which. */
    void *per_thread = NULL;
    if (!flags)
        run.drv.getproc(symbol, &per_thread, version, PER_THREAD_FLAG, NULL);
    v = (flags & PER_THREAD_FLAG) || (per_thread && driver_fn == per_thread) ? 3 : 2;
    atomic_store(&real[call][v], driver_fn);
    return wrappers[call][v];
}

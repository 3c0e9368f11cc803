/* The hog thread: a few units of work queued ahead, so that its lane never idles. */
#include <stdio.h>
#include <string.h>

#include "bench_isolation.h"

#define HOG_IN_FLIGHT 4u       /* units queued ahead: a few ms of slack for the feeder thread */
#define HOG_CHUNKS_PER_SLOT 64 /* fine chunks: a partition of any size gets an even share */
#define HOG_ITERS_PER_CHUNK 480 /* with 64 chunks per block slot, about 1 ms per unit on H200 */
#define HOG_COPY_BYTES (1ull << 30)

int bench_hog_work_init(const bench_env *env, const bench_module *mod, CUstream stream,
                        bench_hog_work *work)
{
    memset(work, 0, sizeof *work);
    unsigned full_grid = env->sm_count * BENCH_FULL_BLOCKS_SM;
    work->fma_chunks = full_grid * HOG_CHUNKS_PER_SLOT;
    work->fma_iters = HOG_ITERS_PER_CHUNK;
    work->copy_words = HOG_COPY_BYTES / 4;
    work->seed = 0x5eed0001u;
    size_t fma_bytes = (size_t)full_grid * BENCH_BLOCK * sizeof(float);
    if (bench_alloc(env, &work->fma_out, fma_bytes, "the hog") ||
        bench_alloc(env, &work->src, HOG_COPY_BYTES, "the hog's copy source") ||
        bench_alloc(env, &work->dst, HOG_COPY_BYTES, "the hog's copy destination") ||
        bench_fill(env, mod, stream, work->src, work->copy_words, work->seed) ||
        bench_cu(env->drv->cuStreamSynchronize(stream), "filling the hog's source")) {
        bench_hog_work_free(env, work);
        return -1;
    }
    return 0;
}

void bench_hog_work_free(const bench_env *env, bench_hog_work *work)
{
    bench_free(env, &work->fma_out);
    bench_free(env, &work->src);
    bench_free(env, &work->dst);
}

const char *bench_hog_name(bench_hog_kind kind) { return kind == BENCH_HOG_FMA ? "fma" : "copy"; }

double bench_hog_unit_amount(const bench_hog_work *work, bench_hog_kind kind)
{
    if (kind == BENCH_HOG_FMA)
        return (double)work->fma_chunks * BENCH_BLOCK * 4.0 * work->fma_iters * 2.0;
    return (double)work->copy_words * 4.0 * 2.0;
}

void bench_hog_describe(const bench_hog_work *work, bench_hog_kind kind, char *buf, size_t size)
{
    if (kind == BENCH_HOG_FMA)
        snprintf(buf, size,
                 "fma hog: %.1f GFLOP fp32 per unit, %u blocks x %u threads per SM, each block "
                 "lives the whole unit",
                 bench_hog_unit_amount(work, kind) * 1e-9, BENCH_FULL_BLOCKS_SM, BENCH_BLOCK);
    else
        snprintf(buf, size, "copy hog: %.0f MiB copied per unit (%.2f GB moved), %u blocks x %u "
                            "threads per SM",
                 (double)work->copy_words * 4.0 / 1048576.0,
                 bench_hog_unit_amount(work, kind) * 1e-9, BENCH_FULL_BLOCKS_SM, BENCH_BLOCK);
}

static unsigned hog_grid(const bench_hog *hog) { return hog->lane->sms * BENCH_FULL_BLOCKS_SM; }

static int launch_unit(const bench_hog *hog)
{
    const bench_hog_work *w = hog->work;
    if (hog->kind == BENCH_HOG_FMA)
        return bench_fma(hog->env, &hog->lane->mod, hog->lane->stream, hog_grid(hog), w->fma_out,
                         w->fma_chunks, w->fma_iters, 0);
    return bench_copy(hog->env, &hog->lane->mod, hog->lane->stream, hog_grid(hog), w->src, w->dst,
                      w->copy_words / 4);
}

/* Body of the feeder thread, with the lane's context current. */
static int feed(bench_hog *hog, CUevent ring[HOG_IN_FLIGHT], CUevent start, CUevent end)
{
    const raw_driver *drv = hog->env->drv;
    CUstream stream = hog->lane->stream;
    if (bench_cu(drv->cuEventRecord(start, stream), "cuEventRecord (hog start)"))
        return -1;
    unsigned long long i = 0;
    for (; !atomic_load(&hog->stop); i++) {
        CUevent slot = ring[i % HOG_IN_FLIGHT];
        if (i >= HOG_IN_FLIGHT && bench_cu(drv->cuEventSynchronize(slot), "the hog's work"))
            return -1;
        if (launch_unit(hog) || bench_cu(drv->cuEventRecord(slot, stream), "cuEventRecord (hog)"))
            return -1;
    }
    float ms = 0;
    if (bench_cu(drv->cuEventRecord(end, stream), "cuEventRecord (hog end)") ||
        bench_cu(drv->cuEventSynchronize(end), "draining the hog") ||
        bench_cu(drv->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime (hog)"))
        return -1;
    hog->units = i;
    hog->seconds = ms * 1e-3;
    return 0;
}

static void *hog_main(void *arg)
{
    bench_hog *hog = arg;
    const raw_driver *drv = hog->env->drv;
    CUevent ev[HOG_IN_FLIGHT + 2] = {0}; /* the ring, then the start and the end */
    if (bench_push(hog->env, hog->lane->ctx)) {
        hog->failed = 1;
        return NULL;
    }
    int rc = 0;
    for (unsigned i = 0; i < HOG_IN_FLIGHT + 2 && !rc; i++)
        rc = bench_cu(drv->cuEventCreate(&ev[i], i < HOG_IN_FLIGHT ? GCU_EVENT_DISABLE_TIMING
                                                                   : GCU_EVENT_DEFAULT),
                      "cuEventCreate");
    if (!rc)
        rc = feed(hog, ev, ev[HOG_IN_FLIGHT], ev[HOG_IN_FLIGHT + 1]);
    drv->cuStreamSynchronize(hog->lane->stream);
    for (unsigned i = 0; i < HOG_IN_FLIGHT + 2; i++)
        if (ev[i])
            drv->cuEventDestroy(ev[i]);
    bench_pop(hog->env);
    hog->failed = rc != 0;
    return NULL;
}

int bench_hog_start(bench_hog *hog, const bench_env *env, const bench_lane *lane,
                    const bench_hog_work *work, bench_hog_kind kind)
{
    memset(hog, 0, sizeof *hog);
    hog->env = env;
    hog->lane = lane;
    hog->work = work;
    hog->kind = kind;
    atomic_init(&hog->stop, 0);
    if (pthread_create(&hog->thread, NULL, hog_main, hog) != 0) {
        fprintf(stderr, "greenctx bench: could not start the hog thread\n");
        return -1;
    }
    hog->running = 1;
    return 0;
}

int bench_hog_stop(bench_hog *hog)
{
    if (!hog->running)
        return 0;
    atomic_store(&hog->stop, 1);
    pthread_join(hog->thread, NULL);
    hog->running = 0;
    if (hog->failed || hog->units == 0)
        return -1;
    const bench_hog_work *w = hog->work;
    if (hog->kind == BENCH_HOG_FMA)
        return bench_check_fma(hog->env, w->fma_out, hog_grid(hog), w->fma_chunks, w->fma_iters,
                               "the fma hog");
    return bench_check_copy(hog->env, w->dst, w->copy_words, w->seed, "the copy hog");
}

double bench_hog_rate(const bench_hog *hog)
{
    return hog->seconds > 0 ? (double)hog->units / hog->seconds : 0;
}

int bench_hog_alone(const bench_env *env, const bench_lane *lane, const bench_hog_work *work,
                    bench_hog_kind kind, double seconds, double *rate)
{
    bench_hog hog;
    if (bench_hog_start(&hog, env, lane, work, kind))
        return -1;
    bench_spin_us(seconds * 1e6);
    if (bench_hog_stop(&hog))
        return -1;
    *rate = bench_hog_rate(&hog);
    return 0;
}

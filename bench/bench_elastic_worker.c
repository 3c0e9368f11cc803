/*
 * One tenant of bench elastic's two-process arms: `greenctx [--device N] bench elastic-worker
 * --role decode|prefill --on primary|COUNT|rest [--elastic] --ms MS --registry DIR --trace T
 * --seed N --layers N --batch N --context N --chunk N --target-ms MS --prior SMS:MS,...
 * --prior-prefill SMS:MS,...`, started by the bench through tenant_proc.c
 * (tenant_launch), never by hand.
 *
 * decode: steps back to back at the trace's batch. With --elastic its claim follows a
 * gctx_controller's choice (the priors are the parent's calibration): it grows with
 * GCTX_CLAIM_WAIT at the latency priority, so the prefill tenant sees the pressure, and it
 * shrinks when the load falls. prefill: one GEMM at a time (the running kernel is the one
 * term of the yield a tenant can't shorten); with --elastic it asks gctx_claim_pressure
 * before each and shrinks by what is wanted, and grows back to the rest when nobody waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"
#include "tenant_proc.h"
#include "bench_commands.h"
#include "greenctx_claims.h"

#define GROW_TIMEOUT_MS 5000
#define REGROW_EVERY_NS 20000000LL /* the prefill tenant tries to grow back every 20 ms */
/* A want stays posted until its waiter's next registry pass, after the SMs it lacked are
 * free: a yield is not repeated for it until the pressure was seen at 0 once, or this long. */
#define REYIELD_NS 10000000LL

typedef struct el_worker {
    bench_env env;
    int decode; /* else prefill */
    const char *on, *registry;
    int elastic, duration_ms;
    elastic_options eo;
    el_shape shape;
    el_prior prior[2]; /* decode's, prefill's */
    gctx_claim *claim;
    CUstream stream, own_stream; /* own_stream: the primary's, made here */
    el_blas blas;
    el_site *site;
    el_sites sites;
    el_buffers buf;
    unsigned sms;
    double *samples, *resize_us, *grant_ms;
    unsigned *batches; /* decode: each sample's batch */
    size_t nb_samples, nb_resizes, nb_grants, cap;
} el_worker;

/* "SMS:MS,...", SM counts ascending, into an el_prior. */
static int parse_prior(const char *text, void *to, unsigned i)
{
    el_prior *prior = to;
    unsigned *n = &prior->n;
    (void)i;
    for (const char *p = text; *p && *n < EL_MAX_PRIOR;) {
        char *end;
        unsigned long count = strtoul(p, &end, 10);
        if (*end != ':')
            return -1;
        double ms = strtod(end + 1, &end);
        if (!(ms > 0) || count == 0 || (*n && count <= prior->sms[*n - 1]))
            return -1;
        prior->sms[*n] = (unsigned)count;
        prior->s[(*n)++] = ms * 1e-3;
        if (*end != ',' && *end)
            return -1;
        p = *end ? end + 1 : end;
    }
    return *n ? 0 : -1;
}

static void usage(FILE *out) { fputs("elastic-worker: started by bench elastic\n", out); }

static int parse(int argc, char **argv, greenctx_tool_options *opts, el_worker *w)
{
    static const char *const roles[] = {"prefill", "decode", NULL};
    static const char *const gemms[] = {"own", "cublas", NULL};
    int trace = -1, cublas = 0;
    unsigned seed = 0, ms = 0;
    w->decode = -1;
    const bench_arg table[] = {
        BENCH_CHOICE("--role", "decode or prefill", &w->decode, roles),
        BENCH_TEXT("--on", "primary or a claim request", &w->on),
        BENCH_FLAG("--elastic", &w->elastic),
        BENCH_UINT("--ms", "milliseconds", &ms, 1, 2147483647),
        BENCH_TEXT("--registry", "a directory", &w->registry),
        BENCH_CHOICE("--trace", "a trace", &trace, el_trace_names),
        BENCH_UINT("--seed", "a number", &seed, 0, 2147483647),
        BENCH_UINT("--layers", "a count", &w->eo.layers, 1, EL_MAX_LAYERS),
        BENCH_UINT("--batch", "a count", &w->eo.peak_batch, 1, 2147483647),
        BENCH_UINT("--context", "positions", &w->eo.context, 1, 2147483647),
        BENCH_UINT("--chunk", "tokens", &w->eo.chunk, 1, 2147483647),
        BENCH_DOUBLE("--target-ms", "milliseconds", &w->eo.target_ms, 1e-9, 1e300),
        BENCH_PARSE("--prior", "SMS:MS,...", &w->prior[0], parse_prior),
        BENCH_PARSE("--prior-prefill", "SMS:MS,...", &w->prior[1], parse_prior),
        BENCH_CHOICE("--gemm", "own or cublas", &cublas, gemms),
    };
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    int rc = bench_args_parse(&args, table, BENCH_NB(table), usage, NULL, NULL);
    if (rc != GREENCTX_EXIT_OK)
        return rc == BENCH_HELP_SHOWN ? GREENCTX_EXIT_USAGE : rc;
    w->eo.trace = (el_trace_kind)(trace < 0 ? 0 : trace);
    w->eo.gemm = cublas ? EL_GEMM_CUBLAS : EL_GEMM_OWN;
    w->eo.seed = seed;
    w->duration_ms = (int)ms;
    if (w->decode < 0 || trace < 0 || !w->on || !w->registry || !w->duration_ms ||
        !w->eo.layers || !w->eo.peak_batch || !w->eo.context || !w->eo.chunk ||
        (w->elastic && (!w->prior[0].n || !w->prior[1].n || !(w->eo.target_ms > 0)))) {
        return greenctx_args_bad(&args, "elastic-worker needs --role, --on, --ms, --registry, "
                                 "--trace, the model's shape and, with --elastic, --target-ms "
                                 "and both priors (it is started by bench elastic)");
    }
    return GREENCTX_EXIT_OK;
}

static void say_summary(const char *name, double *values, size_t n)
{
    bench_summary s;
    bench_summarize(values, n, &s);
    tenant_say_summary(name, &s);
}

/* Once running (start_ns set): the SMs it has from now on. Before "ready" nothing but that
 * line may be said. */
static int say_sms(const el_worker *w, long long start_ns)
{
    double t = (bench_wall_ns() - start_ns) * 1e-9;
    if (start_ns)
        tenant_say("el_sms %.4f %u", t > 0 ? t : 0, w->sms);
    return 0;
}

/* The claim's stream (both on the claim's context) and context now, after an acquire or a
 * resize, and its kernels there. */
static int take_claim(el_worker *w, gctx_stream *stream)
{
    gctx_context *context;
    gctx_partition *partition;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    w->stream = gctx_stream_handle(stream);
    gctx_stream_release(stream); /* the claim keeps its stream */
    if (bench_gctx(gctx_claim_context(w->claim, NULL, &context), "the claim's context"))
        return -1;
    gctx_status s = gctx_claim_partition(w->claim, &partition);
    if (s == GCTX_SUCCESS) {
        s = gctx_partition_get_info(partition, &info);
        gctx_partition_release(partition);
    }
    if (bench_gctx(s, "the claim's partition")) {
        gctx_context_release(context);
        return -1;
    }
    w->sms = info.sm_count;
    w->site = el_site_get(&w->env, &w->sites, gctx_context_cu_context(context), w->sms);
    /* The site's kernels live in the driver context, which outlives this handle: the claim
     * holds it, and once the claim moves away the cache keeps it (its limit raised to the
     * sites' count, evictions checked at the end), so a resize back to these SMs gets the same
     * context and finds its kernels loaded. Holding the handle here would keep the context
     * out of the cache and make every such resize create one. */
    gctx_context_release(context);
    return w->site ? 0 : -1;
}

static int resize(el_worker *w, const char *request, int grow, long long start_ns)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = w->registry;
    o.priority = w->decode ? GCTX_CLAIM_PRIORITY_LATENCY : GCTX_CLAIM_PRIORITY_THROUGHPUT;
    /* the decode tenant waits for exactly what it asked; the prefill tenant gives back at
     * least what is wanted */
    o.rounding = w->decode ? GCTX_ROUND_STRICT : GCTX_ROUND_DOWN;
    if (grow && w->decode) {
        o.flags = GCTX_CLAIM_WAIT;
        o.timeout_ms = GROW_TIMEOUT_MS;
    }
    gctx_stream *stream;
    double t0 = bench_now_us();
    gctx_status s = gctx_claim_resize(w->claim, request, &o, &stream);
    double us = bench_now_us() - t0;
    if (s == GCTX_ERROR_BUSY && !w->decode)
        return 0; /* nothing free to grow into: try again later */
    char what[64];
    snprintf(what, sizeof what, "resizing the %s's claim to %s", w->decode ? "decode" : "prefill",
             request);
    unsigned before = w->sms;
    if (bench_gctx(s, what) || take_claim(w, stream))
        return -1;
    if (w->sms == before) /* "rest" with nothing free */
        return 0;
    if (w->nb_resizes < EL_MAX_RESIZES)
        w->resize_us[w->nb_resizes++] = us;
    if (grow && w->decode && w->nb_grants < EL_MAX_RESIZES)
        w->grant_ms[w->nb_grants++] = us * 1e-3;
    return say_sms(w, start_ns);
}

static int open_context(el_worker *w)
{
    if (!strcmp(w->on, "primary")) {
        w->sms = w->env.sm_count;
        w->site = el_site_get(&w->env, &w->sites, w->env.primary, w->sms);
        if (!w->site || bench_push(&w->env, w->env.primary))
            return -1;
        int rc = bench_cu(w->env.drv->cuStreamCreate(&w->own_stream, GCU_STREAM_NON_BLOCKING),
                          "cuStreamCreate");
        bench_pop(&w->env);
        w->stream = w->own_stream;
        return rc;
    }
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = w->registry;
    o.label = "bench elastic";
    o.priority = w->decode ? GCTX_CLAIM_PRIORITY_LATENCY : GCTX_CLAIM_PRIORITY_THROUGHPUT;
    char what[96];
    snprintf(what, sizeof what, "claiming %s SMs for the %s", w->on,
             w->decode ? "decode" : "prefill");
    gctx_stream *stream;
    if (bench_gctx(gctx_claim_acquire(w->env.device, w->on, &o, &w->claim), what) ||
        bench_gctx(gctx_claim_stream(w->claim, &stream), "the claim's stream"))
        return -1;
    return take_claim(w, stream);
}

static int timed(el_worker *w, unsigned arg, unsigned matrix, double *ms)
{
    const raw_driver *drv = w->env.drv;
    const el_site *s = w->site;
    float elapsed = 0;
    if (bench_push(&w->env, s->ctx)) /* the kernels' context, current for their launches */
        return -1;
    int rc = bench_cu(drv->cuEventRecord(s->lat_start, w->stream), "cuEventRecord") ||
             (w->decode ? el_decode_step(&w->env, &w->shape, &w->buf, s, w->stream, arg)
                        : el_prefill_gemm(&w->env, &w->buf, s, w->stream, arg, matrix,
                                          w->shape.chunk)) ||
             bench_cu(drv->cuEventRecord(s->lat_end, w->stream), "cuEventRecord") ||
             bench_cu(drv->cuEventSynchronize(s->lat_end), "waiting for a step") ||
             bench_cu(drv->cuEventElapsedTime(&elapsed, s->lat_start, s->lat_end),
                      "cuEventElapsedTime");
    bench_pop(&w->env);
    *ms = elapsed;
    return rc;
}

/* Every kernel the run launches on the claim's SMs, launched once now: kernels load into
 * each context at their first launch (cuBLAS's lazily, and which ones depends on the batch),
 * which would otherwise land in the first step after a resize, and the controller would learn
 * a step time the SMs never give. */
static int warm_kernels(el_worker *w)
{
    double ms;
    unsigned n = w->decode ? w->shape.peak_batch : EL_NB_MATRICES;
    for (unsigned i = 0; i < n; i++)
        if (w->decode ? timed(w, i + 1, 0, &ms) : timed(w, 0, i, &ms))
            return -1;
    return 0;
}

/* An elastic tenant makes its contexts (and loads its kernels there) for the sizes it will
 * take before the start, so that a re-size finds them cached: the claims place each count on
 * the same SMs every time (a shrinking claim gives back the granules next to its neighbour,
 * a growing one takes those next to its own). */
static int warm_sizes(el_worker *w)
{
    char request[16], back[16];
    snprintf(back, sizeof back, "%u", w->sms);
    for (unsigned i = 0; i + 1 < w->prior[0].n; i++) {
        unsigned n = w->decode ? w->prior[0].sms[i] : w->env.sm_count - w->prior[0].sms[i];
        if (!w->decode && n > w->sms)
            continue;
        snprintf(request, sizeof request, "%u", n);
        if (resize(w, request, 0, 0) || warm_kernels(w))
            return -1;
    }
    int rc = resize(w, back, 0, 0);
    w->nb_resizes = w->nb_grants = 0;
    return rc;
}

/* Claims never overlap: "no split" is no choice here. */
static int make_controller(const el_worker *w, gctx_controller **ctl)
{
    unsigned rows[2 * EL_MAX_PRIOR], n = 0;
    for (unsigned i = 0; i + 1 < w->prior[0].n; i++, n++) {
        rows[2 * n] = w->prior[0].sms[i];
        rows[2 * n + 1] = w->env.sm_count - w->prior[0].sms[i];
    }
    return el_controller_make(&w->shape, w->eo.target_ms, w->prior, rows, n, w->env.sm_count, 0,
                              1, ctl);
}

static int decode_run(el_worker *w, long long start_ns, long long end_ns)
{
    el_trace trace;
    gctx_controller *ctl = NULL;
    if (el_trace_make(&trace, w->eo.trace, w->duration_ms * 1e-3, w->shape.peak_batch,
                      w->eo.seed) ||
        (w->elastic && make_controller(w, &ctl)))
        return -1;
    int rc = say_sms(w, start_ns);
    for (long long now; rc == 0 && (now = bench_wall_ns()) < end_ns;) {
        double due_us = bench_now_us(); /* a grow's wait is the step's latency too */
        unsigned batch = el_trace_batch(&trace, (now - start_ns) * 1e-9);
        if (ctl) {
            gctx_controller_decision d = GCTX_CONTROLLER_DECISION_INIT;
            rc = bench_gctx(gctx_controller_set_demand(ctl, 0, batch), "set_demand") ||
                 bench_gctx(gctx_controller_decide(ctl, &d), "decide");
            unsigned want = d.sm_counts[0];
            char request[16];
            snprintf(request, sizeof request, "%u", want);
            if (rc == 0 && want != w->sms)
                rc = resize(w, request, want > w->sms, start_ns);
        }
        double ms;
        if (rc == 0 && (rc = timed(w, batch, 0, &ms)) == 0) {
            double latency = el_step_latency_ms(ms, (bench_now_us() - due_us) * 1e-3);
            if (w->nb_samples < w->cap) {
                w->batches[w->nb_samples] = batch;
                w->samples[w->nb_samples++] = latency;
            }
            if (ctl)
                rc = bench_gctx(gctx_controller_observe(ctl, 0, ms * 1e-3), "observe");
        }
    }
    gctx_controller_release(ctl);
    el_trace_free(&trace);
    el_arm steps; /* the one-process arms' figures, by the same rule */
    el_arm_finish(&steps, w->samples, w->batches, w->nb_samples, w->eo.target_ms, NULL, 0);
    tenant_say_summary("el_token", &steps.token_ms);
    tenant_say_summary("el_step", &steps.step_ms);
    tenant_say("el_within %llu %llu", steps.within_target, steps.tokens_within_target);
    return rc;
}

static int prefill_run(el_worker *w, long long start_ns, long long end_ns)
{
    int rc = say_sms(w, start_ns);
    unsigned long long gemms = 0;
    unsigned full = w->sms;
    long long last_grow = start_ns, last_yield = 0;
    for (long long now; rc == 0 && (now = bench_wall_ns()) < end_ns;) {
        unsigned wanted = 0;
        if (w->elastic && w->claim)
            rc = bench_gctx(gctx_claim_pressure(w->claim, &wanted), "gctx_claim_pressure");
        if (!wanted)
            last_yield = 0;
        char request[16];
        if (rc == 0 && wanted && (!last_yield || now - last_yield > REYIELD_NS)) {
            last_yield = now;
            snprintf(request, sizeof request, "%u", w->sms > wanted + 8 ? w->sms - wanted : 8);
            rc = resize(w, request, 0, start_ns);
        } else if (rc == 0 && w->elastic && w->sms < full && now - last_grow > REGROW_EVERY_NS) {
            last_grow = now;
            rc = resize(w, "rest", 1, start_ns);
        }
        double ms;
        if (rc == 0 &&
            (rc = timed(w, (unsigned)(gemms / EL_NB_MATRICES % w->shape.layers),
                        (unsigned)(gemms % EL_NB_MATRICES), &ms)) == 0) {
            if (w->nb_samples < w->cap)
                w->samples[w->nb_samples++] = ms;
            gemms++;
        }
    }
    double seconds = (bench_wall_ns() - start_ns) * 1e-9;
    tenant_say("el_rate %llu %.6f", gemms, seconds);
    say_summary("el_kernel", w->samples, w->nb_samples);
    return rc;
}

static void report_resizes(el_worker *w)
{
    say_summary("el_resize", w->resize_us, w->nb_resizes);
    say_summary("el_grant", w->grant_ms, w->nb_grants);
}

int bench_elastic_worker(int argc, char **argv, greenctx_tool_options *opts)
{
    el_worker *w = calloc(1, sizeof *w);
    if (!w)
        return GREENCTX_EXIT_FAILED;
    int rc = parse(argc, argv, opts, w);
    if (rc != GREENCTX_EXIT_OK) {
        free(w);
        return rc;
    }
    w->cap = 1 << 20;
    w->samples = malloc(w->cap * sizeof *w->samples);
    w->batches = malloc(w->cap * sizeof *w->batches);
    w->resize_us = malloc(EL_MAX_RESIZES * sizeof *w->resize_us);
    w->grant_ms = malloc(EL_MAX_RESIZES * sizeof *w->grant_ms);
    rc = !w->samples || !w->batches || !w->resize_us || !w->grant_ms || bench_env_open(&w->env, opts->device);
    if (rc == 0) {
        w->env.simulated |= opts->simulated;
        rc = el_blas_open(&w->env, w->eo.gemm, &w->blas);
        w->sites.blas = &w->blas;
    }
    if (rc == 0) {
        w->shape = (el_shape){w->eo.layers, w->eo.peak_batch, w->eo.context, w->eo.chunk,
                              w->env.sm_count};
        rc = bench_gctx(gctx_cache_set_limit(w->env.device, EL_MAX_SITES), "the cache's limit") ||
             open_context(w) ||
             el_buffers_make(&w->env, &w->shape, w->site, w->stream, &w->buf) ||
             warm_kernels(w) || (w->elastic && w->claim && warm_sizes(w));
    }
    long long start_ns = 0;
    gctx_cache_stats before = GCTX_CACHE_STATS_INIT, cache = GCTX_CACHE_STATS_INIT;
    if (rc == 0)
        rc = bench_gctx(gctx_cache_get_stats(w->env.device, &before), "the cache's stats");
    if (rc == 0)
        rc = tenant_ready(w->sms, &start_ns);
    if (rc == 0) {
        long long end_ns = start_ns + w->duration_ms * 1000000LL;
        rc = w->decode ? decode_run(w, start_ns, end_ns) : prefill_run(w, start_ns, end_ns);
        report_resizes(w);
    }
    if (rc == 0)
        rc = bench_gctx(gctx_cache_get_stats(w->env.device, &cache), "the cache's stats");
    if (rc == 0) /* a context a re-size had to make: a driver create (1-2 ms) in the grant */
        tenant_say("el_contexts_made %llu", cache.misses - before.misses);
    if (rc == 0 && cache.evictions) {
        fprintf(stderr, "greenctx bench: elastic: the context cache evicted %llu contexts whose "
                "kernels the bench kept: more than %u contexts\n", cache.evictions, EL_MAX_SITES);
        rc = -1;
    }
    if (rc == 0)
        tenant_say("done");
    if (w->stream && w->site && bench_push(&w->env, w->site->ctx) == 0) {
        w->env.drv->cuStreamSynchronize(w->stream);
        bench_pop(&w->env);
    }
    el_sites_close_blas(&w->env, &w->sites);
    el_buffers_free(&w->env, &w->buf);
    el_sites_close(&w->env, &w->sites);
    if (w->own_stream)
        w->env.drv->cuStreamDestroy(w->own_stream);
    gctx_claim_release(w->claim);
    bench_env_close(&w->env);
    free(w->samples);
    free(w->batches);
    free(w->resize_us);
    free(w->grant_ms);
    free(w);
    return rc ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

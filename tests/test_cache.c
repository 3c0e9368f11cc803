/* The context cache, on the simulated driver (tests/cache.cmake) and the real one: a hit only
 * for the same SMs (checked against the SMs the same request gets with a fresh context),
 * workqueue options in the key, the bound and LRU order, counters, the off switch and a
 * malformed one, adopted contexts, faults, threads, and device memory over many
 * re-partitions. Tests in one process share the cache: each one starts from an empty cache
 * and compares counters with what it saw first. */
#include <stddef.h>
#include <stdlib.h>

#include "raw_calls.h"
#include "sm_ids.h"
#include "testing.h"

/* A device with green contexts, and the cache at the default limit. */
static int begin(void)
{
    if (gt_require_green_contexts())
        return -1;
    if (gctx_cache_set_limit(0, 16) != GCTX_SUCCESS) {
        gt_fail(__FILE__, __LINE__, "gctx_cache_set_limit: %s", gctx_last_error());
        return -1;
    }
    return 0;
}

static gctx_cache_stats stats(void)
{
    gctx_cache_stats st = GCTX_CACHE_STATS_INIT;
    if (gctx_cache_get_stats(0, &st) != GCTX_SUCCESS)
        gt_fail(__FILE__, __LINE__, "gctx_cache_get_stats: %s", gctx_last_error());
    return st;
}

/* A partition of the whole device split by `counts` (nb of them): group `which`, or the
 * remainder when which == nb. */
static gctx_partition *split_part(const unsigned *counts, unsigned nb, unsigned which)
{
    gctx_partition *device = NULL, *parts[8] = {0}, *left = NULL, *out = NULL;
    gctx_group groups[8];
    for (unsigned i = 0; i < nb; i++)
        groups[i] = gt_group(counts[i]);
    gctx_status s = gctx_partition_from_device(0, &device);
    if (s == GCTX_SUCCESS)
        s = gctx_partition_split(device, groups, nb, NULL, parts, &left, NULL, NULL);
    if (s != GCTX_SUCCESS) {
        gt_fail(__FILE__, __LINE__, "split: %s", gctx_last_error());
    } else {
        out = which < nb ? parts[which] : left;
        for (unsigned i = 0; i < nb; i++)
            if (parts[i] != out)
                gctx_partition_release(parts[i]);
        if (left != out)
            gctx_partition_release(left);
    }
    gctx_partition_release(device);
    return out;
}

static gctx_context *context_of(gctx_partition *p, unsigned flags)
{
    gctx_context_options o = GCTX_CONTEXT_OPTIONS_INIT;
    o.flags = flags;
    gctx_context *c = NULL;
    if (gctx_context_create(p, &o, &c) != GCTX_SUCCESS)
        gt_fail(__FILE__, __LINE__, "gctx_context_create: %s", gctx_last_error());
    return c;
}

static int same_sms(const gt_sm_set *a, const gt_sm_set *b)
{
    return a->count == b->count && gt_sm_set_within(a, b);
}

/* Requests, each a split of the whole device and which output: a context on each. The same
 * SMs may come from several of them (the granule path's {8, 8} against {16}). */
typedef struct request {
    unsigned counts[3], nb, which;
} request;
static const request requests[] = {
    {{16}, 1, 0}, {{16}, 1, 1}, {{64}, 1, 0}, {{64}, 1, 1}, {{8, 8}, 2, 0}, {{8, 8}, 2, 1},
    {{8, 8}, 2, 2}, {{32, 16}, 2, 1}, {{24}, 1, 0}, {{16, 64}, 2, 0},
};
#define NB_REQUESTS (sizeof requests / sizeof requests[0])

GT_TEST(hits_only_for_the_same_sms)
{
    if (begin())
        return;
    gt_sm_set fresh[NB_REQUESTS];
    CUgreenCtx green[NB_REQUESTS];
    /* Without the cache's help: what each request runs on. Each goes to the cache. */
    for (unsigned i = 0; i < NB_REQUESTS; i++) {
        const request *r = &requests[i];
        gctx_partition *p = split_part(r->counts, r->nb, r->which);
        GT_CHECK();
        gctx_context *c = context_of(p, GCTX_CONTEXT_FRESH);
        GT_CHECK();
        gt_context_sms(c, &fresh[i]);
        GT_CHECK();
        green[i] = gctx_context_green_handle(c);
        gctx_context_release(c);
        gctx_partition_release(p);
    }
    gctx_cache_stats before = stats();
    GT_ASSERT_EQ_INT(before.cached, NB_REQUESTS);
    /* Every request again, in another order: each is a hit, on its own driver context and on
     * exactly the SMs it had. */
    for (unsigned k = 0; k < NB_REQUESTS; k++) {
        unsigned i = (k * 7 + 3) % NB_REQUESTS;
        const request *r = &requests[i];
        gctx_partition *p = split_part(r->counts, r->nb, r->which);
        GT_CHECK();
        gctx_cache_stats was = stats();
        gctx_context *c = context_of(p, 0);
        GT_CHECK();
        gctx_cache_stats now = stats();
        gt_sm_set seen;
        gt_context_sms(c, &seen);
        GT_CHECK();
        char a[512], b[512];
        if (!same_sms(&seen, &fresh[i]))
            GT_FAIL("request %u ran on {%s} through the cache, {%s} fresh", i,
                    gt_sm_set_text(&seen, a, sizeof a), gt_sm_set_text(&fresh[i], b, sizeof b));
        GT_ASSERT_EQ_INT(now.hits, was.hits + 1);
        /* Requests with equal resources (a {16} and a {16, 64} split share the first group's
         * bytes) may take each other's context: then they must have had the same SMs. */
        unsigned j = 0;
        while (j < NB_REQUESTS && green[j] != gctx_context_green_handle(c))
            j++;
        GT_ASSERT(j < NB_REQUESTS);
        GT_ASSERT(same_sms(&fresh[j], &fresh[i]));
        gctx_context_release(c);
        gctx_partition_release(p);
    }
    GT_ASSERT_EQ_INT(stats().misses, before.misses);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* A request no cached context has the SMs of is a miss, never another set's context. */
GT_TEST(other_sms_miss)
{
    if (begin())
        return;
    unsigned sixteen[] = {16}, thirty_two[] = {32};
    gctx_partition *p16 = split_part(sixteen, 1, 0);
    GT_CHECK();
    gctx_context *c16 = context_of(p16, 0);
    GT_CHECK();
    CUgreenCtx g16 = gctx_context_green_handle(c16);
    gctx_context_release(c16);
    gctx_partition *p32 = split_part(thirty_two, 1, 0);
    GT_CHECK();
    gctx_cache_stats was = stats();
    gctx_context *c32 = context_of(p32, 0);
    GT_CHECK();
    gctx_cache_stats now = stats();
    GT_ASSERT_EQ_INT(now.misses, was.misses + 1);
    GT_ASSERT_EQ_INT(now.hits, was.hits);
    GT_ASSERT(gctx_context_green_handle(c32) != g16);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info(c32, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.sm_count, 32);
    /* A second context of the same SMs while the first is in use: a new driver context. */
    gctx_context *again = context_of(p32, 0);
    GT_CHECK();
    GT_ASSERT(gctx_context_green_handle(again) != gctx_context_green_handle(c32));
    gctx_context_release(again);
    gctx_context_release(c32);
    gctx_partition_release(p32);
    gctx_partition_release(p16);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* Contexts of a context's SMs, and of a split of them, hit only through the same context. */
GT_TEST(nested_partitions_hit_through_their_context)
{
    if (begin())
        return;
    unsigned sixty_four[] = {64};
    gctx_partition *p = split_part(sixty_four, 1, 0);
    GT_CHECK();
    gctx_group half = gt_group(32);
    gt_sm_set first;
    CUgreenCtx inner_green = NULL;
    for (int round = 0; round < 2; round++) {
        gctx_partition *inner = NULL;
        gctx_cache_stats was = stats();
        GT_ASSERT_STATUS(gctx_partition_split(p, &half, 1, NULL, &inner, NULL, NULL, NULL),
                         GCTX_SUCCESS);
        gctx_context *c = context_of(inner, 0);
        GT_CHECK();
        gctx_cache_stats now = stats();
        gt_sm_set seen;
        gt_context_sms(c, &seen);
        GT_CHECK();
        if (round == 0) {
            first = seen;
            inner_green = gctx_context_green_handle(c);
        } else {
            /* the intermediate context and the inner one: both hits */
            GT_ASSERT_EQ_INT(now.hits, was.hits + 2);
            GT_ASSERT(gctx_context_green_handle(c) == inner_green);
            GT_ASSERT(same_sms(&seen, &first));
        }
        gctx_context_release(c);
        gctx_partition_release(inner);
    }
    gctx_partition_release(p);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

GT_TEST(bounded_least_recently_used_first)
{
    if (begin())
        return;
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 3), GCTX_SUCCESS);
    unsigned limit = 0;
    GT_ASSERT_STATUS(gctx_cache_get_limit(0, &limit), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(limit, 3);
    int greens = gt_sim_live("green_ctx");
    gctx_cache_stats start = stats();
    const unsigned sizes[5] = {8, 16, 24, 32, 40};
    CUgreenCtx made[5];
    for (int i = 0; i < 5; i++) {
        gctx_partition *p = split_part(&sizes[i], 1, 0);
        GT_CHECK();
        gctx_context *c = context_of(p, 0);
        GT_CHECK();
        made[i] = gctx_context_green_handle(c);
        gctx_context_release(c);
        gctx_partition_release(p);
    }
    gctx_cache_stats st = stats();
    GT_ASSERT_EQ_INT(st.cached, 3);
    GT_ASSERT_EQ_INT(st.evictions, start.evictions + 2);
    GT_ASSERT_EQ_INT(st.misses, start.misses + 5);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens + 3);
    /* The two released first were evicted: 8 misses, 40 hits. */
    gctx_partition *p8 = split_part(&sizes[0], 1, 0), *p40 = split_part(&sizes[4], 1, 0);
    GT_CHECK();
    gctx_context *c8 = context_of(p8, 0), *c40 = context_of(p40, 0);
    GT_CHECK();
    GT_ASSERT(gctx_context_green_handle(c40) == made[4]);
    st = stats();
    GT_ASSERT_EQ_INT(st.hits, start.hits + 1);
    GT_ASSERT_EQ_INT(st.misses, start.misses + 6);
    GT_ASSERT_EQ_INT(st.live, start.live + 2);
    GT_ASSERT_EQ_INT(st.cached, 2);
    gctx_context_release(c8);
    gctx_context_release(c40);
    gctx_partition_release(p8);
    gctx_partition_release(p40);
    /* A lower limit evicts now; trim empties the cache. */
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 1), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(stats().cached, 1);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    st = stats();
    GT_ASSERT_EQ_INT(st.cached, 0);
    GT_ASSERT_EQ_INT(st.live, start.live);
    GT_ASSERT_EQ_INT(st.evictions, start.evictions + 6);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens);
}

GT_TEST(fresh_flag_and_bad_flags)
{
    if (begin())
        return;
    unsigned sixteen[] = {16};
    gctx_partition *p = split_part(sixteen, 1, 0);
    GT_CHECK();
    gctx_context *c = context_of(p, 0);
    GT_CHECK();
    CUgreenCtx first = gctx_context_green_handle(c);
    gctx_context_release(c);
    gctx_cache_stats was = stats();
    c = context_of(p, GCTX_CONTEXT_FRESH);
    GT_CHECK();
    GT_ASSERT(gctx_context_green_handle(c) != first);
    GT_ASSERT_EQ_INT(stats().hits, was.hits);
    GT_ASSERT_EQ_INT(stats().cached, 1);
    gctx_context_release(c);
    GT_ASSERT_EQ_INT(stats().cached, 2);
    /* Options of the 0.1 layout, which has no flags: what lies past them is not read. */
    union {
        gctx_context_options o;
        unsigned char bytes[sizeof(gctx_context_options)];
    } old;
    memset(old.bytes, 0xff, sizeof old.bytes);
    old.o.size = offsetof(gctx_context_options, flags);
    old.o.workqueue_scope = GCTX_WORKQUEUE_SCOPE_DEFAULT;
    old.o.workqueue_concurrency_limit = 0;
    was = stats();
    GT_ASSERT_STATUS(gctx_context_create(p, &old.o, &c), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(stats().hits, was.hits + 1);
    gctx_context_release(c);
    gctx_context_options o = GCTX_CONTEXT_OPTIONS_INIT;
    o.flags = 0x10;
    gctx_context *bad = NULL;
    GT_ASSERT_STATUS(gctx_context_create(p, &o, &bad), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_CONTEXT_FRESH");
    GT_ASSERT(bad == NULL);
    gctx_partition_release(p);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

GT_TEST(bad_arguments)
{
    if (begin())
        return;
    unsigned limit;
    GT_ASSERT_STATUS(gctx_cache_get_limit(0, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_cache_get_limit(99, &limit), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_STATUS(gctx_cache_set_limit(-1, 4), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_STATUS(gctx_cache_trim(99), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_STATUS(gctx_cache_get_stats(0, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_cache_stats small = {sizeof(size_t), 0, 0, 0, 0, 0, 0};
    GT_ASSERT_STATUS(gctx_cache_get_stats(0, &small), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_CACHE_STATS_INIT");
}

/* Workqueue options make another driver context: part of the key (13.1+). */
GT_TEST(workqueue_options_are_in_the_key)
{
    if (begin())
        return;
    if (!gctx_feature_available(GCTX_FEATURE_WORKQUEUES))
        GT_SKIP("workqueues need driver 13.1");
    unsigned sixteen[] = {16};
    gctx_partition *p = split_part(sixteen, 1, 0);
    GT_CHECK();
    gctx_context_options balanced = GCTX_CONTEXT_OPTIONS_INIT, limited = GCTX_CONTEXT_OPTIONS_INIT;
    balanced.workqueue_scope = GCTX_WORKQUEUE_SCOPE_BALANCED;
    limited.workqueue_concurrency_limit = 4;
    gctx_context *plain = context_of(p, 0), *b = NULL, *l = NULL;
    GT_CHECK();
    gctx_context_release(plain);
    gctx_cache_stats was = stats();
    GT_ASSERT_STATUS(gctx_context_create(p, &balanced, &b), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_create(p, &limited, &l), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(stats().misses, was.misses + 2);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info(b, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.workqueue_scope, GCTX_WORKQUEUE_SCOPE_BALANCED);
    gctx_context_release(b);
    gctx_context_release(l);
    /* Each comes back for its own options, with them. */
    GT_ASSERT_STATUS(gctx_context_create(p, &balanced, &b), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_get_info(b, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.workqueue_scope, GCTX_WORKQUEUE_SCOPE_BALANCED);
    GT_ASSERT_EQ_INT(stats().hits, was.hits + 1);
    gctx_context_release(b);
    gctx_partition_release(p);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* A context greenctx adopted is never destroyed by it, so never cached; nor is one made from
 * its SMs, whose history greenctx doesn't know. */
GT_TEST(adopted_contexts_are_never_cached)
{
    if (begin())
        return;
    const raw_driver *drv = gt_raw();
    gcu_dev_resource whole;
    memset(&whole, 0, sizeof whole);
    gcu_resource_desc desc;
    CUgreenCtx raw;
    GT_ASSERT_EQ_INT(drv->cuDeviceGetDevResource(0, &whole, GCU_DEV_RESOURCE_TYPE_SM), 0);
    GT_ASSERT_EQ_INT(drv->cuDevResourceGenerateDesc(&desc, &whole, 1), 0);
    GT_ASSERT_EQ_INT(drv->cuGreenCtxCreate(&raw, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM), 0);
    gctx_cache_stats was = stats();
    gctx_context *adopted;
    GT_ASSERT_STATUS(gctx_context_adopt(raw, &adopted), GCTX_SUCCESS);
    gctx_partition *its_sms;
    GT_ASSERT_STATUS(gctx_context_partition(adopted, &its_sms), GCTX_SUCCESS);
    gctx_context *inner = context_of(its_sms, 0);
    GT_CHECK();
    int greens = gt_sim_live("green_ctx");
    gctx_context_release(inner);
    gctx_partition_release(its_sms);
    gctx_context_release(adopted);
    gctx_cache_stats now = stats();
    GT_ASSERT_EQ_INT(now.cached, was.cached);
    GT_ASSERT_EQ_INT(now.hits + now.misses, was.hits + was.misses);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens - 1); /* inner destroyed, raw alive */
    GT_ASSERT_EQ_INT(drv->cuGreenCtxDestroy(raw), 0);
}

/* A hit asks nothing of the driver: no descriptor, no context, no query. */
GT_TEST(a_hit_makes_no_driver_call)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (begin())
        return;
    unsigned sixteen[] = {16};
    gctx_partition *p = split_part(sixteen, 1, 0);
    GT_CHECK();
    gctx_context *c = context_of(p, 0);
    gctx_stream *s = NULL;
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    gctx_context_release(c);
    const char *symbols[] = {"cuDevResourceGenerateDesc", "cuGreenCtxCreate",
                             "cuCtxFromGreenCtx",         "cuGreenCtxGetId",
                             "cuGreenCtxDestroy",         "cuGreenCtxGetDevResource",
                             "cuGreenCtxStreamCreate",    "cuStreamCreateWithPriority",
                             "cuStreamDestroy"};
    enum { N = sizeof symbols / sizeof symbols[0] };
    long calls[N];
    for (int i = 0; i < N; i++)
        calls[i] = gt_sim_calls(symbols[i]);
    c = context_of(p, 0);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    gctx_context_release(c);
    for (int i = 0; i < N; i++)
        if (gt_sim_calls(symbols[i]) != calls[i])
            GT_FAIL("a hit and its stream called %s", symbols[i]);
    gctx_partition_release(p);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* A drained stream stays with its context and comes back for a stream of the same priority;
 * the cache's trim, or a context the cache won't keep, destroys them. */
GT_TEST(streams_come_back_with_their_context)
{
    if (begin())
        return;
    int streams = gt_sim_live("stream");
    unsigned sixteen[] = {16};
    gctx_partition *p = split_part(sixteen, 1, 0);
    GT_CHECK();
    gctx_stream_options urgent = GCTX_STREAM_OPTIONS_INIT;
    urgent.priority = -1;
    gctx_context *c = context_of(p, 0);
    GT_CHECK();
    gctx_stream *s = NULL, *u = NULL, *t = NULL;
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(c, &urgent, &u), GCTX_SUCCESS);
    CUstream plain_raw = gctx_stream_handle(s), urgent_raw = gctx_stream_handle(u);
    gctx_stream_release(s);
    gctx_stream_release(u);
    gctx_context_release(c);
    c = context_of(p, 0);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &t), GCTX_SUCCESS); /* only one was idle */
    GT_ASSERT_STATUS(gctx_stream_create(c, &urgent, &u), GCTX_SUCCESS);
    GT_ASSERT(gctx_stream_handle(s) == plain_raw);
    GT_ASSERT(gctx_stream_handle(t) != plain_raw && gctx_stream_handle(t) != urgent_raw);
    GT_ASSERT(gctx_stream_handle(u) == urgent_raw);
    int priority = 0;
    GT_ASSERT_STATUS(gctx_stream_priority(u, &priority), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(priority, -1);
    gctx_stream_release(s);
    gctx_stream_release(t);
    gctx_stream_release(u);
    gctx_context_release(c);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), streams + 3);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), streams);
    /* A context the cache won't keep takes its idle streams with it. */
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 0), GCTX_SUCCESS);
    c = context_of(p, 0);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    gctx_context_release(c);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), streams);
    gctx_partition_release(p);
}

/* Every driver call on the cache's paths fails once in turn: the call fails cleanly, and
 * after a trim nothing is left, neither greenctx objects nor driver contexts. */
struct cache_baseline {
    int objects, greens, streams;
};

/* three SM sets through a cache of two: hits, misses and evictions */
static int create_through_small_cache(void *arg)
{
    (void)arg;
    static const unsigned sizes[3] = {16, 24, 32};
    int failures = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++) {
            gctx_context *c = NULL;
            gctx_stream *s = NULL;
            gctx_status st = gctx_context_create_with_sms(0, sizes[i], NULL, &c);
            if (st == GCTX_SUCCESS)
                st = gctx_stream_create(c, NULL, &s);
            failures += gt_fault_failed(st);
            gctx_stream_release(s);
            gctx_context_release(c);
        }
    }
    return failures;
}

static void trim_and_count_leaks(void *arg)
{
    const struct cache_baseline *was = arg;
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(stats().cached, 0);
    GT_ASSERT_EQ_INT(stats().live, 0);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), was->objects);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), was->greens);
    GT_ASSERT_EQ_INT(gt_sim_live("stream"), was->streams);
}

GT_TEST(rollback_under_injected_faults)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (begin())
        return;
    gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    GT_ASSERT(fail != NULL);
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 2), GCTX_SUCCESS);
    struct cache_baseline was = {gctx__object_live_count(), gt_sim_live("green_ctx"),
                                 gt_sim_live("stream")};
    const char *symbols[] = {"cuDevResourceGenerateDesc", "cuGreenCtxCreate",
                             "cuCtxFromGreenCtx",         "cuGreenCtxGetId",
                             "cuGreenCtxStreamCreate",    "cuDevSmResourceSplitByCount",
                             "cuGreenCtxDestroy",         "cuStreamSynchronize",
                             "cuStreamDestroy"};
    gt_fault_round round = {NULL, create_through_small_cache, trim_and_count_leaks, &was};
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 3, 1, round);
    GT_CHECK();
    GT_ASSERT_GT_INT(failures, 6);
    /* An eviction whose destroy the driver refuses is counted and retried like a release's. */
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_SUCCESS);
    gctx_context_release(c);
    gctx_release_failures before = GCTX_RELEASE_FAILURES_INIT, after = GCTX_RELEASE_FAILURES_INIT;
    GT_ASSERT_STATUS(gctx_release_failures_get(&before), GCTX_SUCCESS);
    fail("cuGreenCtxDestroy", 1, 2);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    fail(NULL, 0, 0);
    GT_ASSERT_STATUS(gctx_release_failures_get(&after), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(after.green_contexts, before.green_contexts + 1);
    GT_ASSERT_EQ_INT(after.pending, before.pending + 1);
    GT_ASSERT_EQ_INT(stats().cached, 0);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), was.greens + 1);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), was.greens);
}

/* ---- the switch ---- */

GT_TEST(off_switch)
{
    if (begin())
        return;
    /* begin() turned it on again: the environment only sets the initial limit. */
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 0), GCTX_SUCCESS);
    int greens = gt_sim_live("green_ctx");
    gctx_cache_stats was = stats();
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_SUCCESS);
    gctx_context_release(c);
    gctx_cache_stats now = stats();
    GT_ASSERT_EQ_INT(now.cached, 0);
    GT_ASSERT_EQ_INT(now.misses, was.misses);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens);
}

/* Run with GREENCTX_CONTEXT_CACHE=0 before anything else: the limit starts at 0. */
GT_TEST(environment_turns_it_off)
{
    gt_require_device();
    GT_CHECK();
    unsigned limit = 99;
    GT_ASSERT_STATUS(gctx_cache_get_limit(0, &limit), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(limit, 0);
    int greens = gt_sim_live("green_ctx");
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_SUCCESS);
    gctx_context_release(c);
    GT_ASSERT_EQ_INT(stats().cached, 0);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens);
}

/* Run with GREENCTX_CONTEXT_CACHE=lots. */
GT_TEST(environment_malformed)
{
    gt_require_device();
    GT_CHECK();
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GREENCTX_CONTEXT_CACHE is 'lots'");
    GT_ASSERT_CONTAINS(gctx_last_error(), "set it to 0");
    GT_ASSERT(c == NULL);
    unsigned limit;
    GT_ASSERT_STATUS(gctx_cache_get_limit(0, &limit), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* Run with GREENCTX_CONTEXT_CACHE set but empty (issue 18): refused as a malformed value,
 * never taken as unset. */
GT_TEST(environment_empty)
{
    gt_require_device();
    GT_CHECK();
    const char *v = getenv("GREENCTX_CONTEXT_CACHE");
    if (!v || *v)
        GT_SKIP("needs GREENCTX_CONTEXT_CACHE set to '' (the CTest entry sets it)");
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GREENCTX_CONTEXT_CACHE is ''");
    GT_ASSERT_CONTAINS(gctx_last_error(), "or unset it");
    GT_ASSERT(c == NULL);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* ---- many threads (also under ThreadSanitizer) ---- */

enum { THREADS = 8, ROUNDS = 40 };

static void *worker(void *arg)
{
    long failures = 0;
    unsigned seed = (unsigned)(size_t)arg;
    static const unsigned sizes[] = {16, 32, 48};
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned n = sizes[(seed >> 16) % 3];
        gctx_context *c = NULL;
        gctx_stream *s = NULL;
        gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
        if (gctx_context_create_with_sms(0, n, NULL, &c) != GCTX_SUCCESS ||
            gctx_stream_create(c, NULL, &s) != GCTX_SUCCESS ||
            gctx_context_get_info(c, &info) != GCTX_SUCCESS || info.sm_count != n)
            failures++;
        if (i % 10 == 9 && gctx_cache_set_limit(0, 1 + (seed >> 8) % 3) != GCTX_SUCCESS)
            failures++;
        gctx_stream_release(s);
        gctx_context_release(c);
    }
    return (void *)failures;
}

GT_TEST(many_threads)
{
    if (begin())
        return;
    int objects = gctx__object_live_count(), greens = gt_sim_live("green_ctx");
    gctx_cache_stats was = stats();
    long failures = gt_run_threads(THREADS, worker);
    GT_ASSERT_EQ_INT(failures, 0);
    gctx_cache_stats now = stats();
    GT_ASSERT_EQ_INT(now.live, was.live);
    GT_ASSERT(now.hits + now.misses >= was.hits + was.misses + THREADS * ROUNDS);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens);
}

/* ---- device memory ---- */

/* cuMemGetInfo's free bytes on device 0, in its primary context; 0 when it can't be had. */
static size_t free_memory(void)
{
    const raw_driver *drv = gt_raw();
    CUcontext primary, popped;
    size_t free_bytes = 0, total = 0;
    if (drv && drv->cuDevicePrimaryCtxRetain(&primary, 0) == 0) {
        if (drv->cuCtxPushCurrent(primary) == 0) {
            drv->cuMemGetInfo(&free_bytes, &total);
            drv->cuCtxPopCurrent(&popped);
        }
        drv->cuDevicePrimaryCtxRelease(0);
    }
    return free_bytes;
}

/* One re-partition, as a serving system does it: split 16/116 or 64/68, a context and a
 * stream on each side, then everything released. */
static int repartition(unsigned small)
{
    gctx_partition *device = NULL, *group = NULL, *left = NULL;
    gctx_context *c[2] = {0};
    gctx_stream *s[2] = {0};
    gctx_group g = gt_group(small);
    gctx_status st = gctx_partition_from_device(0, &device);
    if (st == GCTX_SUCCESS)
        st = gctx_partition_split(device, &g, 1, NULL, &group, &left, NULL, NULL);
    gctx_partition *parts[2] = {group, left};
    for (int i = 0; i < 2 && st == GCTX_SUCCESS; i++)
        if ((st = gctx_context_create(parts[i], NULL, &c[i])) == GCTX_SUCCESS)
            st = gctx_stream_create(c[i], NULL, &s[i]);
    for (int i = 0; i < 2; i++) {
        gctx_stream_release(s[i]);
        gctx_context_release(c[i]);
        gctx_partition_release(parts[i]);
    }
    gctx_partition_release(device);
    if (st != GCTX_SUCCESS)
        gt_fail(__FILE__, __LINE__, "re-partition to %u: %s", small, gctx_last_error());
    return st == GCTX_SUCCESS ? 0 : -1;
}

static void memory_over_cycles(long cycles, size_t allowed)
{
    if (begin())
        return;
    if (!free_memory())
        GT_SKIP("cuMemGetInfo is not available");
    /* A warm-up: the four contexts the cycle needs go to the cache (about 5 MiB each, held,
     * not lost), and the driver's per-context stream pools reach their size. */
    for (int i = 0; i < 100; i++)
        if (repartition(i & 1 ? 64 : 16))
            return;
    size_t before = free_memory();
    gctx_cache_stats was = stats();
    size_t halfway = 0;
    for (long i = 0; i < cycles; i++) {
        if (repartition(i & 1 ? 64 : 16))
            return;
        if (i == cycles / 2)
            halfway = free_memory();
    }
    size_t after = free_memory();
    printf("# lost in the first half %lld bytes, in the second %lld\n",
           (long long)before - (long long)halfway, (long long)halfway - (long long)after);
    gctx_cache_stats now = stats();
    GT_ASSERT_EQ_INT(now.misses, was.misses);
    GT_ASSERT_EQ_INT(now.hits, was.hits + 2 * cycles);
    long long lost = (long long)before - (long long)after;
    printf("# %ld re-partitions through the cache: %lld bytes of device memory lost\n", cycles,
           lost);
    GT_ASSERT(lost <= (long long)allowed);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
}

/* Exactly nothing on the simulated driver; on a GPU streams cost a little. */
GT_TEST(memory_flat_over_1000_repartitions) { memory_over_cycles(1000, gt_on_sim() ? 0 : 10000000); }

/* The target on a GPU: at most 10 MB over 100,000 cycles (streams cost a little). */
GT_TEST(memory_flat_over_100000_repartitions) { memory_over_cycles(100000, 10000000); }

/* Without the cache, the simulated driver loses what the H200 did: 4 MiB per context. */
GT_TEST(memory_lost_without_the_cache)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (begin())
        return;
    GT_ASSERT_STATUS(gctx_cache_set_limit(0, 0), GCTX_SUCCESS);
    size_t before = free_memory();
    GT_ASSERT(before > 0);
    for (int i = 0; i < 100; i++)
        if (repartition(i & 1 ? 64 : 16))
            return;
    GT_ASSERT_EQ_INT(before - free_memory(), 100ull * 2 * 4 * 1024 * 1024);
}

/* Green contexts, streams and events, against the simulated driver (every version in
 * tests/objects.cmake) and the real one: creation from every kind of partition, workqueue
 * options, streams and their refusal when blocking, stream -> context lookup, events,
 * adoption, the caller's current context, rollback under faults, many threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "raw_calls.h"
#include "testing.h"
#include "sm_ids.h"



/* A context current on this thread before each test, so a test can see that greenctx calls
 * leave it there: the device's primary context. */
static CUcontext sentinel;

static int begin(void)
{
    gt_require_device();
    if (gt_state)
        return -1;
    const raw_driver *drv = gt_raw();
    if (!drv || !gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        gt_skip("no green contexts on this driver");
        return -1;
    }
    if (!sentinel) {
        drv->cuDevicePrimaryCtxRetain(&sentinel, 0);
        drv->cuCtxSetCurrent(sentinel);
    }
    return 0;
}

static CUcontext current(void)
{
    CUcontext c = NULL;
    gt_raw()->cuCtxGetCurrent(&c);
    return c;
}

GT_TEST(context_from_each_kind_of_partition)
{
    if (begin())
        return;
    int live = gctx__object_live_count();
    gctx_partition *device, *parts[2], *left;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    gctx_group req[] = {gt_group(8), gt_group(16)};
    GT_ASSERT_STATUS(gctx_partition_split(device, req, 2, NULL, parts, &left, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_partition *kinds[] = {device, parts[0], parts[1], left};
    gt_sm_set seen[4];
    for (int k = 0; k < 4; k++) {
        gctx_context *c;
        GT_ASSERT_STATUS(gctx_context_create(kinds[k], NULL, &c), GCTX_SUCCESS);
        GT_ASSERT(current() == sentinel);
        gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
        GT_ASSERT_STATUS(gctx_context_get_info(c, &info), GCTX_SUCCESS);
        gctx_partition_info pinfo = GCTX_PARTITION_INFO_INIT;
        gctx_partition_get_info(kinds[k], &pinfo);
        GT_ASSERT_EQ_INT(info.sm_count, pinfo.sm_count);
        GT_ASSERT_EQ_INT(info.adopted, 0);
        GT_ASSERT_EQ_INT(info.has_id, gt_driver_version() >= 12090);
        GT_ASSERT(gctx_context_green_handle(c) != NULL);
        GT_ASSERT(gctx_context_cu_context(c) != NULL);
        if (gt_context_sms(c, &seen[k]))
            return;
        GT_ASSERT_EQ_INT(seen[k].count, pinfo.sm_count);
        gctx_context_release(c);
    }
    GT_ASSERT(gt_sm_sets_disjoint(&seen[1], &seen[2]));
    GT_ASSERT(gt_sm_sets_disjoint(&seen[1], &seen[3]));
    for (int k = 0; k < 4; k++)
        gctx_partition_release(kinds[k]);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* A split of a context's SMs, one context per group (gctx_contexts_create). */
static gctx_status split_context(gctx_context *context, const gctx_group *groups,
                                 unsigned nb_groups, gctx_context **contexts,
                                 gctx_context **remainder)
{
    gctx_context_request request = GCTX_CONTEXT_REQUEST_INIT;
    request.context = context;
    request.groups = groups;
    request.nb_groups = nb_groups;
    return gctx_contexts_create(&request, contexts, remainder);
}

GT_TEST(context_with_sms_and_split_into_contexts)
{
    if (begin())
        return;
    gctx_context *whole, *parts[2], *left = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 64, NULL, &whole), GCTX_SUCCESS);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info(whole, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.sm_count, 64);
    gctx_group req[] = {gt_group(16), gt_group(24)};
    GT_ASSERT_STATUS(split_context(whole, req, 2, parts, &left), GCTX_SUCCESS);
    gt_sm_set w, a, b, r;
    if (gt_context_sms(whole, &w) || gt_context_sms(parts[0], &a) ||
        gt_context_sms(parts[1], &b))
        return;
    GT_ASSERT_EQ_INT(a.count, 16);
    GT_ASSERT_EQ_INT(b.count, 24);
    GT_ASSERT(gt_sm_sets_disjoint(&a, &b));
    GT_ASSERT(gt_sm_set_within(&a, &w) && gt_sm_set_within(&b, &w));
    GT_ASSERT(left != NULL);
    if (gt_context_sms(left, &r))
        return;
    GT_ASSERT_EQ_INT(r.count, 24);
    GT_ASSERT(gt_sm_sets_disjoint(&a, &r) && gt_sm_sets_disjoint(&b, &r));
    gctx_relation rel;
    GT_ASSERT_STATUS(gctx_context_relation(parts[0], parts[1], &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_context_relation(parts[0], whole, &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_OVERLAP);
    gctx_context *other;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 64, NULL, &other), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_relation(other, whole, &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_MAY_OVERLAP);
    gctx_context_release(other);
    /* Dropping the remainder: the caller passes NULL. */
    gctx_context *again[2];
    GT_ASSERT_STATUS(split_context(whole, req, 2, again, NULL), GCTX_SUCCESS);
    /* No groups: the message names the caller's nb_groups, not an array made inside. */
    GT_ASSERT_STATUS(split_context(whole, req, 0, parts, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "nb_groups is 0");
    gctx_context_release(again[0]);
    gctx_context_release(again[1]);
    gctx_context_release(whole); /* the parts keep what they need */
    gctx_context_release(parts[0]);
    gctx_context_release(parts[1]);
    gctx_context_release(left);
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 12, NULL, &other), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "nearest");
    GT_ASSERT(current() == sentinel);
}

/* On the simulator the %smid kernel runs too: what a stream observes is exactly the SMs the
 * simulator gave its partition, for each of a {24, 40} split, and observing leaves no module
 * or allocation behind. */
GT_TEST(observed_sms_are_the_partitions_own)
{
    if (begin())
        return;
    if (!gt_on_sim())
        GT_SKIP("compares with the simulator's record (test_gpu observes on the GPU)");
    gctx_partition *device = gt_whole_device(), *parts[2];
    if (!device)
        return;
    gctx_group req[] = {gt_group(24), gt_group(40)};
    GT_ASSERT_STATUS(gctx_partition_split(device, req, 2, NULL, parts, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_partition_release(device);
    gt_sm_set observed[2];
    for (int i = 0; i < 2; i++) {
        gctx_context *c;
        gctx_stream *st;
        unsigned ids[GT_MAX_SMS], count = 0;
        GT_ASSERT_STATUS(gctx_context_create(parts[i], NULL, &c), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &st), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_stream_observe_sms(st, ids, GT_MAX_SMS, &count), GCTX_SUCCESS);
        gt_sm_set simulated;
        if (gt_context_sms(c, &simulated))
            return;
        memset(&observed[i], 0, sizeof observed[i]);
        for (unsigned k = 0; k < count && k < GT_MAX_SMS; k++) {
            GT_ASSERT(k == 0 || ids[k] > ids[k - 1]); /* sorted, each once */
            observed[i].has[ids[k]] = 1;
        }
        observed[i].count = count;
        char want[4096], got[4096];
        if (simulated.count != count || memcmp(simulated.has, observed[i].has, GT_MAX_SMS))
            GT_FAIL("partition %d: observed %s, simulated %s", i,
                    gt_sm_set_text(&observed[i], got, sizeof got),
                    gt_sm_set_text(&simulated, want, sizeof want));
        gctx_stream_release(st);
        gctx_context_release(c);
        gctx_partition_release(parts[i]);
    }
    GT_ASSERT_EQ_INT(observed[0].count, 24);
    GT_ASSERT_EQ_INT(observed[1].count, 40);
    GT_ASSERT(gt_sm_sets_disjoint(&observed[0], &observed[1]));
    GT_ASSERT_EQ_INT(gt_sim_live("module"), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("memory"), 0);
    GT_ASSERT(current() == sentinel);
}

GT_TEST(context_partition_splits_further)
{
    if (begin())
        return;
    gctx_context *c;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 32, NULL, &c), GCTX_SUCCESS);
    gctx_partition *p, *parts[2];
    GT_ASSERT_STATUS(gctx_context_partition(c, &p), GCTX_SUCCESS);
    gctx_context_release(c); /* the partition keeps the context alive */
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_partition_get_info(p, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.kind, GCTX_PARTITION_CONTEXT);
    GT_ASSERT_EQ_INT(info.sm_count, 32);
    gctx_group req[] = {gt_group(8), gt_group(8)};
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    GT_ASSERT_STATUS(gctx_partition_split(p, req, 2, NULL, parts, NULL, &plan, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.nested, 0); /* a context's SMs split directly */
    gctx_partition_release(p);
    gctx_partition_release(parts[0]);
    gctx_partition_release(parts[1]);
}

GT_TEST(workqueue_options)
{
    if (begin())
        return;
    gctx_partition *device;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    gctx_context_options opts = GCTX_CONTEXT_OPTIONS_INIT;
    opts.workqueue_scope = GCTX_WORKQUEUE_SCOPE_BALANCED;
    opts.workqueue_concurrency_limit = 4;
    gctx_context *c = NULL;
    unsigned limit = 0;
    if (gt_driver_version() < 13010) {
        GT_ASSERT_STATUS(gctx_context_create(device, &opts, &c), GCTX_ERROR_UNSUPPORTED);
        GT_ASSERT_CONTAINS(gctx_last_error(), "need driver 13.1");
        GT_ASSERT(c == NULL);
        GT_ASSERT_STATUS(gctx_device_get_max_workqueue_concurrency(0, &limit), GCTX_ERROR_UNSUPPORTED);
        GT_ASSERT_CONTAINS(gctx_last_error(), "needs driver 13.1");
    } else {
        GT_ASSERT_STATUS(gctx_device_get_max_workqueue_concurrency(0, &limit), GCTX_SUCCESS);
        GT_ASSERT_GT_INT(limit, 0);
        GT_ASSERT_STATUS(gctx_context_create(device, &opts, &c), GCTX_SUCCESS);
        gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
        GT_ASSERT_STATUS(gctx_context_get_info(c, &info), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(info.workqueue_scope, GCTX_WORKQUEUE_SCOPE_BALANCED);
        GT_ASSERT_EQ_INT(info.workqueue_concurrency_limit, 4);
        gctx_context_release(c);
    }
    gctx_context_options bad = GCTX_CONTEXT_OPTIONS_INIT;
    bad.size = 4;
    GT_ASSERT_STATUS(gctx_context_create(device, &bad, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_CONTEXT_OPTIONS_INIT");
    gctx_partition_release(device);
}

GT_TEST(streams_and_their_rules)
{
    if (begin())
        return;
    int live = gt_sim_live("stream");
    gctx_context *c;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_SUCCESS);
    gctx_stream_options opts = GCTX_STREAM_OPTIONS_INIT;
    opts.blocking = 1;
    gctx_stream *s = NULL;
    long creates = gt_sim_calls("cuGreenCtxStreamCreate") + gt_sim_calls("cuStreamCreateWithPriority");
    GT_ASSERT_STATUS(gctx_stream_create(c, &opts, &s), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "can't be blocking");
    GT_ASSERT(s == NULL);
    /* Refused before the driver was called. */
    GT_ASSERT_EQ_INT(gt_sim_calls("cuGreenCtxStreamCreate") + gt_sim_calls("cuStreamCreateWithPriority"),
                     creates);
    opts.blocking = 0;
    opts.priority = -1;
    GT_ASSERT_STATUS(gctx_stream_create(c, &opts, &s), GCTX_SUCCESS);
    GT_ASSERT(current() == sentinel);
    int priority = 0;
    GT_ASSERT_STATUS(gctx_stream_priority(s, &priority), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(priority, -1);
    CUgreenCtx owner = NULL;
    GT_ASSERT_STATUS(gctx_stream_get_green_context(gctx_stream_handle(s), &owner), GCTX_SUCCESS);
    GT_ASSERT(owner == gctx_context_green_handle(c));
    gctx_context *back;
    GT_ASSERT_STATUS(gctx_stream_context(s, &back), GCTX_SUCCESS);
    GT_ASSERT(back == c);
    gctx_context_release(back);
    GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
    gt_sm_set on_stream, on_context;
    if (gt_context_sms(c, &on_context))
        return;
    typedef int (*stream_ids_fn)(CUstream, unsigned *, int);
    stream_ids_fn ids = (stream_ids_fn)gt_sim_symbol("gctxsim_stream_sm_ids");
    if (ids) {
        unsigned buf[GT_MAX_SMS];
        int n = ids(gctx_stream_handle(s), buf, GT_MAX_SMS);
        memset(&on_stream, 0, sizeof on_stream);
        for (int i = 0; i < n; i++)
            on_stream.has[buf[i]] = 1, on_stream.count++;
        GT_ASSERT_EQ_INT(on_stream.count, 16);
        GT_ASSERT(gt_sm_set_within(&on_stream, &on_context));
    }
    /* The context outlives its release while a stream needs it. */
    gctx_context_release(c);
    GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
    gctx_stream_release(s);
    if (gt_on_sim()) {
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), live);
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
    }
    GT_ASSERT(current() == sentinel);
}

GT_TEST(ordinary_stream_has_no_green_context)
{
    if (begin())
        return;
    const raw_driver *drv = gt_raw();
    CUstream plain;
    GT_ASSERT_EQ_INT(drv->cuStreamCreate(&plain, GCU_STREAM_NON_BLOCKING), 0);
    CUgreenCtx owner = (CUgreenCtx)1;
    GT_ASSERT_STATUS(gctx_stream_get_green_context(plain, &owner), GCTX_SUCCESS);
    GT_ASSERT(owner == NULL);
    gctx_stream *adopted = NULL;
    GT_ASSERT_STATUS(gctx_stream_adopt(plain, &adopted), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "ordinary context");
    drv->cuStreamDestroy(plain);
}

GT_TEST(adopt_without_taking_ownership)
{
    if (begin())
        return;
    const raw_driver *drv = gt_raw();
    /* A green context and stream made by "another library": the raw driver. */
    gcu_dev_resource whole, parts[1];
    memset(&whole, 0, sizeof whole);
    memset(parts, 0, sizeof parts);
    GT_ASSERT_EQ_INT(drv->cuDeviceGetDevResource(0, &whole, GCU_DEV_RESOURCE_TYPE_SM), 0);
    unsigned nb = 1;
    GT_ASSERT_EQ_INT(drv->cuDevSmResourceSplitByCount(parts, &nb, &whole, NULL, 0, 16), 0);
    gcu_resource_desc desc;
    GT_ASSERT_EQ_INT(drv->cuDevResourceGenerateDesc(&desc, parts, 1), 0);
    CUgreenCtx theirs;
    GT_ASSERT_EQ_INT(drv->cuGreenCtxCreate(&theirs, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM), 0);
    CUstream their_stream = NULL;
    if (drv->cuGreenCtxStreamCreate)
        GT_ASSERT_EQ_INT(drv->cuGreenCtxStreamCreate(&their_stream, theirs, GCU_STREAM_NON_BLOCKING, 0), 0);

    gctx_context *mine;
    GT_ASSERT_STATUS(gctx_context_adopt(theirs, &mine), GCTX_SUCCESS);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info(mine, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.adopted, 1);
    GT_ASSERT_EQ_INT(info.sm_count, parts[0].u.sm.smCount);
    GT_ASSERT_EQ_INT(info.device, 0);
    gctx_stream *s;
    GT_ASSERT_STATUS(gctx_stream_create(mine, NULL, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    if (their_stream) {
        gctx_stream *adopted;
        GT_ASSERT_STATUS(gctx_stream_adopt(their_stream, &adopted), GCTX_SUCCESS);
        GT_ASSERT(gctx_stream_handle(adopted) == their_stream);
        gctx_stream_release(adopted);
        /* Still theirs: usable after greenctx let go. */
        GT_ASSERT_EQ_INT(drv->cuStreamSynchronize(their_stream), 0);
        GT_ASSERT_EQ_INT(drv->cuStreamDestroy(their_stream), 0);
    }
    gctx_context_release(mine);
    CUcontext converted;
    GT_ASSERT_EQ_INT(drv->cuCtxFromGreenCtx(&converted, theirs), 0); /* not destroyed */
    GT_ASSERT_EQ_INT(drv->cuGreenCtxDestroy(theirs), 0);
    GT_ASSERT_STATUS(gctx_context_adopt(NULL, &mine), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT(current() == sentinel);
}

GT_TEST(events_order_work_across_partitions)
{
    if (begin())
        return;
    gctx_context *a, *b;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &a), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &b), GCTX_SUCCESS);
    gctx_stream *sa, *sb;
    GT_ASSERT_STATUS(gctx_stream_create(a, NULL, &sa), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(b, NULL, &sb), GCTX_SUCCESS);
    gctx_event *ev;
    GT_ASSERT_STATUS(gctx_event_create(a, &ev), GCTX_SUCCESS);
    GT_ASSERT(gctx_event_handle(ev) != NULL);
    GT_ASSERT(current() == sentinel);
    GT_ASSERT_STATUS(gctx_event_record(ev, sa), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_wait_event(sb, ev), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_event_record_context(ev, a), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_wait_event(b, ev), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_event_synchronize(ev), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_synchronize(sb), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_event_record(ev, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_event_release(ev);
    GT_ASSERT_STATUS(gctx_event_synchronize(ev), GCTX_ERROR_INVALID_HANDLE);
    gctx_stream_release(sa);
    gctx_stream_release(sb);
    gctx_context_release(a);
    gctx_context_release(b);
    if (gt_on_sim()) {
        GT_ASSERT_EQ_INT(gt_sim_live("event"), 0);
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
    }
}

GT_TEST(released_handles_are_refused)
{
    if (begin())
        return;
    gctx_context *c;
    gctx_stream *s;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 8, NULL, &c), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    gctx_context_release(c);
    GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT(gctx_stream_handle(s) == NULL);
    GT_ASSERT(gctx_context_green_handle(c) == NULL);
    gctx_stream *again;
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &again), GCTX_ERROR_INVALID_HANDLE);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info((gctx_context *)s, &info), GCTX_ERROR_INVALID_HANDLE);
    gctx_partition *p;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &p), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_context_get_info((gctx_context *)p, &info), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_CONTAINS(gctx_last_error(), "of another type");
    gctx_partition_release(p);
    gctx_context_release(c);
    gctx_stream_release(s);
}

/* Each driver call of context and stream creation fails once in turn. */
struct creation {
    int objects, contexts, streams, events;
    gctx_context *c;
    gctx_stream *s;
    gctx_event *e;
};

static void count_live(void *arg)
{
    struct creation *k = arg;
    k->objects = gctx__object_live_count();
    k->contexts = gt_sim_live("green_ctx");
    k->streams = gt_sim_live("stream");
    k->events = gt_sim_live("event");
}

static int create_context_stream_event(void *arg)
{
    struct creation *k = arg;
    k->c = NULL;
    k->s = NULL;
    k->e = NULL;
    gctx_status st = gctx_context_create_with_sms(0, 16, NULL, &k->c);
    if (st == GCTX_SUCCESS && (st = gctx_stream_create(k->c, NULL, &k->s)) == GCTX_SUCCESS)
        st = gctx_event_create(k->c, &k->e);
    return gt_fault_failed(st);
}

static void release_and_count_leaks(void *arg)
{
    struct creation *k = arg;
    GT_ASSERT(current() == sentinel);
    gctx_event_release(k->e);
    gctx_stream_release(k->s);
    gctx_context_release(k->c);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), k->objects);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), k->contexts);
    GT_ASSERT_EQ_INT(gt_sim_live("stream"), k->streams);
    GT_ASSERT_EQ_INT(gt_sim_live("event"), k->events);
}

GT_TEST(rollback_under_injected_faults)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (begin())
        return;
    const char *symbols[] = {"cuDevResourceGenerateDesc", "cuGreenCtxCreate", "cuCtxFromGreenCtx",
                             "cuGreenCtxGetId", "cuGreenCtxStreamCreate", "cuCtxPushCurrent",
                             "cuStreamCreateWithPriority", "cuEventCreate",
                             "cuDevSmResourceSplitByCount", "cuDevSmResourceSplit"};
    struct creation k;
    gt_fault_round round = {count_live, create_context_stream_event, release_and_count_leaks, &k};
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 4, 1, round);
    GT_CHECK();
    GT_ASSERT_GT_INT(failures, 5);
}

/* ---- many threads at once (also run under ThreadSanitizer) ---- */

static gctx_context *shared_context;

static void *worker(void *arg)
{
    long failures = 0;
    unsigned seed = (unsigned)(size_t)arg;
    for (int i = 0; i < 40; i++) {
        gctx_context *c = NULL;
        gctx_stream *s = NULL;
        gctx_event *e = NULL;
        if (rand_r(&seed) % 2) {
            if (gctx_context_create_with_sms(0, 8, NULL, &c) != GCTX_SUCCESS)
                failures++;
        } else {
            c = gctx_context_retain(shared_context);
        }
        if (c && gctx_stream_create(c, NULL, &s) != GCTX_SUCCESS)
            failures++;
        if (c && gctx_event_create(c, &e) != GCTX_SUCCESS)
            failures++;
        if (s && e && (gctx_event_record(e, s) != GCTX_SUCCESS ||
                       gctx_stream_synchronize(s) != GCTX_SUCCESS))
            failures++;
        gctx_partition *p = NULL;
        if (c && gctx_context_partition(c, &p) != GCTX_SUCCESS)
            failures++;
        gctx_partition_release(p);
        gctx_event_release(e);
        gctx_stream_release(s);
        gctx_context_release(c);
    }
    return (void *)failures;
}

GT_TEST(many_threads_create_use_release)
{
    if (begin())
        return;
    int objects = gctx__object_live_count();
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &shared_context), GCTX_SUCCESS);
    enum { THREADS = 8 };
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        GT_ASSERT_EQ_INT(pthread_create(&threads[t], NULL, worker, (void *)(t + 1)), 0);
    long failures = 0;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(threads[t], &r);
        failures += (long)r;
    }
    GT_ASSERT_EQ_INT(failures, 0);
    gctx_context_release(shared_context);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
    if (gt_on_sim()) {
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), 0);
        GT_ASSERT_EQ_INT(gt_sim_live("event"), 0);
    }
}

/* Partitions made and released at once on 8 threads, nothing else of greenctx holding the
 * device: the first hold's retain of the primary context and the last drop's release race.
 * While a thread holds a partition the retain is live (a context made then would not
 * initialise the primary context again); once all are released greenctx holds none. */
static int primary_refs_before;

static void *hold_and_drop(void *arg)
{
    (void)arg;
    long bad = 0;
    for (int i = 0; i < 300; i++) {
        gctx_partition *p = NULL;
        if (gctx_partition_from_device(0, &p) != GCTX_SUCCESS ||
            gt_sim_live("primary_ctx") != primary_refs_before + 1)
            bad++;
        gctx_partition_release(p);
    }
    return (void *)bad;
}

GT_TEST(threads_race_the_first_hold_and_last_drop_of_the_primary_context)
{
    if (begin())
        return;
    if (!gt_on_sim())
        GT_SKIP("the primary context's retains are counted by the simulator");
    primary_refs_before = gt_sim_live("primary_ctx");
    enum { THREADS = 8 };
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        GT_ASSERT_EQ_INT(pthread_create(&threads[t], NULL, hold_and_drop, NULL), 0);
    long bad = 0;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(threads[t], &r);
        bad += (long)r;
    }
    GT_ASSERT_EQ_INT(bad, 0);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), primary_refs_before);
}

GT_TEST(locality_domains)
{
    if (begin())
        return;
    gctx_context *c;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 8, NULL, &c), GCTX_SUCCESS);
    unsigned domain = 99;
    gctx_device_info dev = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &dev), GCTX_SUCCESS);
    if (gt_driver_version() < 13040) {
        GT_ASSERT_STATUS(gctx_context_locality_domain(c, &domain), GCTX_ERROR_UNSUPPORTED);
        GT_ASSERT_CONTAINS(gctx_last_error(), "needs driver 13.4");
        GT_ASSERT_EQ_INT(dev.locality_domain_count, 0);
    } else if (dev.locality_domain_count > 0) {
        GT_ASSERT_STATUS(gctx_context_locality_domain(c, &domain), GCTX_SUCCESS);
        GT_ASSERT(domain < dev.locality_domain_count);
    } else {
        GT_ASSERT_STATUS(gctx_context_locality_domain(c, &domain), GCTX_ERROR_UNSUPPORTED);
    }
    gctx_context_release(c);
}

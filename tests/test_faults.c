/* Every driver entry point the library resolves, made to fail on the simulated driver: each
 * call the representative operations make fails in turn (the 1st, 2nd, ... up to as many as
 * a successful run makes), and the operation must return an error naming the entry point,
 * leave no greenctx or driver object behind and leave the caller's current context alone. A
 * failed destroy inside a release is counted and its object kept, then destroyed by the next
 * release of its kind or by gctx_release_failures_retry. An entry point of the library's
 * driver table (GCU_LIBRARY_SYMBOLS) with no row in the table below fails the test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "greenctx_claims.h"
#include "raw_calls.h"
#include "sm_ids.h"
#include "testing.h"

typedef struct fixture {
    gctx_partition *device, *group; /* group: 32 SMs, split again through a green context */
    gctx_context *context, *caller; /* caller: the context the test thread has current */
    gctx_stream *stream;
    gctx_event *event;
    gt_sim_fail_fn fail; /* the simulator's gctxsim_fail_after */
} fixture;

typedef gctx_status (*operation)(fixture *f);

/* ---- the representative operations: each releases whatever it made ---- */

static gctx_status device_info(fixture *f)
{
    (void)f;
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    int count;
    gctx_status s = gctx_device_get_info(0, &info);
    return s ? s : gctx_device_count(&count);
}

static gctx_status device_identity(fixture *f)
{
    (void)f;
    char uuid[GCTX_UUID_SIZE], bus_id[GCTX_PCI_BUS_ID_SIZE];
    gctx_status s = gctx_device_uuid(0, uuid, sizeof uuid);
    return s ? s : gctx_device_pci_bus_id(0, bus_id, sizeof bus_id);
}

static gctx_status partition_from_device(fixture *f)
{
    (void)f;
    gctx_partition *p;
    gctx_status s = gctx_partition_from_device(0, &p);
    gctx_partition_release(p = s ? NULL : p);
    return s;
}

static gctx_status nested_split(fixture *f)
{
    gctx_group req[] = {gt_group(8), gt_group(8)};
    gctx_partition *out[2], *left = NULL;
    gctx_status s = gctx_partition_split(f->group, req, 2, NULL, out, &left, NULL, NULL);
    if (s == GCTX_SUCCESS) {
        gctx_partition_release(out[0]);
        gctx_partition_release(out[1]);
        gctx_partition_release(left);
    }
    return s;
}

static gctx_status context_create(fixture *f)
{
    gctx_context *c;
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    gctx_status s = gctx_context_create(f->group, NULL, &c);
    if (s == GCTX_SUCCESS) {
        s = gctx_context_get_info(c, &info);
        gctx_context_release(c);
    }
    return s;
}

/* A hit of the context cache (on for this operation only): the cached driver context is
 * checked (cuCtxSynchronize with it current) before it is handed out. */
static gctx_status cached_context_create(fixture *f)
{
    gctx_context *c;
    gctx_status s = gctx_cache_set_limit(0, 1);
    if (s == GCTX_SUCCESS && (s = gctx_context_create(f->group, NULL, &c)) == GCTX_SUCCESS) {
        gctx_context_release(c); /* cached */
        if ((s = gctx_context_create(f->group, NULL, &c)) == GCTX_SUCCESS)
            gctx_context_release(c);
    }
    gctx_status off = gctx_cache_set_limit(0, 0); /* destroys what was cached */
    return s ? s : off;
}

static gctx_status context_with_workqueues(fixture *f)
{
    if (!gctx_feature_available(GCTX_FEATURE_WORKQUEUES))
        return GCTX_SUCCESS; /* nothing to make fail before driver 13.1 */
    gctx_context_options options = GCTX_CONTEXT_OPTIONS_INIT;
    options.workqueue_scope = GCTX_WORKQUEUE_SCOPE_BALANCED;
    unsigned limit;
    gctx_context *c;
    gctx_status s = gctx_device_get_max_workqueue_concurrency(0, &limit);
    if (s == GCTX_SUCCESS)
        s = gctx_context_create(f->group, &options, &c);
    if (s == GCTX_SUCCESS)
        gctx_context_release(c);
    return s;
}

static gctx_status context_adopt_and_partition(fixture *f)
{
    gctx_context *adopted;
    gctx_partition *p;
    gctx_status s = gctx_context_adopt(gctx_context_green_handle(f->context), &adopted);
    if (s != GCTX_SUCCESS)
        return s;
    s = gctx_context_partition(adopted, &p);
    if (s == GCTX_SUCCESS)
        gctx_partition_release(p);
    gctx_context_release(adopted);
    return s;
}

static gctx_status stream_create(fixture *f)
{
    gctx_stream *st;
    int priority;
    gctx_status s = gctx_stream_create(f->context, NULL, &st);
    if (s != GCTX_SUCCESS)
        return s;
    if (!(s = gctx_stream_priority(st, &priority)))
        s = gctx_stream_synchronize(st);
    gctx_stream_release(st);
    return s;
}

static gctx_status stream_adopt(fixture *f)
{
    gctx_stream *st;
    gctx_status s = gctx_stream_adopt(gctx_stream_handle(f->stream), &st);
    if (s == GCTX_SUCCESS)
        gctx_stream_release(st);
    return s;
}

static gctx_status event_create(fixture *f)
{
    gctx_event *ev;
    gctx_status s = gctx_event_create(f->context, &ev);
    if (s == GCTX_SUCCESS)
        gctx_event_release(ev);
    return s;
}

static gctx_status event_ordering(fixture *f)
{
    gctx_status s;
    if ((s = gctx_event_record(f->event, f->stream)) ||
        (s = gctx_event_record_context(f->event, f->context)) ||
        (s = gctx_stream_wait_event(f->stream, f->event)) ||
        (s = gctx_context_wait_event(f->context, f->event)))
        return s;
    return gctx_event_synchronize(f->event);
}

/* Keeping the caller's context across a library's init: save, a push the "init" leaves,
 * restore (it replaces the pushed context with the saved one), then the push's level popped. */
static gctx_status current_context_kept(fixture *f)
{
    CUcontext saved, popped;
    gctx_status s = gctx_current_context_save(&saved);
    if (s != GCTX_SUCCESS)
        return s;
    gt_raw()->cuCtxPushCurrent(gctx_context_cu_context(f->context));
    s = gctx_current_context_restore(saved, NULL);
    gt_raw()->cuCtxPopCurrent(&popped);
    return s;
}

/* The SMs of the caller's current context (the fixture's caller). */
static gctx_status current_sm_count(fixture *f)
{
    (void)f;
    unsigned count;
    return gctx_current_sm_count(&count);
}

/* The simulator runs the library's %smid kernel: observing loads, allocates, fills, launches,
 * reads back and releases as on a GPU. */
/* A claim (its registry in GREENCTX_RUNTIME_DIR, set by the ctest entry) and a context on it. */
static gctx_status claim_acquire(fixture *f)
{
    (void)f;
    gctx_claim *claim;
    gctx_context *c;
    gctx_status s = gctx_claim_acquire(0, "16", NULL, &claim);
    if (s != GCTX_SUCCESS)
        return s;
    if ((s = gctx_claim_context(claim, NULL, &c)) == GCTX_SUCCESS)
        gctx_context_release(c);
    gctx_claim_release(claim);
    return s;
}

static gctx_status observe_sms(fixture *f)
{
    unsigned count;
    return gctx_stream_observe_sms(f->stream, NULL, 0, &count);
}

/* ---- the table ---- */

typedef enum how {
    FAILS,      /* the operation fails, naming the entry point */
    MAY_PASS,   /* ... or, where the library can do without the call, succeeds */
    RELEASE,    /* a destroy inside a release: counted and kept */
    AT_LOAD,    /* called while loading: the faults.load.* ctest entries */
    NAMES_RESULTS, /* names results greenctx doesn't know: unknown_result_without_its_name */
    FIRST_HOLD, /* the device's first partition and its last: primary_context_held_once */
} how;

typedef struct row {
    const char *entry;
    how how;
    operation op;
    const char *op_name;
} row;

#define ROW(entry, how, op) {#entry, how, op, #op}
static const row table[] = {
    ROW(cuInit, AT_LOAD, NULL),
    ROW(cuDriverGetVersion, AT_LOAD, NULL),
    ROW(cuGetErrorName, NAMES_RESULTS, NULL),
    ROW(cuDeviceGetCount, FAILS, device_info),
    ROW(cuDeviceGetCount, FAILS, partition_from_device),
    ROW(cuDeviceGetName, FAILS, device_info),
    ROW(cuDeviceGetAttribute, FAILS, device_info),
    ROW(cuDeviceGetUuid, FAILS, claim_acquire),
    ROW(cuDeviceGetUuid, FAILS, device_identity),
    ROW(cuDeviceGetPCIBusId, FAILS, device_identity),
    ROW(cuDevSmResourceSplitByCount, FAILS, claim_acquire),
    ROW(cuGreenCtxCreate, FAILS, claim_acquire),
    ROW(cuDeviceGetAttribute, FAILS, partition_from_device),
    ROW(cuDeviceGetAttribute, FAILS, nested_split),
    ROW(cuDeviceGetAttribute, FAILS, context_adopt_and_partition),
    ROW(cuDeviceGetAttribute, FAILS, observe_sms),
    ROW(cuDevicePrimaryCtxRetain, FIRST_HOLD, NULL),
    ROW(cuDevicePrimaryCtxRelease, FIRST_HOLD, NULL),
    ROW(cuCtxPushCurrent, FAILS, context_adopt_and_partition),
    ROW(cuCtxPushCurrent, FAILS, event_create),
    ROW(cuCtxPushCurrent, FAILS, observe_sms),
    ROW(cuCtxPopCurrent, FAILS, context_adopt_and_partition),
    ROW(cuCtxPopCurrent, FAILS, event_create),
    ROW(cuCtxPopCurrent, FAILS, observe_sms),
    ROW(cuCtxGetCurrent, FAILS, current_context_kept),
    ROW(cuCtxSetCurrent, FAILS, current_context_kept),
    ROW(cuCtxGetCurrent, FAILS, current_sm_count),
    ROW(cuCtxGetDevResource, FAILS, current_sm_count),
    ROW(cuCtxGetDevice, FAILS, context_adopt_and_partition),
    ROW(cuCtxSynchronize, FAILS, cached_context_create),
    ROW(cuCtxPushCurrent, FAILS, cached_context_create),
    ROW(cuCtxPopCurrent, FAILS, cached_context_create),
    ROW(cuStreamCreateWithPriority, FAILS, stream_create), /* before 12.5 */
    ROW(cuCtxPushCurrent, FAILS, stream_create),           /* before 12.5 */
    ROW(cuCtxPopCurrent, FAILS, stream_create),            /* before 12.5 */
    ROW(cuStreamDestroy, RELEASE, stream_create),
    /* A release waits for the stream's work; that wait failing doesn't stop the release. */
    ROW(cuStreamSynchronize, MAY_PASS, stream_create),
    ROW(cuStreamWaitEvent, FAILS, event_ordering),
    ROW(cuStreamGetPriority, FAILS, stream_create),
    ROW(cuEventCreate, FAILS, event_create),
    ROW(cuEventDestroy, RELEASE, event_create),
    ROW(cuEventRecord, FAILS, event_ordering),
    ROW(cuEventSynchronize, FAILS, event_ordering),
    ROW(cuModuleLoadData, FAILS, observe_sms),
    ROW(cuModuleUnload, RELEASE, observe_sms),
    ROW(cuModuleGetFunction, FAILS, observe_sms),
    ROW(cuLaunchKernel, FAILS, observe_sms),
    ROW(cuMemAlloc, FAILS, observe_sms),
    ROW(cuMemFree, RELEASE, observe_sms),
    ROW(cuMemcpyDtoH, FAILS, observe_sms),
    ROW(cuMemsetD32, FAILS, observe_sms),
    ROW(cuStreamSynchronize, FAILS, observe_sms),
    ROW(cuDeviceGetDevResource, FAILS, device_info),
    ROW(cuDeviceGetDevResource, FAILS, partition_from_device),
    ROW(cuDeviceGetDevResource, FAILS, context_with_workqueues),
    ROW(cuGreenCtxGetDevResource, FAILS, nested_split),
    ROW(cuGreenCtxGetDevResource, FAILS, context_adopt_and_partition),
    ROW(cuGreenCtxGetDevResource, FAILS, context_create),
    ROW(cuDevSmResourceSplitByCount, FAILS, nested_split),
    ROW(cuDevSmResourceSplit, FAILS, nested_split),
    ROW(cuDevResourceGenerateDesc, FAILS, nested_split),
    ROW(cuDevResourceGenerateDesc, FAILS, context_with_workqueues),
    ROW(cuGreenCtxCreate, FAILS, nested_split),
    ROW(cuGreenCtxCreate, FAILS, context_create),
    ROW(cuGreenCtxDestroy, RELEASE, context_create),
    ROW(cuCtxFromGreenCtx, FAILS, context_create),
    ROW(cuCtxFromGreenCtx, FAILS, context_adopt_and_partition),
    ROW(cuGreenCtxRecordEvent, FAILS, event_ordering),
    ROW(cuGreenCtxWaitEvent, FAILS, event_ordering),
    ROW(cuStreamGetGreenCtx, FAILS, stream_adopt),
    ROW(cuGreenCtxStreamCreate, FAILS, stream_create),
    ROW(cuGreenCtxGetId, FAILS, context_create),
    ROW(cuGreenCtxGetId, FAILS, context_adopt_and_partition),
};
#define NB_ROWS (sizeof table / sizeof table[0])

/* ---- the driver, reached directly: the thread's own context ---- */

static CUcontext current(void)
{
    CUcontext c = NULL;
    gt_raw()->cuCtxGetCurrent(&c);
    return c;
}

static void fixture_end(fixture *f)
{
    CUcontext popped;
    if (f->caller)
        gt_raw()->cuCtxPopCurrent(&popped);
    gctx_event_release(f->event);
    gctx_stream_release(f->stream);
    gctx_context_release(f->context);
    gctx_context_release(f->caller);
    gctx_partition_release(f->group);
    gctx_partition_release(f->device);
}

static int fixture_start(fixture *f)
{
    memset(f, 0, sizeof *f);
    gt_require_sim(0, NULL);
    gt_require_device();
    if (gt_state)
        return -1;
    f->fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    if (!f->fail || !gt_raw()) {
        gt_fail(__FILE__, __LINE__, "no gctxsim_fail_after, or no raw driver calls");
        return -1;
    }
    gctx_group req[] = {gt_group(32), gt_group(16), gt_group(16)};
    gctx_partition *out[3];
    gctx_status s = gctx_partition_from_device(0, &f->device);
    if (s == GCTX_SUCCESS)
        s = gctx_partition_split(f->device, req, 3, NULL, out, NULL, NULL, NULL);
    if (s == GCTX_SUCCESS) {
        f->group = out[0];
        s = gctx_context_create(out[1], NULL, &f->context);
        if (s == GCTX_SUCCESS)
            s = gctx_context_create(out[2], NULL, &f->caller);
        gctx_partition_release(out[1]);
        gctx_partition_release(out[2]);
    }
    if (s == GCTX_SUCCESS)
        s = gctx_stream_create(f->context, NULL, &f->stream);
    if (s == GCTX_SUCCESS)
        s = gctx_event_create(f->context, &f->event);
    if (s == GCTX_SUCCESS && gt_raw()->cuCtxPushCurrent(gctx_context_cu_context(f->caller)))
        s = GCTX_ERROR_DRIVER;
    if (s != GCTX_SUCCESS) {
        gt_fail(__FILE__, __LINE__, "fixture: %s", gctx_last_error());
        fixture_end(f);
        return -1;
    }
    return 0;
}

static const row *find_row(const char *entry, how how)
{
    for (size_t i = 0; i < NB_ROWS; i++)
        if (strcmp(table[i].entry, entry) == 0 && table[i].how == how)
            return &table[i];
    return NULL;
}

static int has_row(const char *entry)
{
    for (size_t i = 0; i < NB_ROWS; i++)
        if (strcmp(table[i].entry, entry) == 0)
            return 1;
    return 0;
}

static long calls_during(const char *entry, operation op, fixture *f, gctx_status *status)
{
    long before = gt_sim_calls(entry);
    *status = op(f);
    return gt_sim_calls(entry) - before;
}

#define TABLE_NAME_(name, version, required, params) #name,
static const char *const library_table[] = {GCU_LIBRARY_SYMBOLS(TABLE_NAME_)};
#undef TABLE_NAME_

static int in_library_table(const char *entry)
{
    for (size_t i = 0; i < sizeof library_table / sizeof library_table[0]; i++)
        if (strcmp(library_table[i], entry) == 0)
            return 1;
    return 0;
}

/* Every entry point of the library's table has a row: a new one needs a test before it lands.
 * And every row is of the table, or called while loading (cuDriverGetVersion, found by
 * dlsym): a row outlives no entry point. */
GT_TEST(every_entry_point_of_the_library_table_has_a_row)
{
    for (size_t i = 0; i < sizeof library_table / sizeof library_table[0]; i++)
        if (!has_row(library_table[i]))
            GT_FAIL("src/cuda_abi.h's library table has %s, which tests/test_faults.c's table "
                    "doesn't cover: add a row (an operation that calls it)", library_table[i]);
    for (size_t i = 0; i < NB_ROWS; i++)
        if (!in_library_table(table[i].entry) && table[i].how != AT_LOAD)
            GT_FAIL("the row of %s names no entry point of the library's table: remove it",
                    table[i].entry);
}

/* Fails each call of entry that op makes, one at a time. */
static void fail_each_call(fixture *f, const row *r, int *exercised)
{
    gctx_status s;
    long k = calls_during(r->entry, r->op, f, &s);
    if (s != GCTX_SUCCESS)
        GT_FAIL("%s without a fault: %s", r->op_name, gctx_last_error());
    if (k == 0)
        return; /* not called at this driver version */
    (*exercised)++;
    int objects = gctx__object_live_count(), driver_objects = gt_sim_live("all");
    CUcontext mine = current();
    for (long nth = 1; nth <= k; nth++) {
        f->fail(r->entry, (int)nth, 2 /* CUDA_ERROR_OUT_OF_MEMORY */);
        s = r->op(f);
        f->fail(NULL, 0, 0);
        if (s != GCTX_SUCCESS) {
            GT_ASSERT_CONTAINS(gctx_last_error(), r->entry);
        } else if (r->how != MAY_PASS) {
            GT_FAIL("%s succeeded with call %ld of %s failing", r->op_name, nth, r->entry);
        }
        if (gctx__object_live_count() != objects || gt_sim_live("all") != driver_objects ||
            current() != mine)
            GT_FAIL("%s with call %ld of %s failing left %d greenctx objects (had %d), %d driver "
                    "objects (had %d), current context %s", r->op_name, nth, r->entry,
                    gctx__object_live_count(), objects, gt_sim_live("all"), driver_objects,
                    current() == mine ? "unchanged" : "changed");
    }
}

GT_TEST(each_call_of_each_entry_point_fails_cleanly)
{
    fixture f;
    if (fixture_start(&f))
        return;
    int exercised = 0;
    for (size_t i = 0; i < NB_ROWS && !gt_state; i++)
        if (table[i].how == FAILS || table[i].how == MAY_PASS)
            fail_each_call(&f, &table[i], &exercised);
    fixture_end(&f);
    GT_CHECK();
    GT_ASSERT_GT_INT(exercised, 30);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* ---- failed destroys ---- */

static unsigned long long failed_of(const gctx_release_failures *r, const char *entry)
{
    if (strcmp(entry, "cuEventDestroy") == 0)
        return r->events;
    if (strcmp(entry, "cuStreamDestroy") == 0)
        return r->streams;
    if (strcmp(entry, "cuGreenCtxDestroy") == 0)
        return r->green_contexts;
    if (strcmp(entry, "cuModuleUnload") == 0 || strcmp(entry, "cuMemFree") == 0)
        return r->kernels;
    return r->primary_contexts;
}

/* Each destroy fails once inside a release: the failure is counted, named and the object kept
 * (still alive in the driver); the next release of its kind destroys it. */
GT_TEST(failed_destroys_are_counted_kept_and_retried)
{
    fixture f;
    if (fixture_start(&f))
        return;
    int exercised = 0;
    for (size_t i = 0; i < NB_ROWS; i++) {
        const row *r = &table[i];
        if (r->how != RELEASE)
            continue;
        gctx_status s;
        long k = calls_during(r->entry, r->op, &f, &s);
        GT_ASSERT_STATUS(s, GCTX_SUCCESS);
        GT_ASSERT_GT_INT(k, 0);
        exercised++;
        int driver_objects = gt_sim_live("all");
        gctx_release_failures before = GCTX_RELEASE_FAILURES_INIT, after = before;
        GT_ASSERT_STATUS(gctx_release_failures_get(&before), GCTX_SUCCESS);
        f.fail(r->entry, 1, 2);
        GT_ASSERT_STATUS(r->op(&f), GCTX_SUCCESS);
        f.fail(NULL, 0, 0);
        GT_ASSERT_STATUS(gctx_release_failures_get(&after), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(failed_of(&after, r->entry), failed_of(&before, r->entry) + 1);
        GT_ASSERT_EQ_INT(after.total, before.total + 1);
        GT_ASSERT_EQ_INT(after.pending, 1);
        GT_ASSERT_EQ_INT(after.last_cuda_result, 2);
        GT_ASSERT_CONTAINS(after.last_message, r->entry);
        GT_ASSERT_CONTAINS(after.last_message, "CUDA_ERROR_OUT_OF_MEMORY");
        GT_ASSERT_EQ_INT(gt_sim_live("all"), driver_objects + 1); /* kept, not lost */
        GT_ASSERT_STATUS(r->op(&f), GCTX_SUCCESS); /* its next release destroys it */
        GT_ASSERT_STATUS(gctx_release_failures_get(&after), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(after.pending, 0);
        GT_ASSERT_EQ_INT(gt_sim_live("all"), driver_objects);
    }
    GT_ASSERT_EQ_INT(exercised, 5);
    fixture_end(&f);
}

/* Issue 18: a stream's release synchronises it first; when that fails the failure is counted
 * too (before, only a failed destroy was), and the stream is still destroyed. */
GT_TEST(failed_synchronize_in_a_release_is_counted)
{
    fixture f;
    if (fixture_start(&f))
        return;
    int streams = gt_sim_live("stream");
    gctx_stream *st = NULL;
    GT_ASSERT_STATUS(gctx_stream_create(f.context, NULL, &st), GCTX_SUCCESS);
    gctx_release_failures before = GCTX_RELEASE_FAILURES_INIT, after = before;
    GT_ASSERT_STATUS(gctx_release_failures_get(&before), GCTX_SUCCESS);
    f.fail("cuStreamSynchronize", 1, 2);
    gctx_stream_release(st);
    f.fail(NULL, 0, 0);
    GT_ASSERT_STATUS(gctx_release_failures_get(&after), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(after.streams, before.streams + 1);
    GT_ASSERT_EQ_INT(after.total, before.total + 1);
    GT_ASSERT_EQ_INT(after.pending, before.pending);
    GT_ASSERT_EQ_INT(after.last_cuda_result, 2);
    GT_ASSERT_CONTAINS(after.last_message, "cuStreamSynchronize: CUDA_ERROR_OUT_OF_MEMORY (2)");
    GT_ASSERT_EQ_INT(gt_sim_live("stream"), streams); /* destroyed all the same */
    fixture_end(&f);
}

/* The documented retry: a destroy that fails twice stays kept until a retry succeeds. */
GT_TEST(release_failures_retry_destroys_what_was_kept)
{
    fixture f;
    if (fixture_start(&f))
        return;
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    int events = gt_sim_live("event");
    gctx_event *ev;
    GT_ASSERT_STATUS(gctx_event_create(f.context, &ev), GCTX_SUCCESS);
    f.fail("cuEventDestroy", 1, 2);
    f.fail("cuEventDestroy", 2, 2);
    gctx_event_release(ev);
    GT_ASSERT_EQ_INT(gt_sim_live("event"), events + 1);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_ERROR_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), "1 driver object could not be destroyed yet");
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuEventDestroy");
    f.fail(NULL, 0, 0);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gt_sim_live("event"), events);
    gctx_release_failures now = GCTX_RELEASE_FAILURES_INIT;
    GT_ASSERT_STATUS(gctx_release_failures_get(&now), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(now.pending, 0);
    gctx_release_failures small = GCTX_RELEASE_FAILURES_INIT;
    small.size = 8;
    GT_ASSERT_STATUS(gctx_release_failures_get(&small), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_release_failures_get(NULL), GCTX_ERROR_INVALID_ARGUMENT);
    fixture_end(&f);
}

/* A failed cuCtxPopCurrent: the call fails, and the thread's current context is its own. */
GT_TEST(failed_pop_leaves_the_callers_context_current)
{
    fixture f;
    if (fixture_start(&f))
        return;
    CUcontext mine = current();
    GT_ASSERT(mine == gctx_context_cu_context(f.caller));
    gctx_event *ev = NULL;
    f.fail("cuCtxPopCurrent", 1, 2);
    GT_ASSERT_STATUS(gctx_event_create(f.context, &ev), GCTX_ERROR_DRIVER);
    f.fail(NULL, 0, 0);
    GT_ASSERT(ev == NULL);
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuCtxPopCurrent: CUDA_ERROR_OUT_OF_MEMORY");
    GT_ASSERT_CONTAINS(gctx_last_error(), "a second pop restored this thread's current context");
    GT_ASSERT(current() == mine);
    fixture_end(&f);
}

/* The entry of GREENCTX_SIM_FAIL=<entry>:<n> into entry, or a skip without it. */
static int fault_from_environment(char *entry, size_t size)
{
    gt_require_sim(0, NULL);
    const char *spec = getenv("GREENCTX_SIM_FAIL");
    if (!gt_state && (!spec || !strchr(spec, ':')))
        gt_skip("needs GREENCTX_SIM_FAIL=<entry>:<n>");
    if (gt_state)
        return -1;
    snprintf(entry, size, "%.*s", (int)(strchr(spec, ':') - spec), spec);
    return 0;
}

/* Run with GREENCTX_SIM_FAIL=<destroy>:1: the first such destroy fails inside the release of
 * a context with a stream and an event; it is counted and named, and the object it kept is
 * destroyed by a later release or the retry: nothing is left. */
GT_TEST(release_failure_from_environment)
{
    char entry[64];
    if (fault_from_environment(entry, sizeof entry))
        return;
    GT_ASSERT(find_row(entry, RELEASE) != NULL || find_row(entry, FIRST_HOLD) != NULL);
    gctx_context *c;
    gctx_stream *st;
    gctx_event *ev;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &st), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_event_create(c, &ev), GCTX_SUCCESS);
    gctx_event_release(ev);
    gctx_stream_release(st);
    gctx_context_release(c);
    gctx_release_failures r = GCTX_RELEASE_FAILURES_INIT;
    GT_ASSERT_STATUS(gctx_release_failures_get(&r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(failed_of(&r, entry), 1);
    GT_ASSERT_EQ_INT(r.total, 1);
    GT_ASSERT_CONTAINS(r.last_message, entry);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), (int)r.pending);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_release_failures_get(&r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r.pending, 0);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), 0);
}

/* The device's primary context is retained by its first partition and released after its
 * last, whatever lives between: a failed retain fails the first partition cleanly (and is
 * asked again by the next), a failed release is counted and kept like every destroy. Run in
 * a process of its own: no partition may be alive before. */
GT_TEST(primary_context_held_once)
{
    gt_require_sim(0, NULL);
    gt_require_device();
    GT_CHECK();
    gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    if (gt_sim_live("primary_ctx") != 0 || gctx__object_live_count() != 0)
        GT_SKIP("a partition is alive: this test runs alone (ctest's faults.primary_context)");
    gctx_partition *whole = NULL, *parts[2];
    fail("cuDevicePrimaryCtxRetain", 1, 2);
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &whole), GCTX_ERROR_DRIVER);
    fail(NULL, 0, 0);
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuDevicePrimaryCtxRetain");
    GT_ASSERT(whole == NULL);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), 0);
    long retains = gt_sim_calls("cuDevicePrimaryCtxRetain");
    long releases = gt_sim_calls("cuDevicePrimaryCtxRelease");
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &whole), GCTX_SUCCESS);
    gctx_group groups[] = {gt_group(16), {.backfill = 1}};
    GT_ASSERT_STATUS(gctx_partition_split(whole, groups, 2, NULL, parts, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_partition_release(whole);
    gctx_partition_release(parts[0]);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), 1);
    GT_ASSERT_EQ_INT(gt_sim_calls("cuDevicePrimaryCtxRetain"), retains + 1);
    GT_ASSERT_EQ_INT(gt_sim_calls("cuDevicePrimaryCtxRelease"), releases);
    fail("cuDevicePrimaryCtxRelease", 1, 2);
    gctx_partition_release(parts[1]); /* the last: its release fails, counted and kept */
    fail(NULL, 0, 0);
    gctx_release_failures r = GCTX_RELEASE_FAILURES_INIT;
    GT_ASSERT_STATUS(gctx_release_failures_get(&r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r.primary_contexts, 1);
    GT_ASSERT_EQ_INT(r.pending, 1);
    GT_ASSERT_CONTAINS(r.last_message, "cuDevicePrimaryCtxRelease");
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), 1);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), 0);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), 0);
}

/* Run with GREENCTX_SIM_FAIL=<entry>:1 for an entry called while loading: the first call
 * fails naming it. */
GT_TEST(load_fails_naming_the_entry_point)
{
    char entry[64];
    if (fault_from_environment(entry, sizeof entry))
        return;
    GT_ASSERT(find_row(entry, AT_LOAD) != NULL);
    GT_ASSERT(gctx_init() != GCTX_SUCCESS);
    GT_ASSERT_CONTAINS(gctx_last_error(), entry);
    GT_ASSERT_CONTAINS(gctx_last_error(), "CUDA_ERROR_OUT_OF_MEMORY");
}

/* A result greenctx has no name for is named by cuGetErrorName; when that fails too, the
 * message still gives the failing call and the number. */
GT_TEST(unknown_result_without_its_name)
{
    fixture f;
    if (fixture_start(&f))
        return;
    GT_ASSERT(find_row("cuGetErrorName", NAMES_RESULTS) != NULL);
    long asked = gt_sim_calls("cuGetErrorName");
    f.fail("cuDeviceGetCount", 1, 4242);
    f.fail("cuGetErrorName", 1, 2);
    int count;
    GT_ASSERT_STATUS(gctx_device_count(&count), GCTX_ERROR_DRIVER);
    f.fail(NULL, 0, 0);
    GT_ASSERT_EQ_INT(gt_sim_calls("cuGetErrorName"), asked + 1);
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuDeviceGetCount: CUDA_ERROR_UNRECOGNISED (4242)");
    fixture_end(&f);
}

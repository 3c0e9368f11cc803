/* Contexts straight from a device in one call (src/context_device.c): gctx_context_split_device
 * gives the disjoint groups a split of the device would, with their contexts and nothing left
 * behind on failure; gctx_context_create_at_least rounds up as torch's GreenContext.create
 * does, to the whole device above the largest group, and names the device's count when asked
 * for more; every driver call on their paths failing in turn leaves nothing behind and no
 * output written. Against the simulated H200 (132 SMs) and the real driver. */
#include "harness.h"
#include "raw_calls.h"
#include "sm_ids.h"
#include "testing.h"

static unsigned context_sms(gctx_context *c)
{
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    return gctx_context_get_info(c, &info) == GCTX_SUCCESS ? info.sm_count : 0;
}

static unsigned device_sms(void)
{
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    return gctx_device_get_info(0, &info) == GCTX_SUCCESS ? info.sm_count : 0;
}

GT_TEST(split_device_gives_disjoint_contexts_and_a_remainder)
{
    if (gt_require_green_contexts())
        return;
    gctx_group req[] = {gt_group(16), gt_group(24)};
    gctx_context *parts[2], *left = NULL;
    GT_ASSERT_STATUS(gctx_context_split_device(0, req, 2, NULL, NULL, parts, &left),
                     GCTX_SUCCESS);
    gt_sm_set a, b, r;
    if (gt_context_sms(parts[0], &a) || gt_context_sms(parts[1], &b) ||
        gt_context_sms(left, &r))
        return;
    GT_ASSERT_EQ_INT(a.count, 16);
    GT_ASSERT_EQ_INT(b.count, 24);
    GT_ASSERT_EQ_INT(a.count + b.count + r.count, device_sms());
    GT_ASSERT(gt_sm_sets_disjoint(&a, &b) && gt_sm_sets_disjoint(&a, &r) &&
              gt_sm_sets_disjoint(&b, &r));
    gctx_relation rel;
    GT_ASSERT_STATUS(gctx_context_relation(parts[0], parts[1], &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_DISJOINT);
    for (int i = 0; i < 2; i++)
        gctx_context_release(parts[i]);
    gctx_context_release(left);
    /* Rounding as the split's; the remainder dropped. */
    gctx_split_options down = {sizeof down, GCTX_ROUND_DOWN};
    gctx_group odd = gt_group(20);
    GT_ASSERT_STATUS(gctx_context_split_device(0, &odd, 1, &down, NULL, parts, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(parts[0]), 16);
    gctx_context_release(parts[0]);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), 0);
}

GT_TEST(split_device_refuses_and_makes_nothing)
{
    if (gt_require_green_contexts())
        return;
    int before = gt_sim_live("green_ctx");
    gctx_group req[] = {gt_group(16), gt_group(0)};
    req[1].backfill = 1;
    gctx_group too_many[] = {gt_group(128), gt_group(128)};
    gctx_context *parts[2] = {NULL, NULL};
    GT_ASSERT_STATUS(gctx_context_split_device(0, too_many, 2, NULL, NULL, parts, NULL),
                     GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT(parts[0] == NULL && parts[1] == NULL);
    GT_ASSERT_STATUS(gctx_context_split_device(0, req, 2, NULL, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "contexts (the output array");
    GT_ASSERT_STATUS(gctx_context_split_device(999, req, 2, NULL, NULL, parts, NULL),
                     GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), before);
}

GT_TEST(create_at_least_rounds_up_as_torch)
{
    if (gt_require_green_contexts())
        return;
    unsigned sms = device_sms();
    /* Up to the next group size (8-SM units on Hopper and later), the whole device above the
     * largest group. */
    unsigned asked[] = {4, 20, sms - 2, sms};
    unsigned expected[] = {8, 24, sms, sms};
    for (int i = 0; i < 4; i++) {
        gctx_context *c;
        GT_ASSERT_STATUS(gctx_context_create_at_least(0, asked[i], NULL, &c), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(context_sms(c), expected[i]);
        gctx_context_release(c);
    }
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_at_least(0, sms + 1, NULL, &c),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "is more than device 0 has");
    GT_ASSERT(c == NULL);
    GT_ASSERT_STATUS(gctx_context_create_at_least(0, 0, NULL, &c), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "num_sms is 0");
    GT_ASSERT_STATUS(gctx_context_create_at_least(0, 8, NULL, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT(c == NULL);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* ---- every driver call on the paths failing in turn (the simulator) ---- */

typedef struct one_call {
    int objects, greens, primaries; /* live before the call */
    CUcontext current;              /* the caller's, before and after */
    gctx_context *parts[2], *left, *at_least;
} one_call;

static gctx_context *const untouched = (gctx_context *)&untouched;

static CUcontext current(void)
{
    CUcontext c = NULL;
    gt_raw()->cuCtxGetCurrent(&c);
    return c;
}

static void before_call(void *arg)
{
    one_call *k = arg;
    k->objects = gctx__object_live_count();
    k->greens = gt_sim_live("green_ctx");
    k->primaries = gt_sim_live("primary_ctx");
    k->current = current();
    k->parts[0] = k->parts[1] = k->left = k->at_least = untouched;
}

/* A split of the device into {16, 24} and the remainder, then a context of at least 20 SMs:
 * three green contexts, then one; a failure makes none and writes no output. */
static int split_then_at_least(void *arg)
{
    one_call *k = arg;
    gctx_group req[] = {gt_group(16), gt_group(24)};
    int failed = 0;
    gctx_status s = gctx_context_split_device(0, req, 2, NULL, NULL, k->parts, &k->left);
    if (gt_fault_failed(s)) {
        failed++;
        if (k->parts[0] != untouched || k->parts[1] != untouched || k->left != untouched)
            gt_fail(__FILE__, __LINE__, "a failed gctx_context_split_device wrote its outputs");
    }
    s = gctx_context_create_at_least(0, 20, NULL, &k->at_least);
    if (gt_fault_failed(s)) {
        failed++;
        if (k->at_least != untouched)
            gt_fail(__FILE__, __LINE__, "a failed gctx_context_create_at_least wrote its output");
    }
    if (current() != k->current)
        gt_fail(__FILE__, __LINE__, "the caller's current context changed");
    return failed;
}

static void release_and_count(void *arg)
{
    one_call *k = arg;
    gctx_context *made[] = {k->parts[0], k->parts[1], k->left, k->at_least};
    for (int i = 0; i < 4; i++)
        if (made[i] != untouched)
            gctx_context_release(made[i]);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), k->objects);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), k->greens);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), k->primaries);
}

GT_TEST(split_device_and_at_least_roll_back_every_failed_call)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (gt_require_green_contexts())
        return;
    const char *symbols[] = {"cuDeviceGetDevResource", "cuDevicePrimaryCtxRetain",
                             "cuDevSmResourceSplitByCount", "cuDevSmResourceSplit",
                             "cuDevResourceGenerateDesc", "cuGreenCtxCreate", "cuCtxFromGreenCtx",
                             "cuGreenCtxGetId", "cuGreenCtxGetDevResource"};
    one_call k;
    gt_fault_round round = {before_call, split_then_at_least, release_and_count, &k};
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 4, 1, round);
    GT_CHECK();
    GT_ASSERT_GT_INT(failures, 8);
}

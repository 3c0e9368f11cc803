/* Contexts in one call (src/context_device.c): gctx_contexts_create makes every shape of its
 * request (all the SMs of a partition, num_sms of a context with the remainder, at least
 * num_sms of a device, a split of a partition) at the exact sizes, refuses each wrong
 * combination naming the field and making nothing; gctx_context_split_device gives the
 * disjoint groups a split of the device would, with their contexts and nothing left behind on
 * failure; gctx_context_create_at_least rounds up as torch's GreenContext.create does, to the
 * whole device above the largest group, and names the device's count when asked for more;
 * every driver call on their paths failing in turn leaves nothing behind and no output
 * written. Against the simulated H200 (132 SMs) and the real driver. */
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

static gctx_context *const untouched = (gctx_context *)&untouched;

GT_TEST(a_request_makes_each_shape_at_its_exact_size)
{
    if (gt_require_green_contexts())
        return;
    unsigned sms = device_sms();
    gctx_partition *device, *half;
    gctx_group g64 = gt_group(64);
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_split(device, &g64, 1, NULL, &half, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_context *c[2] = {NULL, NULL}, *left = untouched;
    /* Every SM of a partition: one context, nothing left over. */
    gctx_context_request r = GCTX_CONTEXT_REQUEST_INIT;
    r.partition = half;
    GT_ASSERT_STATUS(gctx_contexts_create(&r, c, &left), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(c[0]), 64);
    GT_ASSERT(left == NULL);
    /* num_sms of a context's SMs, with the remainder: disjoint, within the context. */
    gctx_context_request of_context = GCTX_CONTEXT_REQUEST_INIT;
    of_context.context = c[0];
    of_context.num_sms = 16;
    GT_ASSERT_STATUS(gctx_contexts_create(&of_context, &c[1], &left), GCTX_SUCCESS);
    gt_sm_set whole, part, rest;
    if (gt_context_sms(c[0], &whole) || gt_context_sms(c[1], &part) ||
        gt_context_sms(left, &rest))
        return;
    GT_ASSERT_EQ_INT(part.count, 16);
    GT_ASSERT_EQ_INT(rest.count, 48);
    GT_ASSERT(gt_sm_sets_disjoint(&part, &rest) && gt_sm_set_within(&part, &whole) &&
              gt_sm_set_within(&rest, &whole));
    gctx_context_release(c[1]);
    gctx_context_release(left);
    /* Rounding as the split's: 20 down to 16. */
    gctx_split_options down = {sizeof down, GCTX_ROUND_DOWN};
    of_context.num_sms = 20;
    of_context.split_options = &down;
    GT_ASSERT_STATUS(gctx_contexts_create(&of_context, &c[1], NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(c[1]), 16);
    gctx_context_release(c[1]);
    gctx_context_release(c[0]);
    /* At least num_sms of a device: up to the next group, all of them above the largest. */
    gctx_context_request at_least = GCTX_CONTEXT_REQUEST_INIT;
    at_least.num_sms = 20;
    at_least.flags = GCTX_CONTEXT_REQUEST_AT_LEAST;
    GT_ASSERT_STATUS(gctx_contexts_create(&at_least, c, &left), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(c[0]), 24);
    GT_ASSERT_EQ_INT(context_sms(left), sms - 24);
    gctx_context_release(c[0]);
    gctx_context_release(left);
    left = untouched;
    at_least.num_sms = sms - 2;
    GT_ASSERT_STATUS(gctx_contexts_create(&at_least, c, &left), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(c[0]), sms);
    GT_ASSERT(left == NULL);
    gctx_context_release(c[0]);
    /* A split of a partition, one context per group, and the remainder. */
    gctx_group groups[] = {gt_group(16), gt_group(24)};
    gctx_context_request split = GCTX_CONTEXT_REQUEST_INIT;
    split.partition = half;
    split.groups = groups;
    split.nb_groups = 2;
    GT_ASSERT_STATUS(gctx_contexts_create(&split, c, &left), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(c[0]), 16);
    GT_ASSERT_EQ_INT(context_sms(c[1]), 24);
    GT_ASSERT_EQ_INT(context_sms(left), 24);
    gctx_relation rel;
    GT_ASSERT_STATUS(gctx_context_relation(c[0], c[1], &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_DISJOINT);
    for (int i = 0; i < 2; i++)
        gctx_context_release(c[i]);
    gctx_context_release(left);
    gctx_partition_release(half);
    gctx_partition_release(device);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

/* The request refused with status and the words its message must hold; nothing made, no
 * output written. */
static void refused(const gctx_context_request *r, gctx_status status, const char *words)
{
    int greens = gt_sim_live("green_ctx");
    gctx_context *c[2] = {untouched, untouched}, *left = untouched;
    GT_ASSERT_STATUS(gctx_contexts_create(r, c, &left), status);
    GT_ASSERT_CONTAINS(gctx_last_error(), words);
    GT_ASSERT(c[0] == untouched && c[1] == untouched && left == untouched);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), greens);
}

GT_TEST(a_wrong_request_is_refused_naming_the_field)
{
    if (gt_require_green_contexts())
        return;
    gctx_partition *device;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    gctx_context *context;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 64, NULL, &context), GCTX_SUCCESS);
    gctx_group groups[] = {gt_group(16)};
    gctx_split_options strict = GCTX_SPLIT_OPTIONS_INIT;
    gctx_context *out;
    GT_ASSERT_STATUS(gctx_contexts_create(NULL, &out, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "request is NULL");
    gctx_context_request r = GCTX_CONTEXT_REQUEST_INIT;
    GT_ASSERT_STATUS(gctx_contexts_create(&r, NULL, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "contexts (the output array");
    r.size = 0;
    refused(&r, GCTX_ERROR_INVALID_ARGUMENT, "GCTX_CONTEXT_REQUEST_INIT");
    gctx_context_request both = GCTX_CONTEXT_REQUEST_INIT;
    both.partition = device;
    both.context = context;
    refused(&both, GCTX_ERROR_INVALID_ARGUMENT, "both a partition and a context");
    gctx_context_request no_count = GCTX_CONTEXT_REQUEST_INIT;
    no_count.groups = groups;
    refused(&no_count, GCTX_ERROR_INVALID_ARGUMENT, "nb_groups is 0");
    gctx_context_request no_groups = GCTX_CONTEXT_REQUEST_INIT;
    no_groups.nb_groups = 2;
    refused(&no_groups, GCTX_ERROR_INVALID_ARGUMENT, "nb_groups is 2 but groups is NULL");
    gctx_context_request split_and_count = GCTX_CONTEXT_REQUEST_INIT;
    split_and_count.groups = groups;
    split_and_count.nb_groups = 1;
    split_and_count.num_sms = 16;
    refused(&split_and_count, GCTX_ERROR_INVALID_ARGUMENT, "give groups or num_sms, not both");
    gctx_context_request flags = GCTX_CONTEXT_REQUEST_INIT;
    flags.flags = 0x8;
    refused(&flags, GCTX_ERROR_INVALID_ARGUMENT, "unknown flags 0x8");
    gctx_context_request at_least = GCTX_CONTEXT_REQUEST_INIT;
    at_least.flags = GCTX_CONTEXT_REQUEST_AT_LEAST;
    refused(&at_least, GCTX_ERROR_INVALID_ARGUMENT, "AT_LEAST needs num_sms");
    at_least.num_sms = 20;
    at_least.split_options = &strict;
    refused(&at_least, GCTX_ERROR_INVALID_ARGUMENT, "leave split_options NULL");
    at_least.split_options = NULL;
    at_least.context = context;
    at_least.num_sms = 65;
    refused(&at_least, GCTX_ERROR_INVALID_ARGUMENT,
            "num_sms 65 is more than the context has (64 SMs): ask for at most 64");
    gctx_context_request strict_count = GCTX_CONTEXT_REQUEST_INIT;
    strict_count.partition = device;
    strict_count.num_sms = 12;
    refused(&strict_count, GCTX_ERROR_INVALID_ARGUMENT, "nearest");
    gctx_context_request too_many = GCTX_CONTEXT_REQUEST_INIT;
    too_many.context = context;
    too_many.num_sms = 128;
    refused(&too_many, GCTX_ERROR_INVALID_ARGUMENT, "asks for 128 SMs; this partition has 64");
    gctx_context_request no_device = GCTX_CONTEXT_REQUEST_INIT;
    no_device.device = 999;
    refused(&no_device, GCTX_ERROR_NO_DEVICE, "999");
    gctx_context_release(context);
    gctx_context_request released = GCTX_CONTEXT_REQUEST_INIT;
    released.context = context;
    refused(&released, GCTX_ERROR_INVALID_HANDLE, "");
    gctx_partition_release(device);
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
    gctx_context *parts[2], *left, *at_least, *nested, *nested_left;
} one_call;

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
    k->parts[0] = k->parts[1] = k->left = k->at_least = k->nested = k->nested_left = untouched;
}

/* A split of the device into {16, 24} and the remainder, a context of at least 20 SMs, then 8
 * SMs of that context and its remainder: three green contexts, one, two; a failure makes none
 * and writes no output. */
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
    } else {
        gctx_context_request r = GCTX_CONTEXT_REQUEST_INIT;
        r.context = k->at_least;
        r.num_sms = 8;
        s = gctx_contexts_create(&r, &k->nested, &k->nested_left);
        if (gt_fault_failed(s)) {
            failed++;
            if (k->nested != untouched || k->nested_left != untouched)
                gt_fail(__FILE__, __LINE__, "a failed gctx_contexts_create wrote its outputs");
        }
    }
    if (current() != k->current)
        gt_fail(__FILE__, __LINE__, "the caller's current context changed");
    return failed;
}

static void release_and_count(void *arg)
{
    one_call *k = arg;
    gctx_context *made[] = {k->parts[0], k->parts[1], k->left, k->at_least, k->nested,
                            k->nested_left};
    for (int i = 0; i < 6; i++)
        if (made[i] != untouched)
            gctx_context_release(made[i]);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), k->objects);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), k->greens);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), k->primaries);
}

GT_TEST(split_device_at_least_and_a_request_roll_back_every_failed_call)
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
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 8, 1, round);
    GT_CHECK();
    GT_ASSERT_GT_INT(failures, 16);
}

/* SM partitions and splits, against the simulated driver (every driver version and model in
 * tests/CMakeLists.txt) and the real one (make test-gpu): exact sizes, disjoint SM sets,
 * nested splits, discovery, backfill, rounding, dry runs, provenance, errors, rollback. */
#include <stdlib.h>

#include "testing.h"
#include "sm_ids.h"

static gctx_group rest(void) { return (gctx_group){.backfill = 1}; }

/* The device partition and its facts; two counts every model can give (24 and 40 where the
 * device is large enough, 8 and 16 on small parts). */
typedef struct fixture {
    int live_at_start; /* greenctx objects alive before the test: earlier tests' leaks don't count */
    gctx_partition *device;
    gctx_partition_info info;
    unsigned a, b;
} fixture;

static int setup(fixture *f)
{
    f->live_at_start = gctx__object_live_count();
    gt_require_device();
    if (gt_state)
        return -1;
    gctx_status s = gctx_partition_from_device(0, &f->device);
    if (s != GCTX_SUCCESS) {
        if (s == GCTX_ERROR_UNSUPPORTED)
            gt_skip("no green contexts: %s", gctx_last_error());
        else
            gt_fail(__FILE__, __LINE__, "gctx_partition_from_device: %s", gctx_last_error());
        return -1;
    }
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    f->info = info;
    gctx_partition_get_info(f->device, &f->info);
    f->a = f->info.sm_count >= 100 ? 24 : 8;
    f->b = f->info.sm_count >= 100 ? 40 : 16;
    return 0;
}

static unsigned size_of(gctx_partition *p)
{
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    return gctx_partition_get_info(p, &info) == GCTX_SUCCESS ? info.sm_count : 0;
}

GT_TEST(device_partition_facts)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_device_info dev = GCTX_DEVICE_INFO_INIT;
    GT_ASSERT_STATUS(gctx_device_get_info(0, &dev), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(f.info.kind, GCTX_PARTITION_DEVICE);
    GT_ASSERT_EQ_INT(f.info.sm_count, dev.sm_count);
    GT_ASSERT_EQ_INT(f.info.min_partition_sms, dev.min_partition_sms);
    GT_ASSERT_EQ_INT(f.info.coscheduled_alignment, dev.coscheduled_alignment);
    GT_ASSERT_EQ_INT(f.info.structured, 1);
    GT_ASSERT_EQ_INT(f.info.device, 0);
    gctx_partition_release(f.device);
}

GT_TEST(heterogeneous_split_exact_and_disjoint)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[] = {gt_group(f.a), gt_group(f.b)};
    gctx_partition *out[2], *left = NULL;
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, out, &left, &plan, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.path, gt_driver_version() >= 13010 ? GCTX_SPLIT_PATH_STRUCTURED
                                                          : GCTX_SPLIT_PATH_GRANULES);
    GT_ASSERT_EQ_INT(size_of(out[0]), f.a);
    GT_ASSERT_EQ_INT(size_of(out[1]), f.b);
    GT_ASSERT(left != NULL);
    GT_ASSERT_EQ_INT(size_of(left), f.info.sm_count - f.a - f.b);
    gt_sm_set s0, s1, sr;
    if (gt_partition_sms(out[0], &s0) || gt_partition_sms(out[1], &s1) ||
        gt_partition_sms(left, &sr))
        return;
    GT_ASSERT_EQ_INT(s0.count, f.a);
    GT_ASSERT_EQ_INT(s1.count, f.b);
    GT_ASSERT_EQ_INT(sr.count, f.info.sm_count - f.a - f.b);
    GT_ASSERT(gt_sm_sets_disjoint(&s0, &s1));
    GT_ASSERT(gt_sm_sets_disjoint(&s0, &sr));
    GT_ASSERT(gt_sm_sets_disjoint(&s1, &sr));
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);
    gctx_partition_release(left);
    gctx_partition_release(f.device);
}

/* The measured H200 ids: granules 0..2 of a split by 8 (shared/measurements). */
GT_TEST(h200_granules_land_where_the_real_driver_put_them)
{
    gt_require_sim(13000, "h200");
    GT_CHECK();
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[] = {gt_group(24), gt_group(40)};
    gctx_partition *out[2];
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, out, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gt_sm_set a;
    char text[600];
    if (gt_partition_sms(out[0], &a))
        return;
    GT_ASSERT_STR_EQ(gt_sm_set_text(&a, text, sizeof text),
                     "0 1 2 3 4 5 16 17 18 19 20 21 32 33 34 35 36 37 48 49 50 51 52 53");
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);
    gctx_partition_release(f.device);
}

/* The 13.1 structured split refuses these H200 requests, which 13.0's granule split gives:
 * the split falls back to the granule path, gives exactly what was asked and says so. */
static void h200_13010_falls_back(const unsigned *sizes, unsigned n)
{
    gt_require_sim(13010, "h200");
    GT_CHECK();
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[2];
    gctx_partition *out[2] = {NULL, NULL}, *left = NULL;
    for (unsigned i = 0; i < n; i++)
        req[i] = gt_group(sizes[i]);
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, n, NULL, out, &left, &plan, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.path, GCTX_SPLIT_PATH_GRANULES);
    GT_ASSERT_EQ_INT(plan.granule_sms, sizes[0]);
    GT_ASSERT_EQ_INT(plan.remainder_sms, 4);
    for (unsigned i = 0; i < n; i++)
        GT_ASSERT_EQ_INT(size_of(out[i]), sizes[i]);
    GT_ASSERT_EQ_INT(size_of(left), 4);
    for (unsigned i = 0; i < n; i++)
        gctx_partition_release(out[i]);
    gctx_partition_release(left);
    gctx_partition_release(f.device);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), f.live_at_start);
}

GT_TEST(h200_13010_one_group_of_128_falls_back_to_granules)
{
    const unsigned sizes[] = {128};
    h200_13010_falls_back(sizes, 1);
}

GT_TEST(h200_13010_two_groups_of_64_fall_back_to_granules)
{
    const unsigned sizes[] = {64, 64};
    h200_13010_falls_back(sizes, 2);
}

GT_TEST(rest_takes_everything_left)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[] = {gt_group(f.a), gt_group(f.b), rest()};
    gctx_partition *out[3], *left = (gctx_partition *)1;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 3, NULL, out, &left, NULL, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT(left == NULL);
    GT_ASSERT_EQ_INT(size_of(out[0]) + size_of(out[1]) + size_of(out[2]), f.info.sm_count);
    gt_sm_set s[3];
    for (int i = 0; i < 3; i++)
        if (gt_partition_sms(out[i], &s[i]))
            return;
    GT_ASSERT_EQ_INT(s[2].count, f.info.sm_count - f.a - f.b);
    GT_ASSERT(gt_sm_sets_disjoint(&s[0], &s[2]) && gt_sm_sets_disjoint(&s[1], &s[2]));
    for (int i = 0; i < 3; i++)
        gctx_partition_release(out[i]);
    gctx_partition_release(f.device);
}

GT_TEST(backfill_count_is_exact)
{
    fixture f;
    if (setup(&f))
        return;
    if (f.info.sm_count != 132) {
        gctx_partition_release(f.device);
        GT_SKIP("the backfill count below is worked out for 132 SMs");
    }
    /* 24 in granules, then 20 = one granule of 8 and the 12 SMs no granule holds. */
    gctx_group req[] = {gt_group(24), {.num_sms = 20, .backfill = 1}};
    gctx_partition *out[2];
    gctx_group_plan plans[2];
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, out, NULL, NULL, plans),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(size_of(out[1]), 20);
    gt_sm_set a, b;
    if (gt_partition_sms(out[0], &a) || gt_partition_sms(out[1], &b))
        return;
    GT_ASSERT_EQ_INT(b.count, 20);
    GT_ASSERT(gt_sm_sets_disjoint(&a, &b));
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);
    gctx_partition_release(f.device);
}

/* More groups than a split keeps in its stack buffers: the same exact sizes, disjoint. */
GT_TEST(twelve_groups_of_8_exact_and_disjoint)
{
    fixture f;
    if (setup(&f))
        return;
    if (f.info.sm_count < 100 || f.info.min_partition_sms > 8) {
        gctx_partition_release(f.device);
        GT_SKIP("twelve groups of 8 need 96 SMs in partitions of 8");
    }
    gctx_group req[12];
    gctx_partition *out[12];
    for (unsigned i = 0; i < 12; i++)
        req[i] = gt_group(8);
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 12, NULL, out, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gt_sm_set sets[12];
    for (unsigned i = 0; i < 12; i++) {
        GT_ASSERT_EQ_INT(size_of(out[i]), 8);
        if (gt_partition_sms(out[i], &sets[i]))
            return;
        for (unsigned j = 0; j < i; j++)
            GT_ASSERT(gt_sm_sets_disjoint(&sets[i], &sets[j]));
    }
    for (unsigned i = 0; i < 12; i++)
        gctx_partition_release(out[i]);
    gctx_partition_release(f.device);
}

GT_TEST(coscheduled_below_alignment)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[] = {{.num_sms = 16, .coscheduled_sm_count = 2}, {.num_sms = 6, .coscheduled_sm_count = 2}};
    gctx_partition *out[2];
    gctx_status s = gctx_partition_split(f.device, req, 2, NULL, out, NULL, NULL, NULL);
    if (gt_driver_version() < 12050) {
        GT_ASSERT_STATUS(s, GCTX_ERROR_UNSUPPORTED);
        GT_ASSERT_CONTAINS(gctx_last_error(), "driver 12.5");
        gctx_partition_release(f.device);
        return;
    }
    GT_ASSERT_STATUS(s, GCTX_SUCCESS);
    gt_sm_set a, b;
    if (gt_partition_sms(out[0], &a) || gt_partition_sms(out[1], &b))
        return;
    GT_ASSERT_EQ_INT(a.count, 16);
    GT_ASSERT_EQ_INT(b.count, 6);
    GT_ASSERT(gt_sm_sets_disjoint(&a, &b));
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);
    gctx_partition_release(f.device);
}

GT_TEST(nested_split_of_a_group)
{
    fixture f;
    if (setup(&f))
        return;
    unsigned whole = f.a + f.b;
    gctx_group first[] = {gt_group(whole)};
    gctx_partition *group;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, first, 1, NULL, &group, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_partition_release(f.device); /* the outputs keep what they need alive */
    /* Where the SMs lie decides. Before 13.1 the split asks the driver for the one granule
     * of 64 the group takes: the H200 gives it as SMs 0-63 (asked for two, it deals its 16-SM
     * units over both, and a context holding the first, SMs 0 1 4 5 ... 124 125, splits into
     * 7 granules of 8 and 8 SMs outside them). So the group holds whole granules, and
     * discovery gets everything but the first group. */
    unsigned discovered = f.b;
    gctx_group second[] = {gt_group(f.a), gt_group(0)};
    gctx_partition *inner[2];
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    GT_ASSERT_STATUS(gctx_partition_split(group, second, 2, NULL, inner, NULL, &plan, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan.nested, 1);
    gt_sm_set outer, s0, s1;
    if (gt_partition_sms(group, &outer))
        return;
    gctx_partition_release(group);
    if (gt_partition_sms(inner[0], &s0) || gt_partition_sms(inner[1], &s1))
        return;
    GT_ASSERT_EQ_INT(s0.count, f.a);
    GT_ASSERT_EQ_INT(s1.count, size_of(inner[1]));
    GT_ASSERT_EQ_INT(s1.count, discovered);
    GT_ASSERT(gt_sm_sets_disjoint(&s0, &s1));
    GT_ASSERT(gt_sm_set_within(&s0, &outer) && gt_sm_set_within(&s1, &outer));
    gctx_partition_release(inner[0]);
    gctx_partition_release(inner[1]);
}

GT_TEST(nested_split_of_a_remainder_gives_exact_counts)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group first[] = {gt_group(f.info.sm_count >= 100 ? 32 : 8)};
    gctx_partition *group, *left;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, first, 1, NULL, &group, &left, NULL, NULL),
                     GCTX_SUCCESS);
    unsigned left_sms = size_of(left);
    /* On the H200 the raw driver split this 100-SM remainder by 24 into groups of 18. */
    unsigned want0 = f.info.sm_count >= 100 ? 24 : 8, want1 = left_sms / 2 - (left_sms / 2) % 2;
    gctx_group second[] = {gt_group(want0), gt_group(want1)};
    gctx_partition *inner[2];
    gctx_status s = gctx_partition_split(left, second, 2, NULL, inner, NULL, NULL, NULL);
    if (gt_driver_version() < 12050) {
        GT_ASSERT_STATUS(s, GCTX_ERROR_UNSUPPORTED);
    } else {
        GT_ASSERT_STATUS(s, GCTX_SUCCESS);
        gt_sm_set whole, s0, s1;
        if (gt_partition_sms(left, &whole) || gt_partition_sms(inner[0], &s0) ||
            gt_partition_sms(inner[1], &s1))
            return;
        GT_ASSERT_EQ_INT(s0.count, want0);
        GT_ASSERT_EQ_INT(s1.count, want1);
        GT_ASSERT(gt_sm_sets_disjoint(&s0, &s1));
        GT_ASSERT(gt_sm_set_within(&s0, &whole) && gt_sm_set_within(&s1, &whole));
        gctx_partition_release(inner[0]);
        gctx_partition_release(inner[1]);
    }
    gctx_partition_release(group);
    gctx_partition_release(left);
    gctx_partition_release(f.device);
}

GT_TEST(discovery_and_rounding_through_the_api)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group disc[] = {gt_group(f.a), gt_group(0)};
    gctx_partition *out[2];
    gctx_group_plan plans[2];
    GT_ASSERT_STATUS(gctx_partition_split(f.device, disc, 2, NULL, out, NULL, NULL, plans),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(size_of(out[0]), f.a);
    GT_ASSERT_EQ_INT(size_of(out[1]), plans[1].sm_count);
    GT_ASSERT(plans[1].sm_count >= f.info.coscheduled_alignment);
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);

    unsigned odd = f.info.coscheduled_alignment * 2 + 1;
    gctx_group req[] = {gt_group(odd)};
    gctx_split_options opts = GCTX_SPLIT_OPTIONS_INIT;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 1, &opts, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "nearest:");
    opts.rounding = GCTX_ROUND_UP;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 1, &opts, out, NULL, NULL, plans),
                     GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plans[0].rounded, 1);
    GT_ASSERT_EQ_INT(size_of(out[0]), f.info.coscheduled_alignment * 3);
    gctx_partition_release(out[0]);
    gctx_partition_release(f.device);
}

/* The dry run gives what the split then gives, request after request. */
GT_TEST(dry_run_equals_split)
{
    fixture f;
    if (setup(&f))
        return;
    unsigned seed = 7;
    int iterations = gt_on_sim() ? 300 : 40, made = 0;
    for (int it = 0; it < iterations; it++) {
        unsigned n = 1 + rand_r(&seed) % 4;
        gctx_group req[4];
        for (unsigned i = 0; i < n; i++) {
            unsigned r = rand_r(&seed);
            req[i] = gt_group(r % 5 == 0 ? 0 : 8 * (1 + (r >> 4) % 6));
            req[i].backfill = i + 1 == n && (r >> 9) % 3 == 0;
        }
        gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT, done = GCTX_SPLIT_PLAN_INIT;
        gctx_group_plan planned[4], got[4];
        gctx_status s = gctx_partition_plan(f.device, req, n, NULL, &plan, planned);
        gctx_partition *out[4], *left = NULL;
        gctx_status t = gctx_partition_split(f.device, req, n, NULL, out, &left, &done, got);
        if (s != t)
            GT_FAIL("request %u:%u%s %u:%u%s ... (%u groups): plan gave %s, split %s (%s)",
                    req[0].num_sms, req[0].backfill, "", n > 1 ? req[1].num_sms : 0,
                    n > 1 ? req[1].backfill : 0, "", n, gctx_status_name(s),
                    gctx_status_name(t), gctx_last_error());
        if (s != GCTX_SUCCESS)
            continue;
        made++;
        GT_ASSERT_EQ_INT(plan.remainder_sms, done.remainder_sms);
        GT_ASSERT_EQ_INT(plan.granule_sms, done.granule_sms);
        GT_ASSERT_EQ_INT(left ? size_of(left) : 0, plan.remainder_sms);
        for (unsigned i = 0; i < n; i++) {
            GT_ASSERT_EQ_INT(planned[i].sm_count, got[i].sm_count);
            GT_ASSERT_EQ_INT(size_of(out[i]), planned[i].sm_count);
            if (req[i].num_sms)
                GT_ASSERT_EQ_INT(size_of(out[i]), req[i].num_sms);
            gctx_partition_release(out[i]);
        }
        gctx_partition_release(left);
    }
    GT_ASSERT_GT_INT(made, iterations / 4);
    gctx_partition_release(f.device);
}

GT_TEST(provenance)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group req[] = {gt_group(f.a), gt_group(f.b)};
    gctx_partition *one[2], *other[2], *nested[2], *left;
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, one, &left, NULL, NULL),
                     GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, other, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_group half[] = {gt_group(8), gt_group(8)};
    GT_ASSERT_STATUS(gctx_partition_split(one[1], half, 2, NULL, nested, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_relation r;
    GT_ASSERT_STATUS(gctx_partition_relation(one[0], one[1], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_partition_relation(one[0], left, &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_partition_relation(one[0], other[0], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_MAY_OVERLAP);
    GT_ASSERT_STATUS(gctx_partition_relation(one[0], f.device, &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_OVERLAP);
    GT_ASSERT_STATUS(gctx_partition_relation(nested[0], one[0], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_partition_relation(nested[0], nested[1], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_partition_relation(nested[0], one[1], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_OVERLAP);
    GT_ASSERT_STATUS(gctx_partition_relation(nested[0], other[0], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_MAY_OVERLAP);
    GT_ASSERT_STATUS(gctx_partition_relation(one[0], one[0], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_OVERLAP);
    gctx_partition *parts[] = {one[0], one[1], other[0], other[1], nested[0], nested[1], left};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        gctx_partition_release(parts[i]);
    gctx_partition_release(f.device);
}

GT_TEST(bad_input_gets_status_and_message)
{
    fixture f;
    if (setup(&f))
        return;
    gctx_group one[] = {gt_group(f.a)};
    gctx_partition *out[1];
    GT_ASSERT_STATUS(gctx_partition_split(NULL, one, 1, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "input partition is NULL");
    GT_ASSERT_STATUS(gctx_partition_split(f.device, one, 1, NULL, NULL, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_partition_split(f.device, NULL, 1, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_partition_split(f.device, one, 0, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    gctx_group huge[] = {gt_group(f.info.sm_count + 8)};
    GT_ASSERT_STATUS(gctx_partition_split(f.device, huge, 1, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "this device has");
    gctx_split_options bad = {3, GCTX_ROUND_STRICT};
    GT_ASSERT_STATUS(gctx_partition_split(f.device, one, 1, &bad, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "GCTX_SPLIT_OPTIONS_INIT");
    gctx_split_plan plan = {1, 0, 0, GCTX_SPLIT_PATH_GRANULES, 0, 0, 0, 0, 0};
    GT_ASSERT_STATUS(gctx_partition_plan(f.device, one, 1, NULL, &plan, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_partition_from_device(-1, out), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT_STATUS(gctx_partition_from_device(0, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    out[0] = (gctx_partition *)0x1234;
    GT_ASSERT_STATUS(gctx_partition_from_device(99, out), GCTX_ERROR_NO_DEVICE);
    GT_ASSERT(out[0] == (gctx_partition *)0x1234); /* outputs untouched on failure */

    gctx_partition *stale;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &stale), GCTX_SUCCESS);
    gctx_partition_release(stale);
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_partition_get_info(stale, &info), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_CONTAINS(gctx_last_error(), "not a live greenctx handle");
    GT_ASSERT_STATUS(gctx_partition_split(stale, one, 1, NULL, out, NULL, NULL, NULL),
                     GCTX_ERROR_INVALID_HANDLE);
    gctx_partition_release(stale); /* a double release is detected and ignored */
    gctx_partition_release(NULL);
    gctx_partition_release(f.device);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), f.live_at_start);
}

/* Every driver call a split makes fails once in turn: the split reports it, and nothing it
 * made is left behind, in greenctx or in the driver. */
struct nested_split {
    const fixture *f;
    gctx_partition *group, *left, *inner[2], *inner_left;
    int objects, contexts;
    gctx_status split;
};

/* A partition of a+b SMs to split again, with the driver working. */
static void split_outer(void *arg)
{
    struct nested_split *n = arg;
    gctx_group first[] = {gt_group(n->f->a + n->f->b)};
    GT_ASSERT_STATUS(gctx_partition_split(n->f->device, first, 1, NULL, &n->group, &n->left,
                                          NULL, NULL),
                     GCTX_SUCCESS);
    n->objects = gctx__object_live_count();
    n->contexts = gt_sim_live("green_ctx");
}

static int split_inner(void *arg)
{
    struct nested_split *n = arg;
    gctx_group second[] = {gt_group(n->f->a), gt_group(0)}; /* fits wherever SMs lie */
    n->inner[0] = n->inner[1] = n->inner_left = NULL;
    n->split = gctx_partition_split(n->group, second, 2, NULL, n->inner, &n->inner_left, NULL,
                                    NULL);
    return gt_fault_failed(n->split);
}

static void check_nothing_left(void *arg)
{
    struct nested_split *n = arg;
    if (n->split != GCTX_SUCCESS) {
        GT_ASSERT(n->inner[0] == NULL && n->inner[1] == NULL && n->inner_left == NULL);
        GT_ASSERT_CONTAINS(gctx_last_error(), "CUDA_ERROR_OUT_OF_MEMORY");
        GT_ASSERT_EQ_INT(gctx__object_live_count(), n->objects);
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), n->contexts);
    } else {
        gctx_partition_release(n->inner[0]);
        gctx_partition_release(n->inner[1]);
        gctx_partition_release(n->inner_left);
    }
    gctx_partition_release(n->group);
    gctx_partition_release(n->left);
}

GT_TEST(rollback_under_injected_faults)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    fixture f;
    if (setup(&f))
        return;
    const char *symbols[] = {"cuDevSmResourceSplitByCount", "cuDevSmResourceSplit",
                             "cuDevResourceGenerateDesc", "cuGreenCtxCreate",
                             "cuCtxFromGreenCtx", "cuGreenCtxGetDevResource",
                             "cuGreenCtxGetId", "cuDeviceGetAttribute",
                             "cuDevicePrimaryCtxRetain"};
    struct nested_split n = {.f = &f};
    gt_fault_round round = {split_outer, split_inner, check_nothing_left, &n};
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 12, 1, round);
    GT_CHECK();
    GT_ASSERT_GE_INT(failures, 5);
    gctx_partition_release(f.device);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), f.live_at_start);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

GT_TEST(nothing_leaks)
{
    int primary_before = gt_sim_live("primary_ctx");
    fixture f;
    if (setup(&f))
        return;
    /* Partitions hold the device's primary context, so contexts made from them don't
     * initialise it again each time: one retain of the driver's for all of them. */
    int held = primary_before ? primary_before : 1;
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), held);
    gctx_group req[] = {gt_group(f.a), rest()};
    gctx_partition *out[2], *inner[1];
    long retains = gt_sim_calls("cuDevicePrimaryCtxRetain");
    GT_ASSERT_STATUS(gctx_partition_split(f.device, req, 2, NULL, out, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    if (gt_on_sim()) {
        GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), held);
        GT_ASSERT_EQ_INT(gt_sim_calls("cuDevicePrimaryCtxRetain"), retains);
    }
    gctx_group sub[] = {gt_group(8)};
    GT_ASSERT_STATUS(gctx_partition_split(out[0], sub, 1, NULL, inner, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 1); /* the intermediate context */
    gctx_partition_release(out[0]);
    gctx_partition_release(out[1]);
    gctx_partition_release(f.device);
    if (gt_on_sim())
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 1); /* still needed by inner */
    gctx_partition_release(inner[0]);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), f.live_at_start);
    if (gt_on_sim()) {
        GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
        GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), primary_before);
    }
}

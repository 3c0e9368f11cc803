/* The split planner against models of the real driver's split-by-count: exact sizes, the
 * granule it picks, every error and its message, rounding, and random requests. No driver. */
#include <stdlib.h>

#include "harness.h"
#include "plan_model.h"

static plan_model h200(void) { return (plan_model){MODEL_H200_DEVICE, 132, 8, 8, 0}; }

static gctx_group g(unsigned n) { return (gctx_group){.num_sms = n}; }
static gctx_group rest(void) { return (gctx_group){.backfill = 1}; }

/* Plans on the H200 model and keeps the plan for the assertions. */
static gctx_status plan_h200(const gctx_group *groups, unsigned n, gctx_rounding rounding,
                             gctx__plan *plan)
{
    plan_model m = h200();
    gctx__plan_input in = plan_model_input(&m);
    return gctx__plan_make(&in, groups, n, rounding, plan);
}

GT_TEST(heterogeneous_24_40_aggregates_granules_of_8)
{
    gctx_group req[] = {g(24), g(40)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.path, GCTX_SPLIT_PATH_GRANULES);
    GT_ASSERT_EQ_INT(p.granule, 8);
    GT_ASSERT_EQ_INT(p.flags, 0);
    GT_ASSERT_EQ_INT(p.split_groups, 8); /* the 3 + 5 taken: the other 7 stay in the remainder */
    GT_ASSERT_EQ_INT(p.groups[0].sm_count, 24);
    GT_ASSERT_EQ_INT(p.groups[1].sm_count, 40);
    GT_ASSERT_EQ_INT(p.assign[0].first_granule, 0);
    GT_ASSERT_EQ_INT(p.assign[0].granules, 3);
    GT_ASSERT_EQ_INT(p.assign[1].first_granule, 3);
    GT_ASSERT_EQ_INT(p.assign[1].granules, 5);
    GT_ASSERT_EQ_INT(p.remainder_sms, 132 - 64);
    GT_ASSERT_EQ_INT(p.rounded, 0);
    gctx__plan_free(&p);
}

GT_TEST(equal_groups_use_the_largest_granule)
{
    gctx_group req[] = {g(16), g(16)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.granule, 16);
    GT_ASSERT_EQ_INT(p.assign[1].granules, 1);
    /* As the probe's 2x16 split: 100 SMs left. */
    GT_ASSERT_EQ_INT(p.remainder_sms, 100);
    gctx__plan_free(&p);
}

/* More groups than the plan holds in itself: its arrays come from the heap, planned alike. */
GT_TEST(twelve_groups_of_8_plan_like_two)
{
    gctx_group req[12];
    for (unsigned i = 0; i < 12; i++)
        req[i] = g(8);
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 12, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT(p.groups != p.small.groups);
    GT_ASSERT_EQ_INT(p.granule, 8);
    for (unsigned i = 0; i < 12; i++) {
        GT_ASSERT_EQ_INT(p.groups[i].sm_count, 8);
        GT_ASSERT_EQ_INT(p.assign[i].first_granule, i);
        GT_ASSERT_EQ_INT(p.assign[i].granules, 1);
    }
    GT_ASSERT_EQ_INT(p.remainder_sms, 132 - 96);
    gctx__plan_free(&p);
}

GT_TEST(strict_count_names_rule_and_nearest)
{
    gctx_group req[] = {g(12)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STR_EQ(gctx_last_error(),
                     "group 0: 12 SMs: on this device groups are multiples of 8 (min 8); "
                     "nearest: 8 or 16");
    gctx_group small[] = {g(4)};
    GT_ASSERT_STATUS(plan_h200(small, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "nearest: 8");
}

GT_TEST(rounding_modes_say_what_they_rounded)
{
    const struct {
        unsigned asked;
        gctx_rounding mode;
        unsigned got;
    } cases[] = {{12, GCTX_ROUND_DOWN, 8},   {12, GCTX_ROUND_NEAREST, 16}, {12, GCTX_ROUND_UP, 16},
                 {13, GCTX_ROUND_NEAREST, 16}, {11, GCTX_ROUND_NEAREST, 8}, {3, GCTX_ROUND_DOWN, 8},
                 {131, GCTX_ROUND_UP, 128},  {33, GCTX_ROUND_NEAREST, 32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gctx_group req[] = {g(cases[i].asked)};
        gctx__plan p;
        GT_ASSERT_STATUS(plan_h200(req, 1, cases[i].mode, &p), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(p.groups[0].sm_count, cases[i].got);
        GT_ASSERT_EQ_INT(p.groups[0].rounded, 1);
        GT_ASSERT_EQ_INT(p.rounded, 1);
        gctx__plan_free(&p);
    }
    gctx_group exact[] = {g(24)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(exact, 1, GCTX_ROUND_NEAREST, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.rounded, 0);
    gctx__plan_free(&p);
}

GT_TEST(one_granule_is_one_granule)
{
    /* 72 SMs: a split by 72 gives a single granule, which the first group takes. */
    gctx_group req[] = {g(72), g(0), g(0)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 3, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "took the 1 granule of 72 SMs");
    GT_ASSERT(strstr(gctx_last_error(), "1 granules") == NULL);
}

GT_TEST(groups_that_do_not_fit_say_how_many_granules_exist)
{
    gctx_group req[] = {g(24), g(40), g(64)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 3, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "gives 15 granules (120 SMs)");
    GT_ASSERT_CONTAINS(gctx_last_error(), "only a backfill group can take");
    gctx_group over[] = {g(128), g(8)};
    GT_ASSERT_STATUS(plan_h200(over, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_STR_EQ(gctx_last_error(), "the groups ask for 136 SMs in all; this device has 132");
}

GT_TEST(discovery_takes_the_most_it_can)
{
    gctx_group req[] = {g(0)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 1, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.groups[0].sm_count, 128); /* granules of 16 reach 128; of 8 only 120 */
    GT_ASSERT_EQ_INT(p.remainder_sms, 4);
    gctx__plan_free(&p);
}

GT_TEST(rest_takes_granules_and_the_leftover)
{
    gctx_group req[] = {g(24), g(40), rest()};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 3, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.groups[0].sm_count, 24);
    GT_ASSERT_EQ_INT(p.groups[1].sm_count, 40);
    GT_ASSERT_EQ_INT(p.groups[2].sm_count, 68);
    GT_ASSERT_EQ_INT(p.groups[2].backfilled, 1);
    GT_ASSERT_EQ_INT(p.remainder_sms, 0);
    gctx__plan_free(&p);
}

GT_TEST(backfill_count_uses_the_split_leftover)
{
    /* As measured: one granule of 8 plus the 12 SMs left over gave exactly 20. */
    gctx_group req[] = {g(24), {.num_sms = 20, .backfill = 1}};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.granule, 8);
    GT_ASSERT_EQ_INT(p.groups[1].sm_count, 20);
    GT_ASSERT_EQ_INT(p.assign[1].granules, 1);
    GT_ASSERT_EQ_INT(p.assign[1].takes_remainder, 1);
    GT_ASSERT_EQ_INT(p.remainder_sms, 132 - 44);
    gctx__plan_free(&p);
    gctx_group odd[] = {g(24), {.num_sms = 22, .backfill = 1}};
    GT_ASSERT_STATUS(plan_h200(odd, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "group 1 (backfill) asks for 22 SMs");
}

GT_TEST(coscheduled_below_alignment_uses_fine_granules)
{
    gctx_group req[] = {{.num_sms = 4, .coscheduled_sm_count = 2}, {.num_sms = 6, .coscheduled_sm_count = 2}};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.path, GCTX_SPLIT_PATH_FINE_GRANULES);
    GT_ASSERT_EQ_INT(p.flags, 1);
    GT_ASSERT_EQ_INT(p.granule, 2);
    GT_ASSERT_EQ_INT(p.groups[0].sm_count, 4);
    GT_ASSERT_EQ_INT(p.groups[1].sm_count, 6);
    GT_ASSERT_EQ_INT(p.groups[0].coscheduled_sm_count, 2);
    GT_ASSERT_EQ_INT(p.remainder_sms, 122);
    gctx__plan_free(&p);
}

GT_TEST(mixed_coscheduling_in_one_old_driver_split_is_refused)
{
    gctx_group req[] = {{.num_sms = 8, .coscheduled_sm_count = 8}, {.num_sms = 4, .coscheduled_sm_count = 2}};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "can't be combined with a group co-scheduled below");
    gctx_group bad[] = {{.num_sms = 16, .coscheduled_sm_count = 12}};
    GT_ASSERT_STATUS(plan_h200(bad, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "coscheduled_sm_count 12");
    gctx_group pref[] = {{.num_sms = 16, .coscheduled_sm_count = 8, .preferred_coscheduled_sm_count = 12}};
    GT_ASSERT_STATUS(plan_h200(pref, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "preferred_coscheduled_sm_count 12");
}

GT_TEST(coscheduled_16_needs_multiples_of_16)
{
    gctx_group req[] = {{.num_sms = 24, .coscheduled_sm_count = 16}};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "multiples of 16 (min 16); nearest: 16 or 32");
    gctx_group ok[] = {{.num_sms = 32, .coscheduled_sm_count = 16}, g(16)};
    GT_ASSERT_STATUS(plan_h200(ok, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.granule, 16);
    gctx__plan_free(&p);
}

GT_TEST(discovery_before_counts_says_put_it_last)
{
    gctx_group req[] = {g(0), g(24)};
    gctx__plan p;
    GT_ASSERT_STATUS(plan_h200(req, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "group 0 (discovery) took every SM left");
    GT_ASSERT_CONTAINS(gctx_last_error(), "put discovery groups last");
    gctx_group two[] = {g(0), g(0)};
    GT_ASSERT_STATUS(plan_h200(two, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "group 1 (discovery) gets no SMs");
}

GT_TEST(bad_requests_get_messages)
{
    gctx__plan p;
    gctx_group one[] = {g(8)};
    GT_ASSERT_STATUS(plan_h200(NULL, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STR_EQ(gctx_last_error(), "groups is NULL");
    GT_ASSERT_STATUS(plan_h200(one, 0, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "nb_groups is 0");
    gctx_group many[67];
    for (int i = 0; i < 67; i++)
        many[i] = g(2);
    GT_ASSERT_STATUS(plan_h200(many, 67, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "at most 66 groups");
    gctx_group huge[] = {g(200)};
    GT_ASSERT_STATUS(plan_h200(huge, 1, GCTX_ROUND_UP, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STR_EQ(gctx_last_error(), "group 0 asks for 200 SMs; this device has 132");
    gctx_group negative[] = {g((unsigned)-8)};
    GT_ASSERT_STATUS(plan_h200(negative, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_group early_rest[] = {rest(), g(8)};
    GT_ASSERT_STATUS(plan_h200(early_rest, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "must be the last group");
    GT_ASSERT_STATUS(plan_h200(one, 1, (gctx_rounding)7, &p), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_group tiny_backfill[] = {{.num_sms = 4, .backfill = 1}};
    GT_ASSERT_STATUS(plan_h200(tiny_backfill, 1, GCTX_ROUND_STRICT, &p), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "at least one whole co-scheduled unit (8 SMs)");
}

GT_TEST(unstructured_input_uses_the_flag_that_honours_counts)
{
    plan_model m = {MODEL_UNIFORM, 100, 2, 2, 0};
    gctx__plan_input in = plan_model_input(&m);
    in.structured = 0;
    gctx_group req[] = {g(24), g(50)};
    gctx__plan p;
    GT_ASSERT_STATUS(gctx__plan_make(&in, req, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.path, GCTX_SPLIT_PATH_FINE_GRANULES);
    GT_ASSERT_EQ_INT(p.flags, 1);
    GT_ASSERT_EQ_INT(p.groups[0].sm_count, 24);
    GT_ASSERT_EQ_INT(p.groups[1].sm_count, 50);
    gctx__plan_free(&p);
    in.fine_flag = 0; /* driver 12.4 */
    GT_ASSERT_STATUS(gctx__plan_make(&in, req, 2, GCTX_ROUND_STRICT, &p), GCTX_ERROR_UNSUPPORTED);
    GT_ASSERT_CONTAINS(gctx_last_error(), "driver 12.5 or later");
    in.fine_flag = 1;
    gctx_group cosched[] = {{.num_sms = 16, .coscheduled_sm_count = 8}};
    GT_ASSERT_STATUS(gctx__plan_make(&in, cosched, 1, GCTX_ROUND_STRICT, &p),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "no co-scheduling guarantee");
}

GT_TEST(no_common_granule_is_explained)
{
    plan_model m = {MODEL_UNIFORM, 108, 4, 2, 0}; /* an A100 */
    gctx__plan_input in = plan_model_input(&m);
    gctx_group req[] = {g(6), g(10)};
    gctx__plan p;
    GT_ASSERT_STATUS(gctx__plan_make(&in, req, 2, GCTX_ROUND_STRICT, &p),
                     GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "greatest common divisor is 2");
    gctx_group fine[] = {g(8), g(12)};
    GT_ASSERT_STATUS(gctx__plan_make(&in, fine, 2, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.granule, 4);
    gctx__plan_free(&p);
}

GT_TEST(structured_api_path_only_validates)
{
    plan_model m = h200();
    gctx__plan_input in = plan_model_input(&m);
    in.structured_api = 1;
    gctx_group req[] = {{.num_sms = 24}, {.num_sms = 6, .coscheduled_sm_count = 2}, rest()};
    gctx__plan p;
    GT_ASSERT_STATUS(gctx__plan_make(&in, req, 3, GCTX_ROUND_STRICT, &p), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.path, GCTX_SPLIT_PATH_STRUCTURED);
    GT_ASSERT_EQ_INT(m.calls, 0);
    unsigned sizes[] = {24, 6, 102};
    GT_ASSERT_STATUS(gctx__plan_take_structured(&in, &p, sizes), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(p.remainder_sms, 0);
    unsigned short_sizes[] = {16, 6, 102};
    GT_ASSERT_STATUS(gctx__plan_take_structured(&in, &p, short_sizes), GCTX_ERROR_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), "never hands back a group of another size");
    gctx__plan_free(&p);
}

/* Every plan is an error with a message, or groups of exactly the sizes asked whose granules
 * don't overlap and fit in the split. */
GT_TEST(property_random_requests)
{
    unsigned seed = 12345;
    int planned = 0, refused = 0;
    for (int iter = 0; iter < 20000; iter++) {
        plan_model m = h200();
        if (iter % 3 == 1)
            m = (plan_model){MODEL_UNIFORM, 64, 8, 8, 0};
        else if (iter % 3 == 2)
            m = (plan_model){MODEL_UNIFORM, 108, 4, 2, 0};
        gctx__plan_input in = plan_model_input(&m);
        in.structured = rand_r(&seed) % 5 != 0;
        unsigned n = 1 + rand_r(&seed) % 5;
        gctx_group req[5];
        for (unsigned i = 0; i < n; i++) {
            unsigned r = rand_r(&seed);
            req[i].num_sms = r % 7 == 0 ? 0 : (r >> 3) % 8 == 0 ? (r >> 6) % 140 : 8 * (1 + (r >> 6) % 8);
            req[i].coscheduled_sm_count = (r >> 10) % 6 == 0 ? 2 : (r >> 10) % 6 == 1 ? 16 : 0;
            req[i].preferred_coscheduled_sm_count = 0;
            req[i].backfill = (r >> 14) % 4 == 0;
        }
        gctx_rounding mode = (gctx_rounding)(rand_r(&seed) % 4);
        gctx__plan p;
        gctx_status s = gctx__plan_make(&in, req, n, mode, &p);
        if (s != GCTX_SUCCESS) {
            GT_ASSERT(gctx_last_error()[0] != '\0');
            refused++;
            continue;
        }
        planned++;
        gctx__granule_split split;
        plan_model_oracle(&m, p.granule, p.split_groups, p.flags, &split);
        GT_ASSERT_EQ_INT(split.size, p.granule);
        unsigned used = 0, total = 0, taken = 0;
        for (unsigned i = 0; i < n; i++) {
            GT_ASSERT_EQ_INT(p.assign[i].first_granule, used);
            used += p.assign[i].granules;
            taken += p.assign[i].takes_remainder;
            unsigned sms = p.assign[i].granules * p.granule +
                           (p.assign[i].takes_remainder ? split.remainder : 0);
            GT_ASSERT_EQ_INT(sms, p.groups[i].sm_count);
            GT_ASSERT_GT_INT(sms, 0);
            if (req[i].num_sms && !p.groups[i].rounded)
                GT_ASSERT_EQ_INT(sms, req[i].num_sms);
            total += sms;
        }
        GT_ASSERT(used <= split.groups);
        GT_ASSERT(taken <= 1);
        GT_ASSERT_EQ_INT(total + p.remainder_sms, m.sm_count);
        gctx__plan_free(&p);
    }
    GT_ASSERT_GT_INT(planned, 1000);
    GT_ASSERT_GT_INT(refused, 1000);
}

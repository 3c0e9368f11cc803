/* Layouts, on the simulated driver (tests/cache.cmake) and the real one: what they are made
 * of, their partitions' relations, a switch that makes no driver object and orders the new
 * layout's streams after the old ones, all of them (the barrier, funnelled through old stream
 * 0) or part by part (the simulator's record of each wait and the order of the calls; on a
 * GPU, CUDA graphs that would race without it), bad arguments, faults and threads. */
#include <stdlib.h>
#include <string.h>

#include "raw_calls.h"
#include "sm_ids.h"
#include "testing.h"

static unsigned device_sms(void)
{
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    return gctx_device_get_info(0, &info) == GCTX_SUCCESS ? info.sm_count : 0;
}

static const unsigned three_ratios[] = {16, 0, 32, 0, 64, 0};

static unsigned sm_count(const gctx_layouts *l, unsigned layout, unsigned part)
{
    gctx_partition *p = NULL;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    if (gctx_layouts_get(l, layout, part, &p, NULL, NULL) != GCTX_SUCCESS ||
        gctx_partition_get_info(p, &info) != GCTX_SUCCESS)
        return 0;
    return info.sm_count;
}

GT_TEST(made_up_front_with_relations)
{
    if (gt_require_green_contexts())
        return;
    int objects = gctx__object_live_count();
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    unsigned all = device_sms();
    for (unsigned k = 0; k < 3; k++) {
        GT_ASSERT_EQ_INT(sm_count(l, k, 0), three_ratios[2 * k]);
        GT_ASSERT_EQ_INT(sm_count(l, k, 1), all - three_ratios[2 * k]);
    }
    unsigned active = 9;
    GT_ASSERT_STATUS(gctx_layouts_get_active(l, &active), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(active, 0);
    /* One layout's partitions are disjoint; different layouts' may share SMs. */
    gctx_partition *a, *b, *c;
    gctx_relation rel;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, &a, NULL, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 1, &b, NULL, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_get(l, 2, 0, &c, NULL, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_relation(a, b, &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_DISJOINT);
    GT_ASSERT_STATUS(gctx_partition_relation(a, c, &rel), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(rel, GCTX_RELATION_MAY_OVERLAP);
    gt_sm_set sa, sb, sc;
    gctx_context *ca, *cb, *cc;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, NULL, &ca, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 1, NULL, &cb, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_get(l, 2, 0, NULL, &cc, NULL), GCTX_SUCCESS);
    if (gt_context_sms(ca, &sa) || gt_context_sms(cb, &sb) || gt_context_sms(cc, &sc))
        return;
    GT_ASSERT(gt_sm_sets_disjoint(&sa, &sb));
    GT_ASSERT(!gt_sm_sets_disjoint(&sa, &sc)); /* 32 and 64 SMs from the first units: shared */
    /* A stream of a layout runs on its partition's SMs. */
    gctx_stream *s;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, NULL, NULL, &s), GCTX_SUCCESS);
    gctx_context *of = NULL;
    GT_ASSERT_STATUS(gctx_stream_context(s, &of), GCTX_SUCCESS);
    GT_ASSERT(of == ca);
    gctx_context_release(of);
    gctx_layouts_release(l);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
}

GT_TEST(one_partition_of_every_sm)
{
    if (gt_require_green_contexts())
        return;
    const unsigned rest[] = {0};
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, rest, 1, 1, NULL, &l), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(sm_count(l, 0, 0), device_sms());
    gctx_layouts_release(l);
}

typedef int (*waits_fn)(CUstream, CUstream *, int);

static const unsigned three_parts[] = {16, 16, 0, 32, 32, 0, 8, 64, 0};
#define MOST_PARTS 3

/* The streams of two layouts and how often each had waited, before a switch from one to the
 * other: what the simulator's record of each stream's waits has gained since tells what the
 * switch ordered. */
typedef struct hand_over {
    unsigned nb_parts, from, to;
    CUstream old[MOST_PARTS], now[MOST_PARTS];
    int old_waits[MOST_PARTS], now_waits[MOST_PARTS];
} hand_over;

static int waits_of(CUstream s, CUstream *seen, int capacity)
{
    waits_fn waits = (waits_fn)gt_sim_symbol("gctxsim_stream_waits");
    return waits ? waits(s, seen, capacity) : -1;
}

static void before_switch(gctx_layouts *l, unsigned nb_parts, unsigned from, unsigned to,
                          hand_over *h)
{
    h->nb_parts = nb_parts, h->from = from, h->to = to;
    for (unsigned i = 0; i < nb_parts; i++) {
        gctx_stream *old, *now;
        if (gctx_layouts_get(l, from, i, NULL, NULL, &old) ||
            gctx_layouts_get(l, to, i, NULL, NULL, &now))
            GT_FAIL("gctx_layouts_get: %s", gctx_last_error());
        h->old[i] = gctx_stream_handle(old), h->now[i] = gctx_stream_handle(now);
        h->old_waits[i] = waits_of(h->old[i], NULL, 0);
        h->now_waits[i] = waits_of(h->now[i], NULL, 0);
    }
}

/* What stream s waited for since `before` waits (at most MOST_PARTS): how many, or -1. */
static int waited_since(CUstream s, int before, CUstream *got)
{
    CUstream seen[16];
    int n = waits_of(s, seen, 16), made = n - before;
    if (n < 0 || made < 0 || made > MOST_PARTS || n > 16)
        return -1;
    for (int k = 0; k < made; k++)
        got[k] = seen[n - made + k];
    return made;
}

/* The barrier, funnelled: old stream 0 waited once for each of its siblings (their work
 * before the switch) and nothing else; every new stream waited once, for old stream 0 (its
 * record after those waits: rollback_under_injected_faults checks the order of the calls);
 * so each new stream's work follows every old stream's earlier work. */
static void check_after_all(const hand_over *h)
{
    const unsigned n = h->nb_parts;
    CUstream got[MOST_PARTS];
    int made = waited_since(h->old[0], h->old_waits[0], got);
    if (made != (int)n - 1)
        GT_FAIL("layout %u's stream 0 waited %d times in a switch of %u partitions", h->from,
                made, n);
    for (unsigned i = 1; i < n; i++) {
        int found = 0;
        for (unsigned k = 0; k + 1 < n; k++)
            found += got[k] == h->old[i];
        if (found != 1)
            GT_FAIL("layout %u's stream 0 waited %d times for its stream %u", h->from, found, i);
        if (waited_since(h->old[i], h->old_waits[i], got) != 0)
            GT_FAIL("layout %u's stream %u waited in the switch away from it", h->from, i);
    }
    for (unsigned j = 0; j < n; j++)
        if (waited_since(h->now[j], h->now_waits[j], got) != 1 || got[0] != h->old[0])
            GT_FAIL("layout %u's stream %u did not wait once, for layout %u's stream 0", h->to,
                    j, h->from);
}

/* By part: new stream i waited once, for old stream i; the old streams waited for nothing. */
static void check_by_part(const hand_over *h)
{
    CUstream got[MOST_PARTS];
    for (unsigned i = 0; i < h->nb_parts; i++) {
        if (waited_since(h->old[i], h->old_waits[i], got) != 0)
            GT_FAIL("layout %u's stream %u waited in a switch by part", h->from, i);
        if (waited_since(h->now[i], h->now_waits[i], got) != 1 || got[0] != h->old[i])
            GT_FAIL("layout %u's stream %u did not wait once, for layout %u's stream %u", h->to,
                    i, h->from, i);
    }
}

/* Switches through `order` with `flags`, checking each hand-over and the streams given. */
static void switch_through(gctx_layouts *l, unsigned nb_parts, unsigned flags)
{
    const unsigned order[] = {1, 2, 0, 2, 1, 0};
    unsigned from = 0;
    for (unsigned k = 0; k < sizeof order / sizeof order[0]; k++) {
        hand_over h;
        before_switch(l, nb_parts, from, order[k], &h);
        GT_CHECK();
        gctx_stream *streams[MOST_PARTS] = {0};
        GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, order[k], flags, streams), GCTX_SUCCESS);
        for (unsigned i = 0; i < nb_parts; i++) {
            gctx_stream *expected;
            GT_ASSERT_STATUS(gctx_layouts_get(l, order[k], i, NULL, NULL, &expected),
                             GCTX_SUCCESS);
            GT_ASSERT(streams[i] == expected);
        }
        if (flags & GCTX_LAYOUTS_ORDER_BY_PART)
            check_by_part(&h);
        else
            check_after_all(&h);
        GT_CHECK();
        from = order[k];
    }
}

GT_TEST(switch_orders_with_events_and_makes_nothing)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (gt_require_green_contexts())
        return;
    gctx_layouts *two = NULL, *three = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &two), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_parts, 3, 3, NULL, &three), GCTX_SUCCESS);
    int live = gt_sim_live("all");
    const char *makers[] = {"cuGreenCtxCreate", "cuGreenCtxStreamCreate", "cuStreamCreate",
                            "cuEventCreate", "cuDevResourceGenerateDesc", "cuGreenCtxDestroy",
                            "cuStreamDestroy", "cuEventDestroy"};
    long made[8];
    for (int i = 0; i < 8; i++)
        made[i] = gt_sim_calls(makers[i]);
    for (unsigned flags = GCTX_LAYOUTS_ORDER_ALL; flags <= GCTX_LAYOUTS_ORDER_BY_PART; flags++) {
        switch_through(two, 2, flags);
        GT_CHECK();
        switch_through(three, 3, flags);
        GT_CHECK();
    }
    /* gctx_layouts_switch is the barrier. */
    hand_over h;
    before_switch(two, 2, 0, 1, &h);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_layouts_switch(two, 1, NULL), GCTX_SUCCESS);
    check_after_all(&h);
    GT_CHECK();
    /* Switching to the active layout orders nothing more, in either mode. */
    before_switch(two, 2, 1, 1, &h);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_layouts_switch(two, 1, NULL), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(two, 1, GCTX_LAYOUTS_ORDER_BY_PART, NULL),
                     GCTX_SUCCESS);
    for (unsigned i = 0; i < 2; i++)
        GT_ASSERT_EQ_INT(waits_of(h.now[i], NULL, 0), h.now_waits[i]);
    for (int i = 0; i < 8; i++)
        if (gt_sim_calls(makers[i]) != made[i])
            GT_FAIL("a switch called %s", makers[i]);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), live);
    gctx_layouts_release(three);
    gctx_layouts_release(two);
}

/* Issue 18: one release too many of a stream a switch handed out. Before, it dropped the
 * layouts' own reference: the stream was destroyed (its CUstream kept for the context's next
 * stream), the next gctx_stream_create got the same CUstream, and later switches handed out
 * the dead handle with no error. Now it retires only that handle value. */
GT_TEST(stray_release_retires_only_the_callers_handle)
{
    if (gt_require_green_contexts())
        return;
    int objects = gctx__object_live_count();
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    gctx_stream *streams[2] = {0};
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 1, streams), GCTX_SUCCESS);
    gctx_stream *stray = streams[0];
    CUstream raw = gctx_stream_handle(stray);
    GT_ASSERT(raw != NULL);
    gctx_context *context = NULL;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, NULL, &context, NULL), GCTX_SUCCESS);
    gctx_stream_release(stray); /* the stray release */
    GT_ASSERT(gctx_stream_handle(stray) == NULL); /* that value is retired... */
    GT_ASSERT_STATUS(gctx_stream_synchronize(stray), GCTX_ERROR_INVALID_HANDLE);
    /* ...but the layouts' stream lives: a new stream of its context is another CUstream. */
    gctx_stream *mine = NULL;
    GT_ASSERT_STATUS(gctx_stream_create(context, NULL, &mine), GCTX_SUCCESS);
    GT_ASSERT(gctx_stream_handle(mine) != raw);
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 2, NULL), GCTX_SUCCESS);
    gctx_stream *again[2] = {0};
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 1, again), GCTX_SUCCESS);
    GT_ASSERT(again[0] != NULL && again[0] != stray); /* the same stream under a new value */
    GT_ASSERT(gctx_stream_handle(again[0]) == raw);
    GT_ASSERT_STATUS(gctx_stream_synchronize(again[0]), GCTX_SUCCESS);
    gctx_stream *got = NULL;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, NULL, NULL, &got), GCTX_SUCCESS);
    GT_ASSERT(got == again[0]);
    GT_ASSERT(again[1] == streams[1]); /* the other stream's value never changed */
    /* A handle the caller retained outlives the layouts; one it did not is gone with them. */
    gctx_stream *held = gctx_stream_retain(again[1]);
    GT_ASSERT(held == again[1]);
    gctx_stream_release(mine);
    gctx_layouts_release(l);
    GT_ASSERT(gctx_stream_handle(held) != NULL);
    GT_ASSERT(gctx_stream_handle(again[0]) == NULL);
    gctx_stream_release(held);
    GT_ASSERT(gctx_stream_handle(held) == NULL);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
}

GT_TEST(bad_arguments)
{
    if (gt_require_green_contexts())
        return;
    int objects = gctx__object_live_count();
    gctx_layouts *l = NULL;
    const unsigned middle_zero[] = {0, 16};
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_layouts_create(0, NULL, 3, 2, NULL, &l), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 0, 2, NULL, &l),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_layouts_create(0, middle_zero, 1, 2, NULL, &l),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "only be the last");
    GT_ASSERT_STATUS(gctx_layouts_create(99, three_ratios, 3, 2, NULL, &l), GCTX_ERROR_NO_DEVICE);
    /* The third layout can't be made: the first two are rolled back. */
    const unsigned too_many[] = {16, 0, 32, 0, 96, 96};
    GT_ASSERT_STATUS(gctx_layouts_create(0, too_many, 3, 2, NULL, &l), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(gctx_last_error(), "making layout 2 of 3");
    const unsigned illegal[] = {12, 0};
    GT_ASSERT_STATUS(gctx_layouts_create(0, illegal, 1, 2, NULL, &l), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT(l == NULL);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 3, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "there are 3 (0 to 2)");
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 3, GCTX_LAYOUTS_ORDER_BY_PART, NULL),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_CONTAINS(gctx_last_error(), "there are 3 (0 to 2)");
    gctx_stream *untouched[2] = {NULL, NULL};
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 1, 0x6u, untouched),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STR_EQ(gctx_last_error(),
                     "flags 0x6 has bits that are not GCTX_LAYOUTS_ORDER_* flags: give "
                     "GCTX_LAYOUTS_ORDER_ALL (0: every new stream after every old one) or "
                     "GCTX_LAYOUTS_ORDER_BY_PART (0x1: new stream i after old stream i)");
    GT_ASSERT(untouched[0] == NULL && untouched[1] == NULL);
    unsigned active = 9;
    GT_ASSERT_STATUS(gctx_layouts_get_active(l, &active), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(active, 0);
    GT_ASSERT_STATUS(gctx_layouts_get(l, 0, 2, NULL, NULL, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_layouts_get_active(l, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_layouts_release(l);
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 0, NULL), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 0, GCTX_LAYOUTS_ORDER_BY_PART, NULL),
                     GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
}

struct layouts_round {
    int objects, live;
    gctx_status created;
    gctx_layouts *l;
};

static void trim_and_count_live(void *arg)
{
    struct layouts_round *r = arg;
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    r->live = gt_sim_live("all");
}

static int create_three_layouts(void *arg)
{
    struct layouts_round *r = arg;
    r->l = NULL;
    r->created = gctx_layouts_create(0, three_ratios, 3, 2, NULL, &r->l);
    return gt_fault_failed(r->created);
}

static void release_and_count_leaks(void *arg)
{
    const struct layouts_round *r = arg;
    if (r->created != GCTX_SUCCESS)
        GT_ASSERT(r->l == NULL);
    gctx_layouts_release(r->l);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), r->objects);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), r->live);
}

/* Each driver call of a switch of two partitions failing in turn, in the order the hand-over
 * makes them (all: old stream 1 records, old stream 0 waits for it and records, the new
 * streams wait for old stream 0; by part: each old stream records and its new one waits): the
 * error names the call, the active layout stays, and the switch then goes through in full. */
static void failing_switches(gctx_layouts *l, unsigned flags, gt_sim_fail_fn fail)
{
    static const char *const after_all[] = {
        "cuEventRecord on layout 0's stream 1",
        "cuStreamWaitEvent: layout 0's stream 0 for layout 0's stream 1",
        "cuEventRecord on layout 0's stream 0",
        "cuStreamWaitEvent: layout 2's stream 0 for layout 0's stream 0",
        "cuStreamWaitEvent: layout 2's stream 1 for layout 0's stream 0"};
    static const char *const by_part[] = {
        "cuEventRecord on layout 0's stream 0",
        "cuStreamWaitEvent: layout 2's stream 0 for layout 0's stream 0",
        "cuEventRecord on layout 0's stream 1",
        "cuStreamWaitEvent: layout 2's stream 1 for layout 0's stream 1"};
    const int all = !(flags & GCTX_LAYOUTS_ORDER_BY_PART);
    const char *const *steps = all ? after_all : by_part;
    const int nb_steps = all ? 5 : 4;
    unsigned active = 9;
    GT_ASSERT_STATUS(gctx_layouts_get_active(l, &active), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(active, 0);
    for (int step = 0; step < nb_steps; step++) {
        /* Up to this step, how many calls of each: the failing one is the last of its kind,
         * and none of the other kind follows it. */
        long upto[2] = {0, 0}, before[2], made[2];
        for (int k = 0; k <= step; k++)
            upto[strncmp(steps[k], "cuEventRecord", 13) != 0]++;
        const int waits = strncmp(steps[step], "cuEventRecord", 13) != 0;
        const char *symbols[2] = {"cuEventRecord", "cuStreamWaitEvent"};
        for (int i = 0; i < 2; i++)
            before[i] = gt_sim_calls(symbols[i]);
        fail(symbols[waits], (int)upto[waits], 2);
        gctx_stream *streams[2] = {NULL, NULL};
        GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 2, flags, streams), GCTX_ERROR_DRIVER);
        fail(NULL, 0, 0);
        for (int i = 0; i < 2; i++)
            made[i] = gt_sim_calls(symbols[i]) - before[i];
        if (made[0] != upto[0] || made[1] != upto[1])
            GT_FAIL("step %d (%s) of a switch failing: %ld cuEventRecord and %ld "
                    "cuStreamWaitEvent made, expected %ld and %ld",
                    step, steps[step], made[0], made[1], upto[0], upto[1]);
        GT_ASSERT_CONTAINS(gctx_last_error(), steps[step]);
        GT_ASSERT_CONTAINS(gctx_last_error(), "switching to layout 2: it is not active");
        GT_ASSERT(streams[0] == NULL && streams[1] == NULL);
        GT_ASSERT_STATUS(gctx_layouts_get_active(l, &active), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(active, 0);
    }
    hand_over h;
    before_switch(l, 2, 0, 2, &h);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 2, flags, NULL), GCTX_SUCCESS);
    if (all)
        check_after_all(&h);
    else
        check_by_part(&h);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, 0, flags, NULL), GCTX_SUCCESS);
}

GT_TEST(rollback_under_injected_faults)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (gt_require_green_contexts())
        return;
    gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    GT_ASSERT(fail != NULL);
    int objects = gctx__object_live_count();
    const char *symbols[] = {"cuDevSmResourceSplitByCount", "cuDevSmResourceSplit",
                             "cuDevResourceGenerateDesc", "cuGreenCtxCreate",
                             "cuGreenCtxStreamCreate", "cuStreamCreateWithPriority",
                             "cuEventCreate", "cuCtxPushCurrent"};
    struct layouts_round r = {objects, 0, GCTX_SUCCESS, NULL};
    gt_fault_round round = {trim_and_count_live, create_three_layouts, release_and_count_leaks,
                            &r};
    long failures = gt_each_fault(symbols, sizeof symbols / sizeof symbols[0], 5, 2, round);
    GT_CHECK();
    GT_ASSERT_GT_INT(failures, 10);
    /* A switch whose ordering fails leaves the active layout as it was, at every call. */
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    for (unsigned flags = GCTX_LAYOUTS_ORDER_ALL; flags <= GCTX_LAYOUTS_ORDER_BY_PART; flags++) {
        failing_switches(l, flags, fail);
        GT_CHECK();
    }
    gctx_layouts_release(l);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);
}

/* ---- threads switching at once (also under ThreadSanitizer) ---- */

static gctx_layouts *shared;

static void *switcher(void *arg)
{
    long failures = 0;
    unsigned seed = (unsigned)(size_t)arg;
    for (int i = 0; i < 200; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned to = (seed >> 16) % 3, active;
        gctx_stream *streams[2] = {0};
        unsigned flags = (seed >> 4) & 1 ? GCTX_LAYOUTS_ORDER_BY_PART : GCTX_LAYOUTS_ORDER_ALL;
        if (gctx_layouts_switch_ordered(shared, to, flags, streams) != GCTX_SUCCESS || !streams[0] ||
            !streams[1] || gctx_layouts_get_active(shared, &active) != GCTX_SUCCESS ||
            active > 2 || gctx_stream_synchronize(streams[(seed >> 8) & 1]) != GCTX_SUCCESS)
            failures++;
    }
    return (void *)failures;
}

GT_TEST(many_threads_switch)
{
    if (gt_require_green_contexts())
        return;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &shared), GCTX_SUCCESS);
    long failures = gt_run_threads(6, switcher);
    GT_ASSERT_EQ_INT(failures, 0);
    gctx_layouts_release(shared);
}

/* ---- on a GPU: graphs captured per layout, ordered by the switches of either kind ---- */

/* out[0] = out[0] * 3 + tag, reading first and writing after spin_ns: two of these running at
 * once lose an update, so only ordered runs give the sequential result. */
static const char step_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry step(.param .u64 out, .param .u32 tag, .param .u64 spin)\n{\n"
    "  .reg .pred p;\n  .reg .b32 r<4>;\n  .reg .b64 rd<6>;\n"
    "  ld.param.u64 rd1, [out];\n  cvta.to.global.u64 rd1, rd1;\n"
    "  ld.param.u32 r1, [tag];\n  ld.param.u64 rd2, [spin];\n"
    "  ld.volatile.global.u32 r2, [rd1];\n"
    "  mov.u64 rd3, %globaltimer;\n  add.s64 rd4, rd3, rd2;\n"
    "WAIT:\n  mov.u64 rd5, %globaltimer;\n  setp.lt.u64 p, rd5, rd4;\n  @p bra WAIT;\n"
    "  mad.lo.u32 r3, r2, 3, r1;\n  st.volatile.global.u32 [rd1], r3;\n  ret;\n}\n";

GT_TEST(graphs_per_layout_run_in_switch_order)
{
    if (gt_require_green_contexts())
        return;
    if (gt_on_sim())
        GT_SKIP("needs a GPU: the simulated driver runs no kernels");
    const raw_driver *drv = gt_raw();
    if (!drv->cuStreamBeginCapture || !drv->cuGraphInstantiateWithFlags)
        GT_SKIP("this driver has no stream capture");
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 2, 2, NULL, &l), GCTX_SUCCESS);
    gcu_module module[2];
    gcu_function fn[2];
    gcu_graph graph[2];
    gcu_graph_exec exec[2];
    gcu_deviceptr out = 0;
    CUstream raw[2];
    unsigned long long spin = 200000; /* 200 us */
    CUcontext popped;
    for (unsigned k = 0; k < 2; k++) {
        gctx_context *c;
        gctx_stream *s;
        GT_ASSERT_STATUS(gctx_layouts_get(l, k, 0, NULL, &c, &s), GCTX_SUCCESS);
        raw[k] = gctx_stream_handle(s);
        GT_ASSERT_EQ_INT(drv->cuCtxPushCurrent(gctx_context_cu_context(c)), 0);
        GT_ASSERT_EQ_INT(drv->cuModuleLoadData(&module[k], step_ptx), 0);
        GT_ASSERT_EQ_INT(drv->cuModuleGetFunction(&fn[k], module[k], "step"), 0);
        if (k == 0) {
            GT_ASSERT_EQ_INT(drv->cuMemAlloc(&out, 4), 0);
            GT_ASSERT_EQ_INT(drv->cuMemsetD32(out, 1, 1), 0);
        }
        unsigned tag = k + 1;
        void *params[] = {&out, &tag, &spin};
        GT_ASSERT_EQ_INT(drv->cuStreamBeginCapture(raw[k], GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL), 0);
        GT_ASSERT_EQ_INT(drv->cuLaunchKernel(fn[k], 1, 1, 1, 1, 1, 1, 0, raw[k], params, NULL), 0);
        GT_ASSERT_EQ_INT(drv->cuStreamEndCapture(raw[k], &graph[k]), 0);
        GT_ASSERT_EQ_INT(drv->cuGraphInstantiateWithFlags(&exec[k], graph[k], 0), 0);
        drv->cuCtxPopCurrent(&popped);
    }
    unsigned expected = 1;
    for (int i = 0; i < 80; i++) { /* the barrier, then by part: the graphs are on part 0 */
        unsigned k = (unsigned)(i % 3 == 0); /* 1, 0, 0, 1, 0, 0, ... */
        unsigned flags = i < 40 ? GCTX_LAYOUTS_ORDER_ALL : GCTX_LAYOUTS_ORDER_BY_PART;
        GT_ASSERT_STATUS(gctx_layouts_switch_ordered(l, k, flags, NULL), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(drv->cuGraphLaunch(exec[k], raw[k]), 0);
        expected = expected * 3 + k + 1;
    }
    unsigned got = 0;
    for (unsigned k = 0; k < 2; k++)
        GT_ASSERT_EQ_INT(drv->cuStreamSynchronize(raw[k]), 0);
    gctx_context *first;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 0, 0, NULL, &first, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(drv->cuCtxPushCurrent(gctx_context_cu_context(first)), 0);
    gcu_result copied = drv->cuMemcpyDtoH(&got, out, 4);
    for (unsigned k = 0; k < 2; k++) {
        drv->cuGraphExecDestroy(exec[k]);
        drv->cuGraphDestroy(graph[k]);
        drv->cuModuleUnload(module[k]);
    }
    drv->cuMemFree(out);
    drv->cuCtxPopCurrent(&popped);
    gctx_layouts_release(l);
    GT_ASSERT_EQ_INT(copied, 0);
    GT_ASSERT_EQ_INT(got, expected);
}

/* Layouts, on the simulated driver (tests/cache.cmake) and the real one: what they are made
 * of, their partitions' relations, a switch that makes no driver object and orders the new
 * layout's streams after the old ones (the simulator's record of each wait; on a GPU, CUDA
 * graphs that would race without it), bad arguments, faults and threads. */
#include <stdlib.h>

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

typedef long (*calls_fn)(const char *);
typedef int (*waits_fn)(CUstream, CUstream *, int);

/* Every stream of layout `to` waited, in its last two waits, for both streams of `from`. */
static void check_hand_over(gctx_layouts *l, unsigned from, unsigned to)
{
    waits_fn waits = (waits_fn)gt_sim_symbol("gctxsim_stream_waits");
    if (!waits)
        GT_FAIL("no gctxsim_stream_waits");
    gctx_stream *old[2], *now[2];
    for (unsigned i = 0; i < 2; i++) {
        if (gctx_layouts_get(l, from, i, NULL, NULL, &old[i]) ||
            gctx_layouts_get(l, to, i, NULL, NULL, &now[i]))
            GT_FAIL("gctx_layouts_get: %s", gctx_last_error());
    }
    for (unsigned j = 0; j < 2; j++) {
        CUstream seen[16];
        int n = waits(gctx_stream_handle(now[j]), seen, 16);
        if (n < 2)
            GT_FAIL("layout %u's stream %u waited %d times", to, j, n);
        int kept = n < 16 ? n : 16;
        CUstream a = seen[kept - 2], b = seen[kept - 1];
        CUstream o0 = gctx_stream_handle(old[0]), o1 = gctx_stream_handle(old[1]);
        if (!((a == o0 && b == o1) || (a == o1 && b == o0)))
            GT_FAIL("layout %u's stream %u did not wait for both of layout %u's streams", to, j,
                    from);
    }
}

GT_TEST(switch_orders_with_events_and_makes_nothing)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    if (gt_require_green_contexts())
        return;
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    int live = gt_sim_live("all");
    const char *makers[] = {"cuGreenCtxCreate", "cuGreenCtxStreamCreate", "cuStreamCreate",
                            "cuEventCreate", "cuDevResourceGenerateDesc", "cuGreenCtxDestroy",
                            "cuStreamDestroy", "cuEventDestroy"};
    long made[8];
    for (int i = 0; i < 8; i++)
        made[i] = gt_sim_calls(makers[i]);
    const unsigned order[] = {1, 2, 0, 2, 1};
    unsigned from = 0;
    for (unsigned k = 0; k < 5; k++) {
        gctx_stream *streams[2] = {0};
        GT_ASSERT_STATUS(gctx_layouts_switch(l, order[k], streams), GCTX_SUCCESS);
        for (unsigned i = 0; i < 2; i++) {
            gctx_stream *expected;
            GT_ASSERT_STATUS(gctx_layouts_get(l, order[k], i, NULL, NULL, &expected),
                             GCTX_SUCCESS);
            GT_ASSERT(streams[i] == expected);
        }
        check_hand_over(l, from, order[k]);
        GT_CHECK();
        from = order[k];
    }
    /* Switching to the active layout orders nothing more. */
    gctx_stream *s;
    GT_ASSERT_STATUS(gctx_layouts_get(l, 1, 0, NULL, NULL, &s), GCTX_SUCCESS);
    waits_fn waits = (waits_fn)gt_sim_symbol("gctxsim_stream_waits");
    int before = waits(gctx_stream_handle(s), NULL, 0);
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 1, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(waits(gctx_stream_handle(s), NULL, 0), before);
    for (int i = 0; i < 8; i++)
        if (gt_sim_calls(makers[i]) != made[i])
            GT_FAIL("a switch called %s", makers[i]);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), live);
    gctx_layouts_release(l);
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
    GT_ASSERT_STATUS(gctx_layouts_get(l, 0, 2, NULL, NULL, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_STATUS(gctx_layouts_get_active(l, NULL), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_layouts_release(l);
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 0, NULL), GCTX_ERROR_INVALID_HANDLE);
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
    /* A switch whose ordering fails leaves the active layout as it was. */
    gctx_layouts *l = NULL;
    GT_ASSERT_STATUS(gctx_layouts_create(0, three_ratios, 3, 2, NULL, &l), GCTX_SUCCESS);
    const char *switch_symbols[] = {"cuEventRecord", "cuStreamWaitEvent"};
    for (int k = 0; k < 2; k++) {
        fail(switch_symbols[k], 1, 2);
        GT_ASSERT_STATUS(gctx_layouts_switch(l, 2, NULL), GCTX_ERROR_DRIVER);
        GT_ASSERT_CONTAINS(gctx_last_error(), switch_symbols[k]);
        GT_ASSERT_CONTAINS(gctx_last_error(), "switching to layout 2: it is not active");
        fail(NULL, 0, 0);
        unsigned active = 9;
        GT_ASSERT_STATUS(gctx_layouts_get_active(l, &active), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(active, 0);
    }
    GT_ASSERT_STATUS(gctx_layouts_switch(l, 2, NULL), GCTX_SUCCESS);
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
        if (gctx_layouts_switch(shared, to, streams) != GCTX_SUCCESS || !streams[0] ||
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

/* ---- on a GPU: graphs captured per layout, ordered by the switches ---- */

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
    for (int i = 0; i < 40; i++) {
        unsigned k = (unsigned)(i % 3 == 0); /* 1, 0, 0, 1, 0, 0, ... */
        GT_ASSERT_STATUS(gctx_layouts_switch(l, k, NULL), GCTX_SUCCESS);
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

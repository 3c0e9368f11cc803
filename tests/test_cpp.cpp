// The C++ wrapper (include/greenctx.hpp) on the simulated H200: ownership, conversions to the
// driver's handles, errors as exceptions and as results, layouts. Built with -Wall -Wextra
// -Werror under the configured C++ compiler (C++17); the other compiler checks the header too.
#include <greenctx.hpp>

#include <string>
#include <type_traits>
#include <utility>

extern "C" {
#include "harness.h"
}

static_assert(std::is_nothrow_move_constructible<greenctx::stream>::value, "moves never throw");
static_assert(std::is_convertible<greenctx::stream, CUstream>::value, "a stream is a CUstream");
static_assert(std::is_convertible<greenctx::event, CUevent>::value, "an event is a CUevent");

// The SMs a raw stream runs on, as the simulator gave them.
static int stream_sms(CUstream raw)
{
    typedef int (*fn)(CUstream, unsigned *, int);
    fn sm_ids = reinterpret_cast<fn>(gt_sim_symbol("gctxsim_stream_sm_ids"));
    return sm_ids ? sm_ids(raw, nullptr, 0) : -1;
}

GT_TEST(split_context_stream_event_own_and_release)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    {
        greenctx::partition device = greenctx::partition::from_device(0);
        GT_ASSERT_EQ_INT(device.sm_count(), 132);
        greenctx::split_result split = device.split({greenctx::group(24), greenctx::group(40)});
        GT_ASSERT_EQ_INT(split.parts.size(), 2);
        GT_ASSERT_EQ_INT(split.parts[0].sm_count(), 24);
        GT_ASSERT_EQ_INT(split.parts[1].sm_count(), 40);
        GT_ASSERT_EQ_INT(split.remainder.sm_count(), 68);
        GT_ASSERT_EQ_INT(split.plan.groups[1].sm_count, 40);
        GT_ASSERT_EQ_INT(split.parts[0].relation(split.parts[1]), GCTX_RELATION_DISJOINT);

        greenctx::context ctx(split.parts[0]);
        GT_ASSERT_EQ_INT(ctx.info().sm_count, 24);
        greenctx::stream s(ctx);
        CUstream raw = s; // what cudart, cuBLAS and NCCL take
        GT_ASSERT(raw != nullptr);
        GT_ASSERT(raw == gctx_stream_handle(s.get()));
        GT_ASSERT_EQ_INT(stream_sms(raw), 24);
        GT_ASSERT_EQ_INT(s.context().info().sm_count, 24);

        greenctx::event e(ctx);
        e.record(s);
        s.wait(e);
        ctx.wait(e);
        s.synchronize();
        e.synchronize();

        // Moving transfers the reference; copying takes one more; both stay usable.
        greenctx::stream moved = std::move(s);
        GT_ASSERT(!s && moved && moved.handle() == raw);
        greenctx::stream copy = moved;
        GT_ASSERT(copy.get() == moved.get());
        copy = greenctx::stream();
        GT_ASSERT_EQ_INT(stream_sms(moved), 24); // the copy's release left the stream alive
        GT_ASSERT_EQ_INT(gt_sim_live("stream"), 1);
    }
    // Every object is gone with its last owner: the contexts wait in the cache, nothing else.
    GT_ASSERT_EQ_INT(gt_sim_live("stream"), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("event"), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("primary_ctx"), 0);
}

GT_TEST(errors_throw_with_status_and_message)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    greenctx::partition device = greenctx::partition::from_device(0);
    try {
        (void)device.split({greenctx::group(23)});
        GT_FAIL("a split of 23 SMs did not throw");
    } catch (const greenctx::error &e) {
        GT_ASSERT_EQ_INT(e.status(), GCTX_ERROR_INVALID_ARGUMENT);
        GT_ASSERT_STR_EQ(e.status_name(), "GCTX_ERROR_INVALID_ARGUMENT");
        GT_ASSERT_CONTAINS(e.what(), "23");
        GT_ASSERT_CONTAINS(e.what(), "24"); // the nearest legal count
    }
    try {
        (void)greenctx::partition::from_device(7);
        GT_FAIL("device 7 of one did not throw");
    } catch (const greenctx::error &e) {
        GT_ASSERT_EQ_INT(e.status(), GCTX_ERROR_NO_DEVICE);
        GT_ASSERT_CONTAINS(e.what(), "7");
    }
}

GT_TEST(try_functions_return_results_without_throwing)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    greenctx::partition device = greenctx::partition::from_device(0);
    auto refused = device.try_split({greenctx::group(96), greenctx::group(64)});
    GT_ASSERT(!refused);
    GT_ASSERT_EQ_INT(refused.status(), GCTX_ERROR_INSUFFICIENT_SMS);
    GT_ASSERT_CONTAINS(refused.error().what(), "160");
    bool threw = false;
    try {
        (void)refused.value();
    } catch (const greenctx::error &e) {
        threw = e.status() == GCTX_ERROR_INSUFFICIENT_SMS;
    }
    GT_ASSERT(threw);

    auto plan = device.try_plan({greenctx::group(24), greenctx::group(0)});
    GT_ASSERT(plan && plan.status() == GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(plan->groups[0].sm_count, 24);
    auto count = greenctx::try_device_count();
    GT_ASSERT(count && *count == 1);
    auto ctx = greenctx::context::try_with_sms(0, 23);
    GT_ASSERT_EQ_INT(ctx.status(), GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

GT_TEST(context_split_and_layouts)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    {
        greenctx::context whole = greenctx::context::with_sms(0, 64);
        greenctx::context rest;
        std::vector<greenctx::context> halves = whole.split({greenctx::group(32)}, &rest);
        GT_ASSERT_EQ_INT(halves.size(), 1);
        GT_ASSERT_EQ_INT(halves[0].info().sm_count, 32);
        GT_ASSERT(rest);
        GT_ASSERT_EQ_INT(rest.info().sm_count, 32);
        GT_ASSERT_EQ_INT(halves[0].partition().sm_count(), 32);

        greenctx::layouts l(0, {{16, 0}, {32, 0}});
        GT_ASSERT_EQ_INT(l.nb_parts(), 2);
        GT_ASSERT_EQ_INT(l.active(), 0);
        std::vector<greenctx::stream> streams = l.switch_to(1);
        GT_ASSERT_EQ_INT(l.active(), 1);
        GT_ASSERT_EQ_INT(streams.size(), 2);
        GT_ASSERT_EQ_INT(stream_sms(streams[0]), 32);
        GT_ASSERT_EQ_INT(stream_sms(streams[1]), 100);
        long waits = gt_sim_calls("cuStreamWaitEvent");
        streams = l.switch_to(0, GCTX_LAYOUTS_ORDER_BY_PART);
        GT_ASSERT_EQ_INT(l.active(), 0);
        GT_ASSERT_EQ_INT(gt_sim_calls("cuStreamWaitEvent") - waits, 2); /* one per stream */
        GT_ASSERT_EQ_INT(stream_sms(streams[0]), 16);
        bool refused = false;
        try {
            l.switch_to(1, 0x2u);
        } catch (const greenctx::error &e) {
            refused = e.status() == GCTX_ERROR_INVALID_ARGUMENT;
        }
        GT_ASSERT(refused && l.active() == 0);
        greenctx::layout_part part = l.get(0, 0);
        GT_ASSERT_EQ_INT(part.partition.sm_count(), 16);
        GT_ASSERT_EQ_INT(part.context.info().sm_count, 16);
        GT_ASSERT_EQ_INT(stream_sms(part.stream), 16);
        bool threw = false;
        try {
            greenctx::layouts ragged(0, {{16, 0}, {32}});
        } catch (const greenctx::error &e) {
            threw = e.status() == GCTX_ERROR_INVALID_ARGUMENT;
        }
        GT_ASSERT(threw);
        // The streams of a layout outlive the copy of them the caller took.
        greenctx::layouts moved = std::move(l);
        GT_ASSERT(!l && moved.nb_parts() == 2);
    }
    GT_ASSERT_EQ_INT(gt_sim_live("stream"), 0);
    GT_ASSERT_EQ_INT(gt_sim_live("green_ctx"), 0);
}

GT_TEST(current_context_guard_restores)
{
    gt_require_sim(0, "h200");
    GT_CHECK();
    greenctx::context ctx = greenctx::context::with_sms(0, 16);
    CUcontext before = nullptr;
    GT_ASSERT_STATUS(gctx_current_context_save(&before), GCTX_SUCCESS);
    {
        greenctx::current_context_guard guard;
        GT_ASSERT_STATUS(gctx_current_context_restore(ctx.cu_context(), nullptr), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(greenctx::current_sm_count(), 16); /* what is current, counted */
        GT_ASSERT_STATUS(gctx_current_context_restore(nullptr, nullptr), GCTX_SUCCESS);
        GT_ASSERT(!greenctx::try_current_sm_count()); /* nothing current */
    }
    CUcontext after = reinterpret_cast<CUcontext>(1);
    GT_ASSERT_STATUS(gctx_current_context_save(&after), GCTX_SUCCESS);
    GT_ASSERT(after == before);
}

/* After a fault (issue 18): a kernel's illegal address on one green context loses the CUDA
 * state of the whole process (shared/measurements/h200-faults.md), so every greenctx call
 * must then fail cleanly with that error and a message that says so: no hang, no crash, no
 * object left half-made, outputs untouched, and no context or stream handed out of the cache
 * as if nothing happened. Releases still work, and nothing leaks.
 *
 * Each test is one process (one CTest entry): a fault is for the process's life. On the
 * simulated driver the fault is gctxsim_sticky_fault (or an injected sticky CUresult); on a GPU
 * a kernel stores to address 0x10 on the first green context's stream. Then the first
 * greenctx call to meet it differs: a cached context, a cached stream, the sibling's stream. */
#include <stdlib.h>

#include "raw_calls.h"
#include "sm_ids.h"
#include "testing.h"

#define ILLEGAL_ADDRESS 700

/* Stores to address 0x10: CUDA_ERROR_ILLEGAL_ADDRESS. */
static const char fault_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry fault()\n{\n"
    "  .reg .b32 r<2>;\n  .reg .b64 rd<2>;\n"
    "  mov.u64 rd1, 16;\n  mov.u32 r1, 1;\n  st.global.u32 [rd1], r1;\n  ret;\n}\n";

typedef struct scene {
    int objects, driver_objects; /* before anything was made */
    gctx_partition *whole, *a, *b; /* a: 16 SMs, b: the rest */
    gctx_context *ca, *cb;
    gctx_stream *sa, *sb;
    gctx_event *ev;
} scene;

/* Two green contexts of {16, rest} with a stream each, a cached context of a's SMs, and a
 * drained stream kept by cb (both handed out later without a driver call, but for the
 * check). */
static void scene_make(scene *s)
{
    memset(s, 0, sizeof *s);
    gt_require_device();
    GT_CHECK();
    if (gt_require_green_contexts())
        return;
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    s->objects = gctx__object_live_count();
    s->driver_objects = gt_sim_live("all");
    gctx_group sixteen = gt_group(16);
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &s->whole), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_split(s->whole, &sixteen, 1, NULL, &s->a, &s->b, NULL, NULL),
                     GCTX_SUCCESS);
    gctx_context *cached;
    GT_ASSERT_STATUS(gctx_context_create(s->a, NULL, &cached), GCTX_SUCCESS);
    gctx_context_release(cached);
    GT_ASSERT_STATUS(gctx_context_create(s->a, NULL, &s->ca), GCTX_SUCCESS); /* a hit */
    GT_ASSERT_STATUS(gctx_context_create(s->a, NULL, &cached), GCTX_SUCCESS); /* a miss */
    gctx_context_release(cached); /* cached again, for the hit after the fault */
    GT_ASSERT_STATUS(gctx_context_create(s->b, NULL, &s->cb), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(s->ca, NULL, &s->sa), GCTX_SUCCESS);
    gctx_stream *drained;
    GT_ASSERT_STATUS(gctx_stream_create(s->cb, NULL, &drained), GCTX_SUCCESS);
    gctx_stream_release(drained); /* kept by cb for its next stream */
    GT_ASSERT_STATUS(gctx_stream_create(s->cb, NULL, &s->sb), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(s->cb, NULL, &drained), GCTX_SUCCESS);
    gctx_stream_release(drained);
    GT_ASSERT_STATUS(gctx_event_create(s->ca, &s->ev), GCTX_SUCCESS);
}

/* The fault, met outside greenctx: on a GPU the kernel on a's stream and a raw synchronize
 * (greenctx sees nothing of it); on the simulator every later call fails from now on. */
static void fault_outside_greenctx(scene *s)
{
    if (gt_on_sim()) {
        void (*sticky)(int) = (void (*)(int))gt_sim_symbol("gctxsim_sticky_fault");
        GT_ASSERT(sticky != NULL);
        sticky(ILLEGAL_ADDRESS);
        return;
    }
    const raw_driver *cu = gt_raw();
    GT_ASSERT(cu != NULL);
    gcu_module module;
    gcu_function fn;
    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(gctx_context_cu_context(s->ca)), 0);
    int loaded = cu->cuModuleLoadData(&module, fault_ptx);
    int found = loaded ? loaded : cu->cuModuleGetFunction(&fn, module, "fault");
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    GT_ASSERT_EQ_INT(found, 0);
    GT_ASSERT_EQ_INT(cu->cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, gctx_stream_handle(s->sa), NULL,
                                         NULL), 0);
    GT_ASSERT_EQ_INT(cu->cuStreamSynchronize(gctx_stream_handle(s->sa)), ILLEGAL_ADDRESS);
    /* the module goes with the process: unloading it fails as everything does now */
}

/* A call that failed because of the fault: the CUresult, the message, nothing made. */
#define ASSERT_FAULT(call, objects)                                                            \
    do {                                                                                       \
        GT_ASSERT_STATUS(call, GCTX_ERROR_DRIVER);                                             \
        GT_ASSERT_EQ_INT(gctx_last_cuda_result(), ILLEGAL_ADDRESS);                            \
        GT_ASSERT_CONTAINS(gctx_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS (700)");             \
        GT_ASSERT_CONTAINS(gctx_last_error(), "this process's CUDA state is lost after a "     \
                                              "fault");                                        \
        GT_ASSERT_CONTAINS(gctx_last_error(), "green contexts split SMs, not fault domains");  \
        GT_ASSERT_CONTAINS(gctx_last_error(), "restart the process");                          \
        GT_ASSERT_EQ_INT(gctx__object_live_count(), objects);                                  \
    } while (0)

/* Every call after the first one that met the fault is refused with it. */
static void everything_refused(scene *s)
{
    int objects = gctx__object_live_count();
    void *const untouched = (void *)&objects; /* outputs keep what they held */
    gctx_context *c = untouched;
    gctx_context_options fresh = GCTX_CONTEXT_OPTIONS_INIT;
    fresh.flags = GCTX_CONTEXT_FRESH;
    ASSERT_FAULT(gctx_context_create(s->a, NULL, &c), objects); /* cached */
    ASSERT_FAULT(gctx_context_create(s->a, &fresh, &c), objects);
    ASSERT_FAULT(gctx_context_create(s->b, NULL, &c), objects);
    ASSERT_FAULT(gctx_context_create_with_sms(0, 16, NULL, &c), objects);
    GT_ASSERT(c == untouched);
    gctx_stream *st = untouched;
    ASSERT_FAULT(gctx_stream_create(s->ca, NULL, &st), objects);
    ASSERT_FAULT(gctx_stream_create(s->cb, NULL, &st), objects); /* it has a drained one */
    GT_ASSERT(st == untouched);
    ASSERT_FAULT(gctx_stream_synchronize(s->sa), objects);
    ASSERT_FAULT(gctx_stream_synchronize(s->sb), objects); /* the sibling */
    ASSERT_FAULT(gctx_event_record(s->ev, s->sb), objects);
    ASSERT_FAULT(gctx_event_synchronize(s->ev), objects);
    unsigned count = 7;
    ASSERT_FAULT(gctx_stream_observe_sms(s->sb, NULL, 0, &count), objects);
    GT_ASSERT_EQ_INT(count, 7);
    gctx_partition *p = untouched;
    gctx_group sixteen = gt_group(16);
    ASSERT_FAULT(gctx_partition_from_device(0, &p), objects);
    ASSERT_FAULT(gctx_partition_split(s->whole, &sixteen, 1, NULL, &p, NULL, NULL, NULL),
                 objects);
    GT_ASSERT(p == untouched);
    int devices = 7;
    ASSERT_FAULT(gctx_device_count(&devices), objects);
    GT_ASSERT_EQ_INT(devices, 7);
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    ASSERT_FAULT(gctx_context_get_info(s->ca, &info), objects);
    const unsigned counts[] = {16, 0};
    gctx_layouts *l = untouched;
    ASSERT_FAULT(gctx_layouts_create(0, counts, 1, 2, NULL, &l), objects);
    GT_ASSERT(l == untouched);
}

/* Releases go on after a fault, in any order, and so does a trim of the cache: no greenctx
 * object is left. On the simulator, once its fault is cleared, the destroys the driver
 * refused are made again and no driver object is left either. */
static void scene_release(scene *s)
{
    gctx_event_release(s->ev);
    gctx_stream_release(s->sa);
    gctx_stream_release(s->sb);
    gctx_context_release(s->ca);
    gctx_context_release(s->cb);
    gctx_partition_release(s->a);
    gctx_partition_release(s->b);
    gctx_partition_release(s->whole);
    GT_ASSERT_STATUS(gctx_cache_trim(0), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), s->objects);
    gctx_release_failures failures = GCTX_RELEASE_FAILURES_INIT;
    GT_ASSERT_STATUS(gctx_release_failures_get(&failures), GCTX_SUCCESS);
    printf("# after the fault: %llu destroys failed, %u driver objects kept (%s)\n",
           failures.total, failures.pending, failures.last_message);
    if (!gt_on_sim())
        return;
    GT_ASSERT_GT_INT(failures.pending, 0); /* the simulator refuses every destroy */
    GT_ASSERT_EQ_INT(failures.last_cuda_result, ILLEGAL_ADDRESS);
    gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    GT_ASSERT(fail != NULL);
    fail(NULL, 0, 0);
    GT_ASSERT_STATUS(gctx_release_failures_retry(), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gt_sim_live("all"), s->driver_objects);
    /* the library's refusal outlives the simulator's fault: the process must restart */
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 16, NULL, &c), GCTX_ERROR_DRIVER);
    GT_ASSERT_CONTAINS(gctx_last_error(), "refused: an earlier call");
    GT_ASSERT(c == NULL);
}

/* The measured case: a cached context would have been handed out after the fault. */
GT_TEST(fault_met_by_a_cached_context)
{
    scene s;
    scene_make(&s);
    GT_CHECK();
    fault_outside_greenctx(&s);
    GT_CHECK();
    gctx_context *c = NULL;
    ASSERT_FAULT(gctx_context_create(s.a, NULL, &c), gctx__object_live_count());
    GT_ASSERT(c == NULL);
    everything_refused(&s);
    GT_CHECK();
    scene_release(&s);
}

/* The same, for a cached context with a drained stream: the stream's synchronize is the
 * check, and it must answer the fault as the context's would. */
GT_TEST(fault_met_by_a_cached_context_with_a_stream)
{
    scene s;
    scene_make(&s);
    GT_CHECK();
    gctx_context *c = NULL;
    gctx_stream *st = NULL;
    GT_ASSERT_STATUS(gctx_context_create(s.a, NULL, &c), GCTX_SUCCESS); /* the cached one */
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &st), GCTX_SUCCESS);
    gctx_stream_release(st); /* drained, kept by c */
    gctx_context_release(c); /* cached with its stream */
    fault_outside_greenctx(&s);
    GT_CHECK();
    c = NULL;
    ASSERT_FAULT(gctx_context_create(s.a, NULL, &c), gctx__object_live_count());
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuStreamSynchronize of a stream of a cached");
    GT_ASSERT(c == NULL);
    everything_refused(&s);
    GT_CHECK();
    scene_release(&s);
}

/* A drained stream a context kept would have been handed out after the fault. */
GT_TEST(fault_met_by_a_cached_stream)
{
    scene s;
    scene_make(&s);
    GT_CHECK();
    fault_outside_greenctx(&s);
    GT_CHECK();
    gctx_stream *st = NULL;
    ASSERT_FAULT(gctx_stream_create(s.cb, NULL, &st), gctx__object_live_count());
    GT_ASSERT(st == NULL);
    everything_refused(&s);
    GT_CHECK();
    scene_release(&s);
}

/* The fault met by a greenctx call on the sibling context (on the simulator: a sticky CUresult
 * injected into that call, which the simulator then answers to every later call). */
GT_TEST(fault_met_by_the_siblings_stream)
{
    scene s;
    scene_make(&s);
    GT_CHECK();
    if (gt_on_sim()) {
        gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
        GT_ASSERT(fail != NULL);
        fail("cuStreamSynchronize", 1, ILLEGAL_ADDRESS);
    } else {
        fault_outside_greenctx(&s);
        GT_CHECK();
    }
    ASSERT_FAULT(gctx_stream_synchronize(s.sb), gctx__object_live_count());
    GT_ASSERT_CONTAINS(gctx_last_error(), "cuStreamSynchronize");
    everything_refused(&s);
    GT_CHECK();
    scene_release(&s);
}

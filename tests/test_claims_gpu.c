/* What only a GPU shows of claims: a claim resized from 16 to 64 SMs while its kernels run
 * keeps the caller's work in order, computes the right thing, and the new context really
 * runs on 64 SMs (a full-occupancy kernel takes one wave, not four; and where %smid is not
 * renumbered by MPS, its blocks land on 64 SMs). Skipped (never passed) on the simulated
 * driver, which runs no kernels. Its registry is its ctest entry's runtime directory. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "claims_common.h"
#include "greenctx_claims.h"
#include "harness.h"
#include "raw_calls.h"

/* step: block 0's thread 0 spins spin_ns, then *x = *x * 10 + add, so the order of the steps
 * is in the digits. occupy: every thread spins spin_ns; 256-thread blocks, 8 fill an SM. */
static const char claims_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry step(.param .u64 x, .param .u64 spin_ns, .param .u32 add)\n{\n"
    "  .reg .pred p;\n  .reg .b32 r<6>;\n  .reg .b64 rd<8>;\n"
    "  mov.u32 r1, %tid.x;\n  mov.u32 r2, %ctaid.x;\n  or.b32 r1, r1, r2;\n"
    "  setp.ne.u32 p, r1, 0;\n  @p bra DONE;\n"
    "  ld.param.u64 rd4, [spin_ns];\n  mov.u64 rd5, %globaltimer;\n  add.u64 rd6, rd5, rd4;\n"
    "SPIN:\n  mov.u64 rd7, %globaltimer;\n  setp.lt.u64 p, rd7, rd6;\n  @p bra SPIN;\n"
    "  ld.param.u64 rd1, [x];\n  cvta.to.global.u64 rd1, rd1;\n"
    "  ld.volatile.global.u32 r3, [rd1];\n  ld.param.u32 r4, [add];\n  mov.u32 r5, 10;\n"
    "  mad.lo.u32 r3, r3, r5, r4;\n  st.global.u32 [rd1], r3;\n"
    "DONE:\n  ret;\n}\n"
    ".visible .entry occupy(.param .u64 spin_ns)\n.maxntid 256, 1, 1\n.minnctapersm 8\n{\n"
    "  .reg .pred p;\n  .reg .b64 rd<5>;\n"
    "  ld.param.u64 rd1, [spin_ns];\n  mov.u64 rd2, %globaltimer;\n  add.u64 rd3, rd2, rd1;\n"
    "SPIN:\n  mov.u64 rd4, %globaltimer;\n  setp.lt.u64 p, rd4, rd3;\n  @p bra SPIN;\n"
    "  ret;\n}\n";

#define FIRST_SPIN_NS 300000000ull /* the kernel the resize happens under */
#define OCCUPY_SPIN_NS 50000000ull /* one wave on 64 SMs: 50 ms; on 16 it would be 200 */

typedef struct kernels {
    gcu_module module;
    gcu_function step, occupy;
} kernels;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Loads the kernels in context (a module belongs to one context). */
static void load(const raw_driver *cu, gctx_context *context, kernels *k)
{
    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(gctx_context_cu_context(context)), 0);
    GT_ASSERT_EQ_INT(cu->cuModuleLoadData(&k->module, claims_ptx), 0);
    GT_ASSERT_EQ_INT(cu->cuModuleGetFunction(&k->step, k->module, "step"), 0);
    GT_ASSERT_EQ_INT(cu->cuModuleGetFunction(&k->occupy, k->module, "occupy"), 0);
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
}

static void unload(const raw_driver *cu, gctx_context *context, kernels *k)
{
    CUcontext popped;
    if (cu->cuCtxPushCurrent(gctx_context_cu_context(context)) == 0) {
        cu->cuModuleUnload(k->module);
        cu->cuCtxPopCurrent(&popped);
    }
}

static void step(const raw_driver *cu, const kernels *k, gctx_stream *s, gcu_deviceptr x,
                 unsigned long long spin_ns, unsigned add)
{
    void *params[] = {&x, &spin_ns, &add};
    GT_ASSERT_EQ_INT(cu->cuLaunchKernel(k->step, 1, 1, 1, 32, 1, 1, 0, gctx_stream_handle(s),
                                        params, NULL), 0);
}

/* The value the steps work on, one unsigned set to 0, in the primary context (green contexts
 * share its memory), which keeps a reference of value_make's until value_end. */
static void value_make(const raw_driver *cu, gcu_deviceptr *x)
{
    CUcontext primary, popped;
    GT_ASSERT_EQ_INT(cu->cuDevicePrimaryCtxRetain(&primary, 0), 0);
    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(primary), 0);
    GT_ASSERT_EQ_INT(cu->cuMemAlloc(x, sizeof(unsigned)), 0);
    GT_ASSERT_EQ_INT(cu->cuMemsetD32(*x, 0, 1), 0);
    GT_ASSERT_EQ_INT(cu->cuStreamSynchronize(NULL), 0);
    cu->cuCtxPopCurrent(&popped);
}

/* With the primary context current: x read into *value, or freed when value is NULL. */
static int in_primary(const raw_driver *cu, gcu_deviceptr x, unsigned *value)
{
    CUcontext primary, popped;
    int r = cu->cuDevicePrimaryCtxRetain(&primary, 0);
    if (r == 0 && (r = cu->cuCtxPushCurrent(primary)) == 0) {
        r = value ? cu->cuMemcpyDtoH(value, x, sizeof *value) : cu->cuMemFree(x);
        cu->cuCtxPopCurrent(&popped);
    }
    cu->cuDevicePrimaryCtxRelease(0);
    return r;
}

static void value_end(const raw_driver *cu, gcu_deviceptr x)
{
    in_primary(cu, x, NULL);
    cu->cuDevicePrimaryCtxRelease(0); /* value_make's */
}

static unsigned context_sms(gctx_context *context)
{
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    return gctx_context_get_info(context, &info) == GCTX_SUCCESS ? info.sm_count : 0;
}

GT_TEST(claim_resized_from_16_to_64_while_kernels_run)
{
    gt_require_device();
    if (gt_state)
        return;
    if (gt_on_sim())
        GT_SKIP("needs a GPU: the simulated driver runs no kernels");
    const raw_driver *cu = gt_raw();
    const char *dir = fresh_dir("registry"); /* this ctest entry's, emptied */
    GT_ASSERT(dir != NULL);
    gctx_claim_options options = options_in(dir);
    gctx_claim *claim = NULL;
    /* Making a green context and its stream waited for the running kernel on the H200 (driver
     * 580: a cold resize took 301 ms behind a 300 ms kernel), so a resize that must not wait
     * takes its context from the cache: a claim of the same 64 SMs (granules 0-7, best fit on
     * an empty registry) made once, with its stream, and given back. */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "64", &options, &claim), GCTX_SUCCESS);
    gctx_stream *warm = NULL;
    GT_ASSERT_STATUS(gctx_claim_stream(claim, &warm), GCTX_SUCCESS);
    gctx_stream_release(warm);
    gctx_claim_release(claim);
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &options, &claim), GCTX_SUCCESS);
    gctx_context *claimed = NULL, *small = NULL, *large = NULL;
    gctx_stream *before = NULL, *after = NULL;
    GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &claimed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(claimed), 16);
    gctx_context_release(claimed);
    /* The kernels go in the contexts of the claim's streams, which launch them. */
    GT_ASSERT_STATUS(gctx_claim_stream(claim, &before), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_context(before, &small), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(small), 16);
    kernels k16, k64;
    load(cu, small, &k16);
    GT_CHECK();

    gcu_deviceptr x = 0;
    value_make(cu, &x);
    GT_CHECK();

    /* Step 1 runs 300 ms on the 16 SMs; the claim grows under it. */
    step(cu, &k16, before, x, FIRST_SPIN_NS, 1);
    GT_CHECK();
    double t0 = now_ms();
    GT_ASSERT_STATUS(gctx_claim_resize(claim, "64", NULL, &after), GCTX_SUCCESS);
    double resize_ms = now_ms() - t0;
    printf("# resize 16 -> 64 (its context cached) while a kernel runs: %.3f ms on the host\n",
           resize_ms);
    /* It did not wait for the kernel: the new stream waits for it instead. */
    GT_ASSERT(resize_ms < FIRST_SPIN_NS / 2e6);
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    GT_ASSERT_STATUS(gctx_claim_get_info(claim, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(info.sm_count, 64);
    GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &claimed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(claimed), 64);
    gctx_context_release(claimed);
    GT_ASSERT_STATUS(gctx_stream_context(after, &large), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(context_sms(large), 64);
    load(cu, large, &k64);
    GT_CHECK();

    /* Steps 2 and 3 on the new stream: after step 1, in order (1, 12, 123). */
    step(cu, &k64, after, x, 0, 2);
    step(cu, &k64, after, x, 0, 3);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_stream_synchronize(after), GCTX_SUCCESS);
    unsigned value = 0;
    GT_ASSERT_EQ_INT(in_primary(cu, x, &value), 0);
    GT_ASSERT_EQ_INT(value, 123);

    /* 64 x 8 full blocks: one wave of 50 ms on 64 SMs, four waves (200 ms) on 16. */
    unsigned long long spin = OCCUPY_SPIN_NS;
    void *params[] = {&spin};
    t0 = now_ms();
    GT_ASSERT_EQ_INT(cu->cuLaunchKernel(k64.occupy, 64 * 8, 1, 1, 256, 1, 1, 0,
                                        gctx_stream_handle(after), params, NULL), 0);
    GT_ASSERT_STATUS(gctx_stream_synchronize(after), GCTX_SUCCESS);
    double wave_ms = now_ms() - t0;
    printf("# 512 full-occupancy blocks of 50 ms on the grown claim: %.1f ms (64 SMs: ~50, "
           "16 SMs: ~200)\n", wave_ms);
    GT_ASSERT(wave_ms < 1.5 * OCCUPY_SPIN_NS / 1e6);

    /* Without MPS %smid is physical: the blocks land on exactly 64 SMs. Under MPS the ids are
     * renumbered per client; the timing above is the proof there. */
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    GT_ASSERT_STATUS(gctx_mps_get_info(&mps), GCTX_SUCCESS);
    if (!mps.daemon_running) {
        unsigned ids[1024], count = 0;
        GT_ASSERT_STATUS(gctx_stream_observe_sms(after, ids, 1024, &count), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(count, 64);
    }

    unload(cu, small, &k16);
    unload(cu, large, &k64);
    value_end(cu, x);
    gctx_stream_release(before);
    gctx_stream_release(after);
    gctx_context_release(small);
    gctx_context_release(large);
    gctx_claim_release(claim);
    unsigned live = 1;
    GT_ASSERT_STATUS(gctx_claim_list(0, dir, NULL, 0, &live, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(live, 0);
    remove_tree(dir);
}

/* A release (greenctx run's at the program's exit) gives the SMs back only once the claim's
 * context is idle: a 300 ms kernel on a stream the program made in the claim's context (not
 * the claim's own stream) is still running when the release is called, and the claim file
 * stays until it ends. */
GT_TEST(claim_release_waits_for_the_programs_kernels)
{
    gt_require_device();
    if (gt_state)
        return;
    if (gt_on_sim())
        GT_SKIP("needs a GPU: the simulated driver runs no kernels (claims.release_idle)");
    const raw_driver *cu = gt_raw();
    const char *dir = fresh_dir("registry"); /* this ctest entry's, emptied */
    GT_ASSERT(dir != NULL);
    gctx_claim_options options = options_in(dir);
    gctx_claim *claim = NULL;
    gctx_context *context = NULL;
    gctx_stream *program = NULL;
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &options, &claim), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &context), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(context, NULL, &program), GCTX_SUCCESS);
    kernels k;
    load(cu, context, &k);
    GT_CHECK();
    gcu_deviceptr x = 0;
    value_make(cu, &x);
    GT_CHECK();
    double t0 = now_ms();
    step(cu, &k, program, x, FIRST_SPIN_NS, 7);
    GT_CHECK();
    gctx_claim_release(claim);
    double release_ms = now_ms() - t0;
    printf("# release behind a %llu ms kernel on the program's stream: %.1f ms\n",
           FIRST_SPIN_NS / 1000000, release_ms);
    GT_ASSERT(release_ms >= 0.9 * FIRST_SPIN_NS / 1e6);
    unsigned value = 0, live = 1;
    GT_ASSERT_EQ_INT(in_primary(cu, x, &value), 0);
    GT_ASSERT_EQ_INT(value, 7); /* done by now */
    GT_ASSERT_STATUS(gctx_claim_list(0, dir, NULL, 0, &live, NULL), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(live, 0);
    unload(cu, context, &k);
    value_end(cu, x);
    gctx_stream_release(program);
    gctx_context_release(context);
    remove_tree(dir);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and the 99th percentile of n samples (sorted in place). */
static void percentiles(double *v, int n, double *p50, double *p99)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    *p50 = v[n / 2];
    *p99 = v[(n * 99) / 100];
}

#define TIMING_REPS 200

/* The targets, timed in C on the driver (the GPU's under make test-gpu): a claim and a
 * context on it, the first time (a context made, after the driver is loaded) and from the
 * cache; an in-process resize 16 <-> 64 with cached contexts. Loose bounds fail only a gross
 * regression; the figures go to BENCHMARKS.md. */
GT_TEST(claim_context_and_resize_times)
{
    gt_require_device();
    if (gt_state)
        return;
    if (gt_on_sim())
        GT_SKIP("needs a GPU: the simulated driver's times mean nothing");
    const char *dir = fresh_dir("registry"); /* this ctest entry's, emptied */
    GT_ASSERT(dir != NULL);
    gctx_claim_options options = options_in(dir);
    GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS);
    /* The device's partition made once, as any program of the library has (the primary
     * context it retains is not a claim's cost). */
    gctx_partition *device = NULL;
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    static double t[TIMING_REPS];
    gctx_claim *claim = NULL;
    gctx_context *ctx = NULL;
    double t0 = now_ms();
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "24", &options, &claim), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &ctx), GCTX_SUCCESS);
    double first_ms = now_ms() - t0;
    gctx_context_release(ctx);
    gctx_claim_release(claim);
    for (int i = 0; i < TIMING_REPS; i++) {
        t0 = now_ms();
        GT_ASSERT_STATUS(gctx_claim_acquire(0, "24", &options, &claim), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_claim_context(claim, NULL, &ctx), GCTX_SUCCESS);
        t[i] = (now_ms() - t0) * 1e3;
        gctx_context_release(ctx);
        gctx_claim_release(claim);
    }
    double cached_p50, cached_p99;
    percentiles(t, TIMING_REPS, &cached_p50, &cached_p99);
    /* Resize with both sizes' contexts and streams cached: after one round trip. */
    GT_ASSERT_STATUS(gctx_claim_acquire(0, "16", &options, &claim), GCTX_SUCCESS);
    gctx_stream *s = NULL;
    GT_ASSERT_STATUS(gctx_claim_stream(claim, &s), GCTX_SUCCESS);
    gctx_stream_release(s);
    for (int i = -2; i < TIMING_REPS; i++) {
        t0 = now_ms();
        GT_ASSERT_STATUS(gctx_claim_resize(claim, (i & 1) ? "16" : "64", NULL, &s), GCTX_SUCCESS);
        if (i >= 0)
            t[i] = (now_ms() - t0) * 1e3;
        gctx_stream_release(s);
    }
    double resize_p50, resize_p99;
    percentiles(t, TIMING_REPS, &resize_p50, &resize_p99);
    gctx_claim_release(claim);
    gctx_partition_release(device);
    printf("# claim + context: first %.3f ms; from the cache p50 %.1f us, p99 %.1f us (%d reps)\n",
           first_ms, cached_p50, cached_p99, TIMING_REPS);
    printf("# resize 16 <-> 64, contexts cached: p50 %.1f us, p99 %.1f us host time\n",
           resize_p50, resize_p99);
    printf("# targets: first <= 2 ms, cached <= 50 us, resize <= 20 us\n");
    GT_ASSERT(first_ms < 20.0);
    GT_ASSERT(cached_p50 < 500.0);
    GT_ASSERT(resize_p50 < 500.0);
    remove_tree(dir);
}

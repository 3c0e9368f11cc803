/* What only a GPU can show: kernels on every partition compute the right thing, and a CUDA
 * graph captured on a greenctx stream replays on that partition's SMs. Skipped (never passed)
 * on the simulated driver, which runs no kernels. */
#include <stdlib.h>

#include "raw_calls.h"
#include "sm_ids.h"

/* The test's own %smid kernel, through the raw driver table (no library internals): thread 0
 * of each block marks flags[%smid] and spins spin_ns, keeping its block resident so the other
 * blocks land on other SMs. */
static const char smid_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry smid(.param .u64 flags, .param .u64 spin_ns)\n{\n"
    "  .reg .pred p;\n  .reg .b32 r<4>;\n  .reg .b64 rd<8>;\n"
    "  mov.u32 r1, %tid.x;\n  setp.ne.u32 p, r1, 0;\n  @p bra DONE;\n"
    "  mov.u32 r2, %smid;\n  and.b32 r2, r2, 1023;\n"
    "  ld.param.u64 rd1, [flags];\n  cvta.to.global.u64 rd1, rd1;\n"
    "  mul.wide.u32 rd2, r2, 4;\n  add.s64 rd3, rd1, rd2;\n  mov.u32 r3, 1;\n  st.global.u32 [rd3], r3;\n"
    "  ld.param.u64 rd4, [spin_ns];\n  mov.u64 rd5, %globaltimer;\n  add.u64 rd6, rd5, rd4;\n"
    "SPIN:\n  mov.u64 rd7, %globaltimer;\n  setp.lt.u64 p, rd7, rd6;\n  @p bra SPIN;\n"
    "DONE:\n  ret;\n}\n";

/* The kernel loaded in the current context and its flags (one per masked %smid value). The
 * helpers mark the test failed on a driver error; the caller then leaves (GT_CHECK). */
typedef struct smid_kernel {
    gcu_module module;
    gcu_function function;
    gcu_deviceptr flags;
} smid_kernel;

static void smid_load(const raw_driver *cu, smid_kernel *k)
{
    GT_ASSERT_EQ_INT(cu->cuModuleLoadData(&k->module, smid_ptx), 0);
    GT_ASSERT_EQ_INT(cu->cuModuleGetFunction(&k->function, k->module, "smid"), 0);
    GT_ASSERT_EQ_INT(cu->cuMemAlloc(&k->flags, GT_MAX_SMS * sizeof(unsigned)), 0);
    GT_ASSERT_EQ_INT(cu->cuMemsetD32(k->flags, 0, GT_MAX_SMS), 0);
    GT_ASSERT_EQ_INT(cu->cuStreamSynchronize(NULL), 0);
}

/* blocks blocks of 1024 threads (at most two fit an SM), each spinning 20 us. */
static void smid_launch(const raw_driver *cu, smid_kernel *k, CUstream stream, unsigned blocks)
{
    unsigned long long spin_ns = 20000;
    void *params[] = {&k->flags, &spin_ns};
    GT_ASSERT_EQ_INT(cu->cuLaunchKernel(k->function, blocks, 1, 1, 1024, 1, 1, 0, stream, params,
                                        NULL), 0);
}

/* The SMs flagged so far (after the stream is synchronised). */
static void smid_collect(const raw_driver *cu, const smid_kernel *k, gt_sm_set *set)
{
    unsigned flags[GT_MAX_SMS];
    GT_ASSERT_EQ_INT(cu->cuMemcpyDtoH(flags, k->flags, sizeof flags), 0);
    memset(set, 0, sizeof *set);
    for (unsigned id = 0; id < GT_MAX_SMS; id++)
        if (flags[id])
            set->has[id] = 1, set->count++;
}

static void smid_unload(const raw_driver *cu, smid_kernel *k)
{
    cu->cuMemFree(k->flags);
    cu->cuModuleUnload(k->module);
}

static int require_gpu(void)
{
    gt_require_device();
    if (gt_state)
        return -1;
    if (gt_on_sim()) {
        gt_skip("needs a GPU: the simulated driver runs no kernels");
        return -1;
    }
    return 0;
}

/* out[i] = 3 * i + 7 for i < n: a kernel whose every element can be checked. */
static const char fill_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry fill(.param .u64 out, .param .u32 n)\n{\n"
    "  .reg .pred p;\n  .reg .b32 r<8>;\n  .reg .b64 rd<4>;\n"
    "  mov.u32 r1, %ctaid.x;\n  mov.u32 r2, %ntid.x;\n  mov.u32 r3, %tid.x;\n"
    "  mad.lo.u32 r4, r1, r2, r3;\n  ld.param.u32 r5, [n];\n"
    "  setp.ge.u32 p, r4, r5;\n  @p bra DONE;\n"
    "  mad.lo.u32 r6, r4, 3, 7;\n  ld.param.u64 rd1, [out];\n  cvta.to.global.u64 rd1, rd1;\n"
    "  mul.wide.u32 rd2, r4, 4;\n  add.s64 rd3, rd1, rd2;\n  st.global.u32 [rd3], r6;\n"
    "DONE:\n  ret;\n}\n";

GT_TEST(kernels_compute_correctly_on_every_partition)
{
    if (require_gpu())
        return;
    const raw_driver *cu = gt_raw();
    gctx_partition *device, *parts[3];
    GT_ASSERT_STATUS(gctx_partition_from_device(0, &device), GCTX_SUCCESS);
    gctx_group req[] = {{.num_sms = 24}, {.num_sms = 40}, {.backfill = 1}};
    GT_ASSERT_STATUS(gctx_partition_split(device, req, 3, NULL, parts, NULL, NULL, NULL),
                     GCTX_SUCCESS);
    enum { N = 1 << 22 };
    unsigned *host = malloc(N * sizeof *host);
    GT_ASSERT(host != NULL);
    for (int p = 0; p < 3; p++) {
        gctx_context *c;
        gctx_stream *s;
        GT_ASSERT_STATUS(gctx_context_create(parts[p], NULL, &c), GCTX_SUCCESS);
        GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(gctx_context_cu_context(c)), 0);
        gcu_module module;
        gcu_function fn;
        gcu_deviceptr out;
        GT_ASSERT_EQ_INT(cu->cuModuleLoadData(&module, fill_ptx), 0);
        GT_ASSERT_EQ_INT(cu->cuModuleGetFunction(&fn, module, "fill"), 0);
        GT_ASSERT_EQ_INT(cu->cuMemAlloc(&out, N * sizeof *host), 0);
        unsigned n = N;
        void *params[] = {&out, &n};
        GT_ASSERT_EQ_INT(cu->cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0,
                                             gctx_stream_handle(s), params, NULL), 0);
        GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
        GT_ASSERT_EQ_INT(cu->cuMemcpyDtoH(host, out, N * sizeof *host), 0);
        long wrong = 0;
        for (unsigned i = 0; i < N; i++)
            wrong += host[i] != 3 * i + 7;
        GT_ASSERT_EQ_INT(wrong, 0);
        cu->cuMemFree(out);
        cu->cuModuleUnload(module);
        CUcontext popped;
        cu->cuCtxPopCurrent(&popped);
        gctx_stream_release(s);
        gctx_context_release(c);
    }
    free(host);
    for (int p = 0; p < 3; p++)
        gctx_partition_release(parts[p]);
    gctx_partition_release(device);
}

GT_TEST(graph_captured_on_a_green_stream_replays_on_its_partition)
{
    if (require_gpu())
        return;
    const raw_driver *cu = gt_raw();
    if (!cu->cuStreamBeginCapture || !cu->cuGraphInstantiateWithFlags)
        GT_SKIP("this driver has no stream capture");
    gctx_context *c;
    gctx_stream *s;
    GT_ASSERT_STATUS(gctx_context_create_with_sms(0, 32, NULL, &c), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &s), GCTX_SUCCESS);
    gt_sm_set partition;
    if (gt_context_sms(c, &partition))
        return;
    GT_ASSERT_EQ_INT(partition.count, 32);

    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(gctx_context_cu_context(c)), 0);
    smid_kernel kernel;
    smid_load(cu, &kernel);
    GT_CHECK();
    CUstream raw = gctx_stream_handle(s);
    gcu_graph graph;
    gcu_graph_exec exec;
    GT_ASSERT_EQ_INT(cu->cuStreamBeginCapture(raw, GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL), 0);
    smid_launch(cu, &kernel, raw, 8 * 132);
    GT_CHECK();
    GT_ASSERT_EQ_INT(cu->cuStreamEndCapture(raw, &graph), 0);
    GT_ASSERT_EQ_INT(cu->cuGraphInstantiateWithFlags(&exec, graph, 0), 0);
    /* Nothing ran while capturing: the flags are still zero. */
    gt_sm_set replayed;
    smid_collect(cu, &kernel, &replayed);
    GT_CHECK();
    GT_ASSERT_EQ_INT(replayed.count, 0);
    for (int replay = 0; replay < 3; replay++)
        GT_ASSERT_EQ_INT(cu->cuGraphLaunch(exec, raw), 0);
    GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
    smid_collect(cu, &kernel, &replayed);
    GT_CHECK();
    GT_ASSERT_EQ_INT(replayed.count, 32);
    GT_ASSERT(gt_sm_set_within(&replayed, &partition));
    cu->cuGraphExecDestroy(exec);
    cu->cuGraphDestroy(graph);
    smid_unload(cu, &kernel);
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    gctx_stream_release(s);
    gctx_context_release(c);
}

/* Ordinary streams of the primary context run on every SM, a green context's SMs included:
 * why isolation needs the other workload in a green context too. */
GT_TEST(primary_context_work_runs_everywhere)
{
    if (require_gpu())
        return;
    const raw_driver *cu = gt_raw();
    CUcontext primary;
    GT_ASSERT_EQ_INT(cu->cuDevicePrimaryCtxRetain(&primary, 0), 0);
    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(primary), 0);
    int sms = 0;
    cu->cuDeviceGetAttribute(&sms, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    CUstream plain;
    GT_ASSERT_EQ_INT(cu->cuStreamCreate(&plain, GCU_STREAM_NON_BLOCKING), 0);
    smid_kernel kernel;
    smid_load(cu, &kernel);
    GT_CHECK();
    smid_launch(cu, &kernel, plain, 8u * (unsigned)sms);
    GT_CHECK();
    GT_ASSERT_EQ_INT(cu->cuStreamSynchronize(plain), 0);
    gt_sm_set ran;
    smid_collect(cu, &kernel, &ran);
    GT_CHECK();
    GT_ASSERT_EQ_INT(ran.count, sms);
    smid_unload(cu, &kernel);
    cu->cuStreamDestroy(plain);
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    cu->cuDevicePrimaryCtxRelease(0);
}

/* One context on each of two GPUs (nvidia-h200-x2). */
GT_TEST(one_context_on_each_of_two_devices)
{
    if (require_gpu())
        return;
    int n = 0;
    gctx_device_count(&n);
    if (n < 2)
        GT_SKIP("needs two GPUs, found %d", n);
    gctx_context *c[2];
    gt_sm_set s[2];
    for (int d = 0; d < 2; d++) {
        GT_ASSERT_STATUS(gctx_context_create_with_sms(d, 16, NULL, &c[d]), GCTX_SUCCESS);
        if (gt_context_sms(c[d], &s[d]))
            return;
        GT_ASSERT_EQ_INT(s[d].count, 16);
    }
    gctx_relation r;
    GT_ASSERT_STATUS(gctx_context_relation(c[0], c[1], &r), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(r, GCTX_RELATION_DISJOINT);
    gctx_context_release(c[0]);
    gctx_context_release(c[1]);
}

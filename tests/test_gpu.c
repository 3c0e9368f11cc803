/* What only a GPU can show: kernels on every partition compute the right thing, and a CUDA
 * graph captured on a greenctx stream replays on that partition's SMs. Skipped (never passed)
 * on the simulated driver, which runs no kernels. */
#include <stdlib.h>

#include "observe.h" /* the library's %smid kernel: the one test that still needs internals */
#include "raw_calls.h"
#include "sm_ids.h"

static const gctx__driver *driver(void)
{
    const gctx__driver *drv = NULL;
    gctx__driver_load(&drv);
    return drv;
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
    const gctx__driver *drv = driver();
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
    gctx__smid_kernel kernel;
    GT_ASSERT_STATUS(gctx__smid_load(drv, &kernel), GCTX_SUCCESS);
    CUstream raw = gctx_stream_handle(s);
    gcu_graph graph;
    gcu_graph_exec exec;
    GT_ASSERT_EQ_INT(cu->cuStreamBeginCapture(raw, GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL), 0);
    GT_ASSERT_STATUS(gctx__smid_launch(drv, &kernel, raw, 8 * 132, 20000), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(cu->cuStreamEndCapture(raw, &graph), 0);
    GT_ASSERT_EQ_INT(cu->cuGraphInstantiateWithFlags(&exec, graph, 0), 0);
    /* Nothing ran while capturing: the flags are still zero. */
    unsigned ids[GT_MAX_SMS], count = 0;
    GT_ASSERT_STATUS(gctx__smid_collect(drv, &kernel, ids, GT_MAX_SMS, &count), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(count, 0);
    for (int replay = 0; replay < 3; replay++)
        GT_ASSERT_EQ_INT(cu->cuGraphLaunch(exec, raw), 0);
    GT_ASSERT_STATUS(gctx_stream_synchronize(s), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx__smid_collect(drv, &kernel, ids, GT_MAX_SMS, &count), GCTX_SUCCESS);
    gt_sm_set replayed;
    memset(&replayed, 0, sizeof replayed);
    for (unsigned i = 0; i < count; i++)
        replayed.has[ids[i]] = 1, replayed.count++;
    GT_ASSERT_EQ_INT(replayed.count, 32);
    GT_ASSERT(gt_sm_set_within(&replayed, &partition));
    cu->cuGraphExecDestroy(exec);
    cu->cuGraphDestroy(graph);
    gctx__smid_unload(drv, &kernel);
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
    const gctx__driver *drv = driver();
    const raw_driver *cu = gt_raw();
    CUcontext primary;
    GT_ASSERT_EQ_INT(cu->cuDevicePrimaryCtxRetain(&primary, 0), 0);
    GT_ASSERT_EQ_INT(cu->cuCtxPushCurrent(primary), 0);
    int sms = 0;
    cu->cuDeviceGetAttribute(&sms, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    CUstream plain;
    GT_ASSERT_EQ_INT(cu->cuStreamCreate(&plain, GCU_STREAM_NON_BLOCKING), 0);
    gctx__smid_kernel kernel;
    GT_ASSERT_STATUS(gctx__smid_load(drv, &kernel), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx__smid_launch(drv, &kernel, plain, 8u * (unsigned)sms, 20000), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(cu->cuStreamSynchronize(plain), 0);
    unsigned ids[GT_MAX_SMS], count = 0;
    GT_ASSERT_STATUS(gctx__smid_collect(drv, &kernel, ids, GT_MAX_SMS, &count), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(count, sms);
    gctx__smid_unload(drv, &kernel);
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

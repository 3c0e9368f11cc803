/* gctx_stream_observe_sms: a kernel reads %smid, so users (and `greenctx map`) see which
 * physical SMs a partition's work runs on. The kernel ships as PTX text, so no CUDA toolkit is
 * needed to build greenctx; the driver compiles it for the GPU at load time. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "observe.h"

/* Thread 0 of each block marks its SM and spins, keeping its block resident so the other
 * blocks land on other SMs. */
static const char smid_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry greenctx_smid(.param .u64 flags, .param .u64 spin_ns)\n"
    "{\n"
    "  .reg .pred p;\n"
    "  .reg .b32 r<4>;\n"
    "  .reg .b64 rd<8>;\n"
    "  mov.u32 r1, %tid.x;\n"
    "  setp.ne.u32 p, r1, 0;\n"
    "  @p bra DONE;\n"
    "  mov.u32 r2, %smid;\n"
    "  and.b32 r2, r2, 1023;\n"
    "  ld.param.u64 rd1, [flags];\n"
    "  cvta.to.global.u64 rd1, rd1;\n"
    "  mul.wide.u32 rd2, r2, 4;\n"
    "  add.s64 rd3, rd1, rd2;\n"
    "  mov.u32 r3, 1;\n"
    "  st.global.u32 [rd3], r3;\n"
    "  ld.param.u64 rd4, [spin_ns];\n"
    "  mov.u64 rd5, %globaltimer;\n"
    "  add.u64 rd6, rd5, rd4;\n"
    "SPIN:\n"
    "  mov.u64 rd7, %globaltimer;\n"
    "  setp.lt.u64 p, rd7, rd6;\n"
    "  @p bra SPIN;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

/* The kernel masks %smid to 10 bits before indexing the flags: every masked value needs a
 * slot, or a large SM id would write past the allocation. */
static_assert(GCTX__SMID_SLOTS >= 1024, "the %smid kernel indexes flags by smid & 1023");

gctx_status gctx__smid_load(const gctx__driver *drv, gctx__smid_kernel *kernel)
{
    memset(kernel, 0, sizeof *kernel);
    gcu_result r = drv->cuModuleLoadData(&kernel->module, smid_ptx);
    if (r == GCU_ERROR_NOT_SUPPORTED)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "this driver runs no kernels: seeing which SMs work runs on needs a GPU");
    if (r != GCU_SUCCESS)
        return gctx__fail_cuda(r, "cuModuleLoadData of the %%smid kernel");
    const char *call = "cuModuleGetFunction"; /* the step that failed, for the message */
    r = drv->cuModuleGetFunction(&kernel->function, kernel->module, "greenctx_smid");
    if (r == GCU_SUCCESS && (call = "cuMemAlloc"))
        r = drv->cuMemAlloc(&kernel->flags, GCTX__SMID_SLOTS * sizeof(unsigned));
    /* A synchronous memset: done before anything on any stream reads the flags. */
    if (r == GCU_SUCCESS && (call = "cuMemsetD32"))
        r = drv->cuMemsetD32(kernel->flags, 0, GCTX__SMID_SLOTS);
    if (r == GCU_SUCCESS && (call = "cuStreamSynchronize"))
        r = drv->cuStreamSynchronize(NULL);
    if (r != GCU_SUCCESS) {
        gctx_status s = gctx__fail_cuda(r, "%s, preparing the %%smid kernel", call);
        gctx__smid_unload(drv, kernel);
        return s;
    }
    return GCTX_SUCCESS;
}

void gctx__smid_unload(const gctx__driver *drv, gctx__smid_kernel *kernel)
{
    if (kernel->flags)
        gctx__release_driver_object(drv, GCTX__RELEASE_MEMORY,
                                    (gctx__driver_object){.memory = kernel->flags});
    if (kernel->module)
        gctx__release_driver_object(drv, GCTX__RELEASE_MODULE,
                                    (gctx__driver_object){.module = kernel->module});
    memset(kernel, 0, sizeof *kernel);
}

gctx_status gctx__smid_launch(const gctx__driver *drv, const gctx__smid_kernel *kernel,
                              CUstream stream, unsigned blocks, unsigned long long spin_ns)
{
    gcu_deviceptr flags = kernel->flags;
    void *params[] = {&flags, &spin_ns};
    gcu_result r = drv->cuLaunchKernel(kernel->function, blocks, 1, 1, 1024, 1, 1, 0, stream,
                                       params, NULL);
    return r == GCU_SUCCESS ? GCTX_SUCCESS : gctx__fail_cuda(r, "cuLaunchKernel of the %%smid kernel");
}

gctx_status gctx__smid_collect(const gctx__driver *drv, const gctx__smid_kernel *kernel,
                               unsigned *sm_ids, unsigned capacity, unsigned *count)
{
    unsigned *seen = malloc(GCTX__SMID_SLOTS * sizeof *seen);
    if (!seen)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory reading SM ids");
    gcu_result r = drv->cuMemcpyDtoH(seen, kernel->flags, GCTX__SMID_SLOTS * sizeof *seen);
    if (r != GCU_SUCCESS) {
        free(seen);
        return gctx__fail_cuda(r, "cuMemcpyDtoH of the SM flags");
    }
    unsigned n = 0;
    for (unsigned id = 0; id < GCTX__SMID_SLOTS; id++) {
        if (!seen[id])
            continue;
        if (n < capacity)
            sm_ids[n] = id;
        n++;
    }
    free(seen);
    *count = n;
    return GCTX_SUCCESS;
}

gctx_status gctx_stream_observe_sms(gctx_stream *stream, unsigned *sm_ids, unsigned capacity,
                                    unsigned *count)
{
    gctx_status s = gctx__handle_resolve(&stream, GCTX__TYPE_STREAM, "stream");
    if (s != GCTX_SUCCESS)
        return s;
    if (!count || (capacity && !sm_ids))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "count is NULL, or sm_ids is NULL with a nonzero capacity");
    const gctx__driver *drv;
    if ((s = gctx__driver_load_green(&drv)))
        return s;
    int device_sms = 0;
    gcu_result r = drv->cuDeviceGetAttribute(&device_sms, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                             stream->context->device);
    if (r != GCU_SUCCESS)
        return gctx__fail_cuda(r, "cuDeviceGetAttribute(multiprocessor count)");
    if ((s = gctx__push_context(drv, stream->context->driver.context)))
        return s;
    gctx__smid_kernel kernel;
    s = gctx__smid_load(drv, &kernel);
    if (s == GCTX_SUCCESS) {
        /* Eight blocks per SM of the whole device, 20 us each: every SM the stream may use
         * gets blocks, whatever the partition's size. */
        s = gctx__smid_launch(drv, &kernel, stream->handle, 8u * (unsigned)device_sms, 20000);
        if (s == GCTX_SUCCESS && (r = drv->cuStreamSynchronize(stream->handle)) != GCU_SUCCESS)
            s = gctx__fail_cuda(r, "cuStreamSynchronize after the %%smid kernel");
        if (s == GCTX_SUCCESS)
            s = gctx__smid_collect(drv, &kernel, sm_ids, capacity, count);
        gctx__smid_unload(drv, &kernel);
    }
    return gctx__pop_context(drv, s);
}

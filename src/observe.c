/* gctx_stream_observe_sms: a kernel reads %smid, so users (and `greenctx map`) see which
 * physical SMs a partition's work runs on. The kernel ships as PTX text, so no CUDA toolkit is
 * needed to build greenctx; the driver compiles it for the GPU at load time. */
#include <assert.h>

#include "partition.h"

#define SMID_SLOTS 1024u /* one flag per possible %smid value */

/* The kernel and its flag buffer, loaded with the context current. */
typedef struct smid_kernel {
    gcu_module module;
    gcu_function function;
    gcu_deviceptr flags; /* SMID_SLOTS unsigned ints, zeroed */
} smid_kernel;

/* src/smid.ptx: thread 0 of each block marks its SM and spins, so the other blocks land
 * elsewhere. */
extern const char gctx__smid_ptx[];

/* The kernel masks %smid to 10 bits before indexing the flags: every masked value needs a
 * slot, or a large SM id would write past the allocation. */
static_assert(SMID_SLOTS >= 1024, "the %smid kernel indexes flags by smid & 1023");

/* On failure the caller unloads what was loaded. */
static gctx_status smid_load(const gctx__driver *drv, smid_kernel *kernel)
{
    gcu_result r = drv->cuModuleLoadData(&kernel->module, gctx__smid_ptx);
    if (r == GCU_ERROR_NOT_SUPPORTED)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "this driver runs no kernels: seeing which SMs work runs on needs a GPU");
    GCTX_TRY(gctx__check_cuda(r, "cuModuleLoadData of the %%smid kernel"));
    GCTX_TRY(gctx__check_cuda(drv->cuModuleGetFunction(&kernel->function, kernel->module,
                                                       "greenctx_smid"),
                              "cuModuleGetFunction, preparing the %%smid kernel"));
    GCTX_TRY(gctx__check_cuda(drv->cuMemAlloc(&kernel->flags, SMID_SLOTS * sizeof(unsigned)),
                              "cuMemAlloc, preparing the %%smid kernel"));
    /* A synchronous memset: done before anything on any stream reads the flags. */
    GCTX_TRY(gctx__check_cuda(drv->cuMemsetD32(kernel->flags, 0, SMID_SLOTS),
                              "cuMemsetD32, preparing the %%smid kernel"));
    return gctx__check_cuda(drv->cuStreamSynchronize(NULL),
                            "cuStreamSynchronize, preparing the %%smid kernel");
}

/* Reads the flags back (after the stream is synchronised): sorted SM ids, count of them. */
static gctx_status smid_collect(const gctx__driver *drv, const smid_kernel *kernel,
                                unsigned *sm_ids, unsigned capacity, unsigned *count)
{
    unsigned seen[SMID_SLOTS];
    GCTX_TRY(gctx__check_cuda(drv->cuMemcpyDtoH(seen, kernel->flags, sizeof seen),
                              "cuMemcpyDtoH of the SM flags"));
    unsigned n = 0;
    for (unsigned id = 0; id < SMID_SLOTS; id++) {
        if (!seen[id])
            continue;
        if (n < capacity)
            sm_ids[n] = id;
        n++;
    }
    *count = n;
    return GCTX_SUCCESS;
}

gctx_status gctx_stream_observe_sms(gctx_stream *stream, unsigned *sm_ids, unsigned capacity,
                                    unsigned *count)
{
    GCTX_TRY(gctx__handle_resolve(&stream, GCTX__TYPE_STREAM, "stream"));
    if (!count || (capacity && !sm_ids))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "count is NULL, or sm_ids is NULL with a nonzero capacity");
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    int device_sms = 0;
    GCTX_TRY(gctx__check_cuda(drv->cuDeviceGetAttribute(&device_sms,
                                                        GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                        stream->context->device),
                              "cuDeviceGetAttribute(multiprocessor count)"));
    GCTX_TRY(gctx__push_context(drv, stream->context->driver.context));
    smid_kernel kernel = {NULL, NULL, 0};
    gctx_status s;
    GCTX_CHECK(smid_load(drv, &kernel), done);
    /* Blocks of 1024 threads (at most two fit an SM), eight per SM of the whole device,
     * 20 us each: every SM the stream may use gets blocks, whatever the partition's size. */
    gcu_deviceptr flags = kernel.flags;
    unsigned long long spin_ns = 20000;
    void *params[] = {&flags, &spin_ns};
    GCTX_CHECK(gctx__check_cuda(drv->cuLaunchKernel(kernel.function, 8u * (unsigned)device_sms,
                                                    1, 1, 1024, 1, 1, 0, stream->handle, params,
                                                    NULL),
                                "cuLaunchKernel of the %%smid kernel"),
               done);
    GCTX_CHECK(gctx__check_cuda(drv->cuStreamSynchronize(stream->handle),
                                "cuStreamSynchronize after the %%smid kernel"),
               done);
    s = smid_collect(drv, &kernel, sm_ids, capacity, count);
done:
    if (kernel.flags)
        GCTX__RELEASE(drv, MEMORY, memory, kernel.flags);
    if (kernel.module)
        GCTX__RELEASE(drv, MODULE, module, kernel.module);
    return gctx__pop_context(drv, s);
}

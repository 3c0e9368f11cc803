/* The calling thread's current context: saving and restoring it around calls into libraries
 * that change it (NCCL's communicator init, cudaSetDevice), and the SMs it runs on. */
#include <string.h>

#include "internal.h"

/* A library may leave several contexts pushed; more than this means something is wrong. */
#define MAX_POPS 64

static gctx_status get_current(const gctx__driver *drv, CUcontext *ctx, const char *when)
{
    return gctx__check_cuda(drv->cuCtxGetCurrent(ctx), "cuCtxGetCurrent (%s)", when);
}

static gctx_status read_current(const char *call, const char *output, const void *out,
                                const gctx__driver **drv, CUcontext *current)
{
    if (!out)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "%s: %s (the output) is NULL", call,
                          output);
    GCTX_TRY(gctx__driver_load(drv));
    return get_current(*drv, current, call);
}

gctx_status gctx_current_context_save(CUcontext *saved)
{
    const gctx__driver *drv;
    CUcontext current;
    GCTX_TRY(read_current("gctx_current_context_save", "saved", saved, &drv, &current));
    *saved = current;
    return GCTX_SUCCESS;
}

gctx_status gctx_current_context_restore(CUcontext saved, int *changed)
{
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load(&drv));
    CUcontext current = NULL;
    GCTX_TRY(get_current(drv, &current, "before restoring"));
    int was_changed = current != saved;
    /* cuCtxSetCurrent replaces the top of the stack; with NULL it pops one context. */
    for (int pops = 0; current != saved; pops++) {
        if (saved == NULL && pops == MAX_POPS)
            return gctx__fail(GCTX_ERROR_DRIVER,
                              "gctx_current_context_restore: %d contexts are still on this "
                              "thread's stack after popping %d; nothing was current when "
                              "saved",
                              MAX_POPS, MAX_POPS);
        if (gctx__check_cuda(drv->cuCtxSetCurrent(saved), "cuCtxSetCurrent") != GCTX_SUCCESS) {
            gctx__append_error("gctx_current_context_restore could not make the saved context "
                               "%p current again: was it destroyed after it was saved?",
                               (void *)saved);
            return GCTX_ERROR_DRIVER;
        }
        if (saved != NULL)
            break;
        GCTX_TRY(get_current(drv, &current, "while restoring"));
    }
    if (changed)
        *changed = was_changed;
    return GCTX_SUCCESS;
}

gctx_status gctx_current_sm_count(unsigned *count)
{
    const gctx__driver *drv;
    CUcontext current = NULL;
    GCTX_TRY(read_current("gctx_current_sm_count", "count", count, &drv, &current));
    if (!current)
        return gctx__check_cuda(GCU_ERROR_INVALID_CONTEXT,
                                "gctx_current_sm_count: no context is current on this thread; "
                                "make one current first (a green context's "
                                "gctx_context_cu_context, or the device's primary context: "
                                "cudaSetDevice, torch.cuda.set_device)");
    gcu_result r;
    /* A green context's SM resource is its partition's; a primary context's is the device's. */
    if (drv->cuCtxGetDevResource) {
        gcu_dev_resource resource;
        memset(&resource, 0, sizeof resource);
        GCTX_TRY(gctx__check_cuda(drv->cuCtxGetDevResource(current, &resource,
                                                           GCU_DEV_RESOURCE_TYPE_SM),
                                  "cuCtxGetDevResource of the current context %p",
                                  (void *)current));
        *count = resource.u.sm.smCount;
        return GCTX_SUCCESS;
    }
    /* Before 12.4 there are no green contexts: the device's count is the context's. */
    gcu_device dev;
    int n = 0;
    if ((r = drv->cuCtxGetDevice(&dev)) ||
        (r = drv->cuDeviceGetAttribute(&n, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)))
        return gctx__check_cuda(r, "gctx_current_sm_count: the current context's device");
    *count = (unsigned)n;
    return GCTX_SUCCESS;
}

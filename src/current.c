/* Saving and restoring the calling thread's current context around calls into libraries that
 * change it (NCCL's communicator init, cudaSetDevice). */
#include "internal.h"

/* A library may leave several contexts pushed; more than this means something is wrong. */
#define MAX_POPS 64

static gctx_status get_current(const gctx__driver *drv, CUcontext *ctx, const char *when)
{
    gcu_result r = drv->cuCtxGetCurrent(ctx);
    return r == GCU_SUCCESS ? GCTX_SUCCESS : gctx__fail_cuda(r, "cuCtxGetCurrent (%s)", when);
}

gctx_status gctx_current_context_save(CUcontext *saved)
{
    if (!saved)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "gctx_current_context_save: saved (the output) is NULL");
    const gctx__driver *drv;
    gctx_status s = gctx__driver_load(&drv);
    if (s != GCTX_SUCCESS)
        return s;
    CUcontext current;
    if ((s = get_current(drv, &current, "saving the current context")))
        return s;
    *saved = current;
    return GCTX_SUCCESS;
}

gctx_status gctx_current_context_restore(CUcontext saved, int *changed)
{
    const gctx__driver *drv;
    gctx_status s = gctx__driver_load(&drv);
    CUcontext current = NULL;
    if (s == GCTX_SUCCESS)
        s = get_current(drv, &current, "before restoring");
    if (s != GCTX_SUCCESS)
        return s;
    int was_changed = current != saved;
    /* cuCtxSetCurrent replaces the top of the stack; with NULL it pops one context. */
    for (int pops = 0; current != saved; pops++) {
        if (saved == NULL && pops == MAX_POPS)
            return gctx__fail(GCTX_ERROR_DRIVER,
                              "gctx_current_context_restore: %d contexts are still on this "
                              "thread's stack after popping %d; nothing was current when "
                              "saved",
                              MAX_POPS, MAX_POPS);
        gcu_result r = drv->cuCtxSetCurrent(saved);
        if (r != GCU_SUCCESS) {
            gctx__fail_cuda(r, "cuCtxSetCurrent");
            gctx__append_error("gctx_current_context_restore could not make the saved context "
                               "%p current again: was it destroyed after it was saved?",
                               (void *)saved);
            return GCTX_ERROR_DRIVER;
        }
        if (saved != NULL || (s = get_current(drv, &current, "while restoring")))
            break;
    }
    if (s != GCTX_SUCCESS)
        return s;
    if (changed)
        *changed = was_changed;
    return GCTX_SUCCESS;
}

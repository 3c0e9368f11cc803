/*
 * An entry point the library never calls but programs do, which `greenctx run` wraps
 * (preload/): cuCtxCreate. The simulated driver offers it through cuGetProcAddress so that
 * tests can see the preload refuse it before it reaches the driver; called directly, it
 * answers CUDA_ERROR_NOT_SUPPORTED (the simulator makes no ordinary contexts).
 * (cuDevicePrimaryCtxReset, which the preload refuses too, is with the primary contexts in
 * sim_contexts.c: it returns the memory destroyed green contexts left, sim_memory.c.)
 */
#include <string.h>

#include "sim_internal.h"

static gcu_result sim_cuCtxCreate(CUcontext *ctx, unsigned int flags, gcu_device dev)
{
    (void)flags, (void)dev;
    return ctx ? GCU_ERROR_NOT_SUPPORTED : GCU_ERROR_INVALID_VALUE;
}

void *sim_extra_proc(const char *symbol, int *version)
{
    if (strcmp(symbol, "cuCtxCreate") == 0) {
        *version = 3020;
        return (void *)sim_cuCtxCreate;
    }
    return NULL;
}

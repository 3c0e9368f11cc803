/*
 * Entry points the library never calls but programs do, which `greenctx run` wraps
 * (preload/): cuCtxCreate and cuDevicePrimaryCtxReset. The simulated driver offers them
 * through cuGetProcAddress so that tests can see the preload refuse them before they reach
 * the driver; called directly, they answer CUDA_ERROR_NOT_SUPPORTED (the simulator makes no
 * ordinary contexts and keeps its primary contexts).
 */
#include <string.h>

#include "sim_internal.h"

static gcu_result sim_cuCtxCreate(CUcontext *ctx, unsigned int flags, gcu_device dev)
{
    (void)flags, (void)dev;
    return ctx ? GCU_ERROR_NOT_SUPPORTED : GCU_ERROR_INVALID_VALUE;
}

static gcu_result sim_cuDevicePrimaryCtxReset(gcu_device dev)
{
    (void)dev;
    return GCU_ERROR_NOT_SUPPORTED;
}

void *sim_extra_proc(const char *symbol, int *version)
{
    if (strcmp(symbol, "cuCtxCreate") == 0) {
        *version = 3020;
        return (void *)sim_cuCtxCreate;
    }
    if (strcmp(symbol, "cuDevicePrimaryCtxReset") == 0) {
        *version = 11000;
        return (void *)sim_cuDevicePrimaryCtxReset;
    }
    return NULL;
}

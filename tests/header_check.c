/*
 * include/greenctx.h on its own, and with <cuda.h> before (GREENCTX_CUDA_BEFORE) or after
 * (GREENCTX_CUDA_AFTER) it; compiled as C99, C11 and C++ (header_check.cpp) with
 * -pedantic-errors. The program checks that the header and the library agree on the version.
 */
#if defined(GREENCTX_CUDA_BEFORE)
#include <cuda.h>
#endif
#include "greenctx.h"
#if defined(GREENCTX_CUDA_AFTER)
#include <cuda.h>
#endif

#include <stdio.h>

int main(void)
{
    /* The handle types are usable, and are cuda.h's where it is included. */
    CUcontext context = 0;
    CUstream stream = 0;
    CUevent event = 0;
    CUgreenCtx green = 0;
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    gctx_partition_info pinfo = GCTX_PARTITION_INFO_INIT;
    gctx_split_options options = GCTX_SPLIT_OPTIONS_INIT;
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    gctx_group group = GCTX_GROUP_INIT;
    group.num_sms = 24;
    (void)context, (void)stream, (void)event, (void)green, (void)pinfo, (void)options;
    (void)plan, (void)group;
    if (info.size != sizeof info || gctx_version() != GCTX_VERSION) {
        printf("not ok: header %d, library %d\n", GCTX_VERSION, gctx_version());
        return 1;
    }
    printf("ok header %s\n", gctx_version_string());
    return 0;
}

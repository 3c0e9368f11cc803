/*
 * Each public header on its own: greenctx.h, greenctx_claims.h (GREENCTX_CHECK_CLAIMS) or
 * greenctx_controller.h (GREENCTX_CHECK_CONTROLLER) is the first thing included, twice (its
 * include guard), and its INIT macros initialise its structs; greenctx.h also with <cuda.h>
 * before (GREENCTX_CUDA_BEFORE) or after (GREENCTX_CUDA_AFTER) it. Compiled as C99, C11 and
 * C++ (header_check.cpp) with -pedantic-errors. The program checks that the header and the
 * library agree on the version.
 */
#if defined(GREENCTX_CUDA_BEFORE)
#include <cuda.h>
#endif
#if defined(GREENCTX_CHECK_CLAIMS)
#include "greenctx_claims.h"
#include "greenctx_claims.h"
#elif defined(GREENCTX_CHECK_CONTROLLER)
#include "greenctx_controller.h"
#include "greenctx_controller.h"
#else
#include "greenctx.h"
#include "greenctx.h"
#endif
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
#if defined(GREENCTX_CHECK_CLAIMS)
    gctx_claim_options claim_options = GCTX_CLAIM_OPTIONS_INIT;
    gctx_claim_info claim_info = GCTX_CLAIM_INFO_INIT;
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    gctx_claim_event claim_event = GCTX_CLAIM_EVENT_INIT;
    gctx_guard_signals signals = GCTX_GUARD_SIGNALS_INIT;
    gctx_guard_advice advice = GCTX_GUARD_ADVICE_INIT;
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    (void)claim_options, (void)claim_info, (void)usage, (void)claim_event, (void)signals;
    (void)advice, (void)mps;
#elif defined(GREENCTX_CHECK_CONTROLLER)
    gctx_workload workload = GCTX_WORKLOAD_INIT;
    gctx_controller_options controller_options = GCTX_CONTROLLER_OPTIONS_INIT;
    gctx_controller_decision decision = GCTX_CONTROLLER_DECISION_INIT;
    (void)workload, (void)controller_options, (void)decision;
#endif
    if (info.size != sizeof info || gctx_version() != GCTX_VERSION) {
        printf("not ok: header %d, library %d\n", GCTX_VERSION, gctx_version());
        return 1;
    }
    printf("ok header %s\n", gctx_version_string());
    return 0;
}

/* Injected faults, stale and garbage handles, events, memory, live objects. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

void check_errors_and_faults(void)
{
    configure("h200", "13000", "cuGreenCtxCreate:2,cuStreamCreate:1:999");
    CUgreenCtx g1 = NULL, g2 = NULL, g3 = NULL;
    check(D.cuGreenCtxCreate(&g1, NULL, 0, 1) == 0 && D.cuGreenCtxCreate(&g2, NULL, 0, 1) == 2 &&
              D.cuGreenCtxCreate(&g3, NULL, 0, 1) == 0 && live("green_ctx") == 2,
          "GREENCTX_SIM_FAIL fails exactly the N-th call, without side effects");
    CUcontext c;
    CUstream s;
    D.cuCtxFromGreenCtx(&c, g1);
    D.cuCtxPushCurrent(c);
    check(D.cuStreamCreate(&s, 0) == 999 && D.cuStreamCreate(&s, 0) == 0, "fault with a code");
    fail_after("cuStreamSynchronize", 2, 0);
    check(D.cuStreamSynchronize(s) == 0 && D.cuStreamSynchronize(s) == 2 &&
              D.cuStreamSynchronize(s) == 0 && calls("cuStreamSynchronize") == 3,
          "gctxsim_fail_after counts from now");
    unsigned ids[256];
    check(stream_ids(s, ids, 256) == 132, "a stream of the whole-device green context");
    CUgreenCtx owner = NULL;
    D.cuStreamGetGreenCtx(s, &owner);
    check(owner == g1, "a stream made in a current green context belongs to it");
    D.cuStreamDestroy(s);
    D.cuCtxPopCurrent(NULL);
    D.cuGreenCtxDestroy(g1);
    check(D.cuGreenCtxDestroy(g1) == GCU_ERROR_INVALID_HANDLE, "double destroy");
    check(D.cuCtxPushCurrent(c) == GCU_ERROR_INVALID_CONTEXT, "stale context");
    check(D.cuCtxPushCurrent((CUcontext)g3) == GCU_ERROR_INVALID_CONTEXT,
          "a raw CUgreenCtx is not a CUcontext");
    check(D.cuStreamQuery((CUstream)&ids) == GCU_ERROR_INVALID_HANDLE, "garbage stream");
    gcu_dev_resource junk;
    memset(&junk, 0x5a, sizeof junk);
    junk.type = GCU_DEV_RESOURCE_TYPE_SM;
    unsigned n = 4;
    gcu_dev_resource out[4];
    check(D.cuDevSmResourceSplitByCount(out, &n, &junk, NULL, 0, 8) == GCU_ERROR_INVALID_VALUE,
          "a resource the driver did not write");
    check(D.cuStreamCreate(&s, 0) == GCU_ERROR_INVALID_CONTEXT, "no current context");
    CUevent e1 = NULL, e2 = NULL;
    D.cuDevicePrimaryCtxRetain(&c, 0);
    D.cuCtxSetCurrent(c);
    float ms = -1;
    check(D.cuEventCreate(&e1, 0) == 0 && D.cuEventCreate(&e2, 0) == 0 &&
              D.cuEventElapsedTime(&ms, e1, e2) == GCU_ERROR_INVALID_HANDLE &&
              D.cuEventRecord(e1, NULL) == 0 && D.cuGreenCtxRecordEvent(g3, e2) == 0 &&
              D.cuEventElapsedTime(&ms, e1, e2) == 0 && ms == 0.0f,
          "events");
    gcu_deviceptr p;
    unsigned host[4];
    check(D.cuMemAlloc(&p, 16) == 0 && D.cuMemsetD32(p, 7, 4) == 0 &&
              D.cuMemcpyDtoH(host, p, 16) == 0 && host[3] == 7 &&
              D.cuMemcpyDtoH(host, p + 4, 16) == GCU_ERROR_INVALID_VALUE && D.cuMemFree(p) == 0,
          "memory");
    gcu_module mod;
    check(D.cuModuleLoadData(&mod, "ptx") == GCU_ERROR_NOT_SUPPORTED, "no other kernels");
    D.cuEventDestroy(e1);
    D.cuEventDestroy(e2);
    D.cuCtxSetCurrent(NULL);
    D.cuDevicePrimaryCtxRelease(0);
    D.cuGreenCtxDestroy(g3);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

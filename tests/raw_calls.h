/* The raw driver calls tests make themselves (a context made current before each test,
 * contexts and streams made by "another library", kernels and graphs), resolved from the
 * driver the library loaded (bench/raw_driver.h), never from the library's private table. */
#ifndef GREENCTX_TEST_RAW_CALLS_H
#define GREENCTX_TEST_RAW_CALLS_H

#include "raw_driver.h"

#define GT_RAW_SYMBOLS(X)                                                                       \
    X(cuDeviceGetAttribute, 1)                                                                  \
    X(cuDevicePrimaryCtxRetain, 1)                                                              \
    X(cuDevicePrimaryCtxRelease, 1)                                                             \
    X(cuCtxGetCurrent, 1)                                                                       \
    X(cuCtxSetCurrent, 1)                                                                       \
    X(cuCtxPushCurrent, 1)                                                                      \
    X(cuCtxPopCurrent, 1)                                                                       \
    X(cuStreamCreate, 1)                                                                        \
    X(cuStreamDestroy, 1)                                                                       \
    X(cuStreamSynchronize, 1)                                                                   \
    X(cuModuleLoadData, 1)                                                                      \
    X(cuModuleUnload, 1)                                                                        \
    X(cuModuleGetFunction, 1)                                                                   \
    X(cuLaunchKernel, 1)                                                                        \
    X(cuMemAlloc, 1)                                                                            \
    X(cuMemFree, 1)                                                                             \
    X(cuMemcpyDtoH, 1)                                                                          \
    X(cuStreamBeginCapture, 1)                                                                  \
    X(cuStreamEndCapture, 1)                                                                    \
    X(cuGraphInstantiateWithFlags, 1)                                                           \
    X(cuGraphLaunch, 1)                                                                         \
    X(cuGraphExecDestroy, 1)                                                                    \
    X(cuGraphDestroy, 1)                                                                        \
    X(cuDeviceGetDevResource, 0) /* 12.4 */                                                     \
    X(cuDevSmResourceSplitByCount, 0)                                                           \
    X(cuDevResourceGenerateDesc, 0)                                                             \
    X(cuGreenCtxCreate, 0)                                                                      \
    X(cuGreenCtxDestroy, 0)                                                                     \
    X(cuCtxFromGreenCtx, 0)                                                                     \
    X(cuGreenCtxGetDevResource, 0)                                                              \
    X(cuGreenCtxStreamCreate, 0) /* 12.5 */

typedef struct gt_raw_driver {
#define GT_RAW_MEMBER_(name, required) gcu_pfn_##name name;
    GT_RAW_SYMBOLS(GT_RAW_MEMBER_)
#undef GT_RAW_MEMBER_
} gt_raw_driver;

/* The table, resolved on first use; NULL (with the reason printed) when no driver loads. */
const gt_raw_driver *gt_raw(void);

#endif

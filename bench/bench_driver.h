/*
 * The driver entry points the bench calls itself: its kernels (the public API has no kernel
 * launch), device memory, events for timing, and the raw green-context calls its overhead
 * baselines compare greenctx with. Resolved from the driver the library loaded
 * (raw_driver.h); every partition, context and stream the bench measures is still made
 * through the public API.
 */
#ifndef GREENCTX_BENCH_DRIVER_H
#define GREENCTX_BENCH_DRIVER_H

#include "raw_driver.h"

#define BENCH_DRIVER_SYMBOLS(X)                                                                 \
    X(cuGetErrorName, 1)                                                                        \
    X(cuDeviceGet, 1)                                                                           \
    X(cuDevicePrimaryCtxRetain, 1)                                                              \
    X(cuDevicePrimaryCtxRelease, 1)                                                             \
    X(cuCtxPushCurrent, 1)                                                                      \
    X(cuCtxPopCurrent, 1)                                                                       \
    X(cuCtxGetStreamPriorityRange, 1)                                                           \
    X(cuStreamCreateWithPriority, 1)                                                            \
    X(cuStreamDestroy, 1)                                                                       \
    X(cuStreamSynchronize, 1)                                                                   \
    X(cuEventCreate, 1)                                                                         \
    X(cuEventDestroy, 1)                                                                        \
    X(cuEventRecord, 1)                                                                         \
    X(cuEventSynchronize, 1)                                                                    \
    X(cuEventElapsedTime, 1)                                                                    \
    X(cuModuleLoadData, 1)                                                                      \
    X(cuModuleUnload, 1)                                                                        \
    X(cuModuleGetFunction, 1)                                                                   \
    X(cuLaunchKernel, 1)                                                                        \
    X(cuMemAlloc, 1)                                                                            \
    X(cuMemFree, 1)                                                                             \
    X(cuMemcpyDtoH, 1)                                                                          \
    X(cuMemsetD32, 1)                                                                           \
    X(cuDeviceGetDevResource, 1)                                                                \
    X(cuDevSmResourceSplitByCount, 1)                                                           \
    X(cuDevResourceGenerateDesc, 1)                                                             \
    X(cuGreenCtxCreate, 1)                                                                      \
    X(cuGreenCtxDestroy, 1)                                                                     \
    X(cuGreenCtxStreamCreate, 0) /* 12.5 */                                                     \
    X(cuDevSmResourceSplit, 0)   /* 13.1 */

typedef struct bench_driver {
#define BENCH_DRIVER_MEMBER_(name, required) gcu_pfn_##name name;
    BENCH_DRIVER_SYMBOLS(BENCH_DRIVER_MEMBER_)
#undef BENCH_DRIVER_MEMBER_
} bench_driver;

/* Resolves the table once (green contexts needed: drivers 12.4+). Prints why and returns
 * NULL on failure. */
const bench_driver *bench_driver_load(void);

/* "CUDA_ERROR_INVALID_VALUE" for a CUresult, from the driver; "CUDA_ERROR_UNRECOGNISED". */
const char *bench_result_name(gcu_result r);

#endif

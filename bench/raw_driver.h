/*
 * Raw driver calls for code outside the library: the bench (its kernels, device memory,
 * timing events and the raw green-context calls its overhead baselines compare greenctx
 * with) and the tests (a context current before each test, contexts and streams made by
 * "another library", graphs). The library's own driver table stays private and holds only
 * what src/ calls; this one is resolved from the very driver file the library loaded
 * (gctx_driver_path(), reopened), through its cuGetProcAddress, at the ABI versions declared
 * in src/cuda_abi.h.
 */
#ifndef GREENCTX_RAW_DRIVER_H
#define GREENCTX_RAW_DRIVER_H

#include "cuda_abi.h" /* a standalone ABI declaration: types, prototypes, versions */

/* name, required (0: NULL when the driver's version is below the entry point's). */
#define RAW_DRIVER_SYMBOLS(X)                                                                   \
    X(cuGetErrorName, 1)                                                                        \
    X(cuDeviceGet, 1)                                                                           \
    X(cuDeviceGetAttribute, 1)                                                                  \
    X(cuDevicePrimaryCtxRetain, 1)                                                              \
    X(cuDevicePrimaryCtxRelease, 1)                                                             \
    X(cuCtxGetCurrent, 1)                                                                       \
    X(cuCtxSetCurrent, 1)                                                                       \
    X(cuCtxPushCurrent, 1)                                                                      \
    X(cuCtxPopCurrent, 1)                                                                       \
    X(cuCtxGetStreamPriorityRange, 1)                                                           \
    X(cuStreamCreate, 1)                                                                        \
    X(cuStreamCreateWithPriority, 1)                                                            \
    X(cuStreamDestroy, 1)                                                                       \
    X(cuStreamSynchronize, 1)                                                                   \
    X(cuStreamQuery, 1)                                                                         \
    X(cuStreamWaitEvent, 1)                                                                     \
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
    X(cuMemGetInfo, 1)                                                                          \
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
    X(cuGreenCtxStreamCreate, 0) /* 12.5 */                                                     \
    X(cuDevSmResourceSplit, 0)   /* 13.1 */

typedef struct raw_driver {
#define RAW_DRIVER_MEMBER_(name, required) gcu_pfn_##name name;
    RAW_DRIVER_SYMBOLS(RAW_DRIVER_MEMBER_)
#undef RAW_DRIVER_MEMBER_
} raw_driver;

/* Loads the library's driver (gctx_init) and resolves the table the first time; later calls
 * return it. NULL with the reason in why (the library's message when no driver loads). */
const raw_driver *raw_driver_load(char *why, size_t why_size);

/* "CUDA_ERROR_INVALID_VALUE" for a CUresult, from the driver; else "CUDA_ERROR_UNRECOGNISED". */
const char *raw_result_name(gcu_result r);

#endif

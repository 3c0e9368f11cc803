/* The CUDA driver ABI greenctx uses, declared here so the library builds with a plain C
 * compiler; gcu_ names let tests/abi_check.c compare it with <cuda.h>. The layouts are the
 * superset for drivers 12.4 to 13.4 (shared/docs/cuda-green-ctx-abi.md §3.5); later fields are
 * read only when the driver version says they exist. */
#ifndef GREENCTX_CUDA_ABI_H
#define GREENCTX_CUDA_ABI_H

#include <stddef.h>

#include "greenctx.h" /* CUcontext, CUstream, CUevent, CUgreenCtx: declared as cuda.h does */

typedef int gcu_result;
typedef int gcu_device;
typedef unsigned long long gcu_deviceptr;
typedef struct CUdevResourceDesc_st *gcu_resource_desc;
typedef struct CUmod_st *gcu_module;
typedef struct CUfunc_st *gcu_function;
typedef struct CUgraph_st *gcu_graph;
typedef struct CUgraphExec_st *gcu_graph_exec;
/* CUuuid: the device's 16 bytes, as nvidia-smi prints them ("GPU-" and 8-4-4-4-12 hex). */
typedef struct gcu_uuid {
    char bytes[16];
} gcu_uuid;

/* CUresult values greenctx names or reacts to: X(name, value, sticky). Sticky are the faults
 * after which, cuda.h says, "any further CUDA work will return the same error" and the
 * process must be restarted (710, a device-side assert: the context can't be used again);
 * they are sticky for every context of the process, green or not
 * (shared/measurements/h200-faults.md). The MPS ones meet a client's cuInit while the server
 * restarts after a fault. */
#define GCU_RESULTS(X)                                                                          \
    X(SUCCESS, 0, 0)                                                                            \
    X(ERROR_INVALID_VALUE, 1, 0)                                                                \
    X(ERROR_OUT_OF_MEMORY, 2, 0)                                                                \
    X(ERROR_NOT_INITIALIZED, 3, 0)                                                              \
    X(ERROR_DEINITIALIZED, 4, 0)                                                                \
    X(ERROR_NO_DEVICE, 100, 0)                                                                  \
    X(ERROR_INVALID_DEVICE, 101, 0)                                                             \
    X(ERROR_INVALID_IMAGE, 200, 0)                                                              \
    X(ERROR_INVALID_CONTEXT, 201, 0)                                                            \
    X(ERROR_INVALID_PTX, 218, 0)                                                                \
    X(ERROR_INVALID_HANDLE, 400, 0)                                                             \
    X(ERROR_NOT_FOUND, 500, 0)                                                                  \
    X(ERROR_NOT_READY, 600, 0)                                                                  \
    X(ERROR_ILLEGAL_ADDRESS, 700, 1)                                                            \
    X(ERROR_LAUNCH_TIMEOUT, 702, 1)                                                             \
    X(ERROR_CONTEXT_IS_DESTROYED, 709, 0)                                                       \
    X(ERROR_ASSERT, 710, 1)                                                                     \
    X(ERROR_HARDWARE_STACK_ERROR, 714, 1)                                                       \
    X(ERROR_ILLEGAL_INSTRUCTION, 715, 1)                                                        \
    X(ERROR_MISALIGNED_ADDRESS, 716, 1)                                                         \
    X(ERROR_INVALID_ADDRESS_SPACE, 717, 1)                                                      \
    X(ERROR_INVALID_PC, 718, 1)                                                                 \
    X(ERROR_LAUNCH_FAILED, 719, 1)                                                              \
    X(ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720, 0)                                               \
    X(ERROR_TENSOR_MEMORY_LEAK, 721, 1)                                                         \
    X(ERROR_NOT_PERMITTED, 800, 0)                                                              \
    X(ERROR_NOT_SUPPORTED, 801, 0)                                                              \
    X(ERROR_MPS_CONNECTION_FAILED, 805, 0)                                                      \
    X(ERROR_MPS_RPC_FAILURE, 806, 0)                                                            \
    X(ERROR_MPS_SERVER_NOT_READY, 807, 0)                                                       \
    X(ERROR_MPS_MAX_CLIENTS_REACHED, 808, 0)                                                    \
    X(ERROR_MPS_MAX_CONNECTIONS_REACHED, 809, 0)                                                \
    X(ERROR_MPS_CLIENT_TERMINATED, 810, 0)                                                      \
    X(ERROR_STREAM_CAPTURE_UNSUPPORTED, 900, 0)                                                 \
    X(ERROR_INVALID_RESOURCE_TYPE, 914, 0)                                                      \
    X(ERROR_INVALID_RESOURCE_CONFIGURATION, 915, 0)                                             \
    X(ERROR_STREAM_DETACHED, 917, 0) /* 13.1 */                                                 \
    X(ERROR_UNKNOWN, 999, 0)

enum {
#define GCU_RESULT_VALUE_(name, value, sticky) GCU_##name = value,
    GCU_RESULTS(GCU_RESULT_VALUE_)
#undef GCU_RESULT_VALUE_
};

static inline int gcu_result_is_sticky(gcu_result result)
{
    switch (result) {
#define GCU_RESULT_STICKY_(name, value, sticky)                                                 \
    case GCU_##name:                                                                           \
        return sticky;
        GCU_RESULTS(GCU_RESULT_STICKY_)
#undef GCU_RESULT_STICKY_
    default:
        return 0;
    }
}

enum {
    GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT = 149 /* 13.4 */
};

enum { GCU_STREAM_DEFAULT = 0x0, GCU_STREAM_NON_BLOCKING = 0x1 };
enum { GCU_EVENT_DEFAULT = 0x0, GCU_EVENT_DISABLE_TIMING = 0x2 };
enum { GCU_STREAM_CAPTURE_MODE_GLOBAL = 0, GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };

enum { GCU_GET_PROC_ADDRESS_DEFAULT = 0 };
enum {
    GCU_GET_PROC_ADDRESS_SUCCESS = 0,
    GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
};

/* cuGreenCtxCreate flags: DEFAULT_STREAM is required up to 13.2 and accepted after. */
enum { GCU_GREEN_CTX_NONE = 0x0, GCU_GREEN_CTX_DEFAULT_STREAM = 0x1 };

/* cuDevSmResourceSplitByCount useFlags (12.5+). */
enum {
    GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING = 0x1,
    GCU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE = 0x2
};

/* CU_DEV_SM_RESOURCE_GROUP_PARAMS.flags and CUdevSmResource.flags (13.1+). */
enum {
    GCU_DEV_SM_RESOURCE_GROUP_DEFAULT = 0,
    GCU_DEV_SM_RESOURCE_GROUP_BACKFILL = 1,
    GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID = 2 /* 13.4 */
};

typedef enum {
    GCU_DEV_RESOURCE_TYPE_INVALID = 0,
    GCU_DEV_RESOURCE_TYPE_SM = 1,
    GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG = 1000, /* 13.1 */
    GCU_DEV_RESOURCE_TYPE_WORKQUEUE = 10000        /* 13.1 */
} gcu_dev_resource_type;

typedef enum {
    GCU_WORKQUEUE_SCOPE_DEVICE_CTX = 0,
    GCU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED = 1
} gcu_workqueue_scope;

typedef struct gcu_dev_sm_resource {
    unsigned int smCount;                /* 12.4 */
    unsigned int minSmPartitionSize;     /* 13.0 */
    unsigned int smCoscheduledAlignment; /* 13.0 */
    unsigned int flags;                  /* 13.1 */
    unsigned int localityDomainId;       /* 13.4, valid when flags & LOCALITY_DOMAIN_ID */
} gcu_dev_sm_resource;

typedef struct gcu_dev_workqueue_config_resource {
    gcu_device device;
    unsigned int wqConcurrencyLimit;
    gcu_workqueue_scope sharingScope;
} gcu_dev_workqueue_config_resource;

typedef struct gcu_dev_workqueue_resource {
    unsigned char reserved[40];
} gcu_dev_workqueue_resource;

/* 144 bytes in every driver; the 92 padding bytes carry driver state, so the whole struct
 * is copied, never rebuilt. nextResource exists from 13.1; before that those 8 bytes are
 * the tail of the union and are never read as a pointer. */
typedef struct gcu_dev_resource {
    gcu_dev_resource_type type;
    unsigned char _internal_padding[92];
    union {
        gcu_dev_sm_resource sm;
        gcu_dev_workqueue_config_resource wqConfig;
        gcu_dev_workqueue_resource wq;
        unsigned char _oversize[40];
    } u;
    struct gcu_dev_resource *nextResource;
} gcu_dev_resource;

typedef struct gcu_dev_sm_resource_group_params {
    unsigned int smCount; /* in/out: 0 asks for discovery */
    unsigned int coscheduledSmCount;
    unsigned int preferredCoscheduledSmCount;
    unsigned int flags;
    unsigned int localityDomainId; /* 13.4; reserved (must be 0) before */
    unsigned int reserved[11];
} gcu_dev_sm_resource_group_params;

_Static_assert(sizeof(gcu_dev_resource) == 144, "CUdevResource is 144 bytes in every driver");
_Static_assert(offsetof(gcu_dev_resource, u) == 96, "the union starts at byte 96");
_Static_assert(offsetof(gcu_dev_resource, nextResource) == 136, "nextResource at byte 136");
_Static_assert(sizeof(gcu_dev_sm_resource_group_params) == 64, "group params are 64 bytes");

/* Entry points, with the ABI version of each prototype below: the version greenctx passes to
 * cuGetProcAddress. A version above the installed driver's is never asked for. */
typedef gcu_result (*gcu_pfn_cuGetProcAddress)(const char *symbol, void **pfn, int cudaVersion,
                                               unsigned long long flags, int *symbolStatus);
#define GCU_VERSION_cuGetProcAddress 12000

/* The library's own table: every entry point src/ calls (src/driver.c). */
#define GCU_LIBRARY_SYMBOLS(X)                                                                  \
    /* name, version, required, return-and-params */                                            \
    X(cuInit, 2000, 1, (unsigned int flags))                                                    \
    X(cuGetErrorName, 6000, 1, (gcu_result error, const char **name))                           \
    X(cuDeviceGetCount, 2000, 1, (int *count))                                                  \
    X(cuDeviceGetName, 2000, 1, (char *name, int len, gcu_device dev))                          \
    X(cuDeviceGetAttribute, 2000, 1, (int *value, int attrib, gcu_device dev))                  \
    X(cuDeviceGetUuid, 11040, 0, (gcu_uuid * uuid, gcu_device dev)) /* the _v2 ABI */           \
    X(cuDeviceGetPCIBusId, 4010, 0, (char *pciBusId, int len, gcu_device dev))                  \
    X(cuDevicePrimaryCtxRetain, 7000, 1, (CUcontext * ctx, gcu_device dev))                     \
    X(cuDevicePrimaryCtxRelease, 11000, 1, (gcu_device dev))                                    \
    X(cuCtxPushCurrent, 4000, 1, (CUcontext ctx))                                               \
    X(cuCtxPopCurrent, 4000, 1, (CUcontext * ctx))                                              \
    X(cuCtxGetCurrent, 4000, 1, (CUcontext * ctx))                                              \
    X(cuCtxSetCurrent, 4000, 1, (CUcontext ctx))                                                \
    X(cuCtxGetDevice, 2000, 1, (gcu_device * dev))                                              \
    X(cuCtxSynchronize, 2000, 1, (void))                                                        \
    X(cuStreamCreateWithPriority, 5050, 1, (CUstream * stream, unsigned int flags, int prio))   \
    X(cuStreamDestroy, 4000, 1, (CUstream stream))                                              \
    X(cuStreamSynchronize, 2000, 1, (CUstream stream))                                          \
    X(cuStreamWaitEvent, 3020, 1, (CUstream stream, CUevent event, unsigned int flags))         \
    X(cuStreamGetPriority, 5050, 1, (CUstream stream, int *priority))                           \
    X(cuEventCreate, 2000, 1, (CUevent * event, unsigned int flags))                            \
    X(cuEventDestroy, 4000, 1, (CUevent event))                                                 \
    X(cuEventRecord, 2000, 1, (CUevent event, CUstream stream))                                 \
    X(cuEventSynchronize, 2000, 1, (CUevent event))                                             \
    X(cuModuleLoadData, 2000, 1, (gcu_module * module, const void *image))                      \
    X(cuModuleUnload, 2000, 1, (gcu_module module))                                             \
    X(cuModuleGetFunction, 2000, 1, (gcu_function * fn, gcu_module module, const char *name))   \
    X(cuLaunchKernel, 4000, 1,                                                                  \
      (gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,        \
       unsigned bz, unsigned shmem, CUstream stream, void **params, void **extra))              \
    X(cuMemAlloc, 3020, 1, (gcu_deviceptr * ptr, size_t bytes))                                 \
    X(cuMemFree, 3020, 1, (gcu_deviceptr ptr))                                                  \
    X(cuMemcpyDtoH, 3020, 1, (void *dst, gcu_deviceptr src, size_t bytes))                      \
    X(cuMemsetD32, 3020, 1, (gcu_deviceptr dst, unsigned int value, size_t count))              \
    X(cuDeviceGetDevResource, 12040, 0,                                                         \
      (gcu_device dev, gcu_dev_resource * resource, gcu_dev_resource_type type))                \
    X(cuGreenCtxGetDevResource, 12040, 0,                                                       \
      (CUgreenCtx ctx, gcu_dev_resource * resource, gcu_dev_resource_type type))                \
    X(cuCtxGetDevResource, 12040, 0,                                                            \
      (CUcontext ctx, gcu_dev_resource * resource, gcu_dev_resource_type type))                 \
    X(cuDevSmResourceSplitByCount, 12040, 0,                                                    \
      (gcu_dev_resource * result, unsigned int *nbGroups, const gcu_dev_resource *input,        \
       gcu_dev_resource *remaining, unsigned int useFlags, unsigned int minCount))              \
    X(cuDevResourceGenerateDesc, 12040, 0,                                                      \
      (gcu_resource_desc * desc, gcu_dev_resource * resources, unsigned int nbResources))       \
    X(cuGreenCtxCreate, 12040, 0,                                                               \
      (CUgreenCtx * ctx, gcu_resource_desc desc, gcu_device dev, unsigned int flags))           \
    X(cuGreenCtxDestroy, 12040, 0, (CUgreenCtx ctx))                                            \
    X(cuCtxFromGreenCtx, 12040, 0, (CUcontext * ctx, CUgreenCtx green))                         \
    X(cuGreenCtxRecordEvent, 12040, 0, (CUgreenCtx ctx, CUevent event))                         \
    X(cuGreenCtxWaitEvent, 12040, 0, (CUgreenCtx ctx, CUevent event))                           \
    X(cuStreamGetGreenCtx, 12040, 0, (CUstream stream, CUgreenCtx * ctx))                       \
    X(cuGreenCtxStreamCreate, 12050, 0,                                                         \
      (CUstream * stream, CUgreenCtx ctx, unsigned int flags, int priority))                    \
    X(cuGreenCtxGetId, 12090, 0, (CUgreenCtx ctx, unsigned long long *id))                      \
    X(cuDevSmResourceSplit, 13010, 0,                                                           \
      (gcu_dev_resource * result, unsigned int nbGroups, const gcu_dev_resource *input,         \
       gcu_dev_resource *remainder, unsigned int flags,                                         \
       gcu_dev_sm_resource_group_params *groupParams))

/* Entry points the library never resolves, declared here so that one checked declaration
 * (tests/abi_check.c) serves the simulated driver, which implements them, the bench's raw
 * baselines and the tests' raw calls (bench/raw_driver.c). */
#define GCU_OUTSIDE_SYMBOLS(X)                                                                  \
    /* name, version, required (by bench/raw_driver.c), return-and-params */                    \
    X(cuDriverGetVersion, 2020, 1, (int *version)) /* the loader takes it by dlsym */           \
    X(cuDeviceGet, 2000, 1, (gcu_device * device, int ordinal))                                 \
    X(cuCtxGetStreamPriorityRange, 5050, 1, (int *least, int *greatest))                        \
    X(cuStreamCreate, 2000, 1, (CUstream * stream, unsigned int flags))                         \
    X(cuStreamQuery, 2000, 1, (CUstream stream))                                                \
    X(cuEventQuery, 2000, 1, (CUevent event))                                                   \
    X(cuStreamGetFlags, 5050, 1, (CUstream stream, unsigned int *flags))                        \
    X(cuEventElapsedTime, 2000, 1, (float *ms, CUevent start, CUevent end))                     \
    X(cuMemGetInfo, 3020, 1, (size_t *free_bytes, size_t *total_bytes))                         \
    X(cuDevicePrimaryCtxReset, 11000, 1, (gcu_device dev))                                      \
    X(cuStreamGetDevResource, 13010, 0,                                                         \
      (CUstream stream, gcu_dev_resource * resource, gcu_dev_resource_type type))               \
    X(cuStreamBeginCapture, 10010, 0, (CUstream stream, int mode))                              \
    X(cuStreamEndCapture, 10000, 0, (CUstream stream, gcu_graph * graph))                       \
    X(cuGraphInstantiateWithFlags, 11040, 0,                                                    \
      (gcu_graph_exec * exec, gcu_graph graph, unsigned long long flags))                       \
    X(cuGraphLaunch, 10000, 0, (gcu_graph_exec exec, CUstream stream))                          \
    X(cuGraphExecDestroy, 10000, 0, (gcu_graph_exec exec))                                      \
    X(cuGraphDestroy, 10000, 0, (gcu_graph graph))                                             \
    X(cuLaunchCooperativeKernel, 9000, 0,                                                       \
      (gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,        \
       unsigned bz, unsigned shmem, CUstream stream, void **params))                            \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, 0,                                     \
      (int *blocks, gcu_function fn, int block_size, size_t shmem))                             \
    X(cuMemcpyAsync, 4000, 0,                                                                   \
      (gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream))                    \
    X(cuMemcpyDtoDAsync, 3020, 0, /* the _v2 ABI */                                             \
      (gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream))

/* Every entry point declared here: what the simulated driver exports. */
#define GCU_DRIVER_SYMBOLS(X) GCU_LIBRARY_SYMBOLS(X) GCU_OUTSIDE_SYMBOLS(X)

#define GCU_DECLARE_PFN(name, version, required, params)                                        \
    typedef gcu_result(*gcu_pfn_##name) params;                                                 \
    enum { GCU_VERSION_##name = version };
GCU_DRIVER_SYMBOLS(GCU_DECLARE_PFN)
#undef GCU_DECLARE_PFN

#endif

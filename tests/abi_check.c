/*
 * src/cuda_abi.h against the installed CUDA toolkit's <cuda.h> and <cudaTypedefs.h>:
 * every size, offset and enum value our declarations share with the header, and every entry
 * point's prototype at the ABI version the loader asks for. All checks are static assertions,
 * so a mismatch fails the build of this test; the program itself only reports which checks
 * this header version allowed (13.1+ types and entry points need a 13.1+ header) and exits 0.
 * Built only when cuda.h is found; otherwise ctest reports the test skipped.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdio.h>

#include "cuda_abi.h"

#define SAME_TYPE(a, b) _Generic((a)0, b : 1, default : 0)
#define CHECK(cond) _Static_assert(cond, #cond)
#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)
#define SAME_MEMBER(ours, theirs, our_member, their_member)                                    \
    CHECK(offsetof(ours, our_member) == offsetof(theirs, their_member));                       \
    CHECK(MEMBER_SIZE(ours, our_member) == MEMBER_SIZE(theirs, their_member))

/* ---- scalar types and handles ---- */
CHECK(sizeof(gcu_result) == sizeof(CUresult));
CHECK(SAME_TYPE(gcu_device, CUdevice));
CHECK(SAME_TYPE(gcu_deviceptr, CUdeviceptr));
CHECK(SAME_TYPE(gcu_resource_desc, CUdevResourceDesc));
CHECK(SAME_TYPE(gcu_module, CUmodule));
CHECK(SAME_TYPE(gcu_function, CUfunction));
CHECK(SAME_TYPE(gcu_graph, CUgraph));
CHECK(SAME_TYPE(gcu_graph_exec, CUgraphExec));
CHECK(sizeof(gcu_dev_resource_type) == sizeof(CUdevResourceType));

/* ---- enum values ---- */
#define SAME_VALUE(ours, theirs) CHECK((long long)(ours) == (long long)(theirs));
#define SAME_RESULT(name) SAME_VALUE(GCU_##name, CUDA_##name)
SAME_RESULT(SUCCESS)
SAME_RESULT(ERROR_INVALID_VALUE)
SAME_RESULT(ERROR_OUT_OF_MEMORY)
SAME_RESULT(ERROR_NOT_INITIALIZED)
SAME_RESULT(ERROR_DEINITIALIZED)
SAME_RESULT(ERROR_NO_DEVICE)
SAME_RESULT(ERROR_INVALID_DEVICE)
SAME_RESULT(ERROR_INVALID_IMAGE)
SAME_RESULT(ERROR_INVALID_CONTEXT)
SAME_RESULT(ERROR_INVALID_PTX)
SAME_RESULT(ERROR_INVALID_HANDLE)
SAME_RESULT(ERROR_NOT_FOUND)
SAME_RESULT(ERROR_NOT_READY)
SAME_RESULT(ERROR_ILLEGAL_ADDRESS)
SAME_RESULT(ERROR_LAUNCH_TIMEOUT)
SAME_RESULT(ERROR_CONTEXT_IS_DESTROYED)
SAME_RESULT(ERROR_ASSERT)
SAME_RESULT(ERROR_HARDWARE_STACK_ERROR)
SAME_RESULT(ERROR_ILLEGAL_INSTRUCTION)
SAME_RESULT(ERROR_MISALIGNED_ADDRESS)
SAME_RESULT(ERROR_INVALID_ADDRESS_SPACE)
SAME_RESULT(ERROR_INVALID_PC)
SAME_RESULT(ERROR_LAUNCH_FAILED)
SAME_RESULT(ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
#if CUDA_VERSION >= 13000
SAME_RESULT(ERROR_TENSOR_MEMORY_LEAK) /* 13.0 */
#endif
SAME_RESULT(ERROR_NOT_PERMITTED)
SAME_RESULT(ERROR_NOT_SUPPORTED)
SAME_RESULT(ERROR_MPS_CONNECTION_FAILED)
SAME_RESULT(ERROR_MPS_RPC_FAILURE)
SAME_RESULT(ERROR_MPS_SERVER_NOT_READY)
SAME_RESULT(ERROR_MPS_MAX_CLIENTS_REACHED)
SAME_RESULT(ERROR_MPS_MAX_CONNECTIONS_REACHED)
SAME_RESULT(ERROR_MPS_CLIENT_TERMINATED)
SAME_RESULT(ERROR_STREAM_CAPTURE_UNSUPPORTED)
SAME_RESULT(ERROR_INVALID_RESOURCE_TYPE)
SAME_RESULT(ERROR_INVALID_RESOURCE_CONFIGURATION)
SAME_RESULT(ERROR_UNKNOWN)
#define SAME_CU(name) SAME_VALUE(GCU_##name, CU_##name)
SAME_CU(DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
SAME_CU(DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
SAME_CU(DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
SAME_CU(STREAM_DEFAULT)
SAME_CU(STREAM_NON_BLOCKING)
SAME_CU(EVENT_DEFAULT)
SAME_CU(EVENT_DISABLE_TIMING)
SAME_CU(STREAM_CAPTURE_MODE_GLOBAL)
SAME_CU(STREAM_CAPTURE_MODE_THREAD_LOCAL)
SAME_CU(GET_PROC_ADDRESS_DEFAULT)
SAME_CU(GET_PROC_ADDRESS_SUCCESS)
SAME_CU(GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
SAME_CU(GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
SAME_CU(GREEN_CTX_DEFAULT_STREAM)
SAME_CU(DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING)
SAME_CU(DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE)
SAME_CU(DEV_RESOURCE_TYPE_INVALID)
SAME_CU(DEV_RESOURCE_TYPE_SM)
#if CUDA_VERSION >= 13010
SAME_RESULT(ERROR_STREAM_DETACHED)
SAME_CU(DEV_SM_RESOURCE_GROUP_DEFAULT)
SAME_CU(DEV_SM_RESOURCE_GROUP_BACKFILL)
SAME_CU(DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG)
SAME_CU(DEV_RESOURCE_TYPE_WORKQUEUE)
SAME_CU(WORKQUEUE_SCOPE_DEVICE_CTX)
SAME_CU(WORKQUEUE_SCOPE_GREEN_CTX_BALANCED)
#endif
#if CUDA_VERSION >= 13030
SAME_CU(GREEN_CTX_NONE)
#endif
#if CUDA_VERSION >= 13040
SAME_CU(DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT)
SAME_CU(DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID)
#endif

/* ---- CUdevResource and friends ---- */
CHECK(sizeof(gcu_uuid) == sizeof(CUuuid) && sizeof(gcu_uuid) == 16);
CHECK(sizeof(gcu_dev_resource) == sizeof(CUdevResource));
SAME_MEMBER(gcu_dev_resource, CUdevResource, type, type);
SAME_MEMBER(gcu_dev_resource, CUdevResource, _internal_padding, _internal_padding);
CHECK(offsetof(gcu_dev_resource, u) == offsetof(CUdevResource, sm)); /* 96 */
CHECK(offsetof(gcu_dev_resource, u.sm) == offsetof(CUdevResource, sm));
CHECK(offsetof(gcu_dev_resource, u._oversize) == offsetof(CUdevResource, _oversize));
#if CUDA_VERSION >= 13010
SAME_MEMBER(gcu_dev_resource, CUdevResource, u._oversize, _oversize); /* 40 bytes from 13.1 */
SAME_MEMBER(gcu_dev_resource, CUdevResource, nextResource, nextResource);
SAME_MEMBER(gcu_dev_resource, CUdevResource, u.wqConfig, wqConfig);
SAME_MEMBER(gcu_dev_resource, CUdevResource, u.wq, wq);
#else
/* Before 13.1 the union is 48 bytes: ours (40) plus the pointer that follows it. */
CHECK(MEMBER_SIZE(gcu_dev_resource, u._oversize) + MEMBER_SIZE(gcu_dev_resource, nextResource) ==
      MEMBER_SIZE(CUdevResource, _oversize));
#endif

SAME_MEMBER(gcu_dev_sm_resource, CUdevSmResource, smCount, smCount);
#if CUDA_VERSION >= 13000
SAME_MEMBER(gcu_dev_sm_resource, CUdevSmResource, minSmPartitionSize, minSmPartitionSize);
SAME_MEMBER(gcu_dev_sm_resource, CUdevSmResource, smCoscheduledAlignment, smCoscheduledAlignment);
#endif
#if CUDA_VERSION >= 13010
SAME_MEMBER(gcu_dev_sm_resource, CUdevSmResource, flags, flags);
CHECK(sizeof(gcu_dev_sm_resource_group_params) == sizeof(CU_DEV_SM_RESOURCE_GROUP_PARAMS));
SAME_MEMBER(gcu_dev_sm_resource_group_params, CU_DEV_SM_RESOURCE_GROUP_PARAMS, smCount, smCount);
SAME_MEMBER(gcu_dev_sm_resource_group_params, CU_DEV_SM_RESOURCE_GROUP_PARAMS,
            coscheduledSmCount, coscheduledSmCount);
SAME_MEMBER(gcu_dev_sm_resource_group_params, CU_DEV_SM_RESOURCE_GROUP_PARAMS,
            preferredCoscheduledSmCount, preferredCoscheduledSmCount);
SAME_MEMBER(gcu_dev_sm_resource_group_params, CU_DEV_SM_RESOURCE_GROUP_PARAMS, flags, flags);
CHECK(sizeof(gcu_dev_workqueue_config_resource) == sizeof(CUdevWorkqueueConfigResource));
SAME_MEMBER(gcu_dev_workqueue_config_resource, CUdevWorkqueueConfigResource, device, device);
SAME_MEMBER(gcu_dev_workqueue_config_resource, CUdevWorkqueueConfigResource, wqConcurrencyLimit,
            wqConcurrencyLimit);
SAME_MEMBER(gcu_dev_workqueue_config_resource, CUdevWorkqueueConfigResource, sharingScope,
            sharingScope);
CHECK(sizeof(gcu_dev_workqueue_resource) == sizeof(CUdevWorkqueueResource));
#endif
#if CUDA_VERSION >= 13040
SAME_MEMBER(gcu_dev_sm_resource, CUdevSmResource, localityDomainId, localityDomainId);
SAME_MEMBER(gcu_dev_sm_resource_group_params, CU_DEV_SM_RESOURCE_GROUP_PARAMS, localityDomainId,
            localityDomainId);
#endif

/* ---- entry points ----
 * Each GCU_DRIVER_SYMBOLS row must name a PFN_<name>_v<version> that cudaTypedefs.h has (so
 * the version the loader asks for is one the driver defines), and our prototype must be the
 * same function type once our struct and enum names are read as CUDA's: the macros below
 * rename them for the expansion only (the table is expanded after cuda_abi.h was read). */
#define gcu_result CUresult
#define gcu_dev_resource CUdevResource
#define gcu_dev_resource_type CUdevResourceType
#define gcu_uuid CUuuid
#if CUDA_VERSION >= 13010
#define gcu_dev_sm_resource_group_params CU_DEV_SM_RESOURCE_GROUP_PARAMS
#else
/* Entry points newer than this header have no PFN type to compare with: they are reported
 * as unchecked (the static assertion below exempts version > CUDA_VERSION). */
typedef void *PFN_cuDevSmResourceSplit_v13010;
typedef void *PFN_cuStreamGetDevResource_v13010;
#endif

/* Prototypes that differ from the header's in a way C calls incompatible but that is the
 * same ABI: a parameter the header types as a 4-byte enum and we pass as int. For these the
 * strict check must fail (so this list stays true), and the enum's size is checked instead. */
#define LOOSE_cuDeviceGetAttribute ~, 1, /* CUdevice_attribute attrib */
#define LOOSE_cuStreamBeginCapture ~, 1, /* CUstreamCaptureMode mode */
CHECK(sizeof(CUdevice_attribute) == sizeof(int));
CHECK(sizeof(CUstreamCaptureMode) == sizeof(int));

#define SECOND_(a, b, ...) b
#define SECOND(...) SECOND_(__VA_ARGS__)
/* SECOND(LOOSE_##name, 0, ~) is 1 when LOOSE_<name> is defined above, else 0. It is written
 * out where used, never behind a macro taking `name`: `name` must be pasted before it is
 * expanded, because cuda.h defines some entry point names as macros
 * (cuStreamBeginCapture -> cuStreamBeginCapture_v2). */

#define SAME_PROTOTYPE(name, version, required, params)                                        \
    CHECK((version) > CUDA_VERSION ||                                                          \
          SAME_TYPE(PFN_##name##_v##version, CUresult(*) params) == !SECOND(LOOSE_##name, 0, ~));
GCU_DRIVER_SYMBOLS(SAME_PROTOTYPE)

/* cuGetProcAddress (dlsym'd as cuGetProcAddress_v2): the header's flags are cuuint64_t
 * (uint64_t, unsigned long on LP64) and its status an enum pointer; ours are unsigned long
 * long and int *: the same sizes, which is what the call needs. */
CHECK(SAME_TYPE(PFN_cuGetProcAddress_v12000,
                CUresult(*)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *)));
CHECK(GCU_VERSION_cuGetProcAddress == 12000);
CHECK(sizeof(cuuint64_t) == sizeof(unsigned long long));
CHECK(sizeof(CUdriverProcAddressQueryResult) == sizeof(int));

static const struct {
    const char *name;
    int version;
    int loose;
} entry_points[] = {
#define ENTRY_ROW_(name, version, required, params) {#name, version, SECOND(LOOSE_##name, 0, ~)},
    GCU_DRIVER_SYMBOLS(ENTRY_ROW_)
#undef ENTRY_ROW_
};

int main(void)
{
    int n = 0, unchecked = 0;
    printf("# cuda.h CUDA_VERSION %d\n", CUDA_VERSION);
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        if (entry_points[i].version > CUDA_VERSION) {
            printf("# %s (ABI %d): not in this header, unchecked\n", entry_points[i].name,
                   entry_points[i].version);
            unchecked++;
        } else {
            printf("ok %d %s matches PFN_%s_v%d%s\n", ++n, entry_points[i].name,
                   entry_points[i].name, entry_points[i].version,
                   entry_points[i].loose ? " (an enum parameter passed as int: sizes checked)"
                                         : "");
        }
    }
    printf("# %d entry points checked at compile time, %d need a newer header\n", n, unchecked);
    return 0;
}

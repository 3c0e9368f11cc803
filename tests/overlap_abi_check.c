/* bench/overlap_libs.h against nccl.h and cublas_api.h: the ncclConfig_t prefix the bench
 * declares, and every constant it passes. Built only where both headers are found; the
 * layout and constants are checked when it builds, the initializer's values when it runs. */
#include <stddef.h>
#include <stdio.h>

#include <cublas_api.h>
#include <nccl.h>

#include "overlap_libs.h"

#define SAME_OFFSET(field)                                                                     \
    _Static_assert(offsetof(olap_nccl_config, field) == offsetof(ncclConfig_t, field),         \
                   "ncclConfig_t." #field " is where overlap_libs.h says")
SAME_OFFSET(size);
SAME_OFFSET(magic);
SAME_OFFSET(version);
SAME_OFFSET(blocking);
SAME_OFFSET(cgaClusterSize);
SAME_OFFSET(minCTAs);
SAME_OFFSET(maxCTAs);
SAME_OFFSET(netName);
_Static_assert(sizeof(olap_nccl_config) <= sizeof(ncclConfig_t), "a prefix of ncclConfig_t");
_Static_assert(OLAP_NCCL_CONFIG_VERSION == NCCL_VERSION(2, 17, 0), "the prefix's version");
_Static_assert(OLAP_NCCL_CONFIG_UNDEF_INT == NCCL_CONFIG_UNDEF_INT, "NCCL_CONFIG_UNDEF_INT");
_Static_assert(sizeof(olap_nccl_unique_id) == sizeof(ncclUniqueId), "ncclUniqueId");
_Static_assert(OLAP_NCCL_SUCCESS == ncclSuccess, "ncclSuccess");
_Static_assert(OLAP_NCCL_FLOAT32 == ncclFloat32, "ncclFloat32");
_Static_assert(OLAP_NCCL_SUM == ncclSum, "ncclSum");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int) && sizeof(ncclRedOp_t) == sizeof(int) &&
                   sizeof(ncclResult_t) == sizeof(olap_nccl_result),
               "NCCL's enums are passed as int");

_Static_assert(OLAP_CUBLAS_SUCCESS == CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS");
_Static_assert(OLAP_CUBLAS_OP_N == CUBLAS_OP_N, "CUBLAS_OP_N");
_Static_assert(OLAP_CUBLAS_OP_T == CUBLAS_OP_T, "CUBLAS_OP_T");
_Static_assert(OLAP_CUDA_R_32F == CUDA_R_32F, "CUDA_R_32F");
_Static_assert(OLAP_CUDA_R_16BF == CUDA_R_16BF, "CUDA_R_16BF");
_Static_assert(OLAP_CUBLAS_COMPUTE_32F == CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F");
_Static_assert(OLAP_CUBLAS_GEMM_DEFAULT == CUBLAS_GEMM_DEFAULT, "CUBLAS_GEMM_DEFAULT");
_Static_assert(sizeof(cublasOperation_t) == sizeof(int) && sizeof(cudaDataType) == sizeof(int) &&
                   sizeof(cublasComputeType_t) == sizeof(int) &&
                   sizeof(cublasGemmAlgo_t) == sizeof(int) &&
                   sizeof(cublasStatus_t) == sizeof(olap_cublas_status),
               "cuBLAS's enums are passed as int");

/* Every entry point the bench resolves by name is declared under that name (cuBLAS's _v2
 * names included). */
#define DECLARED_(name, ret, params) (void)&name;

int main(void)
{
    OLAP_NCCL_SYMBOLS(DECLARED_)
    OLAP_CUBLAS_SYMBOLS(DECLARED_)
    /* What the bench writes where NCCL_CONFIG_INITIALIZER writes it (older headers spell the
     * magic as a literal, newer ones as NCCL_API_MAGIC). */
    ncclConfig_t init = NCCL_CONFIG_INITIALIZER;
    int bad = init.magic != OLAP_NCCL_API_MAGIC || init.maxCTAs != OLAP_NCCL_CONFIG_UNDEF_INT ||
              init.minCTAs != OLAP_NCCL_CONFIG_UNDEF_INT || init.netName != NULL ||
              init.version < OLAP_NCCL_CONFIG_VERSION;
    printf("nccl.h %d.%d.%d: ncclConfig_t is %zu bytes, the bench's prefix %zu: %s\n",
           NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, sizeof(ncclConfig_t), sizeof(olap_nccl_config),
           bad ? "MISMATCH" : "ok");
    return bad;
}

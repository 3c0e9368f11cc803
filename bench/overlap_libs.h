/*
 * NCCL and cuBLAS for `greenctx bench overlap`, loaded at run time (dlopen), so that neither
 * the library nor the tool has a link-time CUDA dependency. Only the few entry points, types
 * and constants the benchmark uses are declared, checked against the real headers by
 * tests/overlap_abi_check.c where those headers are found.
 */
#ifndef GREENCTX_OVERLAP_LIBS_H
#define GREENCTX_OVERLAP_LIBS_H

#include <limits.h>
#include <stddef.h>

#include "greenctx.h"

/* ---- NCCL (nccl.h) ---- */

typedef struct olap_nccl_comm_st *olap_nccl_comm; /* ncclComm_t */
typedef int olap_nccl_result;                     /* ncclResult_t: ncclSuccess = 0 */
#define OLAP_NCCL_SUCCESS 0
#define OLAP_NCCL_UNIQUE_ID_BYTES 128
typedef struct olap_nccl_unique_id {
    char internal[OLAP_NCCL_UNIQUE_ID_BYTES];
} olap_nccl_unique_id;
#define OLAP_NCCL_FLOAT32 7 /* ncclFloat32 */
#define OLAP_NCCL_SUM 0     /* ncclSum */
#define OLAP_NCCL_API_MAGIC 0xcafebeefu
#define OLAP_NCCL_CONFIG_UNDEF_INT INT_MIN
/* NCCL_VERSION(2, 17, 0): the version whose ncclConfig_t ends with netName, the prefix below.
 * ncclConfig_t only ever grows at the end; NCCL copies min(size, its own) bytes and gives
 * every field after them its default. */
#define OLAP_NCCL_CONFIG_VERSION 21700u

typedef struct olap_nccl_config { /* the leading fields of ncclConfig_t */
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
} olap_nccl_config;

#define OLAP_NCCL_SYMBOLS(X)                                                                   \
    X(ncclGetVersion, olap_nccl_result, (int *version))                                      \
    X(ncclGetErrorString, const char *, (olap_nccl_result result))                           \
    X(ncclGetUniqueId, olap_nccl_result, (olap_nccl_unique_id * id))                         \
    X(ncclCommInitRankConfig, olap_nccl_result,                                               \
      (olap_nccl_comm * comm, int nranks, olap_nccl_unique_id id, int rank,                   \
       olap_nccl_config *config))                                                             \
    X(ncclCommDestroy, olap_nccl_result, (olap_nccl_comm comm))                              \
    X(ncclGroupStart, olap_nccl_result, (void))                                               \
    X(ncclGroupEnd, olap_nccl_result, (void))                                                 \
    X(ncclAllReduce, olap_nccl_result,                                                        \
      (const void *send, void *recv, size_t count, int datatype, int op, olap_nccl_comm comm, \
       CUstream stream))

/* ---- cuBLAS (cublas_api.h, library_types.h) ---- */

typedef struct olap_cublas_context *olap_cublas_handle; /* cublasHandle_t */
typedef int olap_cublas_status;                          /* CUBLAS_STATUS_SUCCESS = 0 */
#define OLAP_CUBLAS_SUCCESS 0
#define OLAP_CUBLAS_OP_N 0
#define OLAP_CUBLAS_OP_T 1
#define OLAP_CUDA_R_32F 0
#define OLAP_CUDA_R_16BF 14
#define OLAP_CUBLAS_COMPUTE_32F 68
#define OLAP_CUBLAS_GEMM_DEFAULT (-1)

#define OLAP_CUBLAS_SYMBOLS(X)                                                                 \
    X(cublasCreate_v2, olap_cublas_status, (olap_cublas_handle * handle))                    \
    X(cublasDestroy_v2, olap_cublas_status, (olap_cublas_handle handle))                     \
    X(cublasGetVersion_v2, olap_cublas_status, (olap_cublas_handle handle, int *version))    \
    X(cublasSetStream_v2, olap_cublas_status, (olap_cublas_handle handle, CUstream stream))  \
    X(cublasSetSmCountTarget, olap_cublas_status, (olap_cublas_handle handle, int sm_count)) \
    X(cublasSetMatrix, olap_cublas_status,                                                    \
      (int rows, int cols, int elem_size, const void *a, int lda, void *b, int ldb))          \
    X(cublasGetStatusString, const char *, (olap_cublas_status status))                      \
    X(cublasGemmEx, olap_cublas_status,                                                       \
      (olap_cublas_handle handle, int transa, int transb, int m, int n, int k,                \
       const void *alpha, const void *a, int a_type, int lda, const void *b, int b_type,      \
       int ldb, const void *beta, void *c, int c_type, int ldc, int compute_type, int algo))

#define OLAP_PFN_(name, ret, params) typedef ret(*olap_pfn_##name) params;
OLAP_NCCL_SYMBOLS(OLAP_PFN_)
OLAP_CUBLAS_SYMBOLS(OLAP_PFN_)
#undef OLAP_PFN_

typedef struct olap_libs {
#define OLAP_MEMBER_(name, ret, params) olap_pfn_##name name;
    OLAP_NCCL_SYMBOLS(OLAP_MEMBER_)
    OLAP_CUBLAS_SYMBOLS(OLAP_MEMBER_)
#undef OLAP_MEMBER_
    char nccl_path[512], cublas_path[512];
    int nccl_version;
} olap_libs;

/* NCCL_NVLS_ENABLE=0 unless the user set it: NVLink multicast (NVLS) can take every GPU of
 * a shared host out of service, so the benchmark never uses it. Returns 0, or -1 with why
 * when the variable is set to anything but 0. Call before NCCL loads (it reads the
 * environment once). */
int olap_nvls_off(char *why, size_t why_size);

/* How one library is looked for (NCCL's and cuBLAS's in olap_libs_load). */
typedef struct olap_lib_search {
    const char *name;        /* "NCCL" */
    const char *env;         /* GREENCTX_NCCL_LIBRARY */
    const char *soname;      /* libnccl.so.2 */
    const char *system_path; /* a toolkit's copy, or NULL */
    const char *package;     /* pip's nvidia/<package>/lib */
    const char *hint;        /* how to install it */
    const char *const *deps; /* loaded first from the same directory, NULL-terminated, or NULL */
} olap_lib_search;

/* The file $env names (that file or nothing); else the dynamic loader's search for soname,
 * system_path, and pip's nvidia/<package>/lib/<soname> in absolute site-packages directories
 * (the system's, /opt/<x>/.venv, an absolute $VIRTUAL_ENV or $CONDA_PREFIX), found without
 * running Python and never relative to the current directory. Returns the dlopen handle (its
 * path in loaded), or NULL with why listing every place tried. */
void *olap_lib_find(const olap_lib_search *s, char *loaded, size_t size, char *why,
                    size_t why_size);

/* Loads NCCL (libnccl.so.2: $GREENCTX_NCCL_LIBRARY, the loader's path, /usr/local/cuda/lib64,
 * pip's nvidia-nccl-cu13 package) and cuBLAS (libcublas.so.13: $GREENCTX_CUBLAS_LIBRARY, the
 * loader's path, /usr/local/cuda/lib64, pip's nvidia-cublas package) and resolves the entry
 * points above. pip's packages are looked for in absolute site-packages directories (the
 * system's, /opt/<x>/.venv, an absolute $VIRTUAL_ENV or $CONDA_PREFIX) without running Python,
 * never relative to the current directory. Returns 0, or -1 with why (every place tried, how
 * to point at the file). */
int olap_libs_load(olap_libs *libs, char *why, size_t why_size);

#endif

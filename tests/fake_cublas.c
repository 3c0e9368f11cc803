/*
 * A test double of libcublas.so.13 for `greenctx bench overlap` on the simulated driver (whose
 * device memory is host memory): the entry points bench/overlap_libs.h resolves, the GEMM
 * computed on the host (bf16 in and out, fp32 accumulation), the types the bench passes
 * checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, NOT_SUPPORTED = 15 };

typedef struct handle {
    CUstream stream;
    int sm_target;
} handle;

int cublasCreate_v2(handle **out)
{
    return (*out = calloc(1, sizeof **out)) ? SUCCESS : NOT_INITIALIZED;
}

int cublasDestroy_v2(handle *h)
{
    free(h);
    return SUCCESS;
}

int cublasGetVersion_v2(handle *h, int *version)
{
    (void)h;
    *version = 130000;
    return SUCCESS;
}

int cublasSetStream_v2(handle *h, CUstream stream)
{
    h->stream = stream;
    return SUCCESS;
}

int cublasSetSmCountTarget(handle *h, int target)
{
    if (target < 0)
        return INVALID_VALUE;
    h->sm_target = target;
    return SUCCESS;
}

const char *cublasGetStatusString(int status)
{
    return status == SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "fake cuBLAS: refused";
}

int cublasSetMatrix(int rows, int cols, int elem_size, const void *a, int lda, void *b, int ldb)
{
    if (rows < 0 || cols < 0 || elem_size <= 0 || lda < rows || ldb < rows)
        return INVALID_VALUE;
    for (int c = 0; c < cols; c++)
        memcpy((char *)b + (size_t)c * ldb * elem_size,
               (const char *)a + (size_t)c * lda * elem_size, (size_t)rows * elem_size);
    return SUCCESS;
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

int cublasGemmEx(handle *h, int transa, int transb, int m, int n, int k, const void *alpha,
                 const void *a, int a_type, int lda, const void *b, int b_type, int ldb,
                 const void *beta, void *c, int c_type, int ldc, int compute_type, int algo)
{
    (void)algo;
    if (!h || transa != 0 || transb != 0 || a_type != 14 || b_type != 14 || c_type != 14 ||
        compute_type != 68 || m > 1024 || n > 1024 || k > 1024)
        return NOT_SUPPORTED; /* only what the bench asks for, small enough for the host */
    const uint16_t *A = a, *B = b;
    uint16_t *C = c;
    float al = *(const float *)alpha, be = *(const float *)beta;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float sum = 0;
            for (int l = 0; l < k; l++)
                sum += from_bf16(A[i + (size_t)l * lda]) * from_bf16(B[l + (size_t)j * ldb]);
            float old = be != 0 ? from_bf16(C[i + (size_t)j * ldc]) : 0;
            C[i + (size_t)j * ldc] = to_bf16(al * sum + be * old);
        }
    return SUCCESS;
}

/* What both CUDA examples share: every call checked, and events in a green context. */
#ifndef GREENCTX_EXAMPLE_CHECK_H
#define GREENCTX_EXAMPLE_CHECK_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <stdio.h>
#include <stdlib.h>

#include <greenctx.h>

/* A failed call prints itself and the library's words, and the program exits 1. greenctx's
 * message says what was asked and what would work, which is worth more than its status. */
#define CHECK(ok, call, what)                                                                   \
    do {                                                                                        \
        if (!(ok)) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, (what));       \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)
/* call's result, of type T, is OK; else words(result) says why. */
#define CHECK_RESULT(T, call, OK, words)                                                        \
    do {                                                                                        \
        T r_ = (call);                                                                          \
        CHECK(r_ == (OK), call, words(r_));                                                     \
    } while (0)
static inline const char *gctx_words(gctx_status) { return gctx_last_error(); }
static inline const char *cu_words(CUresult r)
{
    const char *name = "CUDA driver error";
    cuGetErrorName(r, &name);
    return name;
}
#define GCTX_CHECK(call) CHECK_RESULT(gctx_status, call, GCTX_SUCCESS, gctx_words)
#define CUDA_CHECK(call) CHECK_RESULT(cudaError_t, call, cudaSuccess, cudaGetErrorString)
#define CU_CHECK(call) CHECK_RESULT(CUresult, call, CUDA_SUCCESS, cu_words)
#define CUBLAS_CHECK(call)                                                                      \
    CHECK_RESULT(cublasStatus_t, call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

/* greenctx hands back the driver's own stream: cudart's cudaStream_t is the same type as
 * CUstream, so it goes straight to <<<>>> launches, cublasSetStream and NCCL. */
static inline cudaStream_t raw(gctx_stream *s) { return (cudaStream_t)gctx_stream_handle(s); }

/* An event must belong to the context of the stream it is recorded on, and cudart makes,
 * reads and destroys events in the current context (the primary one): so with the green
 * context pushed. (Ordering work across contexts needs no such care: cudaStreamWaitEvent takes
 * an event of another context.) */
static inline void make_event(gctx_context *ctx, cudaEvent_t *event)
{
    CU_CHECK(cuCtxPushCurrent(gctx_context_cu_context(ctx)));
    CUDA_CHECK(cudaEventCreate(event));
    CU_CHECK(cuCtxPopCurrent(NULL));
}

static inline float elapsed_ms(gctx_context *ctx, cudaEvent_t start, cudaEvent_t stop)
{
    float ms = 0;
    CU_CHECK(cuCtxPushCurrent(gctx_context_cu_context(ctx)));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CU_CHECK(cuCtxPopCurrent(NULL));
    return ms;
}

#endif

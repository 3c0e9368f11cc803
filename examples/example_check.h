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
#define GCTX_CHECK(call)                                                                        \
    do {                                                                                        \
        gctx_status s_ = (call);                                                                \
        CHECK(s_ == GCTX_SUCCESS, call, gctx_last_error());                                     \
    } while (0)
#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        CHECK(e_ == cudaSuccess, call, cudaGetErrorString(e_));                                 \
    } while (0)
#define CU_CHECK(call)                                                                          \
    do {                                                                                        \
        CUresult r_ = (call);                                                                   \
        const char *n_ = "CUDA driver error";                                                   \
        if (r_ != CUDA_SUCCESS)                                                                 \
            cuGetErrorName(r_, &n_);                                                            \
        CHECK(r_ == CUDA_SUCCESS, call, n_);                                                    \
    } while (0)
#define CUBLAS_CHECK(call)                                                                      \
    do {                                                                                        \
        cublasStatus_t b_ = (call);                                                             \
        CHECK(b_ == CUBLAS_STATUS_SUCCESS, call, cublasGetStatusString(b_));                    \
    } while (0)

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

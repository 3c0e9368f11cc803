/* SPDX-License-Identifier: Apache-2.0
 * Test API of the simulated CUDA driver (libgreenctx_sim.so, installed in <libdir>/greenctx/).
 * A program's tests point the library at it (GREENCTX_CUDA_LIBRARY, GREENCTX_SIM_DEVICES such
 * as "h200,a100", GREENCTX_SIM_DRIVER_VERSION) and dlsym these names from the same handle
 * (dlopen with RTLD_NOLOAD), to check what a real GPU can't show cheaply, such as
 * gctxsim_live_objects("all") == 0 once everything was released. Every function is thread-safe. */
#ifndef GREENCTX_SIM_H
#define GREENCTX_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GCTXSIM_API __attribute__((visibility("default")))
#else
#define GCTXSIM_API
#endif

/* Declared as cuda.h declares them (identical typedefs may repeat). */
typedef struct CUstream_st *CUstream;
typedef struct CUgreenCtx_st *CUgreenCtx;

/* Live objects of one kind: "green_ctx", "stream", "event", "primary_ctx" (the sum of
 * cuDevicePrimaryCtxRetain counts not yet released), "module" (loaded modules: a function
 * lives as long as its module), "memory" (cuMemAlloc allocations not freed), "desc"
 * (descriptors made since the last reset: they are never destroyed), or "all" (green_ctx +
 * stream + event + primary_ctx + module + memory). -1 for an unknown kind. */
GCTXSIM_API int gctxsim_live_objects(const char *kind);

/* The SM ids held by an SM resource (a gcu_dev_resource / CUdevResource written by the
 * simulator), ascending. Writes at most `capacity` ids and returns the total count, or -1 when
 * `resource` is not a valid SM resource. */
GCTXSIM_API int gctxsim_resource_sm_ids(const void *resource, unsigned *ids, int capacity);

/* The SMs of a green context; -1 for an invalid handle. */
GCTXSIM_API int gctxsim_green_ctx_sm_ids(CUgreenCtx ctx, unsigned *ids, int capacity);

/* The SMs a kernel launched on `stream` could run on: its green context's SMs, or every SM of
 * the device for a stream of a primary context. NULL (and the legacy/per-thread default stream
 * handles 1 and 2) mean the calling thread's current context. -1 for an invalid stream, one
 * whose green context was destroyed, or a default stream with no current context. */
GCTXSIM_API int gctxsim_stream_sm_ids(CUstream stream, unsigned *ids, int capacity);

/* Co-residency of the last kernel launch that ran (cuLaunchKernel or cuLaunchCooperativeKernel,
 * any thread): its grid's `blocks`, and how many of them its context's SMs hold at once
 * (`resident`; an SM holds what fits in 228 KB of shared memory, 2,048 threads and 32 blocks,
 * as on Hopper). A persistent kernel with a grid barrier hangs on a GPU when blocks > resident;
 * here the test asks. A cooperative launch that large fails with
 * CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE and does not count; cuOccupancy... answers the
 * same per SM. 0, or -1 when none ran since load or the last reset. */
GCTXSIM_API int gctxsim_last_launch(unsigned long long *blocks, unsigned long long *resident);

/* What a stream's cuStreamWaitEvent calls waited for: for each, the stream its event had last
 * been recorded on (NULL when never, or by cuGreenCtxRecordEvent). Writes the last
 * min(capacity, 16) of them, oldest first, and returns how many waits there were in all; -1
 * for an invalid stream. */
GCTXSIM_API int gctxsim_stream_waits(CUstream stream, CUstream *waited_for, int capacity);

/* How many times an entry point was called since load or the last reset, failed calls
 * included (cuGetProcAddress and cuGetProcAddress_v2 count together); -1 if unknown. */
GCTXSIM_API long gctxsim_calls(const char *symbol);

/* cuLaunchKernel or cuEventRecord calls on a default stream since load or the last reset, by
 * which: CU_STREAM_LEGACY ((CUstream)1: NULL through the legacy entry points, or that handle)
 * or CU_STREAM_PER_THREAD ((CUstream)2: NULL through the _ptsz ones, or that handle); -1 for
 * another symbol or handle. A wrapper of launches must keep its caller's stream. */
GCTXSIM_API long gctxsim_default_stream_calls(const char *symbol, CUstream which);

/* Why the simulator refused the configuration the environment asked for (an unknown model in
 * GREENCTX_SIM_DEVICES, a malformed GREENCTX_SIM_DRIVER_VERSION or GREENCTX_SIM_FAIL): a
 * message naming the variable and what is valid; cuInit then fails with
 * CUDA_ERROR_INVALID_VALUE. NULL when the configuration is valid. */
GCTXSIM_API const char *gctxsim_config_error(void);

/* The models GREENCTX_SIM_DEVICES takes, space-separated ("h200 h100 ..."). Static storage. */
GCTXSIM_API const char *gctxsim_models(void);

/* Destroys every object, forgets every handle and resource made so far (they become invalid),
 * zeroes the counters and re-reads the environment (GREENCTX_SIM_DEVICES,
 * GREENCTX_SIM_DRIVER_VERSION, GREENCTX_SIM_FAIL, CUDA_DEVICE_MAX_CONNECTIONS). The driver
 * stays initialised if cuInit had succeeded and the new device list is valid. */
GCTXSIM_API void gctxsim_reset(void);

/* Calls fn(arg) at every call of `symbol` from now on, before the call has any effect (one hook
 * at a time; fn NULL or gctxsim_reset clears it). fn runs under the simulator's lock: it may
 * look at the process but must not call the driver. 0, or -1 for an unknown symbol. */
GCTXSIM_API int gctxsim_on_call(const char *symbol, void (*fn)(void *arg), void *arg);

/* Makes the n-th call of `symbol` from now on (n >= 1; the next call is 1) fail with `code`
 * (CUDA_ERROR_OUT_OF_MEMORY when code <= 0), before it has any effect. n == 0 clears every
 * fault, including those from GREENCTX_SIM_FAIL. */
GCTXSIM_API void gctxsim_fail_after(const char *symbol, int n, int code);

/* The device faults now, as after a kernel's illegal address: every later call returns code,
 * but those that need no context (cuInit, cuDriverGetVersion, cuGetProcAddress, cuGetErrorName,
 * cuDeviceGet*); destroys fail too, so objects stay live. code: 700, 702, 710, 714 to 719 or
 * 721 (700 for any other). An injected fault with a sticky code does the same once it fires.
 * Cleared by gctxsim_fail_after(NULL, 0, 0) and gctxsim_reset. */
GCTXSIM_API void gctxsim_sticky_fault(int code);

/* Kernels the simulator runs as a cost model (a benchmark's, a program's own tests'): what one
 * launch does, from its kernel parameters (cuLaunchKernel's kernelParams) and its grid's blocks.
 * The model reads sizes only, never device memory, and calls no driver function. */
typedef struct gctxsim_work {
    double bytes; /* moved to and from device memory */
    double flops; /* floating-point operations */
} gctxsim_work;
typedef gctxsim_work (*gctxsim_work_fn)(void **params, unsigned long long blocks, void *user);

/* Registers kernel `entry` with its model. cuModuleLoadData then accepts an image that defines
 * it (".entry NAME("), and a launch advances its stream's clock (what events record) by 3 us,
 * then the larger of the bytes at 60 GB/s per SM (3.9 TB/s at most) and the FLOPs at 0.15
 * TFLOP/s per SM of the stream's context. Registering a name again replaces its model; NULL
 * removes it (its functions then fail to launch). Kept across gctxsim_reset. 0, or -1 for a
 * NULL, empty or over-63-byte entry, or a full table (32 models). */
GCTXSIM_API int gctxsim_kernel_model(const char *entry, gctxsim_work_fn work, void *user);

#ifdef __cplusplus
}
#endif

#endif

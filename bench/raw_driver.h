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

/* Every entry point src/cuda_abi.h declares (GCU_DRIVER_SYMBOLS), at the ABI version given
 * there: those it marks required must resolve; the others are NULL when the driver's version
 * is below theirs. */
typedef struct raw_driver {
#define RAW_DRIVER_MEMBER_(name, version, required, params) gcu_pfn_##name name;
    GCU_DRIVER_SYMBOLS(RAW_DRIVER_MEMBER_)
#undef RAW_DRIVER_MEMBER_
} raw_driver;

/* Loads the library's driver (gctx_init) and resolves the table the first time; later calls
 * return it. NULL with the reason in why (the library's message when no driver loads). */
const raw_driver *raw_driver_load(char *why, size_t why_size);

/* "CUDA_ERROR_INVALID_VALUE" for a CUresult, from the driver; else "CUDA_ERROR_UNRECOGNISED". */
const char *raw_result_name(gcu_result r);

#endif

/*
 * Raw driver calls for code outside the library (the bench's baselines and kernels, tests
 * that set up what greenctx must cope with): the very driver file the library loaded
 * (gctx_driver_path()), reopened, and the entry points a caller names resolved through its
 * cuGetProcAddress at the ABI versions declared in src/cuda_abi.h. The library's own driver
 * table stays private and holds only what src/ calls.
 */
#ifndef GREENCTX_RAW_DRIVER_H
#define GREENCTX_RAW_DRIVER_H

#include <stddef.h>

#include "cuda_abi.h" /* a standalone ABI declaration: types, prototypes, versions */

/* One entry point to resolve into a caller's table of function pointers. */
typedef struct raw_symbol {
    const char *name;
    int abi;      /* GCU_VERSION_<name> */
    int required; /* 0: left NULL when the driver's version is below abi */
    size_t offset; /* offsetof(the caller's table, name) */
} raw_symbol;

/* RAW_SYMBOL(table_type, name, required): the row for gcu_pfn_<name> member <name>. */
#define RAW_SYMBOL(type, name, required) {#name, GCU_VERSION_##name, required, offsetof(type, name)}

/* Loads the library's driver (gctx_init), reopens its file and fills table. Returns 0, or -1
 * with the reason in why (the library's message when no driver loads). */
int raw_driver_resolve(const raw_symbol *rows, size_t nb_rows, void *table, char *why,
                       size_t why_size);

#endif

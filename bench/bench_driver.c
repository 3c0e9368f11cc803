/* The bench's own driver table: see bench_driver.h. */
#include <stdio.h>

#include "bench_driver.h"

static bench_driver table;
static int table_loaded;

static const raw_symbol rows[] = {
#define BENCH_DRIVER_ROW_(name, required) RAW_SYMBOL(bench_driver, name, required),
    BENCH_DRIVER_SYMBOLS(BENCH_DRIVER_ROW_)
#undef BENCH_DRIVER_ROW_
};

const bench_driver *bench_driver_load(void)
{
    if (table_loaded)
        return &table;
    char why[1024];
    if (!gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        if (gctx_init() == GCTX_SUCCESS)
            fprintf(stderr, "greenctx bench: loading the driver: green contexts are not "
                            "available: %s\n",
                    gctx_feature_reason(GCTX_FEATURE_GREEN_CONTEXTS));
        else
            fprintf(stderr, "greenctx bench: loading the driver: %s\n", gctx_last_error());
        return NULL;
    }
    if (raw_driver_resolve(rows, sizeof rows / sizeof rows[0], &table, why, sizeof why)) {
        fprintf(stderr, "greenctx bench: loading the driver: %s\n", why);
        return NULL;
    }
    table_loaded = 1;
    return &table;
}

const char *bench_result_name(gcu_result r)
{
    const char *name = NULL;
    if (table_loaded && table.cuGetErrorName(r, &name) == GCU_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNRECOGNISED";
}

/*
 * The library's driver table (GCU_LIBRARY_SYMBOLS in src/cuda_abi.h, the list the loader
 * walks): on the simulated driver of each version, cuGetProcAddress is asked exactly once per
 * entry point at or below the driver's version: none above it, none outside the table.
 */
#include "cuda_abi.h"
#include "harness.h"

static const struct {
    const char *name;
    int version;
} symbols[] = {
#define SYMBOL_ROW_(name, version, required, params) {#name, version},
    GCU_LIBRARY_SYMBOLS(SYMBOL_ROW_)
#undef SYMBOL_ROW_
};

GT_TEST(loader_asks_no_version_above_the_driver)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    GT_ASSERT_STATUS(gctx_init(), GCTX_SUCCESS);
    int version = 0;
    GT_ASSERT_STATUS(gctx_driver_version(&version), GCTX_SUCCESS);
    int asked = 0;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
        asked += symbols[i].version <= version;
    /* The simulator counts cuGetProcAddress calls: one per entry point it was asked for. */
    long calls = gt_sim_calls("cuGetProcAddress");
    printf("# cuGetProcAddress: %ld calls, %d entry points at or below %d\n", calls, asked,
           version);
    GT_ASSERT_EQ_INT(calls, asked);
}

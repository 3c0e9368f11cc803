/*
 * The loader's table, seen from inside (linked against the static library, with
 * src/internal.h): an entry point whose ABI version is above the driver's is never asked for.
 */
#include <stdlib.h>

#include "harness.h"
#include "internal.h"

/* Entry points with their ABI version, from the table the loader itself uses. */
static const struct {
    const char *name;
    int version;
    size_t offset;
} symbols[] = {
#define SYMBOL_ROW_(name, version, required, params)                                           \
    {#name, version, offsetof(gctx__driver, name)},
    GCU_DRIVER_SYMBOLS(SYMBOL_ROW_)
#undef SYMBOL_ROW_
};
#define NB_SYMBOLS (sizeof symbols / sizeof symbols[0])

static void *entry(const gctx__driver *drv, size_t offset)
{
    void *fn;
    memcpy(&fn, (const char *)drv + offset, sizeof fn);
    return fn;
}

GT_TEST(loader_asks_no_version_above_the_driver)
{
    gt_require_sim(0, NULL);
    GT_CHECK();
    const gctx__driver *drv = NULL;
    GT_ASSERT_STATUS(gctx__driver_load(&drv), GCTX_SUCCESS);
    int asked = 0;
    for (size_t i = 0; i < NB_SYMBOLS; i++) {
        void *fn = entry(drv, symbols[i].offset);
        if (symbols[i].version > drv->version && fn)
            GT_FAIL("%s (ABI %d) was resolved from a %d driver", symbols[i].name,
                    symbols[i].version, drv->version);
        asked += symbols[i].version <= drv->version;
    }
    /* The simulator counts cuGetProcAddress calls: one per entry point it was asked for,
     * never more than the entry points the driver's version allows. */
    long calls = gt_sim_calls("cuGetProcAddress");
    if (calls >= 0) {
        printf("# cuGetProcAddress: %ld calls, %d entry points at or below %d\n", calls, asked,
               drv->version);
        GT_ASSERT_EQ_INT(calls, asked);
    }
}

GT_TEST(loader_resolves_required_entry_points)
{
    gt_require_device();
    GT_CHECK();
    const gctx__driver *drv = NULL;
    GT_ASSERT_STATUS(gctx__driver_load(&drv), GCTX_SUCCESS);
#define REQUIRED_(name, version, required, params)                                             \
    if (required && !drv->name)                                                                \
        GT_FAIL("required entry point %s is NULL", #name);
    GCU_DRIVER_SYMBOLS(REQUIRED_)
#undef REQUIRED_
    if (drv->features[GCTX_FEATURE_GREEN_CONTEXTS].available) {
        GT_ASSERT(drv->cuGreenCtxCreate != NULL);
        GT_ASSERT(drv->cuDevSmResourceSplitByCount != NULL);
    }
    if (drv->features[GCTX_FEATURE_STRUCTURED_SPLIT].available)
        GT_ASSERT(drv->cuDevSmResourceSplit != NULL);
}

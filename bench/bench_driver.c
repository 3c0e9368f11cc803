/* The bench's driver access: see bench_driver.h. */
#include <stdio.h>

#include "bench_driver.h"

const raw_driver *bench_driver_load(void)
{
    char why[1024];
    const raw_driver *drv = NULL;
    if (!gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        if (gctx_init() == GCTX_SUCCESS)
            snprintf(why, sizeof why, "green contexts are not available: %s",
                     gctx_feature_reason(GCTX_FEATURE_GREEN_CONTEXTS));
        else
            snprintf(why, sizeof why, "%s", gctx_last_error());
    } else {
        drv = raw_driver_load(why, sizeof why);
    }
    if (!drv)
        fprintf(stderr, "greenctx bench: loading the driver: %s\n", why);
    return drv;
}

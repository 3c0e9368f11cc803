#include <stdio.h>

#include "raw_calls.h"

const raw_driver *gt_raw(void)
{
    char why[1024];
    const raw_driver *drv = raw_driver_load(why, sizeof why);
    if (!drv)
        printf("# raw driver calls: %s\n", why);
    return drv;
}

#include <stdio.h>

#include "raw_calls.h"

const gt_raw_driver *gt_raw(void)
{
    static gt_raw_driver table;
    static int loaded;
    static const raw_symbol rows[] = {
#define GT_RAW_ROW_(name, required) RAW_SYMBOL(gt_raw_driver, name, required),
        GT_RAW_SYMBOLS(GT_RAW_ROW_)
#undef GT_RAW_ROW_
    };
    char why[1024];
    if (!loaded) {
        if (raw_driver_resolve(rows, sizeof rows / sizeof rows[0], &table, why, sizeof why)) {
            printf("# raw driver calls: %s\n", why);
            return NULL;
        }
        loaded = 1;
    }
    return &table;
}

/* The raw driver calls tests make themselves (a context current before each test, contexts
 * and streams made by "another library", kernels and graphs): the table shared with the
 * bench (bench/raw_driver.h), resolved from the driver the library loaded, never the
 * library's private one. */
#ifndef GREENCTX_TEST_RAW_CALLS_H
#define GREENCTX_TEST_RAW_CALLS_H

#include "raw_driver.h"

/* The table; NULL (with the reason printed as a TAP comment) when no driver loads. */
const raw_driver *gt_raw(void);

#endif

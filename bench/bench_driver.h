/*
 * The driver entry points the bench calls itself: its kernels (the public API has no kernel
 * launch), device memory, events for timing, and the raw green-context calls its overhead
 * baselines compare greenctx with. They come from the raw driver table (raw_driver.h),
 * resolved from the driver the library loaded; every partition, context and stream the bench
 * measures is still made through the public API.
 */
#ifndef GREENCTX_BENCH_DRIVER_H
#define GREENCTX_BENCH_DRIVER_H

#include "raw_driver.h"

/* The table, once green contexts are there (drivers 12.4+). Prints why and returns NULL on
 * failure. */
const raw_driver *bench_driver_load(void);

#endif

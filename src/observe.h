/* The %smid kernel: where work on a stream really runs. */
#ifndef GREENCTX_OBSERVE_H
#define GREENCTX_OBSERVE_H

#include "stream.h"

#define GCTX__SMID_SLOTS 1024u /* one flag per possible %smid value */

/* The loaded kernel and its flag buffer, in a context. Load and unload with the context
 * current (the caller pushes it). */
typedef struct gctx__smid_kernel {
    gcu_module module;
    gcu_function function;
    gcu_deviceptr flags; /* GCTX__SMID_SLOTS unsigned ints, zeroed */
} gctx__smid_kernel;

gctx_status gctx__smid_load(const gctx__driver *drv, gctx__smid_kernel *kernel);
void gctx__smid_unload(const gctx__driver *drv, gctx__smid_kernel *kernel);
/* Queues the kernel on stream: blocks blocks of 1024 threads (at most two fit an SM, so the
 * blocks spread over every SM the stream may use), each spinning spin_ns. */
gctx_status gctx__smid_launch(const gctx__driver *drv, const gctx__smid_kernel *kernel,
                              CUstream stream, unsigned blocks, unsigned long long spin_ns);
/* Reads the flags back (after the stream is synchronised): sorted SM ids, count of them. */
gctx_status gctx__smid_collect(const gctx__driver *drv, const gctx__smid_kernel *kernel,
                               unsigned *sm_ids, unsigned capacity, unsigned *count);

#endif

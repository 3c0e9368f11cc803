/* The stream and event objects as the library's files see them. */
#ifndef GREENCTX_STREAM_H
#define GREENCTX_STREAM_H

#include "partition.h"

struct gctx_stream {
    gctx__object base;
    CUstream handle;
    gctx_context *context; /* retained: a stream never outlives its context */
    int owned;             /* 0 for adopted streams */
    int priority;          /* as asked, for handing it on drained (context_cache.c) */
};

struct gctx_event {
    gctx__object base;
    CUevent handle;
    gctx_context *context; /* retained: keeps the device's primary context alive */
};

#endif

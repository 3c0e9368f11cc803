/* The context cache: idle driver green contexts handed back (context_cache.c). */
#ifndef GREENCTX_CONTEXT_CACHE_H
#define GREENCTX_CONTEXT_CACHE_H

#include "partition.h"

/* Sets c->cache_key (NULL: not cacheable) and, on a hit, c->driver. */
gctx_status gctx__cache_take(gctx_partition *partition, const gctx_context_options *options,
                             gctx_context *c);
void gctx__cache_count_live(const gctx_context *c);
/* 1 when the cache kept c's driver context, 0 when the caller destroys it. */
int gctx__cache_give(gctx_context *c);
void gctx__cache_forget(gctx_context *c);
/* A handed-back context the driver no longer runs work in (after a fault): destroyed. */
void gctx__cache_discard(const gctx__driver *drv, gctx_context *c);
/* 1 when c's idle streams took the drained stream, 0 when the caller destroys it. */
int gctx__cache_keep_stream(gctx_context *c, CUstream stream, int priority);
/* *checked: its synchronize checked c's hand-out from the cache (check_cached, context.c). */
int gctx__cache_take_stream(gctx_context *c, int priority, CUstream *stream, int *checked);

#endif

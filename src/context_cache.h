/* The context cache: driver green contexts kept after their last greenctx reference went, and
 * handed back for a request on the same SMs with the same options (context_cache.c). */
#ifndef GREENCTX_CONTEXT_CACHE_H
#define GREENCTX_CONTEXT_CACHE_H

#include "partition.h"

/* Looks for an idle driver context for a context of `partition` with `options` (NULL: the
 * defaults). Sets c->cache_key (NULL when the request can't be cached: the cache is off for
 * the device, or the SMs can't be recognised from the partition's resources), and on a hit
 * fills c->driver (the handles, id, workqueue settings and idle streams).
 * GCTX_ERROR_INVALID_ARGUMENT when GREENCTX_CONTEXT_CACHE is malformed;
 * GCTX_ERROR_OUT_OF_MEMORY. */
gctx_status gctx__cache_take(gctx_partition *partition, const gctx_context_options *options,
                             gctx_context *c);
/* A context's driver side now belongs to a greenctx context: counted as live. */
void gctx__cache_count_live(const gctx_context *c);
/* The end of a context greenctx made (its last reference, or a failed creation after
 * gctx__cache_count_live): returns 1 when the cache kept its driver context, 0 when the
 * caller must destroy it. Frees c->cache_key either way. */
int gctx__cache_give(gctx_context *c);
/* A creation that failed before gctx__cache_count_live: forgets c->cache_key. */
void gctx__cache_forget(gctx_context *c);
/* A context gctx__cache_take handed back that the driver no longer runs work in (after a
 * fault): its idle streams and its driver context are destroyed (what the driver refuses is
 * counted and kept, as a release's), and c->cache_key forgotten. */
void gctx__cache_discard(const gctx__driver *drv, gctx_context *c);
/* A drained stream of c at its release: 1 when c's idle streams took it (c may be cached,
 * and has room), 0 when the caller destroys it. */
int gctx__cache_keep_stream(gctx_context *c, CUstream stream, int priority);
/* 1 and *stream set when c has an idle stream of that priority, taken off its list; *checked
 * is 1 when its synchronize was the check of c's hand-out from the cache and this is c's first
 * stream since (check_cached, context.c): it needs no check of its own. */
int gctx__cache_take_stream(gctx_context *c, int priority, CUstream *stream, int *checked);

#endif

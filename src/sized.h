/* Structs that grow across header versions (sized.c), tested directly. */
#ifndef GREENCTX_SIZED_H
#define GREENCTX_SIZED_H

#include <stddef.h>

#include "greenctx.h"

/* The end of a struct's last field: the size of a layout that ends there. */
#define GCTX__SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* First published layouts: smaller sizes are refused. */
#define GCTX__MIN_DEVICE_INFO GCTX__SIZE_THROUGH(gctx_device_info, locality_domain_count)
#define GCTX__MIN_PARTITION_INFO GCTX__SIZE_THROUGH(gctx_partition_info, locality_domain_id)
#define GCTX__MIN_SPLIT_OPTIONS GCTX__SIZE_THROUGH(gctx_split_options, rounding)
#define GCTX__MIN_SPLIT_PLAN GCTX__SIZE_THROUGH(gctx_split_plan, nested)
#define GCTX__MIN_CONTEXT_OPTIONS                                                              \
    GCTX__SIZE_THROUGH(gctx_context_options, workqueue_concurrency_limit)
#define GCTX__MIN_CONTEXT_REQUEST GCTX__SIZE_THROUGH(gctx_context_request, options)
#define GCTX__MIN_CONTEXT_INFO GCTX__SIZE_THROUGH(gctx_context_info, workqueue_concurrency_limit)
#define GCTX__MIN_STREAM_OPTIONS GCTX__SIZE_THROUGH(gctx_stream_options, blocking)
#define GCTX__MIN_RELEASE_FAILURES GCTX__SIZE_THROUGH(gctx_release_failures, last_message)
#define GCTX__MIN_CACHE_STATS GCTX__SIZE_THROUGH(gctx_cache_stats, limit)

/* A caller's struct is there and its size is at least min_size; else INVALID_ARGUMENT naming
 * the INIT macro. Outputs are checked with it before any work, so failure leaves them alone. */
gctx_status gctx__sized_check(const void *caller, size_t min_size, const char *name,
                              const char *init_macro);
/* An input: the caller's first size bytes over local's defaults. */
gctx_status gctx__sized_in(void *local, size_t local_size, const void *caller, size_t min_size,
                           const char *name, const char *init_macro);
/* An output already checked: never a byte past the caller's size. */
void gctx__sized_out(void *caller, const void *local, size_t local_size);
/* Nonzero reserved fields of groups are refused, naming them. */
gctx_status gctx__groups_check(const gctx_group *groups, unsigned nb_groups);

#endif

/* Structs that grow across header versions (sized.c): size-prefixed structs, and the reserved
 * fields of group arrays. A header of its own so that tests can check them directly. */
#ifndef GREENCTX_SIZED_H
#define GREENCTX_SIZED_H

#include <stddef.h>

#include "greenctx.h"

/* The end of a struct's last field: the size of a layout that ends there. */
#define GCTX__SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* Each size-prefixed struct's first published layout: smaller sizes are refused. Those of
 * greenctx_claims.h and greenctx_controller.h are in claim.h, mps.c and controller.h. */
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
/* An input, checked: the caller's first size bytes (at most local_size) over local, which
 * holds the defaults. */
gctx_status gctx__sized_in(void *local, size_t local_size, const void *caller, size_t min_size,
                           const char *name, const char *init_macro);
/* An output already checked: local's fields into the caller's struct, never past the caller's
 * size; bytes past the fields the library knows are left alone, and so is the size field. */
void gctx__sized_out(void *caller, const void *local, size_t local_size);
/* Arrays of gctx_group grow through reserved fields: nonzero ones are refused, naming the
 * group and the field. */
gctx_status gctx__groups_check(const gctx_group *groups, unsigned nb_groups);

#endif

/* The partition, context, stream and event objects as the library's files see them. */
#ifndef GREENCTX_PARTITION_H
#define GREENCTX_PARTITION_H

#include "internal.h"

typedef struct gctx_context gctx_context;
typedef struct gctx__cache_key gctx__cache_key; /* context_cache.c */

/* Drained streams a context keeps for its next streams of the same priority. */
#define GCTX__IDLE_STREAMS 4
typedef struct gctx__idle_streams {
    unsigned n;
    CUstream stream[GCTX__IDLE_STREAMS];
    int priority[GCTX__IDLE_STREAMS];
    CUstream checked; /* its synchronize checked the cache's hand-out (check_cached) */
} gctx__idle_streams;

/* The record of one split, shared by its outputs, keeping its input alive. Never handed
 * out: no slot of the handle table. */
typedef struct gctx__split {
    atomic_int refs;       /* its outputs' (and gctx__split_new's caller's until it lets go) */
    gctx_partition *input; /* the partition the driver split (retained) */
    size_t block_bytes;    /* what its allocation holds: itself and its partitions (split.c) */
} gctx__split;

struct gctx_partition {
    gctx__object base;
    int device;
    int cc_major;
    gctx_partition_kind kind;
    unsigned sm_count;
    gctx__sm_rules rules;
    int structured;
    unsigned flags;
    int has_locality;
    unsigned locality;
    unsigned nb_resources;
    gctx__split *split; /* GROUP, REMAINDER: the split it came from (retained) */
    unsigned index;     /* its group index in that split; nb_groups for the remainder */
    gctx_context *context; /* CONTEXT: the green context whose SMs these are (retained) */
    int in_split_block;    /* 1: in its split record's block, freed with the record */
    int holds_primary;     /* 1: holds the device's primary context (DEVICE, CONTEXT kinds) */
    gcu_resource_desc desc; /* made on first use: the driver has no way to free one */
    gcu_dev_resource resources[]; /* one queried, or one split's outputs */
};

/* The driver side of a green context: what the context cache keeps (context_cache.c). */
typedef struct gctx__driver_context {
    CUgreenCtx green;
    CUcontext context; /* cuCtxFromGreenCtx(green) */
    int has_id;
    unsigned long long id;
    gctx_workqueue_scope workqueue_scope;
    unsigned workqueue_limit;
    gctx__idle_streams idle; /* under the cache's lock */
} gctx__driver_context;

struct gctx_context {
    gctx__object base;
    int device;
    gctx__driver_context driver;
    gctx_partition *partition; /* what it was made from (retained); NULL when adopted */
    int owned;                 /* 0 for adopted handles: never destroyed by greenctx */
    gctx__cache_key *cache_key; /* what identifies its SMs and options; NULL: never cached */
};

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

gctx_status gctx__partition_desc(gctx_partition *partition, gcu_resource_desc *desc);
gctx_status gctx__context_create(gctx_partition *partition, const gctx_context_options *options,
                                 gctx_context **out);
void gctx__context_release(gctx_context *context);
gctx_status gctx__context_resource(const gctx__driver *drv, const gctx_context *context,
                                   gcu_dev_resource_type type, gcu_dev_resource *out);
/* The SMs of a green context, as a CONTEXT partition that keeps the context alive. */
gctx_status gctx__partition_from_context(gctx_context *context, gctx_partition **out);
gctx_status gctx__partition_relation(const gctx_partition *a, const gctx_partition *b,
                                     gctx_relation *relation);
gctx_status gctx__split_new(gctx_partition *input, gctx__split **out);
static inline void gctx__split_retain(gctx__split *split) { atomic_fetch_add(&split->refs, 1); }
void gctx__split_release(gctx__split *split);
/* A partition's bytes, rounded to its alignment. Inline: a split asks it for every output. */
static inline size_t gctx__partition_bytes(unsigned nb_resources)
{
    const size_t align = _Alignof(gctx_partition);
    size_t bytes = sizeof(gctx_partition) + nb_resources * sizeof(gcu_dev_resource);
    return (bytes + align - 1) / align * align;
}
/* A partition in the split record's block, its resources written, prepared for
 * gctx__objects_register; it holds one of the references the record starts with. */
void gctx__partition_in_split_block(const gctx__driver *drv, gctx__split *split,
                                    gctx_partition *p, unsigned index, gctx_partition_kind kind,
                                    unsigned nb_resources, unsigned sm_count,
                                    const gctx__sm_rules *rules, int structured);
gctx_status gctx__partition_from_split(gctx__split *split, unsigned index, gctx_partition_kind kind,
                                       const gcu_dev_resource *resources, unsigned nb_resources,
                                       const gctx__sm_rules *rules, int structured,
                                       gctx_partition **out);

#endif

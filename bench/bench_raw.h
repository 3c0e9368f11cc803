/* The raw driver doing what greenctx does for "two disjoint partitions with a stream each":
 * the reference that greenctx's overhead is measured against. */
#ifndef GREENCTX_BENCH_RAW_H
#define GREENCTX_BENCH_RAW_H

#include "bench.h"

/* How greenctx's plan for {victim_sms, rest} maps onto driver calls, taken from
 * gctx_partition_plan so that both sides split the same way. */
typedef struct raw_plan {
    gctx_split_path path;
    unsigned granule, flags;    /* GRANULES paths: one split-by-count(granule, flags) */
    unsigned first_granules;    /* granules of the victim's group; the rest go to the other */
    unsigned sms[2];            /* what each group must get */
    gcu_dev_sm_resource_group_params params[2]; /* STRUCTURED path */
} raw_plan;

typedef struct raw_split {
    gcu_dev_resource *res;      /* the split's outputs, then the remainder */
    unsigned capacity, nb_res;
    unsigned first[2], count[2]; /* each group's resources: res[first[g] .. first[g] + count[g]) */
} raw_split;

typedef struct raw_setup {
    gcu_resource_desc desc[2];
    CUgreenCtx green[2];
    CUstream stream[2];
} raw_setup;

int raw_plan_make(const bench_env *env, unsigned victim_sms, raw_plan *plan);
int raw_split_init(const bench_env *env, raw_split *split);
void raw_split_free(raw_split *split);
/* One driver split of the device's SM resource, as the plan says. */
int raw_split_run(const bench_env *env, const gcu_dev_resource *whole, const raw_plan *plan,
                  raw_split *split);
/* A descriptor for group g of a split. */
int raw_desc(const bench_env *env, raw_split *split, unsigned g, gcu_resource_desc *desc);
int raw_context_create(const bench_env *env, gcu_resource_desc desc, CUgreenCtx *green);
/* 1 when the driver can make a stream on a green context directly (12.5+). */
int raw_has_green_streams(const bench_env *env);
int raw_stream_create(const bench_env *env, CUgreenCtx green, CUstream *stream);
/* split + per group: descriptor, context, stream. */
int raw_setup_build(const bench_env *env, const gcu_dev_resource *whole, const raw_plan *plan,
                    raw_split *split, raw_setup *setup);
void raw_setup_teardown(const bench_env *env, raw_setup *setup);

#endif

/* `greenctx bench overhead`: what greenctx costs over the raw driver calls doing the same. */
#ifndef GREENCTX_BENCH_OVERHEAD_H
#define GREENCTX_BENCH_OVERHEAD_H

#include "bench.h"
#include "bench_pin.h"

/* ---- bench_overhead.c: the raw driver making greenctx's "two partitions, a stream each" */

/* greenctx's plan for {victim_sms, rest} as driver calls (gctx_partition_plan): both sides
 * split alike. */
typedef struct raw_plan {
    gctx_split_path path;
    unsigned granule, flags;    /* GRANULES paths: one split-by-count(granule, flags) */
    unsigned first_granules;    /* granules of the victim's group; the rest go to the other */
    unsigned sms[2];            /* what each group must get */
    gcu_dev_sm_resource_group_params params[2]; /* STRUCTURED path */
} raw_plan;

typedef struct raw_split {
    gcu_dev_resource whole;     /* the device's SMs */
    gcu_dev_resource *res;      /* the split's outputs, then the remainder */
    unsigned capacity, nb_res;
    unsigned first_count;       /* res[0 .. first_count): the first group's; the rest the other's */
} raw_split;

typedef struct raw_setup {
    gcu_resource_desc desc[2];
    CUgreenCtx green[2];
    CUstream stream[2];
} raw_setup;

int raw_plan_make(const bench_env *env, unsigned victim_sms, raw_plan *plan);
/* Room for a split of the device's SMs, and those SMs. */
int raw_split_init(const bench_env *env, raw_split *split);
void raw_split_free(raw_split *split);
int raw_setup_build(const bench_env *env, const raw_plan *plan, raw_split *split, raw_setup *setup);
void raw_setup_teardown(const bench_env *env, raw_setup *setup);

/* ---- cache_rows.c: re-partitioning with the context cache and without, layout switches
 * (host time and the device gap) against the same hand-over by hand (per stream one
 * cuEventRecord and one cuStreamWaitEvent), 16 layouts against the raw calls ---- */

typedef enum cache_row { /* in the order they print */
    CR_REPARTITION,
    CR_MEMORY, /* MiB lost over `cycles` re-partitions */
    CR_SWITCH, /* the barrier */
    CR_SWITCH_OWN,
    CR_SWITCH_BY_PART,
    CR_GAP, /* old layout's last kernel to the new one's, against the same on one stream */
    CR_GAP_BY_PART,
    CR_LAYOUTS, /* ms per 16 layouts x 2 from an empty cache */
    CR_LAYOUTS_WARM,
    CR_NB_ROWS
} cache_row;

typedef struct cache_rows {
    int valid;
    unsigned small_sms, large_sms; /* the two ratios: small/rest and large/rest */
    unsigned cycles, switch_reps, switch_quiet_reps, layout_builds;
    bench_summary switch_check; /* us of bench_pin_check_us, right before each rep */
    unsigned layout_step;       /* the layouts' first groups: 1 to 16 x this (8 on an H200) */
    bench_row rows[CR_NB_ROWS];
} cache_rows;

/* Leaves the device's cache limit as it was, and the cache empty. */
int cache_rows_measure(const bench_env *env, unsigned reps, bench_pin *pin, cache_rows *rows);
void cache_rows_print(const cache_rows *rows);
/* ,"repartitioning":{...} */
void cache_rows_json(json_writer *w, const cache_rows *rows);

/* ---- bench_overhead.c: greenctx against the raw driver ---- */

typedef enum ov_op {
    OV_SPLIT = 0,
    OV_CONTEXT_CREATE,
    OV_CONTEXT_DESTROY,
    OV_STREAM_CREATE,
    OV_STREAM_DESTROY,
    OV_SETUP,
    OV_TEARDOWN,
    OV_REPARTITION,
    OV_LAUNCH_SUBMIT, /* a: a green stream, b: an ordinary stream */
    OV_LAUNCH_TOTAL,
    OV_NB_OPS
} ov_op;

typedef struct ov_result {
    unsigned reps, warmups, launches, rounds;
    unsigned victim_sms, other_sms, alt_sms, alt_other_sms;
    int host_cpu; /* the CPU first pinned to (bench_pin.h), -1: not pinned */
    char split_text[200];
    bench_row rows[OV_NB_OPS]; /* a: greenctx, b: the raw driver */
    cache_rows repartitioning;
} ov_result;

int bench_overhead_run(const bench_env *env, ov_result *res);
void bench_overhead_print(const ov_result *res);
void bench_overhead_json(json_writer *w, const bench_env *env, const ov_result *res);

#endif

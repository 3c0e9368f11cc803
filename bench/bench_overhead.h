/* `greenctx bench overhead`: what greenctx costs over the raw driver calls doing the same. */
#ifndef GREENCTX_BENCH_OVERHEAD_H
#define GREENCTX_BENCH_OVERHEAD_H

#include "bench.h"
#include "bench_pin.h"

/* ---- bench_raw.c: the raw driver doing what greenctx does for "two disjoint partitions with
 * a stream each", the reference that greenctx's overhead is measured against ---- */

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

/* ---- cache_rows.c: the re-partitioning rows, beside the overhead table's own re-partition
 * row (through the cache against the raw rebuild) and its context-create row (a cache miss
 * against the raw create): device memory and time over many re-partitions with the context
 * cache and without it, a layout switch, the barrier and by part (host time, and the gap it
 * adds on the device between the last kernel on the old layout and the first on the new)
 * against the same hand-over by hand (per stream one cuEventRecord and one cuStreamWaitEvent:
 * the floor, what the switch by part calls), and the time to make 16 layouts of 2 contexts
 * with a stream each against the raw driver calls that make the same contexts and streams ---- */

/* The rows, in the order they print (bench_rows_print). */
typedef enum cache_row {
    CR_REPARTITION,   /* us per re-partition: with the cache, without */
    CR_MEMORY,        /* MiB of device memory lost over `cycles` re-partitions: the same */
    CR_SWITCH,        /* us per gctx_layouts_switch (the barrier) against the switch by hand */
    CR_SWITCH_OWN,    /* the same against the barrier's own calls by hand */
    CR_SWITCH_BY_PART, /* us per switch with GCTX_LAYOUTS_ORDER_BY_PART against by hand */
    CR_GAP,           /* us from the old layout's last kernel to the new one's, against the
                         same two kernels on one stream */
    CR_GAP_BY_PART,   /* the same across a switch by part */
    CR_LAYOUTS,       /* ms per 16 layouts x 2 from an empty cache against the same 16 splits,
                         32 contexts and streams, raw */
    CR_LAYOUTS_WARM,  /* ms per 16 layouts x 2, all cached */
    CR_NB_ROWS
} cache_row;

typedef struct cache_rows {
    int valid;
    unsigned small_sms, large_sms; /* the two ratios: small/rest and large/rest */
    unsigned cycles;               /* re-partitions per memory row */
    unsigned switch_reps;          /* reps of each switch row */
    bench_summary switch_check;    /* us of bench_pin_check_us, right before each rep */
    unsigned switch_quiet_reps;    /* reps whose check was quiet (bench_pin.h) */
    unsigned layout_builds;        /* builds of each layouts row */
    unsigned layout_step;          /* the layouts' first groups: 1 to 16 x this (8 on an H200) */
    bench_row rows[CR_NB_ROWS];
} cache_rows;

/* Measures every row (reps: each timing's repetitions; pin: the timing thread's, which the
 * switch rows move to the quietest CPU before each block of reps). Leaves the device's cache
 * limit as it was, and the cache empty. Returns 0, or -1 after printing why. */
int cache_rows_measure(const bench_env *env, unsigned reps, bench_pin *pin, cache_rows *rows);
void cache_rows_print(const cache_rows *rows);
/* ,"repartitioning":{...} */
void cache_rows_json(json_writer *w, const cache_rows *rows);

/* ---- bench_overhead.c ---- */

typedef enum ov_op {
    OV_SPLIT = 0,
    OV_CONTEXT_CREATE,
    OV_CONTEXT_DESTROY,
    OV_STREAM_CREATE,
    OV_STREAM_DESTROY,
    OV_SETUP,
    OV_TEARDOWN,
    OV_REPARTITION,
    OV_LAUNCH_SUBMIT, /* per launch; "a" is a green stream, "b" an ordinary stream */
    OV_LAUNCH_TOTAL,  /* per launch, submission and drain */
    OV_NB_OPS
} ov_op;

/* Where the rows' time goes, measured apart from them (the rows' clocks hold only the user's
 * calls): a greenctx re-partition's phases, and the driver's destroy of the oldest of the
 * cache's worth of contexts by hand, which is what the context row's release makes. */
typedef enum ov_diagnostic {
    OV_PHASE_TEARDOWN, /* bench_pair_release: 2 streams, 2 contexts, 2 partitions */
    OV_PHASE_SPLIT,
    OV_PHASE_CONTEXTS, /* both gctx_context_create (cache hits) */
    OV_PHASE_STREAMS,  /* both gctx_stream_create */
    OV_DESTROY_OLDEST, /* by hand: cuGreenCtxDestroy of the oldest of the cache's limit + 1 */
    OV_NB_DIAGNOSTICS
} ov_diagnostic;

typedef struct ov_result {
    unsigned reps, warmups, launches, rounds;
    unsigned victim_sms, other_sms, alt_sms, alt_other_sms;
    int simulated;
    int host_cpu; /* the CPU the bench's thread was pinned to first (bench_pin.h; it moves to
                   * the quietest before each block of reps), -1: not pinned */
    char split_text[200];
    bench_row rows[OV_NB_OPS]; /* a: greenctx, b: the raw driver (launches: a green stream, an
                                  ordinary one) */
    cache_rows repartitioning; /* the context cache and layouts (above) */
    bench_row diagnostics[OV_NB_DIAGNOSTICS];
    unsigned destroy_kept; /* contexts alive in OV_DESTROY_OLDEST: the cache's limit */
} ov_result;

int bench_overhead_run(const bench_env *env, ov_result *res);
void bench_overhead_print(const ov_result *res);
/* The "overhead" member of the bench document. */
void bench_overhead_json(json_writer *w, const ov_result *res);

#endif

/* The re-partitioning rows of `greenctx bench overhead`, beside the overhead table's
 * own re-partition row (through the cache against the raw rebuild) and its context-create row
 * (a cache miss against the raw create): device memory and time over many re-partitions with
 * the context cache and without it, a layout switch, the barrier and by part (host time, and
 * the gap it adds on the device between the last kernel on the old layout and the first on the
 * new) against the same hand-over by hand (per stream one cuEventRecord and one
 * cuStreamWaitEvent: the floor, what the switch by part calls), and
 * the time to make 16 layouts of 2 contexts with a stream each against the raw driver calls
 * that make the same contexts and streams. */
#ifndef GREENCTX_BENCH_CACHE_ROWS_H
#define GREENCTX_BENCH_CACHE_ROWS_H

#include "bench.h"
#include "bench_pin.h"

typedef struct cache_rows {
    int valid;
    unsigned small_sms, large_sms; /* the two ratios: small/rest and large/rest */
    unsigned cycles;               /* re-partitions per memory row */
    bench_summary repartition_cached, repartition_rebuild; /* us per re-partition */
    double lost_cached_mib, lost_rebuild_mib; /* device memory lost over `cycles` */
    bench_summary switch_host;     /* us per gctx_layouts_switch (the barrier) */
    bench_summary switch_by_part_host; /* us per switch with GCTX_LAYOUTS_ORDER_BY_PART */
    bench_summary switch_by_hand;  /* us per the same hand-over by hand (see above) */
    bench_summary switch_barrier_by_hand; /* us per the barrier's calls by hand */
    int gap_valid;                 /* 0 where kernels don't run */
    bench_summary gap_switch;      /* us from the old layout's last kernel to the new one's */
    bench_summary gap_switch_by_part; /* the same across a switch by part */
    bench_summary gap_same_stream; /* the same two kernels on one stream */
    unsigned switch_reps;          /* reps of each switch row */
    bench_summary switch_check;    /* us of bench_pin_check_us, right before each rep */
    unsigned switch_quiet_reps;    /* reps whose check was quiet (bench_pin.h) */
    bench_summary switch_host_quiet, switch_by_part_quiet, switch_by_hand_quiet,
        switch_barrier_by_hand_quiet; /* the four host-time rows over the quiet reps */
    unsigned layout_builds;        /* builds of each of the three below */
    unsigned layout_step;          /* the layouts' first groups: 1 to 16 x this (8 on an H200) */
    bench_summary layouts_cold, layouts_warm; /* ms per 16 layouts x 2: empty cache, all cached */
    bench_summary layouts_by_hand; /* ms per the same 16 splits, 32 contexts and streams, raw */
} cache_rows;

/* Measures every row (reps: each timing's repetitions; pin: the timing thread's, which the
 * switch rows move to the quietest CPU before each block of reps). Leaves the device's cache
 * limit as it was, and the cache empty. Returns 0, or -1 after printing why. */
int cache_rows_measure(const bench_env *env, unsigned reps, bench_pin *pin, cache_rows *rows);
void cache_rows_print(const cache_rows *rows);
/* ,"repartitioning":{...} */
void cache_rows_json(json_writer *w, const cache_rows *rows);

#endif

/* `greenctx bench overhead`: what greenctx costs over the raw driver calls doing the same. */
#ifndef GREENCTX_BENCH_OVERHEAD_H
#define GREENCTX_BENCH_OVERHEAD_H

#include "bench.h"
#include "cache_rows.h"

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

/* A side of a row over its quiet reps (bench_pin.h): those whose host check right before
 * read at most BENCH_QUIET_SLACK times the row's fastest. */
typedef struct ov_quiet {
    unsigned reps;
    bench_summary times;
} ov_quiet;

typedef struct ov_row {
    int valid, b_valid;
    char note[160];
    bench_summary a, b; /* microseconds: greenctx and the raw driver (launches: green and
                           ordinary streams) */
    ov_quiet a_quiet, b_quiet; /* the rows timed by measure(), not the launches */
} ov_row;

/* Where the rows' time goes, measured apart from them (the rows' clocks hold only the user's
 * calls): a greenctx re-partition's phases, and the driver's destroy of the oldest of the
 * cache's worth of contexts by hand, which is what the context row's release makes. */
typedef enum ov_phase {
    OV_PHASE_TEARDOWN, /* bench_pair_release: 2 streams, 2 contexts, 2 partitions */
    OV_PHASE_SPLIT,
    OV_PHASE_CONTEXTS, /* both gctx_context_create (cache hits) */
    OV_PHASE_STREAMS,  /* both gctx_stream_create */
    OV_NB_PHASES
} ov_phase;

typedef struct ov_diagnostics {
    int valid;
    bench_summary phase[OV_NB_PHASES];
    int destroy_valid;
    unsigned destroy_kept; /* contexts alive by hand: the cache's limit */
    bench_summary destroy_oldest; /* cuGreenCtxDestroy of the oldest of destroy_kept + 1 */
} ov_diagnostics;

typedef struct ov_result {
    unsigned reps, warmups, launches, rounds;
    unsigned victim_sms, other_sms, alt_sms, alt_other_sms;
    int simulated;
    int host_cpu; /* the CPU the bench's thread was pinned to first (bench_pin.h; it moves to
                   * the quietest before each block of reps), -1: not pinned */
    char split_text[200];
    ov_row rows[OV_NB_OPS];
    cache_rows repartitioning; /* the context cache and layouts (cache_rows.h) */
    ov_diagnostics diagnostics;
} ov_result;

int bench_overhead_run(const bench_env *env, ov_result *res);
void bench_overhead_print(const ov_result *res);
/* The "overhead" member of the bench document. */
void bench_overhead_json(json_writer *w, const ov_result *res);

#endif

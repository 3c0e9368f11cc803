/* `greenctx bench isolation`: a latency-critical victim beside a hog (a thread keeping a lane
 * busy with units of work), in six arrangements. */
#ifndef GREENCTX_BENCH_ISOLATION_H
#define GREENCTX_BENCH_ISOLATION_H

#include "bench_kernels.h"

typedef enum bench_hog_kind {
    BENCH_HOG_FMA = 0,  /* compute-bound: long FMA-chain blocks filling every SM */
    BENCH_HOG_COPY = 1, /* memory-bound: a streaming copy of a large buffer */
    BENCH_NB_HOGS = 2
} bench_hog_kind;

typedef enum iso_arm {
    ISO_ALONE_FULL = 0,         /* victim alone on an ordinary stream: the whole GPU */
    ISO_ALONE_PART = 1,         /* victim alone in its green partition */
    ISO_PLAIN = 2,              /* victim and hog on ordinary streams of the primary context */
    ISO_PRIORITY = 3,           /* the same, victim's stream high priority, hog's low */
    ISO_GREEN = 4,              /* victim in its partition, hog in the rest (one split) */
    ISO_GREEN_VICTIM_ONLY = 5,  /* victim in its partition, hog on an ordinary stream */
    ISO_NB_ARMS = 6
} iso_arm;

typedef enum iso_victim {
    ISO_VICTIM_FMA = 0,    /* one short compute kernel */
    ISO_VICTIM_DECODE = 1, /* a chain of small memory-bound kernels, like one decode step */
    ISO_NB_VICTIMS = 2
} iso_victim;

#define ISO_HOG_NONE 0 /* cell index of the alone arms; hog kind k is at 1 + k */

typedef struct iso_cell {
    int valid;
    bench_summary latency_us; /* events around the submission on the victim's stream */
    bench_summary start_us;   /* host launch to first block start, beyond the idle minimum */
    double drift_us;          /* how far the host/GPU clock offset moved during the arm */
} iso_cell;

typedef struct iso_result {
    unsigned victim_sms, hog_sms; /* the two groups of the split */
    unsigned reps, warmups;
    char victim_text[ISO_NB_VICTIMS][160];
    char hog_text[BENCH_NB_HOGS][160];
    iso_cell cell[1 + BENCH_NB_HOGS][ISO_NB_ARMS][ISO_NB_VICTIMS];
    double hog_rate[BENCH_NB_HOGS][ISO_NB_ARMS]; /* units per second during the arm */
    double hog_alone_full[BENCH_NB_HOGS];        /* alone on an ordinary stream */
    double hog_alone_part[BENCH_NB_HOGS];        /* alone in its green partition */
    double hog_unit[BENCH_NB_HOGS];              /* FLOP or bytes per unit */
} iso_result;

/* Runs every arm for one victim size. */
int bench_isolation_run(const bench_env *env, unsigned victim_sms, iso_result *res);
void bench_isolation_print(const bench_env *env, const iso_result *res);
void bench_isolation_json(json_writer *w, const bench_env *env, const iso_result *res);
void bench_isolation_chart(const iso_result *res, bench_chart *chart);

#endif

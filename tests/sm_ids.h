/* Helpers of the object tests. Where a context's work can run: the simulated driver's record
 * of its SM ids, or on a GPU the SMs a %smid kernel on one of its streams ran on. */
#ifndef GREENCTX_TEST_SM_IDS_H
#define GREENCTX_TEST_SM_IDS_H

#include "harness.h"

#define GT_MAX_SMS 1024

/* The loaded driver's version (0 when none loads). */
int gt_driver_version(void);
/* Skips the running test (returning -1) unless a driver with green contexts counts a
 * device; else 0. */
int gt_require_green_contexts(void);
/* Runs fn on n threads at once (each given its number from 1 as the argument) and returns the
 * sum of what they return: their failures. -1 when a thread can't be started. */
long gt_run_threads(int n, void *(*fn)(void *));
/* A group of n SMs with every other field at its default. */
gctx_group gt_group(unsigned n);
/* Device 0 as a partition; NULL after marking the test skipped (no device, no green
 * contexts). */
gctx_partition *gt_whole_device(void);
/* The simulated driver's gctxsim_fail_after (sim/greenctx_sim.h). */
typedef void (*gt_sim_fail_fn)(const char *symbol, int nth, int code);
/* The code the simulated driver fails with in gt_each_fault (CUDA_ERROR_OUT_OF_MEMORY). */
#define GT_FAULT_CODE 2
/* One round of a fault-injection test, each step given arg: prepare (optional) runs with the
 * driver working, attempt while it fails one call and returns how many of its own calls failed,
 * settle (optional) once the driver works again, to check that nothing was left behind. */
typedef struct gt_fault_round {
    void (*prepare)(void *arg);
    int (*attempt)(void *arg);
    void (*settle)(void *arg);
    void *arg;
} gt_fault_round;
/* Runs round once for each symbol and each nth from 1 to last_nth (by step), with the simulated
 * driver failing that symbol's nth call with GT_FAULT_CODE: every driver call on a path fails
 * once in turn. Returns the sum of what attempt returned; stops at the first round that marks
 * the test failed (callers GT_CHECK() after it), and marks it failed itself, returning -1, when
 * the simulated driver's fault injection is missing. */
long gt_each_fault(const char *const *symbols, size_t count, int last_nth, int step,
                   gt_fault_round round);
/* 1 when status is a failure, after asserting it came from the injected fault; else 0. */
int gt_fault_failed(gctx_status status);

typedef struct gt_sm_set {
    unsigned count;
    unsigned char has[GT_MAX_SMS];
} gt_sm_set;

/* Fills set with the SMs of context; returns 0, or -1 after marking the test failed. */
int gt_context_sms(gctx_context *context, gt_sm_set *set);
/* The same for a partition, through a green context made from it. */
int gt_partition_sms(gctx_partition *partition, gt_sm_set *set);
int gt_sm_sets_disjoint(const gt_sm_set *a, const gt_sm_set *b);
/* a is a subset of b */
int gt_sm_set_within(const gt_sm_set *a, const gt_sm_set *b);
/* "0 1 4 5 ..." into buf */
const char *gt_sm_set_text(const gt_sm_set *set, char *buf, size_t size);

#endif

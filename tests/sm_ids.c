#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "sm_ids.h"

typedef int (*green_ctx_sm_ids_fn)(CUgreenCtx, unsigned *, int);

int gt_driver_version(void)
{
    int v = 0;
    gctx_driver_version(&v);
    return v;
}

int gt_require_green_contexts(void)
{
    gt_require_device();
    if (gt_state)
        return -1;
    if (!gctx_feature_available(GCTX_FEATURE_GREEN_CONTEXTS)) {
        gt_skip("no green contexts on this driver: %s",
                gctx_feature_reason(GCTX_FEATURE_GREEN_CONTEXTS));
        return -1;
    }
    return 0;
}

long gt_run_threads(int n, void *(*fn)(void *))
{
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    int started = 0;
    long failures = 0;
    while (threads && started < n &&
           pthread_create(&threads[started], NULL, fn, (void *)(long)(started + 1)) == 0)
        started++;
    for (int t = 0; t < started; t++) {
        void *f;
        pthread_join(threads[t], &f);
        failures += (long)f;
    }
    free(threads);
    return started == n ? failures : -1;
}

long gt_each_fault(const char *const *symbols, size_t count, int last_nth, int step,
                   gt_fault_round round)
{
    gt_sim_fail_fn fail = (gt_sim_fail_fn)gt_sim_symbol("gctxsim_fail_after");
    if (!fail) {
        gt_fail(__FILE__, __LINE__, "the simulated driver has no gctxsim_fail_after");
        return -1;
    }
    long failures = 0;
    for (size_t k = 0; k < count; k++) {
        for (int nth = 1; nth <= last_nth; nth += step) {
            if (round.prepare)
                round.prepare(round.arg);
            if (gt_state)
                return failures;
            fail(symbols[k], nth, GT_FAULT_CODE);
            failures += round.attempt(round.arg);
            fail(NULL, 0, 0);
            if (round.settle)
                round.settle(round.arg);
            if (gt_state)
                return failures;
        }
    }
    return failures;
}

int gt_fault_failed(gctx_status status)
{
    if (status == GCTX_SUCCESS)
        return 0;
    if (gctx_last_cuda_result() != GT_FAULT_CODE)
        gt_fail(__FILE__, __LINE__, "%s failed with driver result %d, not the injected %d",
                gctx_status_string(status), (int)gctx_last_cuda_result(), GT_FAULT_CODE);
    return 1;
}

gctx_group gt_group(unsigned n) { return (gctx_group){.num_sms = n}; }

gctx_partition *gt_whole_device(void)
{
    gt_require_device();
    gctx_partition *p = NULL;
    if (gt_state == 0 && gctx_partition_from_device(0, &p) != GCTX_SUCCESS)
        gt_skip("no green contexts: %s", gctx_last_error());
    return p;
}

int gt_context_sms(gctx_context *context, gt_sm_set *set)
{
    unsigned ids[GT_MAX_SMS];
    int n = -1;
    memset(set, 0, sizeof *set);
    green_ctx_sm_ids_fn sim = (green_ctx_sm_ids_fn)gt_sim_symbol("gctxsim_green_ctx_sm_ids");
    if (sim) {
        n = sim(gctx_context_green_handle(context), ids, GT_MAX_SMS);
    } else {
        gctx_stream *stream;
        unsigned count = 0;
        gctx_status s = gctx_stream_create(context, NULL, &stream);
        if (s == GCTX_SUCCESS) {
            s = gctx_stream_observe_sms(stream, ids, GT_MAX_SMS, &count);
            gctx_stream_release(stream);
        }
        if (s != GCTX_SUCCESS) {
            gt_fail(__FILE__, __LINE__, "observing SMs: %s: %s", gctx_status_name(s),
                    gctx_last_error());
            return -1;
        }
        n = (int)count;
    }
    if (n < 0 || n > GT_MAX_SMS) {
        gt_fail(__FILE__, __LINE__, "no SM ids for the context (%d)", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (ids[i] < GT_MAX_SMS && !set->has[ids[i]]) {
            set->has[ids[i]] = 1;
            set->count++;
        }
    return 0;
}

int gt_partition_sms(gctx_partition *partition, gt_sm_set *set)
{
    gctx_context *context;
    gctx_status s = gctx_context_create(partition, NULL, &context);
    if (s != GCTX_SUCCESS) {
        gt_fail(__FILE__, __LINE__, "gctx_context_create: %s: %s", gctx_status_name(s),
                gctx_last_error());
        return -1;
    }
    int rc = gt_context_sms(context, set);
    gctx_context_release(context);
    return rc;
}

int gt_sm_sets_disjoint(const gt_sm_set *a, const gt_sm_set *b)
{
    for (unsigned i = 0; i < GT_MAX_SMS; i++)
        if (a->has[i] && b->has[i])
            return 0;
    return 1;
}

int gt_sm_set_within(const gt_sm_set *a, const gt_sm_set *b)
{
    for (unsigned i = 0; i < GT_MAX_SMS; i++)
        if (a->has[i] && !b->has[i])
            return 0;
    return 1;
}

const char *gt_sm_set_text(const gt_sm_set *set, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < GT_MAX_SMS && used + 6 < size; i++)
        if (set->has[i])
            used += (size_t)snprintf(buf + used, size - used, used ? " %u" : "%u", i);
    return buf;
}

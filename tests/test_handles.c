/* Handles carry a generation: a released handle stays refused when its object's memory and
 * its handle-table slot go to a new object, a stray release never drops someone else's
 * reference, and none of it needs the released memory (threads, under TSan). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "testing.h"
#include "sm_ids.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_QUARANTINE 1 /* ASan keeps freed memory from malloc for a long while */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_QUARANTINE 1
#endif
#endif
#ifndef ASAN_QUARANTINE
#define ASAN_QUARANTINE 0
#endif

static int refused(gctx_partition *stale)
{
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    return gctx_partition_get_info(stale, &info) == GCTX_ERROR_INVALID_HANDLE;
}

/* Released handles whose objects' memory went to new objects. Many are released at once:
 * glibc's calloc takes memory from the bins the per-thread cache overflows into. */
GT_TEST(stale_handle_refused_when_its_memory_is_reused)
{
    gt_require_device();
    GT_CHECK();
    enum { OLD = 32, NEW = 64 };
    int live = gctx__object_live_count();
    gctx_partition *old[OLD], *made[NEW];
    const void *old_object[OLD];
    for (unsigned i = 0; i < OLD; i++) {
        GT_ASSERT_STATUS(gctx_partition_from_device(0, &old[i]), GCTX_SUCCESS);
        old_object[i] = gctx__handle_object(old[i]);
        GT_ASSERT((void *)old[i] != old_object[i]); /* the handle is not the address */
    }
    for (unsigned i = 0; i < OLD; i++)
        gctx_partition_release(old[i]);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live);

    int stale = -1, reused = -1; /* a released handle, and the new object in its memory */
    for (unsigned n = 0; n < NEW; n++) {
        GT_ASSERT_STATUS(gctx_partition_from_device(0, &made[n]), GCTX_SUCCESS);
        for (unsigned i = 0; i < OLD && reused < 0; i++) {
            GT_ASSERT(made[n] != old[i]);
            if (gctx__handle_object(made[n]) == old_object[i])
                stale = (int)i, reused = (int)n;
        }
    }
    printf("# a released partition's memory reused: %s\n", reused >= 0 ? "yes" : "no");
    /* Where the allocation pattern is known (no sanitizer quarantine, no real driver's own
     * allocations in between), the reuse must have happened, or the test proved nothing. */
    if (!ASAN_QUARANTINE && gt_on_sim())
        GT_ASSERT(reused >= 0);
    gctx_partition *gone = old[stale >= 0 ? stale : 0];
    gctx_partition *victim = made[reused >= 0 ? reused : 0];

    GT_ASSERT(refused(gone));
    GT_ASSERT_CONTAINS(gctx_last_error(), "not a live greenctx handle");
    GT_ASSERT(gctx_partition_retain(gone) == NULL);
    gctx_partition_release(gone); /* refused: must not free the new object */
    gctx_context *ctx = NULL;
    GT_ASSERT_STATUS(gctx_context_create(gone, NULL, &ctx), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT(ctx == NULL);

    /* The new object is unharmed: alive, its one reference intact. */
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_partition_get_info(victim, &info), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live + NEW);
    for (unsigned n = 0; n < NEW; n++)
        gctx_partition_release(made[n]);
    GT_ASSERT(refused(victim));
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live);
}

GT_TEST(double_release_is_refused)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    int live = gctx__object_live_count();
    /* A context holds the partition: the caller's stray second release must not drop the
     * context's reference. */
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create(p, NULL, &c), GCTX_SUCCESS);
    GT_ASSERT(gctx_partition_retain(p) == p); /* the same handle, two caller references */
    gctx_partition_release(p);
    GT_ASSERT(!refused(p)); /* one reference left */
    gctx_partition_release(p);
    GT_ASSERT(refused(p));
    gctx_partition_release(p); /* stray */
    gctx_partition_release(p); /* stray */
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live + 1); /* the partition lives on in c */

    /* The context still has it, and hands it out under a new handle value. */
    gctx_partition *again = NULL;
    GT_ASSERT_STATUS(gctx_context_partition(c, &again), GCTX_SUCCESS);
    gctx_relation relation;
    GT_ASSERT_STATUS(gctx_partition_relation(again, again, &relation), GCTX_SUCCESS);
    GT_ASSERT_STATUS(gctx_partition_relation(p, again, &relation), GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_CONTAINS(gctx_last_error(), "partition a");
    gctx_partition_release(again);
    gctx_partition_release(again); /* stray, on an object a context still holds */
    gctx_context_info info = GCTX_CONTEXT_INFO_INIT;
    GT_ASSERT_STATUS(gctx_context_get_info(c, &info), GCTX_SUCCESS);
    gctx_context_release(c);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live - 1);
}

/* A handle given out again while the caller still holds it is the same value; once the
 * caller released it, the object comes back under a new one and the old stays dead. */
GT_TEST(handle_given_again_is_new_only_after_release)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    gctx_context *c = NULL;
    GT_ASSERT_STATUS(gctx_context_create(p, NULL, &c), GCTX_SUCCESS);
    gctx_stream *st = NULL;
    GT_ASSERT_STATUS(gctx_stream_create(c, NULL, &st), GCTX_SUCCESS);
    gctx_context *same = NULL;
    GT_ASSERT_STATUS(gctx_stream_context(st, &same), GCTX_SUCCESS);
    GT_ASSERT(same == c);
    gctx_context_release(same);
    gctx_context_release(c);
    GT_ASSERT_STATUS(gctx_context_get_info(c, &(gctx_context_info)GCTX_CONTEXT_INFO_INIT),
                     GCTX_ERROR_INVALID_HANDLE);
    gctx_context *fresh = NULL;
    GT_ASSERT_STATUS(gctx_stream_context(st, &fresh), GCTX_SUCCESS);
    GT_ASSERT(fresh != c);
    GT_ASSERT(gctx_context_green_handle(fresh) != NULL);
    GT_ASSERT(gctx_context_green_handle(c) == NULL);
    gctx_context_release(fresh);
    gctx_stream_release(st);
    gctx_partition_release(p);
}

GT_TEST(foreign_values_are_refused_without_reading_them)
{
    gctx_partition *p = gt_whole_device();
    GT_CHECK();
    int local = 0;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    GT_ASSERT_STATUS(gctx_partition_get_info((gctx_partition *)&local, &info),
                     GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_STATUS(gctx_partition_get_info((gctx_partition *)(uintptr_t)0xfffffff1u, &info),
                     GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_STATUS(gctx_context_get_info((gctx_context *)p,
                                           &(gctx_context_info)GCTX_CONTEXT_INFO_INIT),
                     GCTX_ERROR_INVALID_HANDLE);
    GT_ASSERT_CONTAINS(gctx_last_error(), "of another type");
    GT_ASSERT_STATUS(gctx_partition_get_info(NULL, &info), GCTX_ERROR_INVALID_ARGUMENT);
    gctx_partition_release(p);
}

/* ---- threads: rapid create/release, with stale handles poked meanwhile ---- */

#define THREADS 4
#define ROUNDS 500
static _Atomic(uintptr_t) published[THREADS]; /* a stale handle of each thread */
static atomic_int failures;

static void *churn(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        gctx_partition *p = NULL;
        if (gctx_partition_from_device(0, &p) != GCTX_SUCCESS) {
            atomic_fetch_add(&failures, 1);
            continue;
        }
        gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
        if (gctx_partition_get_info(p, &info) != GCTX_SUCCESS || info.sm_count == 0)
            atomic_fetch_add(&failures, 1);
        gctx_partition_release(p);
        atomic_store(&published[me], (uintptr_t)p); /* released before it is published */
        gctx_partition *other = (gctx_partition *)atomic_load(&published[(me + 1 + i) % THREADS]);
        if (other) {
            if (!refused(other) || gctx_partition_retain(other) != NULL)
                atomic_fetch_add(&failures, 1);
            gctx_partition_release(other); /* stray: refused */
        }
        if (!refused(p))
            atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

GT_TEST(threads_create_release_and_poke_stale_handles)
{
    gt_require_device();
    GT_CHECK();
    /* Held for the whole test: without it every last release lets the primary context go, and
     * on a real driver each round would then re-create it (about 100 ms). */
    gctx_partition *keep = gt_whole_device();
    GT_CHECK();
    int live = gctx__object_live_count();
    pthread_t threads[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, churn, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    GT_ASSERT_EQ_INT(atomic_load(&failures), 0);
    GT_ASSERT_EQ_INT(gctx__object_live_count(), live);
    gctx_partition_release(keep);
}

/* The ring that carries a latency program's steps from its threads to the preload's thread
 * (preload/run_steps.c): every step is reported once, in order, none lost while the reader
 * keeps up, and what it can't keep is counted. */
#include <pthread.h>
#include <stdlib.h>

#include "harness.h"
#include "run_steps.h"

typedef struct seen {
    float ms[4 * RUN_STEPS];
    unsigned n;
} seen;

static void keep(float ms, void *arg)
{
    seen *s = arg;
    if (s->n < sizeof s->ms / sizeof s->ms[0])
        s->ms[s->n] = ms;
    s->n++;
}

GT_TEST(steps_in_order_once)
{
    static run_steps r;
    seen s = {0};
    for (int i = 1; i <= 3; i++)
        run_steps_put(&r, (float)i);
    GT_ASSERT_EQ_INT(run_steps_read(&r, keep, &s), 0);
    GT_ASSERT_EQ_INT(s.n, 3);
    for (unsigned i = 0; i < 3; i++)
        GT_ASSERT_EQ_INT(s.ms[i], i + 1);
    GT_ASSERT_EQ_INT(run_steps_read(&r, keep, &s), 0);
    GT_ASSERT_EQ_INT(s.n, 3);
}

/* A writer preempted between its ticket and its step: the read stops there, and the next
 * read has it and those after it. */
GT_TEST(step_taken_not_yet_written_comes_next_read)
{
    static run_steps r;
    seen s = {0};
    int full;
    unsigned slow = run_steps_claim(&r, &full);
    GT_ASSERT(!full);
    run_steps_put(&r, 2.0f);
    run_steps_read(&r, keep, &s);
    GT_ASSERT_EQ_INT(s.n, 0);
    run_steps_publish(&r, slow, 1.0f);
    run_steps_read(&r, keep, &s);
    GT_ASSERT_EQ_INT(s.n, 2);
    GT_ASSERT_EQ_INT(s.ms[0], 1);
    GT_ASSERT_EQ_INT(s.ms[1], 2);
}

/* More steps than the ring holds between two reads: the unread ones stay, the rest are
 * counted; then it goes on. */
GT_TEST(steps_past_the_ring_are_counted)
{
    static run_steps r;
    seen s = {0};
    for (int i = 1; i <= RUN_STEPS + 44; i++)
        run_steps_put(&r, (float)i);
    GT_ASSERT_EQ_INT(run_steps_read(&r, keep, &s), 44);
    GT_ASSERT_EQ_INT(s.n, RUN_STEPS);
    GT_ASSERT_EQ_INT(s.ms[0], 1);
    GT_ASSERT_EQ_INT(s.ms[RUN_STEPS - 1], RUN_STEPS);
    run_steps_put(&r, 7.0f);
    GT_ASSERT_EQ_INT(run_steps_read(&r, keep, &s), 0);
    GT_ASSERT_EQ_INT(s.n, RUN_STEPS + 1);
    GT_ASSERT_EQ_INT(s.ms[RUN_STEPS], 7);
}

/* Writers on four threads, the reader on another (as the program's threads and the preload's
 * pacer): each writer's steps come once each, in its order; reported + dropped = written. */
enum { WRITERS = 4, EACH = 50000 };
static run_steps shared;
static atomic_int writing;

static void *writer(void *arg)
{
    int w = (int)(size_t)arg;
    for (int i = 1; i <= EACH; i++)
        run_steps_put(&shared, (float)(w * 100000 + i)); /* exact in a float */
    atomic_fetch_sub(&writing, 1);
    return NULL;
}

typedef struct tally {
    int last[WRITERS];
    long reported;
    int bad;
} tally;

static void count(float ms, void *arg)
{
    tally *t = arg;
    int v = (int)ms, w = v / 100000;
    if (w < 0 || w >= WRITERS || v % 100000 <= t->last[w])
        t->bad = 1; /* unknown, repeated or out of its writer's order */
    else
        t->last[w] = v % 100000;
    t->reported++;
}

GT_TEST(steps_from_threads_each_once)
{
    pthread_t threads[WRITERS];
    tally t = {{0}, 0, 0};
    unsigned long lost = 0;
    atomic_store(&writing, WRITERS);
    for (int w = 0; w < WRITERS; w++)
        GT_ASSERT_EQ_INT(pthread_create(&threads[w], NULL, writer, (void *)(size_t)w), 0);
    while (atomic_load(&writing))
        lost += run_steps_read(&shared, count, &t);
    for (int w = 0; w < WRITERS; w++)
        pthread_join(threads[w], NULL);
    lost += run_steps_read(&shared, count, &t);
    GT_ASSERT(!t.bad);
    GT_ASSERT_EQ_INT(t.reported + (long)lost, WRITERS * EACH);
}

/* The overhead bench's timing thread pinned to its CPU (bench/bench_pin.c): held on one CPU
 * while pinned, its mask back after, and a thread born while pinned (a driver's helper) not
 * left on the bench's one CPU. */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "bench_pin.h"
#include "harness.h"

static int same_mask(const cpu_set_t *a, const cpu_set_t *b) { return CPU_EQUAL(a, b); }

/* A thread that reports its mask at birth, then waits to be asked again. */
typedef struct helper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int asked, done;
    cpu_set_t at_birth, later;
} helper;

static void *helper_main(void *arg)
{
    helper *h = arg;
    pthread_mutex_lock(&h->lock);
    sched_getaffinity(0, sizeof h->at_birth, &h->at_birth);
    while (!h->asked)
        pthread_cond_wait(&h->cond, &h->lock);
    sched_getaffinity(0, sizeof h->later, &h->later);
    h->done = 1;
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* The calling thread held on pin's one CPU, one of `before`, and running there. */
static void held_on_its_cpu(const bench_pin *pin, const cpu_set_t *before)
{
    cpu_set_t during;
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof during, &during), 0);
    GT_ASSERT_EQ_INT(CPU_COUNT(&during), 1);
    GT_ASSERT(CPU_ISSET(pin->cpu, &during));
    GT_ASSERT(CPU_ISSET(pin->cpu, before));
    GT_ASSERT_EQ_INT(sched_getcpu(), pin->cpu);
}

GT_TEST(pinned_to_one_cpu_then_the_old_mask_back)
{
    cpu_set_t before, after;
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof before, &before), 0);
    bench_pin pin;
    bench_pin_begin(&pin);
    if (pin.cpu < 0)
        GT_SKIP("this thread's CPU mask can't be set here");
    held_on_its_cpu(&pin, &before);
    GT_CHECK();
    bench_pin_end(&pin);
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof after, &after), 0);
    GT_ASSERT(same_mask(&before, &after));
    GT_ASSERT_EQ_INT(pin.cpu, -1);
    bench_pin_end(&pin); /* twice: nothing more changes */
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof after, &after), 0);
    GT_ASSERT(same_mask(&before, &after));
}

/* Starts h's thread and waits until it has read its mask at birth. */
static int start_helper(helper *h, pthread_t *t)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    if (pthread_create(t, NULL, helper_main, h))
        return -1;
    for (;;) {
        pthread_mutex_lock(&h->lock);
        int born = CPU_COUNT(&h->at_birth) > 0;
        pthread_mutex_unlock(&h->lock);
        if (born)
            return 0;
        sched_yield();
    }
}

/* Asks h's thread for its mask now and joins it. */
static int finish_helper(helper *h, pthread_t t)
{
    pthread_mutex_lock(&h->lock);
    h->asked = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    int rc = pthread_join(t, NULL);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    return rc || !h->done ? -1 : 0;
}

/* Pins the caller and starts a helper while pinned; 0 when the test can run here. */
static int pinned_with_a_newborn(bench_pin *pin, cpu_set_t *before, helper *h, pthread_t *t)
{
    pin->cpu = -1; /* bench_pin_end does nothing until bench_pin_begin pinned */
    if (sched_getaffinity(0, sizeof *before, before) || CPU_COUNT(before) < 2)
        return 1; /* one CPU only: pinned and unpinned masks are the same */
    bench_pin_begin(pin);
    if (pin->cpu < 0)
        return 1; /* this thread's CPU mask can't be set here */
    return start_helper(h, t) ? -1 : 0;
}

/* A helper born while pinned: its mask back from bench_pin_end alone, or (free_first) from
 * bench_pin_free_born while the caller stays on its CPU until bench_pin_end. */
static void newborn_case(int free_first)
{
    bench_pin pin;
    cpu_set_t before, caller;
    helper h;
    pthread_t t;
    int rc = pinned_with_a_newborn(&pin, &before, &h, &t);
    if (rc > 0) {
        bench_pin_end(&pin);
        GT_SKIP("no CPU mask to change here (one CPU, or masks can't be set)");
    }
    GT_ASSERT_EQ_INT(rc, 0);
    if (free_first) {
        bench_pin_free_born(&pin);
        GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof caller, &caller), 0);
        GT_ASSERT_EQ_INT(CPU_COUNT(&caller), 1); /* the timing thread stays on its CPU */
        GT_ASSERT(CPU_ISSET(pin.cpu, &caller));
    } else {
        bench_pin_end(&pin);
    }
    GT_ASSERT_EQ_INT(finish_helper(&h, t), 0);
    GT_ASSERT_EQ_INT(CPU_COUNT(&h.at_birth), 1); /* it inherited the pin */
    GT_ASSERT(same_mask(&before, &h.later));
    bench_pin_end(&pin); /* after the first: nothing more changes */
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof caller, &caller), 0);
    GT_ASSERT(same_mask(&before, &caller));
}

GT_TEST(a_thread_born_while_pinned_gets_the_old_mask_back) { newborn_case(0); }

GT_TEST(threads_born_while_pinned_are_freed_before_each_stage_the_caller_kept)
{
    newborn_case(1);
}

/* The quiet reps of a row: those whose check read at most 1.10x the row's fastest, in order. */
GT_TEST(quiet_reps_are_those_within_a_tenth_of_the_fastest_check)
{
    const double checks[] = {2.5, 2.0, 2.19, 2.21, 3.0, 2.1};
    const double values[] = {10, 11, 12, 13, 14, 15};
    double kept[6] = {0};
    double limit = bench_quiet_limit(checks, 6);
    GT_ASSERT(limit > 2.2 - 1e-9 && limit < 2.2 + 1e-9);
    GT_ASSERT_EQ_INT((int)bench_keep_quiet(values, checks, 6, limit, kept), 3);
    GT_ASSERT(kept[0] == 11 && kept[1] == 12 && kept[2] == 15);
    bench_summary quiet;
    GT_ASSERT_EQ_INT((int)bench_summarize_quiet(values, checks, 6, limit, kept, &quiet), 3);
    GT_ASSERT(quiet.n == 3 && quiet.min == 11 && quiet.p50 == 12 && quiet.max == 15);
    GT_ASSERT(bench_quiet_limit(checks, 0) == 0);
    GT_ASSERT_EQ_INT((int)bench_keep_quiet(values, checks, 0, limit, kept), 0);
}

/* Moved to the quietest CPU: still held on exactly one, one of its old mask, which it runs on;
 * the old mask back at the end. Unpinned, nothing moves. */
GT_TEST(moved_to_the_quietest_cpu_of_its_old_mask)
{
    cpu_set_t before, during, after;
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof before, &before), 0);
    bench_pin pin;
    pin.cpu = -1;
    GT_ASSERT(bench_pin_move_to_quietest(&pin) == 0);
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof during, &during), 0);
    GT_ASSERT(same_mask(&before, &during));
    bench_pin_begin(&pin);
    if (pin.cpu < 0)
        GT_SKIP("this thread's CPU mask can't be set here");
    GT_ASSERT(bench_pin_move_to_quietest(&pin) > 0);
    held_on_its_cpu(&pin, &before);
    GT_CHECK();
    bench_pin_end(&pin);
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof after, &after), 0);
    GT_ASSERT(same_mask(&before, &after));
}

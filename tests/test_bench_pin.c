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

GT_TEST(pinned_to_one_cpu_then_the_old_mask_back)
{
    cpu_set_t before, during, after;
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof before, &before), 0);
    bench_pin pin;
    bench_pin_begin(&pin);
    if (pin.cpu < 0)
        GT_SKIP("this thread's CPU mask can't be set here");
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof during, &during), 0);
    GT_ASSERT_EQ_INT(CPU_COUNT(&during), 1);
    GT_ASSERT(CPU_ISSET(pin.cpu, &during));
    GT_ASSERT(CPU_ISSET(pin.cpu, &before));
    GT_ASSERT_EQ_INT(sched_getcpu(), pin.cpu);
    bench_pin_end(&pin);
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof after, &after), 0);
    GT_ASSERT(same_mask(&before, &after));
    GT_ASSERT_EQ_INT(pin.cpu, -1);
    bench_pin_end(&pin); /* twice: nothing more changes */
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof after, &after), 0);
    GT_ASSERT(same_mask(&before, &after));
}

GT_TEST(a_thread_born_while_pinned_gets_the_old_mask_back)
{
    cpu_set_t before;
    GT_ASSERT_EQ_INT(sched_getaffinity(0, sizeof before, &before), 0);
    if (CPU_COUNT(&before) < 2)
        GT_SKIP("one CPU only: pinned and unpinned masks are the same");
    bench_pin pin;
    bench_pin_begin(&pin);
    if (pin.cpu < 0)
        GT_SKIP("this thread's CPU mask can't be set here");
    helper h;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    pthread_t t;
    GT_ASSERT_EQ_INT(pthread_create(&t, NULL, helper_main, &h), 0);
    /* its mask at birth is read before it waits: wait for it to be running */
    for (;;) {
        pthread_mutex_lock(&h.lock);
        int born = CPU_COUNT(&h.at_birth) > 0;
        pthread_mutex_unlock(&h.lock);
        if (born)
            break;
        sched_yield();
    }
    bench_pin_end(&pin);
    pthread_mutex_lock(&h.lock);
    h.asked = 1;
    pthread_cond_signal(&h.cond);
    pthread_mutex_unlock(&h.lock);
    GT_ASSERT_EQ_INT(pthread_join(t, NULL), 0);
    GT_ASSERT(h.done);
    GT_ASSERT_EQ_INT(CPU_COUNT(&h.at_birth), 1); /* it inherited the pin */
    GT_ASSERT(same_mask(&before, &h.later));
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.lock);
}

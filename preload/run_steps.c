/* The steps' ring (run_steps.h): lossless while the reader keeps up, and never silent when
 * it does not. A writer takes a ticket only while its slot has been read, and says when the
 * slot is written (seq); the reader stops at a slot taken but not yet written, so a writer
 * between the two (preempted) delays its step and those after it by one read, never loses
 * them. */
#include "run_steps.h"

unsigned run_steps_claim(run_steps *r, int *full)
{
    unsigned t = atomic_load_explicit(&r->head, memory_order_relaxed);
    do {
        /* The tail only grows: a slot found read stays read. Acquire: the reader's read of
         * the slot's last step comes before this writer's new one. */
        *full = t - atomic_load_explicit(&r->tail, memory_order_acquire) >= RUN_STEPS;
        if (*full) {
            atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
            return 0;
        }
    } while (!atomic_compare_exchange_weak_explicit(&r->head, &t, t + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return t;
}

void run_steps_publish(run_steps *r, unsigned ticket, float ms)
{
    r->ms[ticket % RUN_STEPS] = ms;
    atomic_store_explicit(&r->seq[ticket % RUN_STEPS], ticket + 1, memory_order_release);
}

void run_steps_put(run_steps *r, float ms)
{
    int full;
    unsigned t = run_steps_claim(r, &full);
    if (!full)
        run_steps_publish(r, t, ms);
}

unsigned long run_steps_read(run_steps *r, void (*report)(float ms, void *arg), void *arg)
{
    unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed); /* the one reader's */
    for (; atomic_load_explicit(&r->seq[t % RUN_STEPS], memory_order_acquire) == t + 1; t++)
        report(r->ms[t % RUN_STEPS], arg);
    atomic_store_explicit(&r->tail, t, memory_order_release);
    return atomic_exchange_explicit(&r->lost, 0, memory_order_relaxed);
}

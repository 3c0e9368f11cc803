/* Host time that a microbenchmark can trust: the timing thread pinned to one CPU and that CPU
 * busy before the clock starts. */
#ifndef GREENCTX_BENCH_PIN_H
#define GREENCTX_BENCH_PIN_H

#include <sched.h>
#include <sys/types.h>

#define BENCH_PIN_MAX_THREADS 256

typedef struct bench_pin {
    int cpu;             /* the CPU the thread is held on; -1 when it could not be pinned */
    cpu_set_t saved;     /* the thread's mask before */
    unsigned nb_threads; /* the process's threads before, to tell those born while pinned */
    pid_t threads[BENCH_PIN_MAX_THREADS];
} bench_pin;

/* Pins the calling thread to the CPU it runs on (sched_getcpu): the scheduler can no longer
 * move it between the reps of a row, to a CPU whose caches and clock are cold. Never fails:
 * where the mask can't be set (a restricted container), pin->cpu is -1 and nothing changed. */
void bench_pin_begin(bench_pin *pin);
/* The calling thread's old mask back, and the same mask to every thread the process started
 * while pinned (a thread inherits its creator's mask: a driver's helper thread born during a
 * timed row would otherwise stay on the benchmark's one CPU). */
void bench_pin_end(bench_pin *pin);
/* The old mask to every thread the process started since bench_pin_begin, the caller still
 * pinned: a driver's thread born while a row made contexts would share the bench's one CPU
 * with the rows timed after it (called before each timed stage). */
void bench_pin_free_born(const bench_pin *pin);

/* Microseconds of a fixed chain of dependent multiplies (4000 cycles: 1 us at 4 GHz): the
 * same in every run on the same host at the same clock, so that a run whose host-time rows
 * all read slower can be told from a slower library or driver. */
double bench_pin_check_us(void);

#endif

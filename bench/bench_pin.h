/* Host time that a microbenchmark can trust: the timing thread pinned to one CPU and that CPU
 * busy before the clock starts. */
#ifndef GREENCTX_BENCH_PIN_H
#define GREENCTX_BENCH_PIN_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

#include "bench.h"

#define BENCH_PIN_MAX_THREADS 256

typedef struct bench_pin {
    int cpu;             /* the CPU the thread is held on; -1 when it could not be pinned */
    cpu_set_t saved;     /* the thread's mask before */
    unsigned nb_threads; /* the process's threads before, to tell those born while pinned */
    pid_t threads[BENCH_PIN_MAX_THREADS];
} bench_pin;

/* Pins the calling thread to the CPU it runs on, so that no rep moves to a cold CPU. Where the
 * mask can't be set (a restricted container), pin->cpu is -1 and nothing changed. */
void bench_pin_begin(bench_pin *pin);
/* The old mask back, to the caller and to every thread born while pinned. */
void bench_pin_end(bench_pin *pin);
/* The old mask to every thread born since bench_pin_begin (a driver's thread inherits the
 * pin and would share the bench's CPU): before each timed stage. */
void bench_pin_free_born(const bench_pin *pin);

/* Microseconds of fixed throughput-bound work (eight independent chains): on a VM, a vCPU whose
 * physical core another guest is using reads it slower, as the driver's calls there (a chain
 * of dependent multiplies would read the same on both). */
double bench_pin_check_us(void);

/* Moves the pinned thread to the CPU of its old mask whose check (best of three) reads fastest
 * now; such moments can be short, so rows call it before each block of reps and warm up
 * after. The chosen CPU's check; 0, nothing moved, when not pinned. */
double bench_pin_move_to_quietest(bench_pin *pin);

/* A rep is quiet when the check right before it read at most this times its row's fastest:
 * host-time rows give figures over every rep and over the quiet ones (a core of its own). */
#define BENCH_QUIET_SLACK 1.10
/* The fastest of n checks times BENCH_QUIET_SLACK (0 when n is 0). */
double bench_quiet_limit(const double *checks, size_t n);
/* The values whose checks read at most limit, in order, into out (room for n); their count. */
size_t bench_keep_quiet(const double *values, const double *checks, size_t n, double limit,
                        double *out);
/* bench_summarize of those values (copied into scratch, room for n); their count. */
size_t bench_summarize_quiet(const double *values, const double *checks, size_t n, double limit,
                             double *scratch, bench_summary *out);

#endif

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

/* Microseconds of fixed throughput-bound work (eight independent chains of multiplies,
 * shifts and adds, no memory). On a VM, a vCPU whose physical core another guest's thread is
 * using at that moment reads it slower, and the driver's calls there by as much; a chain of
 * dependent multiplies, whose latency leaves the core's ports to the other guest, reads the
 * same on both, so it can't tell them. */
double bench_pin_check_us(void);

/* Moves the pinned thread to the CPU of its old mask whose host check reads fastest now (the
 * best of three on each): on a VM whose vCPUs share physical cores with other guests, the
 * one whose core is its own at the moment. Those moments can last under a second, so the
 * timed rows call it before each block of a few dozen reps, and warm up again after it (the
 * new CPU's caches are cold). Returns the chosen CPU's check; 0, and nothing moved, when not
 * pinned. */
double bench_pin_move_to_quietest(bench_pin *pin);

/* A rep is quiet when the check right before it read at most BENCH_QUIET_SLACK times the
 * fastest of its row's checks: its CPU's core was not shared then. The host-time rows give
 * their figures over every rep and over the quiet ones, so that a figure of the library on a
 * core of its own can be told from one of the core's neighbour. */
#define BENCH_QUIET_SLACK 1.10
/* The quiet limit of a row's n checks: the fastest times BENCH_QUIET_SLACK (0 when n is 0). */
double bench_quiet_limit(const double *checks, size_t n);
/* The values whose checks read at most limit, in order, into out (room for n); their count. */
size_t bench_keep_quiet(const double *values, const double *checks, size_t n, double limit,
                        double *out);
/* bench_summarize of the values whose checks read at most limit (copied into scratch, room
 * for n, so that values keep their order); their count. */
size_t bench_summarize_quiet(const double *values, const double *checks, size_t n, double limit,
                             double *scratch, bench_summary *out);

#endif

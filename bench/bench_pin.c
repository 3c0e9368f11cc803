/* Pinning the timing thread: see bench_pin.h. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_pin.h"

#define CHECK_STEPS 1000 /* a multiply and an add each, 4 cycles of latency */
#define PROBE_REPS 15      /* a CPU's rank: the median of these */
#define PROBE_WARMUPS 3    /* first runs on a CPU, with its caches cold, not counted */
#define PROBE_SPIN_US 200  /* a CPU at speed before its probe */

/* The process's thread ids, at most max; the count. */
static unsigned list_threads(pid_t *tids, unsigned max)
{
    DIR *dir = opendir("/proc/self/task");
    unsigned n = 0;
    if (!dir)
        return 0;
    for (struct dirent *e; (e = readdir(dir)) && n < max;)
        if (e->d_name[0] != '.')
            tids[n++] = (pid_t)atoi(e->d_name);
    closedir(dir);
    return n;
}

static int pin_to(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one);
}

void bench_pin_begin(bench_pin *pin)
{
    memset(pin, 0, sizeof *pin);
    pin->cpu = -1;
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(0, sizeof pin->saved, &pin->saved))
        return;
    pin->nb_threads = list_threads(pin->threads, BENCH_PIN_MAX_THREADS);
    if (pin_to(cpu) == 0)
        pin->cpu = cpu;
}

/* The probe's median on the CPU the thread is on; < 0 when it failed. */
static double probe_median(bench_pin_probe probe, void *context)
{
    double v[PROBE_REPS];
    bench_spin_us(PROBE_SPIN_US);
    for (unsigned i = 0; i < PROBE_WARMUPS + PROBE_REPS; i++) {
        double us = probe(context);
        if (us < 0)
            return -1;
        if (i >= PROBE_WARMUPS)
            v[i - PROBE_WARMUPS] = us;
    }
    return bench_median(v, PROBE_REPS);
}

int bench_pin_fastest(bench_pin *pin, bench_pin_probe probe, void *context)
{
    if (pin->cpu < 0)
        return 0;
    int best = pin->cpu;
    unsigned probed = 0;
    double fastest = 0, slowest = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &pin->saved) || pin_to(cpu))
            continue; /* a CPU the mask names but that is offline now can't be pinned */
        double us = probe_median(probe, context);
        if (us < 0) {
            pin_to(pin->cpu);
            return -1;
        }
        if (!probed || us < fastest)
            fastest = us, best = cpu;
        if (us > slowest)
            slowest = us;
        probed++;
    }
    if (pin_to(best))
        best = pin->cpu, pin_to(best); /* gone meanwhile: back where it was */
    pin->cpu = best;
    pin->probed = probed;
    pin->fastest_us = fastest;
    pin->slowest_us = slowest;
    return 0;
}

static int listed(const bench_pin *pin, pid_t tid)
{
    for (unsigned i = 0; i < pin->nb_threads; i++)
        if (pin->threads[i] == tid)
            return 1;
    return 0;
}

void bench_pin_free_born(const bench_pin *pin)
{
    if (pin->cpu < 0)
        return;
    pid_t now[BENCH_PIN_MAX_THREADS];
    unsigned n = list_threads(now, BENCH_PIN_MAX_THREADS);
    for (unsigned i = 0; i < n; i++)
        if (!listed(pin, now[i]))
            sched_setaffinity(now[i], sizeof pin->saved, &pin->saved);
}

void bench_pin_end(bench_pin *pin)
{
    if (pin->cpu < 0)
        return;
    bench_pin_free_born(pin);
    sched_setaffinity(0, sizeof pin->saved, &pin->saved);
    pin->cpu = -1;
}

double bench_pin_check_us(void)
{
    static volatile uint64_t seed = 1;
    uint64_t x = seed;
    double t0 = bench_now_us();
    for (unsigned i = 0; i < CHECK_STEPS; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    double us = bench_now_us() - t0;
    seed = x;
    return us;
}

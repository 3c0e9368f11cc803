/* Pinning the timing thread: see bench_pin.h. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_pin.h"

#define CHECK_STEPS 1000 /* a multiply and an add each, 4 cycles of latency */

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

void bench_pin_begin(bench_pin *pin)
{
    memset(pin, 0, sizeof *pin);
    pin->cpu = -1;
    int cpu = sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    if (cpu < 0 || sched_getaffinity(0, sizeof pin->saved, &pin->saved))
        return;
    CPU_SET(cpu, &one);
    pin->nb_threads = list_threads(pin->threads, BENCH_PIN_MAX_THREADS);
    if (sched_setaffinity(0, sizeof one, &one) == 0)
        pin->cpu = cpu;
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

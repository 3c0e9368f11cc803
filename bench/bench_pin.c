/* Pinning the timing thread: see bench_pin.h. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_pin.h"

#define CHECK_STEPS 1000 /* 4 multiply chains, 2 shift-xor and 2 add-xor ones: about 2 us */

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
    uint64_t a = seed, b = a + 1, c = a + 2, d = a + 3, e = a | 1, f = a | 2, g = a + 5,
             h = a + 7;
    double t0 = bench_now_us();
    for (unsigned i = 0; i < CHECK_STEPS; i++) {
        a = a * 6364136223846793005ull + 1, b = b * 6364136223846793005ull + 3;
        c = c * 6364136223846793005ull + 5, d = d * 6364136223846793005ull + 7;
        e ^= e << 13, e ^= e >> 7, f ^= f << 13, f ^= f >> 7;
        g += h ^ (g >> 3), h += g ^ (h << 5);
    }
    double us = bench_now_us() - t0;
    seed = a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
    return us;
}

#define SURVEY_CHECKS 3 /* on each CPU of the saved mask: the best of them */

double bench_pin_move_to_quietest(bench_pin *pin)
{
    if (pin->cpu < 0)
        return 0;
    int best_cpu = pin->cpu;
    double best = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &pin->saved) || pin_to(cpu) != 0)
            continue;
        double us = bench_pin_check_us();
        for (int i = 1; i < SURVEY_CHECKS; i++)
            us = fmin(us, bench_pin_check_us());
        if (best == 0 || us < best)
            best = us, best_cpu = cpu;
    }
    if (pin_to(best_cpu) == 0)
        pin->cpu = best_cpu;
    else
        pin_to(pin->cpu);
    return best;
}

double bench_quiet_limit(const double *checks, size_t n)
{
    double fastest = n ? checks[0] : 0;
    for (size_t i = 1; i < n; i++)
        fastest = fmin(fastest, checks[i]);
    return fastest * BENCH_QUIET_SLACK;
}

size_t bench_keep_quiet(const double *values, const double *checks, size_t n, double limit,
                        double *out)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (checks[i] <= limit)
            out[kept++] = values[i];
    return kept;
}

size_t bench_summarize_quiet(const double *values, const double *checks, size_t n, double limit,
                             double *scratch, bench_summary *out)
{
    size_t kept = bench_keep_quiet(values, checks, n, limit, scratch);
    bench_summarize(scratch, kept, out);
    return kept;
}

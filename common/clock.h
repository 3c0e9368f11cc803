/* The monotonic clock in ns, and a sleep until a time of it: the tool, preload and simulator. */
#ifndef GREENCTX_COMMON_CLOCK_H
#define GREENCTX_COMMON_CLOCK_H

#include <errno.h>
#include <time.h>

static inline long long clock_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* Until t (clock_now_ns's time), through signals. */
static inline void clock_sleep_until(long long t)
{
    struct timespec ts = {(time_t)(t / 1000000000ll), (long)(t % 1000000000ll)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        continue;
}

#endif

/* Progress lines with a time estimate (progress.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "clock.h"
#include "progress.h"

void progress_begin(progress_meter *p, const char *what, unsigned total)
{
    p->what = what;
    p->total = total;
    p->done = 0;
    p->start_us = clock_now_ns() / 1e3;
}

const char *progress_left(double elapsed_s, unsigned done, unsigned total, char *buf,
                                unsigned size)
{
    buf[0] = '\0';
    if (done == 0 || done >= total)
        return buf;
    double left = elapsed_s / done * (total - done);
    if (left < 120)
        snprintf(buf, size, " (about %.0f s left)", ceil(left));
    else
        snprintf(buf, size, " (about %.0f min left)", ceil(left / 60));
    return buf;
}

void progress_step(progress_meter *p, const char *fmt, ...)
{
    char step[256], left[64];
    va_list args;
    va_start(args, fmt);
    vsnprintf(step, sizeof step, fmt, args);
    va_end(args);
    progress_left((clock_now_ns() / 1e3 - p->start_us) * 1e-6, p->done, p->total, left,
                        sizeof left);
    p->done++;
    fprintf(stderr, "%s [%u/%u] %s%s\n", p->what, p->done, p->total, step, left);
}

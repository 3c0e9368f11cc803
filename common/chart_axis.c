/* Nice ticks and labels that never collide (chart_axis.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart_axis.h"

void chart_ticks_make(double lo, double hi, unsigned max_ticks, chart_ticks *t)
{
    if (max_ticks < 2)
        max_ticks = 2;
    if (!(hi > lo)) /* one value (or none): an axis of one step around it */
        hi = lo + (lo != 0 ? fabs(lo) : 1);
    double raw = (hi - lo) / (max_ticks - 1), step = 0;
    double magnitude = pow(10, floor(log10(raw)));
    /* The smallest nice step that fits the range in max_ticks ticks (after rounding the
     * ends out to the step, which can need one more step than raw suggests). */
    static const double nice[] = {1, 2, 5, 10, 20};
    for (size_t i = 0; i < sizeof nice / sizeof nice[0]; i++) {
        step = nice[i] * magnitude;
        double first = floor(lo / step + 1e-9) * step, last = ceil(hi / step - 1e-9) * step;
        if ((last - first) / step + 1 <= max_ticks + 1e-9)
            break;
    }
    t->step = step;
    t->first = floor(lo / step + 1e-9) * step;
    t->count = (unsigned)llround((ceil(hi / step - 1e-9) * step - t->first) / step) + 1;
    double digits = -floor(log10(step) + 1e-9);
    t->decimals = digits > 0 ? (int)digits : 0;
}

double chart_tick(const chart_ticks *t, unsigned i) { return t->first + i * t->step; }

double chart_ticks_last(const chart_ticks *t) { return chart_tick(t, t->count - 1); }

void chart_tick_label(const chart_ticks *t, double value, char *buf, size_t size)
{
    if (fabs(value) < t->step * 1e-6)
        value = 0; /* no "-0" */
    snprintf(buf, size, "%.*f", t->decimals, value);
}

void chart_decade_label(double value, char *buf, size_t size)
{
    double digits = -floor(log10(value) + 1e-9);
    snprintf(buf, size, "%.*f", digits > 0 ? (int)digits : 0, value);
}

double chart_text_width(const char *text, int font_size) { return 0.6 * font_size * strlen(text); }

unsigned chart_spaced_labels(const double *x, const double *width, unsigned n, double gap,
                             int *keep)
{
    if (n == 0)
        return 0;
    unsigned kept = 1, last = n - 1;
    keep[last] = 1;
    for (unsigned i = n - 1; i-- > 0;) {
        keep[i] = x[last] - x[i] >= (width[last] + width[i]) / 2 + gap;
        if (keep[i]) {
            last = i;
            kept++;
        }
    }
    return kept;
}

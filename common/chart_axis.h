/* Axes that read well: ticks at 1, 2 or 5 times a power of ten in plain decimals (never
 * 4.32e+03), and labels that never overlap: the bench's charts and `run --sweep --svg`. */
#ifndef GREENCTX_CHART_AXIS_H
#define GREENCTX_CHART_AXIS_H

#include <stddef.h>

typedef struct chart_ticks {
    double first, step; /* tick i is first + i * step */
    unsigned count;
    int decimals;       /* digits after the point that every label needs */
} chart_ticks;

/* Ticks covering [lo, hi], at most max_ticks (>= 2), a nice step apart. */
void chart_ticks_make(double lo, double hi, unsigned max_ticks, chart_ticks *ticks);
double chart_tick(const chart_ticks *ticks, unsigned i);
double chart_ticks_last(const chart_ticks *ticks);
/* A value as the axis writes it: t's decimals, fixed notation. */
void chart_tick_label(const chart_ticks *ticks, double value, char *buf, size_t size);
/* A decade of a log axis (0.01, 1, 1000, 100000) in fixed notation. */
void chart_decade_label(double value, char *buf, size_t size);

/* The width of a label in pixels at a font size (sans-serif digits: 0.6 em each). */
double chart_text_width(const char *text, int font_size);
/* Which of n labels centred at ascending x[] to draw, none within `gap` pixels of another: the
 * last always (often the whole GPU), then right to left each that clears the last kept. */
unsigned chart_spaced_labels(const double *x, const double *width, unsigned n, double gap,
                             int *keep);

#endif

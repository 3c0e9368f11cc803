/* The charts' axes (common/chart_axis.c, bench/bench_svg.c): nice 1-2-5 ticks in plain
 * decimals for awkward ranges, x labels that never collide (SM counts 128 and 132 side by
 * side), and the y title clear of the top tick, checked in a rendered SVG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "chart_axis.h"
#include "harness.h"

/* 1, 2 or 5 times a power of ten. */
static int nice_step(double step)
{
    double m = step / pow(10, floor(log10(step) + 1e-9));
    return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9;
}

GT_TEST(ticks_are_nice_for_awkward_ranges)
{
    static const struct {
        double lo, hi;
        unsigned max;
        double first, step, last;
        const char *last_label;
    } cases[] = {
        {0, 66.4, 6, 0, 20, 80, "80"},        /* read "66.4" at the top before */
        {0, 4320, 6, 0, 1000, 5000, "5000"},  /* read "4.32e+03" before */
        {0, 0.037, 5, 0, 0.01, 0.04, "0.04"},
        {0, 1.1, 6, 0, 0.5, 1.5, "1.5"}, /* 0.2 would take 7 ticks */
        {0, 1.1, 7, 0, 0.2, 1.2, "1.2"},
        {0, 7.26, 6, 0, 2, 8, "8"},
        {3.2, 7.9, 6, 3, 1, 8, "8"},
        {0, 132, 6, 0, 50, 150, "150"},
        {0, 1, 6, 0, 0.2, 1, "1.0"}, /* every label of the axis with one decimal */
        {5, 5, 6, 5, 1, 10, "10"}, /* one value: an axis around it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        chart_ticks t;
        chart_ticks_make(cases[i].lo, cases[i].hi, cases[i].max, &t);
        char label[32];
        chart_tick_label(&t, chart_ticks_last(&t), label, sizeof label);
        printf("# [%g, %g]: %u ticks from %g step %g to %s\n", cases[i].lo, cases[i].hi, t.count,
               t.first, t.step, label);
        GT_ASSERT(nice_step(t.step));
        GT_ASSERT(t.count >= 2 && t.count <= cases[i].max);
        GT_ASSERT(fabs(t.first - cases[i].first) < 1e-9);
        GT_ASSERT(fabs(t.step - cases[i].step) < 1e-9);
        GT_ASSERT(fabs(chart_ticks_last(&t) - cases[i].last) < 1e-9);
        GT_ASSERT(t.first <= cases[i].lo && chart_ticks_last(&t) >= cases[i].hi);
        GT_ASSERT_STR_EQ(label, cases[i].last_label);
        for (unsigned k = 0; k < t.count; k++) {
            chart_tick_label(&t, chart_tick(&t, k), label, sizeof label);
            GT_ASSERT(strchr(label, 'e') == NULL && label[0] != '-');
        }
    }
    char decade[32];
    chart_decade_label(100000, decade, sizeof decade);
    GT_ASSERT_STR_EQ(decade, "100000");
    chart_decade_label(0.01, decade, sizeof decade);
    GT_ASSERT_STR_EQ(decade, "0.01");
}

GT_TEST(labels_never_collide)
{
    /* The scaling chart's SM counts on a 340-pixel axis of 132 SMs. */
    static const double sms[] = {8, 16, 24, 32, 48, 64, 96, 128, 132};
    enum { N = sizeof sms / sizeof sms[0] };
    double x[N], width[N];
    int keep[N];
    for (unsigned i = 0; i < N; i++) {
        char label[16];
        snprintf(label, sizeof label, "%g", sms[i]);
        x[i] = 60 + 340 * sms[i] / 132;
        width[i] = chart_text_width(label, 10);
    }
    unsigned kept = chart_spaced_labels(x, width, N, 4, keep);
    GT_ASSERT(keep[N - 1]);  /* the whole GPU */
    GT_ASSERT(!keep[N - 2]); /* 128 is 10 pixels from 132 */
    GT_ASSERT(keep[0] && keep[5]);
    unsigned counted = 0, last = N;
    for (unsigned i = 0; i < N; i++) {
        if (!keep[i])
            continue;
        counted++;
        if (last < N)
            GT_ASSERT(x[i] - x[last] >= (width[i] + width[last]) / 2 + 4);
        last = i;
    }
    GT_ASSERT_EQ_INT(counted, kept);
}

/* A <text> element of the SVG: where it is, its size, its text. */
typedef struct svg_text {
    double x, y;
    int size;
    char anchor[8];
    char text[128];
} svg_text;

static unsigned read_texts(const char *path, svg_text *texts, unsigned capacity)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    unsigned n = 0;
    while (f && n < capacity && fgets(line, sizeof line, f)) {
        svg_text *t = &texts[n];
        if (sscanf(line, "<text x=\"%lf\" y=\"%lf\" font-size=\"%d\" text-anchor=\"%7[a-z]\">%127[^<]",
                   &t->x, &t->y, &t->size, t->anchor, t->text) == 5)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* Horizontal extent of a text element. */
static void extent(const svg_text *t, double *left, double *right)
{
    double w = chart_text_width(t->text, t->size);
    *left = !strcmp(t->anchor, "start") ? t->x : !strcmp(t->anchor, "end") ? t->x - w : t->x - w / 2;
    *right = *left + w;
}

GT_TEST(a_rendered_chart_reads_well)
{
    bench_env env;
    memset(&env, 0, sizeof env);
    snprintf(env.gpu_name, sizeof env.gpu_name, "NVIDIA H200");
    env.sm_count = 132;
    env.driver_version = 13000;
    snprintf(env.date, sizeof env.date, "2026-12-01T00:00:00Z");
    snprintf(env.command, sizeof env.command, "greenctx bench scaling --svg x.svg");
    bench_chart *chart = calloc(1, sizeof *chart);
    GT_ASSERT(chart != NULL);
    chart->nb_curves = 1;
    chart_curve *c = &chart->curve[0];
    snprintf(c->title, sizeof c->title, "memory-bound copy");
    snprintf(c->y_label, sizeof c->y_label, "GB/s");
    static const double sms[] = {8, 16, 32, 64, 128, 132};
    c->nb_points = 6;
    for (unsigned i = 0; i < c->nb_points; i++) {
        c->x[i] = sms[i];
        c->y[i] = 4320 * sms[i] / 132; /* tops out at 4320: read 4.32e+03 before */
        c->ideal[i] = 0;
    }
    char path[] = "/tmp/greenctx-chart-XXXXXX";
    int fd = mkstemp(path);
    GT_ASSERT(fd >= 0);
    close(fd);
    int rc = bench_svg_write(path, &env, chart);
    free(chart);
    svg_text texts[256];
    unsigned n = rc == 0 ? read_texts(path, texts, 256) : 0;
    unlink(path);
    GT_ASSERT_EQ_INT(rc, 0);
    /* The panel's texts at font size 10: its x labels share the lowest row; its y ticks are
     * end-anchored; the y title is the "GB/s" text. */
    double axis_row = 0;
    const svg_text *title = NULL, *top_tick = NULL;
    for (unsigned i = 0; i < n; i++) {
        if (texts[i].size != 10)
            continue;
        if (!strcmp(texts[i].text, "GB/s"))
            title = &texts[i];
        else if (!strcmp(texts[i].anchor, "middle") && texts[i].y > axis_row)
            axis_row = texts[i].y;
        else if (!strcmp(texts[i].anchor, "end") && (!top_tick || texts[i].y < top_tick->y))
            top_tick = &texts[i];
    }
    GT_ASSERT(title && top_tick);
    GT_ASSERT_STR_EQ(top_tick->text, "5000");
    /* The title's bottom (baseline + descent) above the top tick label's top (baseline - cap). */
    GT_ASSERT(title->y + 0.25 * title->size <= top_tick->y - 0.75 * top_tick->size);
    /* The y ticks, bottom up: 0, then equal nice steps, in plain decimals. */
    double ticks[16];
    unsigned nb_ticks = 0;
    for (unsigned i = 0; i < n; i++)
        if (texts[i].size == 10 && !strcmp(texts[i].anchor, "end") && nb_ticks < 16) {
            GT_ASSERT(strchr(texts[i].text, 'e') == NULL);
            ticks[nb_ticks++] = atof(texts[i].text);
        }
    GT_ASSERT(nb_ticks >= 3 && ticks[0] == 0 && nice_step(ticks[1]));
    for (unsigned k = 1; k < nb_ticks; k++)
        GT_ASSERT(fabs(ticks[k] - k * ticks[1]) < 1e-9);
    unsigned labels = 0;
    double last_right = -1;
    int saw_132 = 0, saw_128 = 0;
    for (unsigned i = 0; i < n; i++) {
        const svg_text *t = &texts[i];
        if (t->size != 10 || strcmp(t->anchor, "middle") || t->y != axis_row)
            continue;
        double left, right;
        extent(t, &left, &right);
        GT_ASSERT(left >= last_right + 4); /* in order, and apart */
        last_right = right;
        labels++;
        saw_132 |= !strcmp(t->text, "132");
        saw_128 |= !strcmp(t->text, "128");
    }
    GT_ASSERT(saw_132 && !saw_128);
    GT_ASSERT_EQ_INT(labels, 5);
}

/* The chart as SVG: percentile rows on a log axis, curves beside their physical limit. */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "chart_axis.h"

#define W 960
#define LABEL_W 250
#define PLOT_X0 (LABEL_W + 10)
#define PLOT_X1 (W - 30)
#define ROW_H 18
#define CURVE_W 400
#define CURVE_H 220
#define CHART_Y_TITLE_GAP 14 /* from the y title's baseline down to the plot's top */
#define CHART_LABEL_GAP 4    /* pixels between two x labels at least */

static void text(FILE *f, double x, double y, int size, const char *anchor, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">", x, y, size,
            anchor);
    for (; *s; s++)
        fputs(*s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : (char[2]){*s, 0}, f);
    fputs("</text>\n", f);
}

static void line(FILE *f, double x0, double y0, double x1, double y1, const char *style)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" style=\"%s\"/>\n", x0, y0,
            x1, y1, style);
}

static double log_x(double v, double lo, double hi)
{
    if (v < lo)
        v = lo;
    return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
}

static double dist_panel(FILE *f, const chart_dist *d, double y)
{
    /* Decades around the rows' smallest p50 and largest max: every panel's ticks round. */
    double lo = 1e300, hi = 0;
    for (unsigned i = 0; i < d->nb_rows; i++) {
        if (d->rows[i].p50 > 0 && d->rows[i].p50 < lo)
            lo = d->rows[i].p50;
        if (d->rows[i].max > hi)
            hi = d->rows[i].max;
    }
    if (hi <= 0)
        lo = 1, hi = 10;
    lo = pow(10, floor(log10(lo)));
    hi = pow(10, ceil(log10(hi)));
    if (hi <= lo)
        hi = lo * 10;
    text(f, 10, y + 14, 13, "start", d->title);
    y += 24;
    double top = y, bottom = y + d->nb_rows * ROW_H;
    for (double t = lo; t <= hi * 1.0001; t *= 10) {
        double x = log_x(t, lo, hi);
        line(f, x, top, x, bottom, "stroke:#ddd");
        char buf[32];
        chart_decade_label(t, buf, sizeof buf);
        text(f, x, bottom + 12, 10, "middle", buf);
    }
    for (unsigned i = 0; i < d->nb_rows; i++) {
        const chart_row *r = &d->rows[i];
        double cy = y + i * ROW_H + ROW_H / 2.0;
        text(f, LABEL_W, cy + 4, 11, "end", r->label);
        double x50 = log_x(r->p50, lo, hi), x99 = log_x(r->p99, lo, hi);
        line(f, x50, cy, log_x(r->max, lo, hi), cy, "stroke:#888");
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" "
                   "style=\"fill:#4a90d9;stroke:#245\"/>\n",
                x50, cy - 5, x99 - x50 > 1 ? x99 - x50 : 1);
        double x999 = log_x(r->p999, lo, hi);
        line(f, x999, cy - 6, x999, cy + 6, "stroke:#c33;stroke-width:2");
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" style=\"fill:#000\"/>\n",
                log_x(r->max, lo, hi), cy);
    }
    return bottom + 30;
}

static void curve_panel(FILE *f, const chart_curve *c, double x0, double y0, double x_max)
{
    double y_max = 0;
    for (unsigned i = 0; i < c->nb_points; i++) {
        if (c->y[i] > y_max)
            y_max = c->y[i];
        if (c->ideal[i] > y_max)
            y_max = c->ideal[i];
    }
    /* The y axis ends at the nice tick at or above the largest value. */
    chart_ticks ticks;
    chart_ticks_make(0, y_max > 0 ? y_max : 1, 6, &ticks);
    y_max = chart_ticks_last(&ticks);
    text(f, x0, y0 + 14, 13, "start", c->title);
    /* The y title sits above the top tick's label, clear of it (CHART_Y_TITLE_GAP). */
    double px0 = x0 + 50, py0 = y0 + 24 + CHART_Y_TITLE_GAP, px1 = px0 + CURVE_W - 60;
    double py1 = y0 + CURVE_H - 26;
    line(f, px0, py1, px1, py1, "stroke:#000");
    line(f, px0, py0, px0, py1, "stroke:#000");
    char buf[48];
    for (unsigned t = 0; t < ticks.count; t++) {
        double v = chart_tick(&ticks, t), y = py1 - (py1 - py0) * v / y_max;
        line(f, px0 - 3, y, px1, y, "stroke:#eee");
        chart_tick_label(&ticks, v, buf, sizeof buf);
        text(f, px0 - 5, y + 4, 10, "end", buf);
    }
    text(f, (px0 + px1) / 2, py1 + 28, 11, "middle", "SMs");
    text(f, x0 + 4, py0 - CHART_Y_TITLE_GAP + 4, 10, "start", c->y_label);
#define PX(v) (px0 + (px1 - px0) * (v) / x_max)
#define PY(v) (py1 - (py1 - py0) * (v) / y_max)
    for (int pass = 0; pass < 2; pass++) {
        const double *ys = pass ? c->y : c->ideal;
        fprintf(f, "<polyline style=\"fill:none;stroke:%s\" points=\"",
                pass ? "#4a90d9;stroke-width:2" : "#888;stroke-dasharray:5,4");
        for (unsigned i = 0; i < c->nb_points; i++)
            fprintf(f, "%.1f,%.1f ", PX(c->x[i]), PY(ys[i]));
        fputs("\"/>\n", f);
    }
    /* Each point's SM count where the labels don't collide; the last always. */
    double at[CHART_MAX_POINTS], width[CHART_MAX_POINTS];
    int keep[CHART_MAX_POINTS];
    for (unsigned i = 0; i < c->nb_points; i++) {
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" style=\"fill:#245\"/>\n", PX(c->x[i]),
                PY(c->y[i]));
        snprintf(buf, sizeof buf, "%g", c->x[i]);
        at[i] = PX(c->x[i]);
        width[i] = chart_text_width(buf, 10);
    }
    chart_spaced_labels(at, width, c->nb_points, CHART_LABEL_GAP, keep);
    for (unsigned i = 0; i < c->nb_points; i++)
        if (keep[i]) {
            snprintf(buf, sizeof buf, "%g", c->x[i]);
            text(f, at[i], py1 + 13, 10, "middle", buf);
        }
#undef PX
#undef PY
}

int bench_svg_write(const char *path, const bench_env *env, const bench_chart *chart)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    double height = 100 + 20;
    for (unsigned i = 0; i < chart->nb_dist; i++)
        height += 24 + chart->dist[i].nb_rows * ROW_H + 30;
    height += ((chart->nb_curves + 1) / 2) * (CURVE_H + 20);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
               "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" "
               "fill=\"#fff\"/>\n",
               W, height);
    char buf[1200];
    text(f, 10, 22, 16, "start", "greenctx bench");
    snprintf(buf, sizeof buf, "%s (%u SMs), driver %d.%d, %s%s", env->gpu_name, env->sm_count,
             env->driver_version / 1000, env->driver_version % 1000 / 10, env->date,
             env->simulated ? ", simulated: timings meaningless" : "");
    text(f, 10, 42, 12, "start", buf);
    snprintf(buf, sizeof buf, "$ %s", env->command);
    text(f, 10, 60, 11, "start", buf);
    text(f, 10, 78, 11, "start",
         "rows: box p50..p99, red tick p99.9, dot max (log axis, us); curves: measured "
         "(solid) and the physical limit (dashed)");
    double y = 100;
    for (unsigned i = 0; i < chart->nb_dist; i++)
        y = dist_panel(f, &chart->dist[i], y);
    double x_max = env->sm_count;
    for (unsigned i = 0; i < chart->nb_curves; i++) {
        curve_panel(f, &chart->curve[i], 10 + (i % 2) * (CURVE_W + 60), y, x_max);
        if (i % 2 == 1 || i + 1 == chart->nb_curves)
            y += CURVE_H + 20;
    }
    fputs("</svg>\n", f);
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

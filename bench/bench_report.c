/* The output every benchmark shares (bench_chart.h): the header, the JSON document and the
 * chart, so that each benchmark writes only its own rows. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_chart.h"
#include "numbers.h"

void bench_print_header(const bench_env *env, const char *name, const char *simulated)
{
    char version[16];
    printf("greenctx bench%s%s: %s (%u SMs), driver %s, %s\n", name ? " " : "", name ? name : "",
           env->gpu_name, env->sm_count,
           greenctx_format_driver_version(env->driver_version, version, sizeof version),
           env->date);
    printf("command: %s\n", env->command);
    if (env->simulated)
        printf("simulated: %s\n", simulated ? simulated : "timings meaningless");
}

void bench_print_columns(const char *label, const char *a, const char *b)
{
    printf("%-34s %10s %10s | %10s %10s | %7s\n", label, a, "p99", b, "p99", "ratio");
}

/* A side's p50 and p99, "-" in both where there is none. */
static void print_side(const bench_summary *s)
{
    if (s)
        printf(" %10.2f %10.2f |", s->p50, s->p99);
    else
        printf(" %10s %10s |", "-", "-");
}

void bench_print_pair(const char *label, const bench_summary *a, const bench_summary *b,
                      const char *tail)
{
    printf("%-34s", label);
    print_side(a);
    print_side(b);
    if (a && b)
        printf(" %7.3f%s\n", bench_ratio(a->p50, b->p50), tail);
    else
        printf(" %7s%s\n", "-", tail);
}

void bench_chart_row(chart_dist *d, const char *label, const bench_summary *s, double scale)
{
    if (d->nb_rows == CHART_MAX_ROWS || s->n == 0)
        return;
    chart_row *r = &d->rows[d->nb_rows++];
    snprintf(r->label, sizeof r->label, "%s", label);
    r->p50 = s->p50 * scale, r->p99 = s->p99 * scale, r->p999 = s->p999 * scale;
    r->max = s->max * scale;
}

static int write_svg(const bench_env *env, const bench_report *r)
{
    bench_chart *chart = bench_calloc(1, sizeof *chart);
    if (!chart)
        return -1;
    r->chart(env, r->result, chart);
    int rc = bench_svg_write(env->opt.svg_path, env, chart);
    free(chart);
    if (rc == 0 && !env->opt.json)
        printf("\nchart: %s\n", env->opt.svg_path);
    return rc;
}

int bench_report_write(const bench_env *env, const bench_report *r)
{
    if (env->opt.json) {
        json_writer w;
        json_begin(&w, stdout, r->schema);
        bench_json_meta(&w, env);
        r->json(&w, env, r->result);
        json_end(&w);
    } else if (r->print) {
        r->print(env, r->result);
    }
    return env->opt.svg_path && r->chart ? write_svg(env, r) : 0;
}

/* greenctx run --sweep SIZES -- CMD: the program once per size; its speed-up and efficiency. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "chart_axis.h"
#include "clock.h"
#include "progress.h"
#include "tool.h"

#define SWEEP_MAX 32

typedef struct sweep_point {
    char request[RUN_MAX_REQUEST];
    run_device_plan plan; /* of the first device confined */
    run_session session;  /* of every device confined, for the claims */
    double wall_ms, speedup, efficiency;
    int status; /* the program's exit status; -1 when killed by a signal */
} sweep_point;

/* One run; with --json the program's stdout goes to stderr: stdout stays one JSON document. */
static int run_once(run_job *job, sweep_point *pt)
{
    if (run_set_environment(job, &pt->session) != 0)
        return -1;
    double t0 = clock_now_ns() / 1e6;
    pid_t child = run_child_start(job->options.command, job->opts->json);
    int status = 0;
    if (child < 0 || run_child_wait(child, &status) != 0)
        return -1;
    pt->wall_ms = clock_now_ns() / 1e6 - t0;
    pt->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
}

static void print_json(const run_job *job, const sweep_point *pts, unsigned n)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.run.sweep/1");
    if (job->options.device >= 0)
        json_int(&w, "device", job->options.device);
    else
        json_null(&w, "device");
    json_uint(&w, "device_sm_count", pts[0].plan.device_sms);
    json_array(&w, "command");
    for (char **c = job->options.command; *c; c++)
        json_string(&w, NULL, *c);
    json_close(&w);
    json_array(&w, "runs");
    for (unsigned i = 0; i < n; i++) {
        json_object(&w, NULL);
        json_string(&w, "request", pts[i].request);
        json_uint(&w, "sm_count", pts[i].plan.sm_count);
        json_fixed(&w, "wall_ms", pts[i].wall_ms, 3);
        json_fixed(&w, "speedup", pts[i].speedup, 4);
        json_fixed(&w, "efficiency_per_sm", pts[i].efficiency, 4);
        json_int(&w, "exit_status", pts[i].status);
        json_close(&w);
    }
    json_end(&w);
}

static void print_table(const run_job *job, const sweep_point *pts, unsigned n)
{
    printf("\ngreenctx run --sweep: %s", job->options.command[0]);
    for (char **c = job->options.command + 1; *c; c++)
        printf(" %s", *c);
    printf(" (%u SMs on the device", pts[0].plan.device_sms);
    if (job->options.device >= 0)
        printf(", device %d", job->options.device);
    printf(")\n\n%6s  %-10s %10s %9s %14s  %s\n", "SMs", "request", "wall ms", "speed-up",
           "efficiency/SM", "exit");
    for (unsigned i = 0; i < n; i++)
        printf("%6u  %-10s %10.1f %9.2f %14.2f  %d\n", pts[i].plan.sm_count, pts[i].request,
               pts[i].wall_ms, pts[i].speedup, pts[i].efficiency, pts[i].status);
    printf("\nspeed-up: wall time of the smallest size / this size's; efficiency: speed-up / "
           "(SMs / smallest SMs)\n");
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : (char[2]){*s, 0}, f);
}

/* Speed-up against SMs and perfect scaling, into f (opened before the runs, to fail early). */
static int write_svg(FILE *f, const run_job *job, const sweep_point *pts, unsigned n,
                     unsigned smallest)
{
    const double x0 = 70, y0 = 330, w = 560, h = 260;
    double max_x = 0, max_y = 1;
    for (unsigned i = 0; i < n; i++) {
        double ideal = (double)pts[i].plan.sm_count / pts[smallest].plan.sm_count;
        max_x = pts[i].plan.sm_count > max_x ? pts[i].plan.sm_count : max_x;
        max_y = ideal > max_y ? ideal : max_y;
        max_y = pts[i].speedup > max_y ? pts[i].speedup : max_y;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"680\" height=\"380\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<text x=\"%g\" y=\"24\">",
            x0);
    xml_text(f, "greenctx run --sweep:");
    for (char **c = job->options.command; *c; c++) {
        fputc(' ', f);
        xml_text(f, *c);
    }
    fprintf(f, "</text>\n<text x=\"%g\" y=\"44\">speed-up against %u SMs (dashed: perfect "
               "scaling)</text>\n",
            x0, pts[smallest].plan.sm_count);
    fprintf(f, "<path d=\"M%g %gV%gH%g\" stroke=\"black\" fill=\"none\"/>\n", x0, y0 - h, y0,
            x0 + w);
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">SMs</text>\n", x0 + w / 2, y0 + 36);
    /* Speed-up ticks at nice numbers up to the one at or above the largest. */
    chart_ticks ticks;
    chart_ticks_make(0, max_y, 6, &ticks);
    max_y = chart_ticks_last(&ticks);
    char label[32];
    for (unsigned t = 0; t < ticks.count; t++) {
        double v = chart_tick(&ticks, t), y = y0 - h * v / max_y;
        chart_tick_label(&ticks, v, label, sizeof label);
        fprintf(f, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#eee\"/>\n"
                   "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%sx</text>\n",
                x0, y, x0 + w, y, x0 - 6, y + 4, label);
    }
    /* The sizes by SM count (they come in the user's order), for the lines and the labels. */
    unsigned order[SWEEP_MAX];
    for (unsigned i = 0; i < n; i++) {
        unsigned j = i;
        for (; j > 0 && pts[order[j - 1]].plan.sm_count > pts[i].plan.sm_count; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    const char *series[] = {"stroke=\"#888\" stroke-dasharray=\"4 3\"", "stroke=\"#2a7\""};
    for (int s = 0; s < 2; s++) {
        fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" %s points=\"", series[s]);
        for (unsigned k = 0; k < n; k++) {
            const sweep_point *p = &pts[order[k]];
            double ideal = (double)p->plan.sm_count / pts[smallest].plan.sm_count;
            fprintf(f, "%.1f,%.1f ", x0 + w * p->plan.sm_count / max_x,
                    y0 - h * (s ? p->speedup : ideal) / max_y);
        }
        fputs("\"/>\n", f);
    }
    /* Each size's SM count under it, where the labels don't collide (the largest always). */
    double at[SWEEP_MAX], width[SWEEP_MAX];
    int keep[SWEEP_MAX];
    for (unsigned i = 0; i < n; i++) {
        snprintf(label, sizeof label, "%u", pts[order[i]].plan.sm_count);
        at[i] = x0 + w * pts[order[i]].plan.sm_count / max_x;
        width[i] = chart_text_width(label, 12);
    }
    chart_spaced_labels(at, width, n, 4, keep);
    for (unsigned i = 0; i < n; i++)
        if (keep[i])
            fprintf(f, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%u</text>\n", at[i],
                    y0 + 16, pts[order[i]].plan.sm_count);
    fputs("</svg>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

/* The sizes of --sweep, each a whole REQ: an empty one ("16,,32") is a typo, not a skip. */
static int parse_sizes(run_job *job, sweep_point *pts, unsigned *n)
{
    const char *p = job->options.sweep;
    *n = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage",
                                       "--sweep '%s': size %u is empty; give sizes as REQ,REQ,... "
                                       "(e.g. 16,32,64,all)",
                                       job->options.sweep, *n + 1);
        if (*n == SWEEP_MAX || len >= RUN_MAX_REQUEST)
            return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage",
                                       "--sweep takes at most %d sizes of a GROUP or all",
                                       SWEEP_MAX);
        sweep_point *pt = &pts[*n];
        memcpy(pt->request, p, len);
        pt->request[len] = '\0';
        int rc = run_check_request(job, pt->request, &pt->session);
        if (rc != GREENCTX_EXIT_OK)
            return rc;
        pt->plan = pt->session.plans[0];
        (*n)++;
        if (!p[len])
            return GREENCTX_EXIT_OK;
        p += len + 1;
    }
}

int run_sweep(run_job *job)
{
    static sweep_point pts[SWEEP_MAX]; /* each holds every device's plan: too big for the stack */
    unsigned n = 0;
    int rc = parse_sizes(job, pts, &n);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    FILE *svg = job->options.svg ? fopen(job->options.svg, "w") : NULL;
    if (job->options.svg && !svg)
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage",
                                   "--svg '%s' can't be written (%s); nothing was run",
                                   job->options.svg, strerror(errno));
    unsigned smallest = 0;
    int failed = 0;
    progress_meter progress;
    progress_begin(&progress, "greenctx run --sweep", n);
    for (unsigned i = 0; i < n; i++) {
        /* Each size is claimed for its run, and given back before the next one. */
        char note[600];
        if ((rc = run_take_claims(job, &pts[i].session)) != 0)
            break;
        pts[i].plan = pts[i].session.plans[0];
        progress_step(&progress, "%s on %u of %u SMs%s", job->options.command[0],
                      pts[i].plan.sm_count, pts[i].plan.device_sms,
                      run_claim_note(job, &pts[i].session, 0, note, sizeof note));
        int sig = 0, ran = run_once(job, &pts[i]);
        run_session_release(&pts[i].session);
        if (ran != 0 || (sig = run_child_interrupted())) {
            /* Ctrl-C or a kill of the tool stops the sweep, and then the tool, by that signal. */
            if (sig)
                fprintf(stderr, "greenctx run: the sweep was stopped by signal %d\n", sig);
            rc = sig ? run_child_raise(sig) : GREENCTX_EXIT_FAILED;
            break;
        }
        failed |= pts[i].status != 0;
        if (pts[i].plan.sm_count < pts[smallest].plan.sm_count)
            smallest = i;
    }
    if (rc != GREENCTX_EXIT_OK) {
        if (svg)
            fclose(svg);
        return rc;
    }
    for (unsigned i = 0; i < n; i++) {
        pts[i].speedup = pts[i].wall_ms > 0 ? pts[smallest].wall_ms / pts[i].wall_ms : 0;
        pts[i].efficiency =
            pts[i].speedup * pts[smallest].plan.sm_count / (double)pts[i].plan.sm_count;
    }
    if (job->opts->json)
        print_json(job, pts, n);
    else
        print_table(job, pts, n);
    if (failed)
        fprintf(stderr, "greenctx run: a run failed (its exit status is in the %s)\n",
                job->opts->json ? "runs' exit_status" : "last column");
    if (svg && write_svg(svg, job, pts, n, smallest) != 0) {
        fprintf(stderr, "greenctx run: --svg '%s' could not be written: %s\n", job->options.svg,
                strerror(errno));
        failed = 1;
    }
    return failed ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

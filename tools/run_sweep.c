/* greenctx run --sweep 16,32,64,all -- CMD: the program once per size, confined each time;
 * wall time, speed-up against the smallest size and efficiency per SM (table, --json, --svg):
 * how an unmodified program scales with SMs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_tool.h"

#define SWEEP_MAX 32

typedef struct sweep_point {
    char request[RUN_MAX_REQUEST];
    char text[512]; /* GREENCTX_RUN_SMS for this size */
    run_device_plan plan; /* of the first device confined */
    run_device_plan plans[RUN_MAX_DEVICES]; /* of every device confined, for the claims */
    unsigned nb_plans;
    double wall_ms, speedup, efficiency;
    int status; /* the program's exit status; -1 when killed by a signal */
} sweep_point;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One run; with --json the program's stdout goes to stderr, so that stdout stays one JSON
 * document. */
static int run_once(run_args *args, sweep_point *pt, const run_claims *claims)
{
    if (run_set_environment(args, pt->text, claims) != 0)
        return -1;
    fflush(NULL);
    double t0 = now_ms();
    pid_t child = fork();
    if (child < 0) {
        perror("greenctx run: fork");
        return -1;
    }
    if (child == 0) {
        if (args->json)
            dup2(STDERR_FILENO, STDOUT_FILENO);
        execvp(args->command[0], args->command);
        perror("greenctx run: exec");
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        continue;
    pt->wall_ms = now_ms() - t0;
    pt->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
}

static void print_json(const run_args *args, const sweep_point *pts, unsigned n)
{
    printf("{\"device\":");
    if (args->device >= 0)
        printf("%d", args->device);
    else
        printf("null");
    printf(",\"device_sm_count\":%u,\"command\":[", pts[0].plan.device_sms);
    for (char **c = args->command; *c; c++) {
        if (c != args->command)
            putchar(',');
        greenctx_json_string(stdout, *c);
    }
    printf("],\"runs\":[");
    for (unsigned i = 0; i < n; i++) {
        printf("%s{\"request\":", i ? "," : "");
        greenctx_json_string(stdout, pts[i].request);
        printf(",\"sm_count\":%u,\"wall_ms\":%.3f,\"speedup\":%.4f,\"efficiency_per_sm\":%.4f,"
               "\"exit_status\":%d}",
               pts[i].plan.sm_count, pts[i].wall_ms, pts[i].speedup, pts[i].efficiency,
               pts[i].status);
    }
    printf("]}\n");
}

static void print_table(const run_args *args, const sweep_point *pts, unsigned n)
{
    printf("\ngreenctx run --sweep: %s", args->command[0]);
    for (char **c = args->command + 1; *c; c++)
        printf(" %s", *c);
    printf(" (%u SMs on the device", pts[0].plan.device_sms);
    if (args->device >= 0)
        printf(", device %d", args->device);
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

/* Speed-up against SMs, with the line of perfect scaling. */
static int write_svg(const run_args *args, const sweep_point *pts, unsigned n, unsigned smallest)
{
    FILE *f = fopen(args->svg, "w");
    if (!f) {
        perror("greenctx run: --svg");
        return -1;
    }
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
    for (char **c = args->command; *c; c++) {
        fputc(' ', f);
        xml_text(f, *c);
    }
    fprintf(f, "</text>\n<text x=\"%g\" y=\"44\">speed-up against %u SMs (dashed: perfect "
               "scaling)</text>\n",
            x0, pts[smallest].plan.sm_count);
    fprintf(f, "<path d=\"M%g %gV%gH%g\" stroke=\"black\" fill=\"none\"/>\n", x0, y0 - h, y0,
            x0 + w);
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">SMs</text>\n", x0 + w / 2, y0 + 36);
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.1fx</text>\n", x0 - 6, y0 - h + 4,
            max_y);
    const char *series[] = {"stroke=\"#888\" stroke-dasharray=\"4 3\"", "stroke=\"#2a7\""};
    for (int s = 0; s < 2; s++) {
        fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" %s points=\"", series[s]);
        for (unsigned i = 0; i < n; i++) {
            double ideal = (double)pts[i].plan.sm_count / pts[smallest].plan.sm_count;
            fprintf(f, "%.1f,%.1f ", x0 + w * pts[i].plan.sm_count / max_x,
                    y0 - h * (s ? pts[i].speedup : ideal) / max_y);
        }
        fputs("\"/>\n", f);
    }
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%u</text>\n",
                x0 + w * pts[i].plan.sm_count / max_x, y0 + 16, pts[i].plan.sm_count);
    fputs("</svg>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

int run_sweep(run_args *args)
{
    static sweep_point pts[SWEEP_MAX];
    unsigned n = 0;
    char *list = strdup(args->sweep), *save = NULL;
    if (!list)
        return greenctx_tool_fail(args->opts, GCTX_ERROR_OUT_OF_MEMORY);
    int rc = GREENCTX_EXIT_OK;
    for (char *req = strtok_r(list, ",", &save); req && rc == GREENCTX_EXIT_OK;
         req = strtok_r(NULL, ",", &save)) {
        if (n == SWEEP_MAX || strlen(req) >= RUN_MAX_REQUEST) {
            rc = greenctx_tool_error(args->opts, GREENCTX_EXIT_USAGE, "usage",
                                     "--sweep takes at most %d sizes of a GROUP or all",
                                     SWEEP_MAX);
            break;
        }
        snprintf(pts[n].request, sizeof pts[n].request, "%s", req);
        rc = run_check_request(args, req, pts[n].text, sizeof pts[n].text, pts[n].plans,
                               &pts[n].nb_plans);
        pts[n].plan = pts[n].plans[0];
        n += rc == GREENCTX_EXIT_OK;
    }
    free(list);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    if (n == 0)
        return GREENCTX_EXIT_USAGE;
    unsigned smallest = 0;
    int failed = 0;
    for (unsigned i = 0; i < n; i++) {
        /* Each size is claimed for its run, and given back before the next one. */
        run_claims claims;
        char note[600];
        if ((rc = run_take_claims(args, pts[i].text, pts[i].plans, pts[i].nb_plans, &claims)) != 0)
            return rc;
        pts[i].plan = pts[i].plans[0];
        fprintf(stderr, "greenctx run: %s on %u of %u SMs%s\n", args->command[0],
                pts[i].plan.sm_count, pts[i].plan.device_sms,
                run_claim_note(args, &claims, 0, note, sizeof note));
        int ran = run_once(args, &pts[i], &claims);
        run_drop_claims(&claims);
        if (ran != 0)
            return GREENCTX_EXIT_FAILED;
        failed |= pts[i].status != 0;
        if (pts[i].plan.sm_count < pts[smallest].plan.sm_count)
            smallest = i;
    }
    for (unsigned i = 0; i < n; i++) {
        pts[i].speedup = pts[i].wall_ms > 0 ? pts[smallest].wall_ms / pts[i].wall_ms : 0;
        pts[i].efficiency =
            pts[i].speedup * pts[smallest].plan.sm_count / (double)pts[i].plan.sm_count;
    }
    if (args->json)
        print_json(args, pts, n);
    else
        print_table(args, pts, n);
    if (args->svg && write_svg(args, pts, n, smallest) != 0)
        failed = 1;
    if (failed)
        fprintf(stderr, "greenctx run: a run failed (its exit status is in the %s)\n",
                args->json ? "runs' exit_status" : "last column");
    return failed ? GREENCTX_EXIT_FAILED : GREENCTX_EXIT_OK;
}

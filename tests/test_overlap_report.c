/* bench/bench_overlap_report.c on a made-up run: the advisor's two picks, the line a user
 * copies, and the JSON (one document, parsed by python3 when it is there). No GPU needed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_overlap.h"
#include "harness.h"

static olap_arm arm(olap_kind kind, unsigned c, unsigned max_ctas, unsigned target, double p99,
                    double tflops, double step)
{
    olap_arm a;
    memset(&a, 0, sizeof a);
    a.kind = kind, a.comm_sms = c, a.max_ctas = max_ctas, a.sm_target = target;
    a.compute_sms = kind == OLAP_GREEN ? 132 - c : 132;
    snprintf(a.label, sizeof a.label, "%s %u/%u/%u", kind == OLAP_GREEN ? "green" : "plain", c,
             max_ctas, target);
    a.measured = 1;
    a.ar_us.n = a.ar_alone_us.n = 100;
    a.ar_us.p50 = p99 * 0.8, a.ar_us.p99 = p99, a.ar_us.max = p99 * 1.5;
    a.ar_alone_us.p50 = 30, a.ar_alone_us.p99 = 40;
    a.gemm_tflops = tflops, a.gemm_alone_tflops = 800;
    a.step_ms = a.step_min_ms = a.step_max_ms = step;
    return a;
}

/* One size: ordinary streams, and a few arms with known winners. */
static void made_up(olap_result *res)
{
    memset(res, 0, sizeof *res);
    res->gemm_whole_tflops = 850;
    res->m = res->n = res->k = 8192;
    res->nb_sizes = 1;
    olap_size_result *sr = &res->sizes[0];
    sr->bytes = 4u << 20;
    sr->arms[0] = arm(OLAP_PLAIN, 0, 0, 0, 165, 820, 12.0);
    sr->arms[1] = arm(OLAP_PLAIN_MAXCTAS, 16, 16, 0, 170, 780, 11.5);
    sr->arms[2] = arm(OLAP_GREEN, 16, 0, 0, 70, 700, 9.0);   /* GEMM 0.82 of whole */
    sr->arms[3] = arm(OLAP_GREEN, 16, 16, 116, 60, 690, 8.0); /* shortest step */
    sr->arms[4] = arm(OLAP_GREEN, 8, 0, 124, 90, 790, 8.5);   /* GEMM 0.93: keeps it */
    sr->arms[5] = arm(OLAP_GREEN, 8, 8, 124, 120, 780, 8.7);
    sr->arms[6] = arm(OLAP_GREEN, 32, 0, 0, 10, 500, 7.5);
    sr->arms[6].measured = 0; /* an arm that did not run is never picked */
    sr->nb_arms = 7;
}

GT_TEST(advisor_picks_the_shortest_step_and_the_best_p99_keeping_the_gemm)
{
    olap_result *res = malloc(sizeof *res);
    GT_ASSERT(res != NULL);
    made_up(res);
    bench_overlap_advise(res);
    int best_step = res->sizes[0].best_step, best_p99 = res->sizes[0].best_p99;
    free(res);
    GT_ASSERT_EQ_INT(best_step, 3);
    GT_ASSERT_EQ_INT(best_p99, 4);
}

GT_TEST(nothing_keeps_the_gemm)
{
    olap_result *res = malloc(sizeof *res);
    GT_ASSERT(res != NULL);
    made_up(res);
    res->gemm_whole_tflops = 2000; /* no arm reaches 0.9 of it */
    bench_overlap_advise(res);
    int best_p99 = res->sizes[0].best_p99;
    free(res);
    GT_ASSERT_EQ_INT(best_p99, -1);
}

GT_TEST(advice_lines_say_what_to_write)
{
    char line[512];
    olap_arm a = arm(OLAP_GREEN, 16, 16, 116, 60, 690, 8.0);
    bench_overlap_advice_line(&a, line, sizeof line);
    GT_ASSERT_CONTAINS(line, "gctx_group groups[2] = {{.num_sms = 16}, {.backfill = 1}};");
    GT_ASSERT_CONTAINS(line, "ncclConfig_t config = NCCL_CONFIG_INITIALIZER; config.maxCTAs = 16;");
    GT_ASSERT_CONTAINS(line, "cublasSetSmCountTarget(handle, 116);");
    a = arm(OLAP_GREEN, 24, 0, 0, 60, 690, 8.0);
    bench_overlap_advice_line(&a, line, sizeof line);
    GT_ASSERT_CONTAINS(line, "{{.num_sms = 24}, {.backfill = 1}}");
    GT_ASSERT(strstr(line, "maxCTAs") == NULL && strstr(line, "cublasSetSmCountTarget") == NULL);
    a = arm(OLAP_PLAIN_MAXCTAS, 8, 8, 0, 60, 690, 8.0);
    bench_overlap_advice_line(&a, line, sizeof line);
    GT_ASSERT_CONTAINS(line, "ordinary streams, no split");
    GT_ASSERT_CONTAINS(line, "config.maxCTAs = 8;");
}

GT_TEST(json_is_one_document)
{
    olap_result *res = malloc(sizeof *res);
    GT_ASSERT(res != NULL);
    made_up(res);
    bench_overlap_advise(res);
    char path[] = "/tmp/greenctx-overlap-json-XXXXXX";
    int fd = mkstemp(path);
    GT_ASSERT(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    json_writer w;
    json_begin(&w, stdout, "greenctx.bench.overlap/1");
    bench_overlap_json(&w, NULL, res);
    json_end(&w);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(fd);
    free(res);
    char command[256];
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))[\"overlap\"]; "
             "s=d[\"sizes\"][0]; sys.exit(0 if s[\"shortest_step\"][\"arm\"] == 3 and "
             "s[\"shortest_p99_keeping_gemm\"][\"arm\"] == 4 and len(s[\"arms\"]) == 7 else 3)' %s",
             path);
    int have_python = system("python3 -c pass >/dev/null 2>&1") == 0;
    int rc = have_python ? system(command) : 0;
    unlink(path);
    if (!have_python)
        GT_SKIP("python3 missing: the JSON was written but not parsed");
    GT_ASSERT_EQ_INT(rc, 0);
}

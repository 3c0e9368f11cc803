/* `bench elastic` without a GPU: its traces (the batch at each instant, the mean loads, the
 * seeded Poisson arrivals), the rule that picks the best static split, and the issue's
 * targets checked on made-up arms (met, not met, not applying, "simulated" on the
 * simulator), and every kernel's reach against the buffers the host allocates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_elastic.h"
#include "harness.h"

GT_TEST(onoff_is_the_peak_one_second_in_five_and_a_tenth_otherwise)
{
    el_trace t;
    GT_ASSERT_EQ_INT(el_trace_make(&t, EL_TRACE_ONOFF, 10, 32, 1), 0);
    GT_ASSERT_EQ_INT(el_trace_batch(&t, 0.0), 32);
    GT_ASSERT_EQ_INT(el_trace_batch(&t, 0.99), 32);
    GT_ASSERT_EQ_INT(el_trace_batch(&t, 1.01), 3); /* 10 % of 32, rounded */
    GT_ASSERT_EQ_INT(el_trace_batch(&t, 4.99), 3);
    GT_ASSERT_EQ_INT(el_trace_batch(&t, 5.5), 32);
    el_trace_free(&t);
    GT_ASSERT(fabs(el_trace_mean_load(EL_TRACE_ONOFF) - 0.28) < 1e-12);
    GT_ASSERT(fabs(el_trace_mean_load(EL_TRACE_DUTY50) - 0.55) < 1e-12);
}

GT_TEST(duty50_and_stationary_batches)
{
    el_trace d, s;
    GT_ASSERT_EQ_INT(el_trace_make(&d, EL_TRACE_DUTY50, 10, 32, 1), 0);
    GT_ASSERT_EQ_INT(el_trace_make(&s, EL_TRACE_STATIONARY, 10, 32, 1), 0);
    GT_ASSERT_EQ_INT(el_trace_batch(&d, 2.4), 32);
    GT_ASSERT_EQ_INT(el_trace_batch(&d, 2.6), 3);
    for (double t = 0; t < 10; t += 0.37)
        GT_ASSERT_EQ_INT(el_trace_batch(&s, t), 9); /* 0.28 x 32 */
    /* A batch never falls below one request, even at a peak of one. */
    el_trace one;
    GT_ASSERT_EQ_INT(el_trace_make(&one, EL_TRACE_ONOFF, 10, 1, 1), 0);
    GT_ASSERT_EQ_INT(el_trace_batch(&one, 2.0), 1);
    el_trace_free(&d);
    el_trace_free(&s);
    el_trace_free(&one);
}

GT_TEST(poisson_is_seeded_and_has_the_onoff_mean)
{
    el_trace a, b, c;
    GT_ASSERT_EQ_INT(el_trace_make(&a, EL_TRACE_POISSON, 200, 32, 7), 0);
    GT_ASSERT_EQ_INT(el_trace_make(&b, EL_TRACE_POISSON, 200, 32, 7), 0);
    GT_ASSERT_EQ_INT(el_trace_make(&c, EL_TRACE_POISSON, 200, 32, 8), 0);
    double sum = 0;
    unsigned n = 0, differs = 0, varies = 0, first = el_trace_batch(&a, 0);
    for (double t = 0; t < 200; t += 0.05, n++) {
        unsigned x = el_trace_batch(&a, t);
        GT_ASSERT_EQ_INT(x, el_trace_batch(&b, t));
        GT_ASSERT(x >= 1 && x <= 32);
        differs += x != el_trace_batch(&c, t);
        varies += x != first;
        sum += x;
    }
    /* Little's law: 0.28 x 32 requests in the batch on average (within sampling noise). */
    GT_ASSERT(fabs(sum / n - 0.28 * 32) < 0.8);
    GT_ASSERT(differs > n / 4);
    GT_ASSERT(varies > n / 4);
    el_trace_free(&a);
    el_trace_free(&b);
    el_trace_free(&c);
}

/* An arm that ran: its p99 per output token and prefill rate. Its per-step p99 is made
 * twice that, so a rule that read the steps' would fail these tests. */
static el_arm *add(elastic_result *r, el_arm_kind kind, const char *name, double p99,
                   double rate)
{
    el_arm *a = el_arm_new(r, kind, name, name);
    a->ran = 1;
    a->steps = 100;
    a->token_ms = (bench_summary){.n = 1000, .p50 = p99 / 2, .p99 = p99};
    a->step_ms = (bench_summary){.n = 100, .p50 = p99, .p99 = 2 * p99};
    a->prefill_tokens_per_s = rate;
    return a;
}

static elastic_result *made_up(el_trace_kind trace)
{
    elastic_result *r = calloc(1, sizeof *r);
    r->trace = trace;
    r->target_ms = 2.0;
    add(r, EL_ARM_STATIC, "static_16", 9.0, 5000);  /* most prefill, misses the target */
    add(r, EL_ARM_STATIC, "static_64", 1.9, 3000);  /* within, the most of those */
    add(r, EL_ARM_STATIC, "static_96", 1.2, 2000);
    el_arm_new(r, EL_ARM_STATIC, "static_112", "static_112"); /* did not run */
    return r;
}

GT_TEST(best_static_is_the_most_prefill_within_the_target)
{
    elastic_result *r = made_up(EL_TRACE_ONOFF);
    el_pick_best(r);
    GT_ASSERT_STR_EQ(r->arm[r->best_static].name, "static_64");
    GT_ASSERT_EQ_INT(r->best_static_within, 1);
    /* None within: the smallest p99. */
    r->target_ms = 1.0;
    el_pick_best(r);
    GT_ASSERT_STR_EQ(r->arm[r->best_static].name, "static_96");
    GT_ASSERT_EQ_INT(r->best_static_within, 0);
    GT_ASSERT_EQ_INT(r->best_chunked, -1);
    free(r);
}

GT_TEST(targets_met_and_not_met_on_onoff)
{
    bench_env env;
    memset(&env, 0, sizeof env);
    elastic_result *r = made_up(EL_TRACE_ONOFF);
    el_arm *ctl = add(r, EL_ARM_CONTROLLER, "controller", 1.8, 4000); /* 1.33x static_64 */
    ctl->resizes = 12;
    ctl->resize_us.p50 = 4;
    ctl->resize_us.p99 = 25; /* over 20 us */
    el_arm *claims = add(r, EL_ARM_2P_CLAIMS, "2p_claims", 1.5, 1000);
    el_arm *moved = add(r, EL_ARM_2P_ELASTIC, "2p_claims_controller", 1.9, 1200); /* 1.2x */
    moved->grant_ms = (bench_summary){.n = 4, .p50 = 3, .p99 = 9};
    moved->thr_kernel_ms = (bench_summary){.n = 400, .p50 = 2, .p99 = 5}; /* 4 ms beyond */
    (void)claims;
    el_pick_best(r);
    el_check_targets(&env, r);
    GT_ASSERT(r->check[0].applies && r->check[0].met);
    GT_ASSERT_CONTAINS(r->check[0].detail, "1.33x static_64");
    GT_ASSERT(r->check[1].applies && !r->check[1].met);
    GT_ASSERT_CONTAINS(r->check[1].detail, "2p_claims's rate");
    GT_ASSERT(!r->check[2].applies); /* stationary only */
    GT_ASSERT(r->check[3].applies && !r->check[3].met);
    GT_ASSERT(r->check[4].applies && r->check[4].met);
    GT_ASSERT_CONTAINS(r->check[4].detail, "4.00 ms beyond it");
    GT_ASSERT(strstr(r->check[0].detail, "simulated") == NULL);
    GT_ASSERT(r->check[0].measured && r->check[4].measured);
    /* A controller that wins on rate but breaks the target does not meet it. */
    ctl->token_ms.p99 = 2.5;
    el_check_targets(&env, r);
    GT_ASSERT(r->check[0].applies && !r->check[0].met);
    free(r);
}

GT_TEST(stationary_allows_three_percent_and_the_simulator_says_so)
{
    bench_env env;
    memset(&env, 0, sizeof env);
    env.simulated = 1;
    elastic_result *r = made_up(EL_TRACE_STATIONARY);
    el_arm *ctl = add(r, EL_ARM_CONTROLLER, "controller", 1.9, 2920); /* 0.973x */
    el_pick_best(r);
    el_check_targets(&env, r);
    GT_ASSERT(!r->check[0].applies && !r->check[1].applies);
    GT_ASSERT(r->check[2].applies && r->check[2].met);
    GT_ASSERT_CONTAINS(r->check[2].detail, "simulated: not a measurement");
    GT_ASSERT(!r->check[2].measured); /* printed "simulated", never "met" */
    ctl->prefill_tokens_per_s = 2900; /* 0.967x */
    el_check_targets(&env, r);
    GT_ASSERT(r->check[2].applies && !r->check[2].met);
    GT_ASSERT(!r->check[3].applies); /* no re-size happened */
    free(r);
}

/* The reach of each kernel of bench/kernels/elastic_kernels.cu, in bytes past its buffer's
 * start, for the launches bench_elastic_work.c makes: the kernels' own index arithmetic,
 * written again here, against the sizes the host allocates (a read past them is a sticky
 * fault on the GPU that ends the run). */
static void check_decode_reach(const el_shape *shape, unsigned batch, const el_sizes *z)
{
    for (unsigned m = 0; m < EL_NB_MATRICES; m++) { /* gce_gemv: a warp per row */
        unsigned rows = el_matrix_rows[m], cols = el_matrix_cols[m], vecs = cols / 8;
        GT_ASSERT_EQ_INT(cols % 8, 0); /* uint4 loads of whole rows */
        GT_ASSERT_EQ_INT(rows % (256 / 32), 0); /* grid rows / 8: a warp for every row */
        size_t w_end = ((size_t)(rows - 1) * vecs + vecs) * 16;
        size_t x_end = ((size_t)(batch - 1) * vecs + vecs) * 16;
        size_t y_end = ((size_t)(batch - 1) * rows + rows) * 4;
        GT_ASSERT(w_end <= z->weight[m] && x_end <= z->x && y_end <= z->y);
    }
    /* gce_decode_attn: block (bh, s) of batch x 8 x splits, 8 warps over its positions */
    unsigned splits = el_attn_splits(shape, batch), ctx = shape->context;
    unsigned per = (ctx + splits - 1) / splits;
    GT_ASSERT(splits >= 1 && per >= 1);
    unsigned long long covered = 0, blocks = (unsigned long long)batch * EL_KV_HEADS * splits;
    for (unsigned s = 0; s < splits; s++) {
        unsigned p0 = s * per, p1 = (s + 1) * per < ctx ? (s + 1) * per : ctx;
        covered += p1 > p0 ? p1 - p0 : 0;
    }
    GT_ASSERT_EQ_INT(covered, ctx); /* every position once: the splits tile the context */
    unsigned long long bh_last = (unsigned long long)batch * EL_KV_HEADS - 1;
    size_t kv_end = ((size_t)bh_last * ctx * 32 + (size_t)(ctx - 1) * 32 + 32) * 8;
    size_t q_end = ((size_t)(bh_last * 4 + 3) * 32 + 32) * 8;
    size_t part_end = ((size_t)((blocks - 1) * 4 + 3) * 130 + 130) * 4;
    GT_ASSERT(kv_end <= z->kv && q_end <= z->q && part_end <= z->part);
}

static void check_prefill_reach(unsigned tokens, const el_sizes *z)
{
    for (unsigned m = 0; m < EL_NB_MATRICES; m++) {
        unsigned rows = el_matrix_rows[m], cols = el_matrix_cols[m];
        /* gce_gemm (M tokens, N rows, K cols), guarded to M x N; cublasGemmEx reads A' (cols x
         * tokens, ld cols) and writes C' (rows x tokens, ld rows): the same bytes */
        GT_ASSERT((size_t)tokens * cols * 2 <= z->a);
        GT_ASSERT((size_t)tokens * rows * 4 <= z->c);
        GT_ASSERT((size_t)rows * cols * 2 <= z->weight[m]);
    }
}

GT_TEST(every_kernel_stays_within_the_buffers_the_host_allocates)
{
    static const unsigned batches[] = {1, 3, 32, 33, 100, 256};
    static const unsigned contexts[] = {64, 100, 4097, 8192, 131072};
    static const unsigned chunks[] = {16, 100, 256, 4096};
    static const unsigned devices[] = {16, 78, 132};
    unsigned shapes = 0;
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (size_t c = 0; c < sizeof contexts / sizeof contexts[0]; c++)
            for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++)
                for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++, shapes++) {
                    el_shape shape = {2, batches[b], contexts[c], chunks[k], devices[d]};
                    el_sizes z;
                    el_buffer_sizes(&shape, &z);
                    for (unsigned batch = 1; batch <= shape.peak_batch; batch++)
                        check_decode_reach(&shape, batch, &z);
                    /* the prefill units, the worker's GEMMs and the chunked arms' chunks */
                    unsigned tokens[] = {shape.chunk / 2, shape.chunk, 2 * shape.chunk};
                    for (int t = 0; t < 3; t++)
                        check_prefill_reach(tokens[t], &z);
                }
    GT_ASSERT_EQ_INT(shapes, 6 * 5 * 4 * 3);
    /* The largest KV cache runs past 4 GiB: its offsets are 64-bit. */
    el_shape big = {1, 256, 131072, 256, 132};
    el_sizes z;
    el_buffer_sizes(&big, &z);
    GT_ASSERT(z.kv == (size_t)256 * 8 * 131072 * 128 * 2 && z.kv > ((size_t)1 << 32));
}

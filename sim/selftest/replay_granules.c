/* Granules aggregated into partitions and the SMs each context gets (testdata/
 * h200-aggregation.txt, h200-context-identity.txt). */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

static void granule_line(char *got, const char *label, gcu_dev_resource *res, unsigned n,
                         unsigned *ids, int *count)
{
    char list[1024];
    CUgreenCtx g = make_ctx(res, n);
    *count = green_ids(g, ids, 256);
    sprintf(got, "%s: %d SMs [ %s]", label, *count, id_list(list, ids, *count));
    D.cuGreenCtxDestroy(g);
}

/* "<n>-group split by <m>, group <g>: ..." : the group's SMs, and a split by 8 of a green
 * context made from it. */
int identity_line(const char *line, char *got)
{
    static split_out x, o;
    unsigned groups, m, g, ids[256];
    char list[1024];
    const char *names[] = {"zero", "one", "two"};
    char word[8];
    if (sscanf(line, "%7[a-z]-group split by %u, group %u", word, &m, &g) != 3)
        return 0;
    for (groups = 0; groups < 3 && strcmp(names[groups], word) != 0; groups++)
        ;
    gcu_dev_resource dev = device_resource(0);
    split(&x, &dev, 0, m, groups);
    CUgreenCtx ctx = make_ctx(&x.res[g], 1);
    int n = green_ids(ctx, ids, 256);
    gcu_dev_resource r = ctx_resource(ctx);
    split(&o, &r, 0, 8, MAXG);
    sprintf(got, "%s-group split by %u, group %u: %d SMs [ %s], split by 8: %u groups, rem %u",
            word, m, g, n, id_list(list, ids, n), o.n, o.rem.u.sm.smCount);
    D.cuGreenCtxDestroy(ctx);
    return 1;
}

int aggregation_line(const char *line, char *got)
{
    static split_out g8, g2, x64, o;
    static unsigned a_ids[256], b_ids[256];
    static int na, nb;
    static CUgreenCtx ctx64, rem100;
    gcu_dev_resource dev = device_resource(0), res[20];
    unsigned f, m, ids[256];
    int n;
    if (!g8.n) {
        split(&g8, &dev, 0, 8, MAXG);
        split(&g2, &dev, 1, 2, MAXG);
        split(&x64, &dev, 0, 64, 2);
    }
    if (strncmp(line, "granules of 8", 13) == 0) {
        sprintf(got, "granules of 8: %u, remainder %u", g8.n, g8.rem.u.sm.smCount);
    } else if (strncmp(line, "A = ", 4) == 0) {
        granule_line(got, "A = granules 0..2 (want 24)", g8.res, 3, a_ids, &na);
    } else if (strncmp(line, "B = ", 4) == 0) {
        granule_line(got, "B = granules 3..7 (want 40)", g8.res + 3, 5, b_ids, &nb);
    } else if (strncmp(line, "A/B overlap", 11) == 0) {
        sprintf(got, "A/B overlap: %s", na && nb && sets_disjoint(a_ids, na, b_ids, nb) ? "no" : "yes");
    } else if (strncmp(line, "C = ", 4) == 0) {
        res[0] = g8.res[8];
        res[1] = g8.rem;
        granule_line(got, "C = granule 8 + remainder (backfill, want 20)", res, 2, ids, &n);
    } else if (strncmp(line, "all 15 granules", 15) == 0) {
        granule_line(got, "all 15 granules (want 120)", g8.res, 15, ids, &n);
    } else if (strncmp(line, "granules of 2", 13) == 0) {
        sprintf(got, "granules of 2 (ignore coscheduling): %u, remainder %u", g2.n,
                g2.rem.u.sm.smCount);
    } else if (strncmp(line, "two 2-granules", 14) == 0) {
        granule_line(got, "two 2-granules (want 4)", g2.res, 2, ids, &n);
    } else if (strncmp(line, "  its resource", 14) == 0) {
        gcu_dev_resource r = ctx_resource(make_ctx(g2.res, 2));
        sprintf(got, "  its resource: count %u minPart %u align %u", r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (strncmp(line, "ctx64 resource", 14) == 0) {
        /* The second 64-SM group: its last 16-unit holds SMs 120..127, no 8-SM granule. */
        ctx64 = make_ctx(&x64.res[1], 1);
        gcu_dev_resource r = ctx_resource(ctx64);
        sprintf(got, "ctx64 resource: count %u minPart %u align %u", r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (sscanf(line, "  split by %u", &m) == 1) {
        gcu_dev_resource r = ctx_resource(ctx64);
        split(&o, &r, 0, m, MAXG);
        if (m == 8)
            sprintf(got, "  split by 8: %u groups, rem %u", o.n, o.rem.u.sm.smCount);
        else
            sprintf(got, "  split by %u: %u groups of %u, rem %u", m, o.n, o.res[0].u.sm.smCount,
                    o.rem.u.sm.smCount);
    } else if (strncmp(line, "remainder-of-64x2 ctx", 21) == 0) {
        gcu_dev_resource r = ctx_resource(make_ctx(&x64.rem, 1));
        sprintf(got, "remainder-of-64x2 ctx: count %u minPart %u align %u", r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (sscanf(line, "  rem100 split flags=%u min=%u", &f, &m) == 2) {
        if (!rem100) {
            static split_out x16;
            split(&x16, &dev, 0, 16, 2);
            rem100 = make_ctx(&x16.rem, 1);
        }
        gcu_dev_resource r = ctx_resource(rem100);
        split(&o, &r, f, m, MAXG);
        sprintf(got, "  rem100 split flags=%u min=%u -> %d: %u groups of %u, rem %u", f, m, o.r,
                o.n, o.res[0].u.sm.smCount, o.rem.u.sm.smCount);
    } else if (strncmp(line, "cuStreamGetGreenCtx", 19) == 0) {
        CUstream s;
        CUgreenCtx g = NULL;
        D.cuGreenCtxStreamCreate(&s, ctx64, GCU_STREAM_NON_BLOCKING, 0);
        gcu_result r = D.cuStreamGetGreenCtx(s, &g);
        D.cuStreamDestroy(s);
        sprintf(got, "cuStreamGetGreenCtx -> %d same=%d", r, g == ctx64);
    } else {
        return 0;
    }
    return 1;
}


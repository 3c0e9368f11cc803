/* The split sweep of the H200 (testdata/h200-split-sweep.txt): every split-by-count of the
 * device and of contexts made from its groups and remainders, and the calls around them. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

/* Resources the sweep derives (ctxK and rem_after_K), made once and kept. */
static gcu_dev_resource *labelled_resource(const char *label)
{
    static struct {
        char label[32];
        gcu_dev_resource res;
    } cache[16];
    static int ncache;
    for (int i = 0; i < ncache; i++)
        if (strcmp(cache[i].label, label) == 0)
            return &cache[i].res;
    if (ncache == 16)
        return NULL;
    unsigned k;
    gcu_dev_resource dev = device_resource(0), *out = &cache[ncache].res;
    static split_out o;
    if (strcmp(label, "dev") == 0) {
        *out = dev;
    } else if (sscanf(label, "ctx%u", &k) == 1) {
        split(&o, &dev, 0, k, 1);
        *out = ctx_resource(make_ctx(o.res, 1));
    } else if (sscanf(label, "rem_after_%u", &k) == 1) {
        split(&o, &dev, 0, k, 1);
        *out = ctx_resource(make_ctx(&o.rem, 1));
    } else {
        return NULL;
    }
    snprintf(cache[ncache].label, sizeof cache[ncache].label, "%s", label);
    return &cache[ncache++].res;
}

/* "LABEL f=F m=M groups=G size=S rem=R remtype=T query=Q" */
static int sweep_line(const char *line, char *got)
{
    char label[32];
    unsigned f, m;
    if (sscanf(line, "%31s f=%u m=%u", label, &f, &m) != 3 || !strchr(line, '='))
        return 0;
    gcu_dev_resource *in = labelled_resource(label);
    if (!in)
        return 0;
    unsigned nq = 0;
    gcu_result rq = D.cuDevSmResourceSplitByCount(NULL, &nq, in, NULL, f, m);
    static split_out o;
    split(&o, in, f, m, MAXG);
    char query[32];
    if (rq == GCU_SUCCESS)
        sprintf(query, "query=%u", nq);
    else
        sprintf(query, "query=%d/%u", rq, nq);
    if (o.r != GCU_SUCCESS) {
        sprintf(got, "%s f=%u m=%u err=%d %s", label, f, m, o.r, query);
        return 1;
    }
    unsigned size = o.res[0].u.sm.smCount;
    for (unsigned g = 1; g < o.n; g++)
        if (o.res[g].u.sm.smCount != size)
            size = 0;
    sprintf(got, "%s f=%u m=%u groups=%u size=%u rem=%u remtype=%d %s%s", label, f, m, o.n, size,
            o.rem.u.sm.smCount, o.rem.type, query, split_consistent(&o, in) ? "" : " INCONSISTENT");
    return 1;
}

static int sweep_other_line(const char *line, char *got)
{
    static unsigned last_k;
    static split_out o;
    unsigned a, b;
    gcu_dev_resource dev = device_resource(0);
    if (sscanf(line, "cap=%u m=%u", &a, &b) == 2) {
        split(&o, &dev, 0, b, a);
        sprintf(got, "cap=%u m=%u -> r=%d groups=%u rem=%u", a, b, o.r, o.n, o.rem.u.sm.smCount);
    } else if (sscanf(line, "ctx k=%u", &last_k) == 1) {
        split(&o, &dev, 0, last_k, 1);
        gcu_dev_resource r = ctx_resource(make_ctx(o.res, 1));
        sprintf(got, "ctx k=%u (got %u) resource count=%u min=%u align=%u | remainder %u", last_k,
                o.res[0].u.sm.smCount, r.u.sm.smCount, r.u.sm.minSmPartitionSize,
                r.u.sm.smCoscheduledAlignment, o.rem.u.sm.smCount);
    } else if (strncmp(line, "  remainder ctx", 15) == 0) {
        split(&o, &dev, 0, last_k, 1);
        gcu_dev_resource r = ctx_resource(make_ctx(&o.rem, 1));
        sprintf(got, "  remainder ctx count=%u min=%u align=%u", r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (strncmp(line, "primary ctx resource", 20) == 0) {
        CUcontext pc;
        D.cuDevicePrimaryCtxRetain(&pc, 0);
        gcu_dev_resource r;
        gcu_result rc = D.cuCtxGetDevResource(pc, &r, GCU_DEV_RESOURCE_TYPE_SM);
        D.cuDevicePrimaryCtxRelease(0);
        sprintf(got, "primary ctx resource r=%d count=%u min=%u align=%u", rc, r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (strncmp(line, "desc from unsplit", 17) == 0) {
        gcu_resource_desc desc;
        CUgreenCtx g;
        gcu_result r1 = D.cuDevResourceGenerateDesc(&desc, &dev, 1);
        gcu_result r2 = D.cuGreenCtxCreate(&g, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM);
        sprintf(got, "desc from unsplit device resource r=%d create=%d", r1, r2);
    } else if (strncmp(line, "create with NULL desc", 21) == 0) {
        CUgreenCtx g;
        sprintf(got, "create with NULL desc r=%d",
                D.cuGreenCtxCreate(&g, NULL, 0, GCU_GREEN_CTX_DEFAULT_STREAM));
    } else if (strncmp(line, "create with flags=0", 19) == 0) {
        gcu_resource_desc desc;
        CUgreenCtx g;
        D.cuDevResourceGenerateDesc(&desc, &dev, 1);
        sprintf(got, "create with flags=0 r=%d", D.cuGreenCtxCreate(&g, desc, 0, 0));
    } else if (strncmp(line, "one desc two ctxs", 17) == 0) {
        gcu_resource_desc desc;
        CUgreenCtx g1, g2;
        split(&o, &dev, 0, 16, 1);
        D.cuDevResourceGenerateDesc(&desc, o.res, 1);
        gcu_result r1 = D.cuGreenCtxCreate(&g1, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM);
        gcu_result r2 = D.cuGreenCtxCreate(&g2, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM);
        sprintf(got, "one desc two ctxs r=%d,%d", r1, r2);
    } else if (strncmp(line, "destroy ctx with live stream", 28) == 0) {
        CUgreenCtx g = make_ctx(&dev, 1);
        CUstream s;
        D.cuGreenCtxStreamCreate(&s, g, GCU_STREAM_NON_BLOCKING, 0);
        gcu_result r = D.cuGreenCtxDestroy(g);
        gcu_result rs = D.cuStreamSynchronize(s), rq = D.cuStreamQuery(s);
        sprintf(got, "destroy ctx with live stream r=%d; then sync=%d query=%d destroy=%d", r, rs,
                rq, D.cuStreamDestroy(s));
    } else if (strncmp(line, "GetGreenCtx on ordinary stream", 30) == 0) {
        CUcontext pc;
        CUstream s;
        CUgreenCtx g = (CUgreenCtx)&g;
        D.cuDevicePrimaryCtxRetain(&pc, 0);
        D.cuCtxPushCurrent(pc);
        D.cuStreamCreate(&s, GCU_STREAM_NON_BLOCKING);
        gcu_result r = D.cuStreamGetGreenCtx(s, &g);
        D.cuStreamDestroy(s);
        D.cuCtxPopCurrent(NULL);
        D.cuDevicePrimaryCtxRelease(0);
        sprintf(got, "GetGreenCtx on ordinary stream r=%d g=%s", r, g ? "set" : "(nil)");
    } else if (strncmp(line, "priority range", 14) == 0) {
        int least = 1, greatest = 1;
        D.cuCtxGetStreamPriorityRange(&least, &greatest);
        sprintf(got, "priority range %d..%d", least, greatest);
    } else {
        return 0;
    }
    return 1;
}


int sweep_handler(const char *line, char *got)
{
    return sweep_other_line(line, got) || sweep_line(line, got);
}

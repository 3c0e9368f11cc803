/*
 * sim_selftest LIBRARY TESTDATA_DIR
 *
 * Loads the simulated driver as greenctx does (dlopen, then cuGetProcAddress_v2 for every
 * entry point) and checks two things:
 *  1. fidelity: every line of the .txt files in TESTDATA_DIR is a measurement of the real H200 driver; the
 *     same operation is run on the simulator, printed in the same format and compared as text;
 *  2. behaviour the measurements do not cover: version gating, 13.1+ splits, workqueues,
 *     locality, faults, handle validation, threads and live-object accounting.
 * Ends with "sim_reproduces_h200: N passed, M failed" and exits non-zero on any failure.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "greenctx_sim.h"

/* ---- the driver, reached as greenctx reaches it ------------------------------------------- */

static struct {
#define X(name, version, required, params) gcu_pfn_##name name;
    GCU_DRIVER_SYMBOLS(X)
#undef X
} D;

static gcu_pfn_cuGetProcAddress get_proc;
static int (*live)(const char *);
static int (*res_ids)(const void *, unsigned *, int);
static int (*green_ids)(CUgreenCtx, unsigned *, int);
static int (*stream_ids)(CUstream, unsigned *, int);
static long (*calls)(const char *);
static void (*reset)(void);
static void (*fail_after)(const char *, int, int);
static const char *(*config_error)(void);

static int passed, failed;

static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* Resolves every entry point the configured driver version has, at its prototype's version. */
static void resolve(void)
{
    int version = 0;
    D.cuDriverGetVersion = NULL;
    get_proc("cuDriverGetVersion", (void **)&D.cuDriverGetVersion, 2020, 0, NULL);
    D.cuDriverGetVersion(&version);
#define X(name, ver, required, params)                                                          \
    D.name = NULL;                                                                              \
    if (ver <= version)                                                                         \
        get_proc(#name, (void **)&D.name, ver, 0, NULL);
    GCU_DRIVER_SYMBOLS(X)
#undef X
}

/* Switches the simulator to another configuration, as a test would between cases. */
static void configure(const char *devices, const char *version, const char *faults)
{
    setenv("GREENCTX_SIM_DEVICES", devices, 1);
    setenv("GREENCTX_SIM_DRIVER_VERSION", version, 1);
    if (faults)
        setenv("GREENCTX_SIM_FAIL", faults, 1);
    else
        unsetenv("GREENCTX_SIM_FAIL");
    reset();
    resolve();
    D.cuInit(0);
}

static void load(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
    *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
    *(void **)&live = dlsym(lib, "gctxsim_live_objects");
    *(void **)&res_ids = dlsym(lib, "gctxsim_resource_sm_ids");
    *(void **)&green_ids = dlsym(lib, "gctxsim_green_ctx_sm_ids");
    *(void **)&stream_ids = dlsym(lib, "gctxsim_stream_sm_ids");
    *(void **)&calls = dlsym(lib, "gctxsim_calls");
    *(void **)&reset = dlsym(lib, "gctxsim_reset");
    *(void **)&fail_after = dlsym(lib, "gctxsim_fail_after");
    *(void **)&config_error = dlsym(lib, "gctxsim_config_error");
    if (!get_proc || !live || !res_ids || !green_ids || !stream_ids || !calls || !reset ||
        !fail_after || !config_error) {
        fprintf(stderr, "%s lacks an exported symbol\n", path);
        exit(2);
    }
    check(dlsym(lib, "sim_cuStreamCreate") == NULL && dlsym(lib, "cuStreamCreate") == NULL,
          "internal entry points are not exported");
}

/* ---- helpers ------------------------------------------------------------------------------ */

#define MAXG 200

typedef struct split_out {
    gcu_result r;
    unsigned n;
    gcu_dev_resource res[MAXG];
    gcu_dev_resource rem;
} split_out;

static gcu_dev_resource device_resource(int dev)
{
    gcu_dev_resource r;
    memset(&r, 0, sizeof r);
    D.cuDeviceGetDevResource(dev, &r, GCU_DEV_RESOURCE_TYPE_SM);
    return r;
}

static void split(split_out *o, const gcu_dev_resource *in, unsigned flags, unsigned min,
                  unsigned cap)
{
    memset(o, 0, sizeof *o);
    o->n = cap;
    o->r = D.cuDevSmResourceSplitByCount(o->res, &o->n, in, &o->rem, flags, min);
}

/* A green context from resources; NULL if any step fails. */
static CUgreenCtx make_ctx(gcu_dev_resource *res, unsigned n)
{
    gcu_resource_desc desc;
    CUgreenCtx g = NULL;
    if (D.cuDevResourceGenerateDesc(&desc, res, n) != GCU_SUCCESS ||
        D.cuGreenCtxCreate(&g, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM) != GCU_SUCCESS)
        return NULL;
    return g;
}

static gcu_dev_resource ctx_resource(CUgreenCtx g)
{
    gcu_dev_resource r;
    memset(&r, 0, sizeof r);
    D.cuGreenCtxGetDevResource(g, &r, GCU_DEV_RESOURCE_TYPE_SM);
    return r;
}

/* "a b c " as the probes print SM lists. */
static char *id_list(char *out, const unsigned *ids, int n)
{
    char *p = out;
    *p = '\0';
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%u ", ids[i]);
    return out;
}

static int sets_disjoint(const unsigned *a, int na, const unsigned *b, int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j])
                return 0;
    return 1;
}

/* The groups of a split hold disjoint SMs, and with the remainder exactly the input's. */
static int split_consistent(const split_out *o, const gcu_dev_resource *in)
{
    unsigned seen[256] = {0}, ids[256];
    int total = 0, n;
    for (unsigned g = 0; g <= o->n; g++) {
        const gcu_dev_resource *r = g < o->n ? &o->res[g] : &o->rem;
        if (g == o->n && r->type == GCU_DEV_RESOURCE_TYPE_INVALID)
            break;
        n = res_ids(r, ids, 256);
        if (n < 0 || (unsigned)n != r->u.sm.smCount)
            return 0;
        for (int i = 0; i < n; i++)
            if (seen[ids[i]]++)
                return 0;
        total += n;
    }
    n = res_ids(in, ids, 256);
    for (int i = 0; i < n; i++)
        if (!seen[ids[i]])
            return 0;
    return total == n;
}

/* ---- the measurement lines ---------------------------------------------------------------- */

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

/* The probe's 2x16 split and its three contexts (0, 1: the groups, 2: the remainder). */
static struct {
    split_out split;
    CUgreenCtx ctx[3];
    CUstream stream[3];
} probe;

static void probe_setup(void)
{
    if (probe.ctx[0])
        return;
    gcu_dev_resource dev = device_resource(0);
    split(&probe.split, &dev, 0, 16, 2);
    probe.ctx[0] = make_ctx(&probe.split.res[0], 1);
    probe.ctx[1] = make_ctx(&probe.split.res[1], 1);
    probe.ctx[2] = make_ctx(&probe.split.rem, 1);
    for (int i = 0; i < 3; i++)
        D.cuGreenCtxStreamCreate(&probe.stream[i], probe.ctx[i], GCU_STREAM_NON_BLOCKING, 0);
}

static void sm_line(char *got, const char *label, CUstream s)
{
    unsigned ids[256];
    char list[1024];
    int n = stream_ids(s, ids, 256);
    sprintf(got, "%s SMs: %s (count %d) err=no error", label, id_list(list, ids, n), n);
}

static int probe_line(const char *line, char *got)
{
    unsigned f, m, i;
    char name[64];
    gcu_dev_resource dev = device_resource(0);
    static split_out o;
    if (strncmp(line, "driver version", 14) == 0) {
        int v = 0;
        D.cuDriverGetVersion(&v);
        sprintf(got, "driver version %d", v);
    } else if (strncmp(line, "device SM:", 10) == 0) {
        sprintf(got, "device SM: count=%u minPart=%u align=%u", dev.u.sm.smCount,
                dev.u.sm.minSmPartitionSize, dev.u.sm.smCoscheduledAlignment);
    } else if (sscanf(line, "sym %63s", name) == 1) {
        char *p = got + sprintf(got, "sym %-28s", name);
        for (int k = 0; k < 2; k++) {
            int version = k ? 13010 : 13000, q = 0;
            void *fn = NULL;
            gcu_result r = get_proc(name, &fn, version, 0, &q);
            p += sprintf(p, "%s v%d r=%d q=%d %s", k ? " |" : "", version, r, q, fn ? "<ptr>" : "(nil)");
        }
    } else if (sscanf(line, "split flags=%u min=%u", &f, &m) == 2) {
        split(&o, &dev, f, m, 64);
        if (o.r != GCU_SUCCESS)
            sprintf(got, "split flags=%u min=%u -> err %d", f, m, o.r);
        else
            sprintf(got,
                    "split flags=%u min=%u -> groups=%u each=%u (minPart=%u align=%u) rem=%u "
                    "(type %d, minPart=%u align=%u)",
                    f, m, o.n, o.res[0].u.sm.smCount, o.res[0].u.sm.minSmPartitionSize,
                    o.res[0].u.sm.smCoscheduledAlignment, o.rem.u.sm.smCount, o.rem.type,
                    o.rem.u.sm.minSmPartitionSize, o.rem.u.sm.smCoscheduledAlignment);
    } else if (strncmp(line, "split 2x16", 10) == 0) {
        probe_setup();
        const split_out *s = &probe.split;
        sprintf(got, "split 2x16: nb=%u sizes=%u,%u rem=%u", s->n, s->res[0].u.sm.smCount,
                s->res[1].u.sm.smCount, s->rem.u.sm.smCount);
    } else if (strncmp(line, "direct re-split", 15) == 0) {
        probe_setup();
        split(&o, &probe.split.rem, 0, 16, 1);
        sprintf(got, "direct re-split of remainder -> %d (n=%u size=%u)", o.r, o.n,
                o.res[0].u.sm.smCount);
    } else if (strncmp(line, "  ctx ", 6) == 0 && sscanf(line + 6, "%u", &i) == 1 && i < 3) {
        probe_setup();
        gcu_dev_resource r = ctx_resource(probe.ctx[i]);
        sprintf(got, "  ctx %u resource: count=%u minPart=%u align=%u", i, r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (sscanf(line, "ctx%u SMs:", &i) == 1 && i < 3) {
        probe_setup();
        sprintf(name, "ctx%u", i);
        sm_line(got, name, probe.stream[i]);
    } else if (strncmp(line, "blocking green stream", 21) == 0) {
        probe_setup();
        CUstream s;
        sprintf(got, "blocking green stream -> %d",
                D.cuGreenCtxStreamCreate(&s, probe.ctx[0], GCU_STREAM_DEFAULT, 0));
    } else if (strncmp(line, "split of remainder-ctx", 22) == 0) {
        probe_setup();
        gcu_dev_resource r = ctx_resource(probe.ctx[2]);
        split(&o, &r, 0, 24, MAXG);
        sprintf(got, "split of remainder-ctx resource by 24 -> %d n=%u size=%u rem=%u", o.r, o.n,
                o.res[0].u.sm.smCount, o.rem.u.sm.smCount);
    } else if (strncmp(line, "default-stream SMs", 18) == 0) {
        CUcontext pc;
        D.cuDevicePrimaryCtxRetain(&pc, 0);
        D.cuCtxPushCurrent(pc);
        sm_line(got, "default-stream", NULL);
        D.cuCtxPopCurrent(NULL);
        D.cuDevicePrimaryCtxRelease(0);
    } else if (strncmp(line, "cuStreamCreate-in-green-current", 31) == 0) {
        probe_setup();
        CUcontext c;
        CUstream s = NULL;
        D.cuCtxFromGreenCtx(&c, probe.ctx[0]);
        D.cuCtxPushCurrent(c);
        D.cuStreamCreate(&s, GCU_STREAM_NON_BLOCKING);
        D.cuCtxPopCurrent(NULL);
        sm_line(got, "cuStreamCreate-in-green-current", s);
        D.cuStreamDestroy(s);
    } else {
        return 0;
    }
    return 1;
}

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
static int identity_line(const char *line, char *got)
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

static int aggregation_line(const char *line, char *got)
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

/* Real pointers differ from run to run; the probes' only hex numbers are pointers. */
static void normalise(const char *in, char *out)
{
    while (*in) {
        if (in[0] == '0' && in[1] == 'x') {
            out += sprintf(out, "<ptr>");
            for (in += 2; strchr("0123456789abcdef", *in) && *in; in++)
                ;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

static void replay(const char *dir, const char *file, int (*handler)(const char *, char *))
{
    char path[1024], line[4096], want[4096], got[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        check(0, "cannot open %s", path);
        return;
    }
    int lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        got[0] = '\0';
        if (!handler(line, got)) {
            check(0, "%s:%d: no replay for: %s", file, lineno, line);
            continue;
        }
        normalise(line, want);
        check(strcmp(want, got) == 0, "%s:%d:\n  measured:  %s\n  simulated: %s", file, lineno,
              want, got);
    }
    fclose(fp);
}

static int sweep_handler(const char *line, char *got)
{
    return sweep_other_line(line, got) || sweep_line(line, got);
}

/* ---- behaviour beyond the measurements ---------------------------------------------------- */

static void check_loading(void)
{
    int count = -1;
    configure("h200", "13000", NULL);
    void *fn = (void *)1;
    int q = -1;
    check(get_proc("cuGreenCtxCreate", &fn, 13010, 0, &q) == GCU_ERROR_INVALID_VALUE,
          "cudaVersion above the driver's is INVALID_VALUE");
    check(get_proc("cuNoSuchThing", &fn, 12000, 0, &q) == 0 && !fn && q == 1, "unknown symbol");
    check(get_proc("cuGreenCtxStreamCreate", &fn, 12040, 0, &q) == 0 && !fn && q == 2,
          "a symbol newer than the version asked is VERSION_NOT_SUFFICIENT");
    const char *name = "x";
    check(D.cuGetErrorName(915, &name) == 0 &&
              strcmp(name, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION") == 0,
          "error names");
    check(D.cuGetErrorName(12345, &name) == GCU_ERROR_INVALID_VALUE && name == NULL,
          "an unknown error code has no name");
    char buf[64];
    check(D.cuDeviceGetName(buf, sizeof buf, 0) == 0 && strcmp(buf, "NVIDIA H200") == 0, "name");
    check(D.cuDeviceGetCount(&count) == 0 && count == 1, "one device by default");

    configure("h200", "12030", NULL);
    check(get_proc("cuDeviceGetDevResource", &fn, 12030, 0, &q) == 0 && !fn && q == 1,
          "12.3 has no green contexts");

    configure("h200", "12040", NULL);
    gcu_dev_resource dev = device_resource(0);
    static split_out o;
    split(&o, &dev, 1, 8, MAXG);
    check(!D.cuGreenCtxStreamCreate && !D.cuGreenCtxGetId, "12.4 lacks the 12.5/12.9 entry points");
    check(dev.u.sm.smCount == 132 && dev.u.sm.minSmPartitionSize == 0, "12.4 fills only smCount");
    check(o.r == GCU_ERROR_INVALID_VALUE, "12.4 has no split flags");
    CUgreenCtx g;
    check(D.cuGreenCtxCreate(&g, NULL, 0, 0) == GCU_ERROR_INVALID_VALUE,
          "12.4 requires CU_GREEN_CTX_DEFAULT_STREAM");

    configure("h200", "13030", NULL);
    check(D.cuGreenCtxCreate(&g, NULL, 0, 0) == 0 && D.cuGreenCtxDestroy(g) == 0,
          "13.3 accepts CU_GREEN_CTX_NONE");

    configure("nosuchgpu", "13000", NULL);
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE, "an unknown model is refused");
    check(config_error() &&
              strstr(config_error(), "GREENCTX_SIM_DEVICES=nosuchgpu: 'nosuchgpu' is not a "
                                     "simulated model; valid: h200 h100 a100 l4 b200"),
          "and the refusal names the variable and the valid models");
    check(D.cuDeviceGetCount(&count) == GCU_ERROR_NOT_INITIALIZED, "and no initialisation");
    configure("h200", "13k", NULL);
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE && strstr(config_error(),
                                                           "GREENCTX_SIM_DRIVER_VERSION=13k"),
          "a malformed driver version is refused, naming the variable");
    configure("h200", "13000", "cuGreenCtxCreate:x");
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE &&
              strstr(config_error(), "GREENCTX_SIM_FAIL=cuGreenCtxCreate:x"),
          "a malformed fault is refused, naming the variable");
    configure("none", "13000", NULL);
    check(config_error() == NULL, "a valid configuration has no refusal");
    check(D.cuInit(0) == 0 && D.cuDeviceGetCount(&count) == 0 && count == 0, "zero devices");

    configure("h200,a100,l4,b200,h100", "13040", NULL);
    int v[5];
    D.cuDeviceGetAttribute(&v[0], GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
    D.cuDeviceGetAttribute(&v[1], GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 2);
    D.cuDeviceGetAttribute(&v[2], GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 3);
    D.cuDeviceGetAttribute(&v[3], GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 3);
    D.cuDeviceGetAttribute(&v[4], GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 4);
    check(v[0] == 108 && v[1] == 9 && v[2] == 2 && v[3] == 10 && v[4] == 132, "model table");
    dev = device_resource(1);
    split(&o, &dev, 0, 5, MAXG);
    check(o.r == 0 && o.n == 18 && o.res[0].u.sm.smCount == 6 && dev.u.sm.minSmPartitionSize == 4,
          "A100: min 4, alignment 2, uniform layout");
    dev = device_resource(3);
    split(&o, &dev, GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 74, MAXG);
    check(o.r == 0 && o.n == 2 && (o.res[1].u.sm.flags & 2) && o.res[1].u.sm.localityDomainId == 1 &&
              !(dev.u.sm.flags & 2),
          "B200 on 13.4: locality domains label single-domain partitions");
    gcu_resource_desc desc;
    check(D.cuDevResourceGenerateDesc(&desc, o.res, 2) == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION,
          "13.4: one descriptor, one locality domain");

    configure("h200", "13000", NULL);
    check(D.cuDeviceGetAttribute(&v[0], GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 0) ==
              GCU_ERROR_INVALID_VALUE,
          "no locality attribute before 13.4");
}

static void check_structured_split(void)
{
    configure("h200", "13010", NULL);
    gcu_dev_resource dev = device_resource(0), out[4], rem, wq;
    static split_out bycount;
    split(&bycount, &dev, 0, 16, 2);
    gcu_dev_sm_resource_group_params p[3];
    /* Two 16-SM groups in 16-SM units, then discovery in the default 8-SM units. */
    memset(p, 0, sizeof p);
    p[0].smCount = p[1].smCount = 16;
    p[0].coscheduledSmCount = p[1].coscheduledSmCount = 16;
    check(D.cuDevSmResourceSplit(NULL, 3, &dev, NULL, 0, p) == 0 && p[2].smCount == 88,
          "dry run discovers the granules left (%u)", p[2].smCount);
    p[2].smCount = 0;
    check(D.cuDevSmResourceSplit(out, 3, &dev, &rem, 0, p) == 0 && p[2].smCount == 88 &&
              rem.u.sm.smCount == 12 && out[0].u.sm.minSmPartitionSize == 8,
          "structured split");
    unsigned a[256], b[256];
    for (int g = 0; g < 2; g++) {
        int na = res_ids(&out[g], a, 256), nb = res_ids(&bycount.res[g], b, 256);
        check(na == 16 && na == nb && memcmp(a, b, sizeof(unsigned) * (size_t)na) == 0,
              "both split calls hand out the same 16-SM units");
    }
    memset(p, 0, sizeof p);
    p[0].smCount = 24;
    p[0].coscheduledSmCount = 8;
    p[1].coscheduledSmCount = 2;
    p[1].flags = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
    check(D.cuDevSmResourceSplit(out, 2, &dev, &rem, 0, p) == 0 && p[1].smCount == 108 &&
              rem.type == 0 && (out[1].u.sm.flags & 1),
          "a backfill catch-all group takes everything left");
    memset(p, 0, sizeof p);
    p[0].smCount = 12;
    check(D.cuDevSmResourceSplit(out, 1, &dev, &rem, 0, p) == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION &&
              p[0].smCount == 12,
          "a count off the coscheduling unit is 915, with no side effect");
    p[0].smCount = 12;
    p[0].flags = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
    check(D.cuDevSmResourceSplit(out, 1, &dev, &rem, 0, p) == 0 && out[0].u.sm.smCount == 12,
          "backfill allows it");
    memset(p, 0, sizeof p);
    p[0].smCount = 120;
    check(D.cuDevSmResourceSplit(out, 2, &dev, &rem, 0, p) == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION,
          "a real split may not leave a group empty");
    check(D.cuDevSmResourceSplit(out, 1, &out[0], &rem, 0, p) == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION,
          "split outputs are not split again");

    /* Workqueues: the config is edited in place and comes back from the green context. */
    check(D.cuDeviceGetDevResource(0, &wq, GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG) == 0 &&
              wq.u.wqConfig.wqConcurrencyLimit == 32 && wq.u.wqConfig.sharingScope == 0,
          "workqueue config defaults");
    wq.u.wqConfig.sharingScope = GCU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED;
    wq.u.wqConfig.wqConcurrencyLimit = 4;
    gcu_dev_resource pair[2] = {bycount.res[0], wq};
    CUgreenCtx g = make_ctx(pair, 2);
    gcu_dev_resource back;
    check(g && D.cuGreenCtxGetDevResource(g, &back, GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG) == 0 &&
              back.u.wqConfig.sharingScope == 1 && back.u.wqConfig.wqConcurrencyLimit == 4,
          "a green context keeps its workqueue config");
    CUstream s;
    D.cuGreenCtxStreamCreate(&s, g, GCU_STREAM_NON_BLOCKING, -9);
    int prio = 1;
    check(D.cuStreamGetPriority(s, &prio) == 0 && prio == -5, "priorities are clamped");
    check(D.cuStreamGetDevResource(s, &back, GCU_DEV_RESOURCE_TYPE_SM) == 0 &&
              back.u.sm.smCount == 16 &&
              D.cuStreamGetDevResource(s, &back, GCU_DEV_RESOURCE_TYPE_WORKQUEUE) ==
                  GCU_ERROR_INVALID_RESOURCE_TYPE,
          "stream resources");
    D.cuGreenCtxDestroy(g);
    check(D.cuStreamSynchronize(s) == GCU_ERROR_STREAM_DETACHED && live("stream") == 1 &&
              D.cuStreamDestroy(s) == 0 && live("stream") == 0,
          "13.1: a stream outlives its green context, detached");

    configure("b200", "13040", NULL);
    dev = device_resource(0);
    memset(p, 0, sizeof p);
    p[0].flags = GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID;
    p[0].localityDomainId = 1;
    check(D.cuDevSmResourceSplit(out, 1, &dev, &rem, 0, p) == 0 && p[0].smCount == 72 &&
              out[0].u.sm.localityDomainId == 1 && res_ids(&out[0], a, 256) == 72 && a[0] >= 74,
          "13.4: discovery within a locality domain");
}

static void check_errors_and_faults(void)
{
    configure("h200", "13000", "cuGreenCtxCreate:2,cuStreamCreate:1:999");
    CUgreenCtx g1 = NULL, g2 = NULL, g3 = NULL;
    check(D.cuGreenCtxCreate(&g1, NULL, 0, 1) == 0 && D.cuGreenCtxCreate(&g2, NULL, 0, 1) == 2 &&
              D.cuGreenCtxCreate(&g3, NULL, 0, 1) == 0 && live("green_ctx") == 2,
          "GREENCTX_SIM_FAIL fails exactly the N-th call, without side effects");
    CUcontext c;
    CUstream s;
    D.cuCtxFromGreenCtx(&c, g1);
    D.cuCtxPushCurrent(c);
    check(D.cuStreamCreate(&s, 0) == 999 && D.cuStreamCreate(&s, 0) == 0, "fault with a code");
    fail_after("cuStreamSynchronize", 2, 0);
    check(D.cuStreamSynchronize(s) == 0 && D.cuStreamSynchronize(s) == 2 &&
              D.cuStreamSynchronize(s) == 0 && calls("cuStreamSynchronize") == 3,
          "gctxsim_fail_after counts from now");
    unsigned ids[256];
    check(stream_ids(s, ids, 256) == 132, "a stream of the whole-device green context");
    CUgreenCtx owner = NULL;
    D.cuStreamGetGreenCtx(s, &owner);
    check(owner == g1, "a stream made in a current green context belongs to it");
    D.cuStreamDestroy(s);
    D.cuCtxPopCurrent(NULL);
    D.cuGreenCtxDestroy(g1);
    check(D.cuGreenCtxDestroy(g1) == GCU_ERROR_INVALID_HANDLE, "double destroy");
    check(D.cuCtxPushCurrent(c) == GCU_ERROR_INVALID_CONTEXT, "stale context");
    check(D.cuCtxPushCurrent((CUcontext)g3) == GCU_ERROR_INVALID_CONTEXT,
          "a raw CUgreenCtx is not a CUcontext");
    check(D.cuStreamQuery((CUstream)&ids) == GCU_ERROR_INVALID_HANDLE, "garbage stream");
    gcu_dev_resource junk;
    memset(&junk, 0x5a, sizeof junk);
    junk.type = GCU_DEV_RESOURCE_TYPE_SM;
    unsigned n = 4;
    gcu_dev_resource out[4];
    check(D.cuDevSmResourceSplitByCount(out, &n, &junk, NULL, 0, 8) == GCU_ERROR_INVALID_VALUE,
          "a resource the driver did not write");
    check(D.cuStreamCreate(&s, 0) == GCU_ERROR_INVALID_CONTEXT, "no current context");
    CUevent e1 = NULL, e2 = NULL;
    D.cuDevicePrimaryCtxRetain(&c, 0);
    D.cuCtxSetCurrent(c);
    float ms = -1;
    check(D.cuEventCreate(&e1, 0) == 0 && D.cuEventCreate(&e2, 0) == 0 &&
              D.cuEventElapsedTime(&ms, e1, e2) == GCU_ERROR_INVALID_HANDLE &&
              D.cuEventRecord(e1, NULL) == 0 && D.cuGreenCtxRecordEvent(g3, e2) == 0 &&
              D.cuEventElapsedTime(&ms, e1, e2) == 0 && ms == 0.0f,
          "events");
    gcu_deviceptr p;
    unsigned host[4];
    check(D.cuMemAlloc(&p, 16) == 0 && D.cuMemsetD32(p, 7, 4) == 0 &&
              D.cuMemcpyDtoH(host, p, 16) == 0 && host[3] == 7 &&
              D.cuMemcpyDtoH(host, p + 4, 16) == GCU_ERROR_INVALID_VALUE && D.cuMemFree(p) == 0,
          "memory");
    gcu_module mod;
    check(D.cuModuleLoadData(&mod, "ptx") == GCU_ERROR_NOT_SUPPORTED, "no other kernels");
    D.cuEventDestroy(e1);
    D.cuEventDestroy(e2);
    D.cuCtxSetCurrent(NULL);
    D.cuDevicePrimaryCtxRelease(0);
    D.cuGreenCtxDestroy(g3);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

/* One gce_gemm of n x n x n on stream s between two events: its modelled milliseconds. */
static float gemm_ms(gcu_function gemm, CUstream s, unsigned n)
{
    CUevent a, b;
    gcu_deviceptr none = 0x1000; /* the model reads sizes only, never memory */
    void *params[] = {&none, &none, &none, &n, &n, &n};
    float ms = -1;
    if (D.cuEventCreate(&a, 0) || D.cuEventCreate(&b, 0))
        return -1;
    if (D.cuEventRecord(a, s) || D.cuLaunchKernel(gemm, 256, 1, 1, 256, 1, 1, 0, s, params, NULL) ||
        D.cuEventRecord(b, s) || D.cuEventElapsedTime(&ms, a, b))
        ms = -1;
    D.cuEventDestroy(a);
    D.cuEventDestroy(b);
    return ms;
}

/* bench elastic's kernels: loaded by their image, timed by the model on the stream's SMs,
 * freed with their module. */
static void check_elastic_model(void)
{
    configure("h200", "13000", NULL);
    CUcontext c, g16;
    D.cuDevicePrimaryCtxRetain(&c, 0);
    D.cuCtxSetCurrent(c);
    gcu_dev_resource dev = device_resource(0);
    split_out o;
    split(&o, &dev, 0, 16, 1);
    CUgreenCtx g = make_ctx(&o.res[0], 1);
    D.cuCtxFromGreenCtx(&g16, g);
    const char *image = ".version 7.0\n.visible .entry gce_decode_attn(\n";
    gcu_module mod = NULL, mod16 = NULL;
    gcu_function gemm = NULL, gemm16 = NULL, nope;
    CUstream s = NULL, s16 = NULL;
    check(D.cuModuleLoadData(&mod, image) == 0 &&
              D.cuModuleGetFunction(&gemm, mod, "gce_gemm") == 0 &&
              D.cuModuleGetFunction(&nope, mod, "gc_fma") == GCU_ERROR_NOT_FOUND &&
              D.cuStreamCreate(&s, 0) == 0,
          "the elastic kernels load; only theirs");
    check(live("module") == 1, "a module's functions are not modules (%d)", live("module"));
    D.cuCtxSetCurrent(g16);
    check(D.cuModuleLoadData(&mod16, image) == 0 &&
              D.cuModuleGetFunction(&gemm16, mod16, "gce_gemm") == 0 &&
              D.cuStreamCreate(&s16, 0) == 0,
          "in a green context too");
    float whole = gemm_ms(gemm, s, 4096), small = gemm_ms(gemm16, s16, 4096);
    check(whole > 0 && small > 8 * whole && small < 8.5f * whole,
          "a compute-bound GEMM takes 132/16 as long on 16 SMs (%.3f ms, %.3f ms)", whole, small);
    check(D.cuModuleUnload((gcu_module)gemm16) == GCU_ERROR_INVALID_HANDLE,
          "a function is not a module");
    D.cuModuleUnload(mod16);
    check(gemm_ms(gemm16, s16, 64) < 0, "a function dies with its module");
    D.cuStreamDestroy(s16);
    D.cuCtxSetCurrent(c);
    D.cuModuleUnload(mod);
    D.cuStreamDestroy(s);
    D.cuCtxSetCurrent(NULL);
    D.cuGreenCtxDestroy(g);
    D.cuDevicePrimaryCtxRelease(0);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

static void *worker(void *arg)
{
    (void)arg;
    gcu_dev_resource dev = device_resource(0);
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        CUcontext c;
        CUstream s;
        CUevent e;
        split_out *o = malloc(sizeof *o);
        bad |= D.cuDevicePrimaryCtxRetain(&c, 0) | D.cuCtxPushCurrent(c);
        bad |= D.cuStreamCreate(&s, 0) | D.cuEventCreate(&e, 0) | D.cuEventRecord(e, s);
        bad |= D.cuEventDestroy(e) | D.cuStreamDestroy(s);
        split(o, &dev, 0, 8, 4);
        CUgreenCtx g = make_ctx(&o->res[i % 4], 1);
        bad |= (g == NULL) | D.cuGreenCtxStreamCreate(&s, g, 1, 0) | D.cuStreamDestroy(s);
        bad |= D.cuGreenCtxDestroy(g) | D.cuCtxPopCurrent(NULL) | D.cuDevicePrimaryCtxRelease(0);
        free(o);
    }
    return (void *)(intptr_t)bad;
}

static void check_threads(void)
{
    configure("h200", "13000", NULL);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= (int)(intptr_t)r;
    }
    check(!bad && live("all") == 0 && live("desc") == 800, "8 threads");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBRARY TESTDATA_DIR\n", argv[0]);
        return 2;
    }
    setenv("GREENCTX_SIM_DEVICES", "h200", 1);
    setenv("GREENCTX_SIM_DRIVER_VERSION", "13000", 1);
    unsetenv("GREENCTX_SIM_FAIL");
    load(argv[1]);
    void *fn = NULL;
    get_proc("cuDeviceGetCount", &fn, 2000, 0, NULL);
    int count;
    check(fn && ((gcu_pfn_cuDeviceGetCount)fn)(&count) == GCU_ERROR_NOT_INITIALIZED,
          "calls before cuInit");
    resolve();
    check(D.cuInit(0) == 0, "cuInit");

    replay(argv[2], "h200-split-sweep.txt", sweep_handler);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-driver-580-probe.txt", probe_line);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-aggregation.txt", aggregation_line);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-context-identity.txt", identity_line);

    check_loading();
    check_structured_split();
    check_errors_and_faults();
    check_elastic_model();
    check_threads();

    printf("sim_reproduces_h200: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

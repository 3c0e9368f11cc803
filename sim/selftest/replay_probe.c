/* The driver 580 probe (testdata/h200-driver-580-probe.txt): versions, entry points, a 2x16
 * split, its contexts' SMs and streams. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

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

int probe_line(const char *line, char *got)
{
    unsigned f, m, i;
    char name[64];
    gcu_dev_resource dev = device_resource(0);
    static split_out o;
    probe_setup();
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
        const split_out *s = &probe.split;
        sprintf(got, "split 2x16: nb=%u sizes=%u,%u rem=%u", s->n, s->res[0].u.sm.smCount,
                s->res[1].u.sm.smCount, s->rem.u.sm.smCount);
    } else if (strncmp(line, "direct re-split", 15) == 0) {
        split(&o, &probe.split.rem, 0, 16, 1);
        sprintf(got, "direct re-split of remainder -> %d (n=%u size=%u)", o.r, o.n,
                o.res[0].u.sm.smCount);
    } else if (strncmp(line, "  ctx ", 6) == 0 && sscanf(line + 6, "%u", &i) == 1 && i < 3) {
        gcu_dev_resource r = ctx_resource(probe.ctx[i]);
        sprintf(got, "  ctx %u resource: count=%u minPart=%u align=%u", i, r.u.sm.smCount,
                r.u.sm.minSmPartitionSize, r.u.sm.smCoscheduledAlignment);
    } else if (sscanf(line, "ctx%u SMs:", &i) == 1 && i < 3) {
        sprintf(name, "ctx%u", i);
        sm_line(got, name, probe.stream[i]);
    } else if (strncmp(line, "blocking green stream", 21) == 0) {
        CUstream s;
        sprintf(got, "blocking green stream -> %d",
                D.cuGreenCtxStreamCreate(&s, probe.ctx[0], GCU_STREAM_DEFAULT, 0));
    } else if (strncmp(line, "split of remainder-ctx", 22) == 0) {
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

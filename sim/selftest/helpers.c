/* Splits and green contexts as every check makes them. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

gcu_dev_resource device_resource(int dev)
{
    gcu_dev_resource r;
    memset(&r, 0, sizeof r);
    D.cuDeviceGetDevResource(dev, &r, GCU_DEV_RESOURCE_TYPE_SM);
    return r;
}

void split(split_out *o, const gcu_dev_resource *in, unsigned flags, unsigned min,
                  unsigned cap)
{
    memset(o, 0, sizeof *o);
    o->n = cap;
    o->r = D.cuDevSmResourceSplitByCount(o->res, &o->n, in, &o->rem, flags, min);
}

CUgreenCtx make_ctx(gcu_dev_resource *res, unsigned n)
{
    gcu_resource_desc desc;
    CUgreenCtx g = NULL;
    if (D.cuDevResourceGenerateDesc(&desc, res, n) != GCU_SUCCESS ||
        D.cuGreenCtxCreate(&g, desc, 0, GCU_GREEN_CTX_DEFAULT_STREAM) != GCU_SUCCESS)
        return NULL;
    return g;
}

void h200_with_16_sms(CUcontext *primary, CUgreenCtx *green, CUcontext *as16)
{
    configure("h200", "13000", NULL);
    D.cuDevicePrimaryCtxRetain(primary, 0);
    D.cuCtxSetCurrent(*primary);
    gcu_dev_resource dev = device_resource(0);
    split_out o;
    split(&o, &dev, 0, 16, 1);
    *green = make_ctx(&o.res[0], 1);
    D.cuCtxFromGreenCtx(as16, *green);
}

void release_h200_with_16_sms(CUgreenCtx green)
{
    D.cuCtxSetCurrent(NULL);
    D.cuGreenCtxDestroy(green);
    D.cuDevicePrimaryCtxRelease(0);
    check(live("all") == 0, "nothing left alive (%d)", live("all"));
}

gcu_dev_resource ctx_resource(CUgreenCtx g)
{
    gcu_dev_resource r;
    memset(&r, 0, sizeof r);
    D.cuGreenCtxGetDevResource(g, &r, GCU_DEV_RESOURCE_TYPE_SM);
    return r;
}

char *id_list(char *out, const unsigned *ids, int n)
{
    char *p = out;
    *p = '\0';
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%u ", ids[i]);
    return out;
}

int sets_disjoint(const unsigned *a, int na, const unsigned *b, int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j])
                return 0;
    return 1;
}

int split_consistent(const split_out *o, const gcu_dev_resource *in)
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

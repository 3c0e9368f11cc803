/* 13.1+: the structured split, workqueues, priorities, detached streams, locality domains. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

void check_structured_split(void)
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

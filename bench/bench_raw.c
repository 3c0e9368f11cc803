/* The raw driver calls with no bookkeeping: what an application would write by hand. */
#include <stdlib.h>
#include <string.h>

#include "bench_overhead.h"

int raw_plan_make(const bench_env *env, unsigned victim_sms, raw_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    gctx_group groups[2] = {{.num_sms = victim_sms}, {.backfill = 1}};
    gctx_split_plan sp = GCTX_SPLIT_PLAN_INIT;
    gctx_group_plan gp[2];
    if (bench_gctx(gctx_partition_plan(env->whole, groups, 2, NULL, &sp, gp),
                   "planning the split"))
        return -1;
    plan->path = sp.path;
    plan->sms[0] = gp[0].sm_count;
    plan->sms[1] = gp[1].sm_count;
    if (sp.path == GCTX_SPLIT_PATH_STRUCTURED) {
        plan->params[0].smCount = gp[0].sm_count;
        plan->params[1].flags = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
        return 0;
    }
    plan->granule = sp.granule_sms;
    plan->flags = sp.path == GCTX_SPLIT_PATH_FINE_GRANULES
                      ? GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
    plan->first_granules = sp.granule_sms ? gp[0].sm_count / sp.granule_sms : 0;
    return 0;
}

int raw_split_init(const bench_env *env, raw_split *split)
{
    memset(split, 0, sizeof *split);
    split->capacity = env->sm_count / 2 + 2;
    split->res = bench_calloc(split->capacity, sizeof *split->res);
    return split->res ? 0 : -1;
}

void raw_split_free(raw_split *split)
{
    free(split->res);
    memset(split, 0, sizeof *split);
}

int raw_split_run(const bench_env *env, const gcu_dev_resource *whole, const raw_plan *plan,
                  raw_split *split)
{
    const raw_driver *drv = env->drv;
    gcu_dev_resource remainder;
    memset(&remainder, 0, sizeof remainder);
    if (plan->path == GCTX_SPLIT_PATH_STRUCTURED) {
        gcu_dev_sm_resource_group_params params[2];
        memcpy(params, plan->params, sizeof params);
        if (bench_cu(drv->cuDevSmResourceSplit(split->res, 2, whole, &remainder, 0, params),
                     "cuDevSmResourceSplit"))
            return -1;
        split->nb_res = 2;
        split->first[0] = 0, split->count[0] = 1;
        split->first[1] = 1, split->count[1] = 1;
        return 0;
    }
    unsigned n = split->capacity - 1;
    if (bench_cu(drv->cuDevSmResourceSplitByCount(split->res, &n, whole, &remainder, plan->flags,
                                                  plan->granule),
                 "cuDevSmResourceSplitByCount"))
        return -1;
    /* The rest group takes the split's leftover too, as greenctx's backfill does. */
    if (remainder.type == GCU_DEV_RESOURCE_TYPE_SM && remainder.u.sm.smCount > 0)
        split->res[n++] = remainder;
    split->nb_res = n;
    split->first[0] = 0, split->count[0] = plan->first_granules;
    split->first[1] = plan->first_granules, split->count[1] = n - plan->first_granules;
    return 0;
}

int raw_desc(const bench_env *env, raw_split *split, unsigned g, gcu_resource_desc *desc)
{
    return bench_cu(env->drv->cuDevResourceGenerateDesc(desc, &split->res[split->first[g]],
                                                        split->count[g]),
                    "cuDevResourceGenerateDesc");
}

int raw_context_create(const bench_env *env, gcu_resource_desc desc, CUgreenCtx *green)
{
    return bench_cu(env->drv->cuGreenCtxCreate(green, desc, env->cu_device,
                                               GCU_GREEN_CTX_DEFAULT_STREAM),
                    "cuGreenCtxCreate");
}

int raw_has_green_streams(const bench_env *env) { return env->drv->cuGreenCtxStreamCreate != NULL; }

int raw_stream_create(const bench_env *env, CUgreenCtx green, CUstream *stream)
{
    return bench_cu(env->drv->cuGreenCtxStreamCreate(stream, green, GCU_STREAM_NON_BLOCKING, 0),
                    "cuGreenCtxStreamCreate");
}

int raw_setup_build(const bench_env *env, const gcu_dev_resource *whole, const raw_plan *plan,
                    raw_split *split, raw_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    if (raw_split_run(env, whole, plan, split))
        return -1;
    for (unsigned g = 0; g < 2; g++)
        if (raw_desc(env, split, g, &setup->desc[g]) ||
            raw_context_create(env, setup->desc[g], &setup->green[g]) ||
            (raw_has_green_streams(env) &&
             raw_stream_create(env, setup->green[g], &setup->stream[g]))) {
            raw_setup_teardown(env, setup);
            return -1;
        }
    return 0;
}

void raw_setup_teardown(const bench_env *env, raw_setup *setup)
{
    for (unsigned g = 0; g < 2; g++) {
        if (setup->stream[g])
            env->drv->cuStreamDestroy(setup->stream[g]);
        if (setup->green[g])
            env->drv->cuGreenCtxDestroy(setup->green[g]);
    }
    memset(setup, 0, sizeof *setup);
}

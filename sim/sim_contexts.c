/* Primary contexts, green contexts and the per-thread current-context stack. */
#include <string.h>

#include "sim_internal.h"

#define SIM_CTX_STACK_MAX 64

sim_pool sim_greens = {.item_size = sizeof(sim_green), .tag = SIM_TAG_GREEN};

/* Per device: the explicit references to its primary context; its live green contexts, which
 * hold the primary context active as the driver's do, uncounted; and those destroyed since the
 * primary context's last reset (sim_memory.c charges them). */
static struct {
    int primary_refs, greens_on, greens_gone;
} devs[SIM_MAX_DEVICES];

/* A stack left from before a reset is dropped on first use rather than trusted. */
static _Thread_local struct {
    uint32_t epoch;
    int depth;
    CUcontext ctx[SIM_CTX_STACK_MAX];
} stack;

static void stack_sync(void)
{
    if (stack.epoch != sim.epoch) {
        stack.epoch = sim.epoch;
        stack.depth = 0;
    }
}

static CUcontext primary_handle(int dev)
{
    return (CUcontext)sim_handle_make(SIM_TAG_CTX_PRIMARY, (uint32_t)dev, 0);
}

int sim_primary_refs(void)
{
    int n = 0;
    for (int d = 0; d < SIM_MAX_DEVICES; d++)
        n += devs[d].primary_refs;
    return n;
}

sim_green *sim_green_get(CUgreenCtx g) { return sim_pool_get(&sim_greens, (uintptr_t)g); }

static gcu_result sim_ctx_resolve(CUcontext ctx, sim_ctx *out)
{
    sim_green *g = sim_pool_get_as(&sim_greens, (uintptr_t)ctx, SIM_TAG_CTX_GREEN);
    if (g) {
        *out = (sim_ctx){g->dev, g};
        return GCU_SUCCESS;
    }
    for (int d = 0; d < sim.ndev; d++) {
        if (ctx == primary_handle(d) && devs[d].primary_refs + devs[d].greens_on > 0) {
            *out = (sim_ctx){d, NULL};
            return GCU_SUCCESS;
        }
    }
    return GCU_ERROR_INVALID_CONTEXT;
}

gcu_result sim_ctx_current(sim_ctx *out)
{
    stack_sync();
    if (stack.depth == 0)
        return GCU_ERROR_INVALID_CONTEXT;
    return sim_ctx_resolve(stack.ctx[stack.depth - 1], out);
}

sim_smset sim_ctx_sms(const sim_ctx *c)
{
    return c->green ? c->green->sms : sim_set_range(0, sim.dev[c->dev]->sms);
}

void sim_contexts_reset(void)
{
    sim_pool_clear(&sim_greens);
    memset(devs, 0, sizeof devs);
}

void sim_greens_count(int dev, size_t *live, size_t *destroyed)
{
    *live = (size_t)devs[dev].greens_on;
    *destroyed = (size_t)devs[dev].greens_gone;
}

/* ---- primary contexts and the context stack ---------------------------------------------- */

gcu_result sim_cuDevicePrimaryCtxRetain(CUcontext *ctx, gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDevicePrimaryCtxRetain, !ctx, dev);
    devs[dev].primary_refs++;
    *ctx = primary_handle(dev);
    SIM_END();
}

gcu_result sim_cuDevicePrimaryCtxRelease(gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDevicePrimaryCtxRelease, false, dev);
    SIM_FAIL_IF(devs[dev].primary_refs == 0, GCU_ERROR_INVALID_CONTEXT);
    devs[dev].primary_refs--;
    SIM_END();
}

/* Only the primary context's memory is returned; live green contexts keep their 5 MiB. */
gcu_result sim_cuDevicePrimaryCtxReset(gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDevicePrimaryCtxReset, false, dev);
    devs[dev].greens_gone = 0;
    SIM_END();
}

gcu_result sim_cuCtxGetCurrent(CUcontext *ctx)
{
    SIM_BEGIN_ARGS(cuCtxGetCurrent, !ctx);
    stack_sync();
    *ctx = stack.depth ? stack.ctx[stack.depth - 1] : NULL;
    SIM_END();
}

gcu_result sim_cuCtxSetCurrent(CUcontext ctx)
{
    SIM_BEGIN(cuCtxSetCurrent);
    stack_sync();
    if (!ctx) {
        if (stack.depth)
            stack.depth--;
        goto out;
    }
    SIM_CTX(c, sim_ctx_resolve(ctx, &c));
    if (stack.depth == 0)
        stack.depth = 1;
    stack.ctx[stack.depth - 1] = ctx;
    SIM_END();
}

gcu_result sim_cuCtxPushCurrent(CUcontext ctx)
{
    SIM_BEGIN(cuCtxPushCurrent);
    SIM_CTX(c, sim_ctx_resolve(ctx, &c));
    stack_sync();
    SIM_FAIL_IF(stack.depth == SIM_CTX_STACK_MAX, GCU_ERROR_OUT_OF_MEMORY);
    stack.ctx[stack.depth++] = ctx;
    SIM_END();
}

gcu_result sim_cuCtxPopCurrent(CUcontext *ctx)
{
    SIM_BEGIN(cuCtxPopCurrent);
    stack_sync();
    SIM_FAIL_IF(stack.depth == 0, GCU_ERROR_INVALID_CONTEXT);
    stack.depth--;
    if (ctx)
        *ctx = stack.ctx[stack.depth];
    SIM_END();
}

gcu_result sim_cuCtxGetDevice(gcu_device *dev)
{
    SIM_BEGIN_ARGS(cuCtxGetDevice, !dev);
    SIM_CTX(c, sim_ctx_current(&c));
    *dev = c.dev;
    SIM_END();
}

gcu_result sim_cuCtxGetDevResource(CUcontext ctx, gcu_dev_resource *resource,
                                   gcu_dev_resource_type type)
{
    SIM_BEGIN(cuCtxGetDevResource);
    SIM_CTX(c, sim_ctx_resolve(ctx, &c));
    SIM_CHECK(sim_res_of_context(resource, (int)type, &c));
    SIM_END();
}

/* ---- green contexts ---------------------------------------------------------------------- */

gcu_result sim_cuGreenCtxCreate(CUgreenCtx *ctx, gcu_resource_desc desc, gcu_device dev,
                                unsigned int flags)
{
    SIM_BEGIN_DEVICE(cuGreenCtxCreate, !ctx, dev);
    /* The default stream is required until 13.3 made it optional (CU_GREEN_CTX_NONE). */
    if ((flags & ~(unsigned)GCU_GREEN_CTX_DEFAULT_STREAM) ||
        (flags == GCU_GREEN_CTX_NONE && !sim_version_at_least(13030)))
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    sim_desc whole = {.dev = dev, .structured = true, .sms = sim_set_range(0, sim.dev[dev]->sms)};
    SIM_LOOKUP(const sim_desc, d, desc ? sim_pool_get(&sim_descs, (uintptr_t)desc) : &whole);
    SIM_FAIL_IF(d->dev != dev, GCU_ERROR_INVALID_DEVICE);
    uintptr_t handle;
    sim_green *g = sim_pool_alloc(&sim_greens, &handle);
    SIM_FAIL_IF(!g, GCU_ERROR_OUT_OF_MEMORY);
    g->dev = dev;
    g->structured = d->structured;
    g->sms = d->sms;
    g->id = sim.next_green_id++;
    g->wq_limit = d->has_wq ? d->wq_limit : sim.wq_limit;
    g->wq_scope = d->has_wq ? d->wq_scope : GCU_WORKQUEUE_SCOPE_DEVICE_CTX;
    devs[dev].greens_on++;
    *ctx = (CUgreenCtx)handle;
    SIM_END();
}

gcu_result sim_cuGreenCtxDestroy(CUgreenCtx ctx)
{
    SIM_BEGIN(cuGreenCtxDestroy);
    SIM_LOOKUP(sim_green, g, sim_green_get(ctx));
    devs[g->dev].greens_on--;
    devs[g->dev].greens_gone++;
    sim_pool_free(g);
    SIM_END();
}

gcu_result sim_cuCtxFromGreenCtx(CUcontext *ctx, CUgreenCtx green)
{
    SIM_BEGIN_ARGS(cuCtxFromGreenCtx, !ctx);
    SIM_FAIL_IF(!sim_green_get(green), GCU_ERROR_INVALID_HANDLE);
    *ctx = (CUcontext)sim_handle_retag((uintptr_t)green, SIM_TAG_CTX_GREEN);
    SIM_END();
}

gcu_result sim_cuGreenCtxGetDevResource(CUgreenCtx ctx, gcu_dev_resource *resource,
                                        gcu_dev_resource_type type)
{
    SIM_BEGIN(cuGreenCtxGetDevResource);
    SIM_LOOKUP(sim_green, g, sim_green_get(ctx));
    SIM_CHECK(sim_res_of_context(resource, (int)type, &(sim_ctx){g->dev, g}));
    SIM_END();
}

gcu_result sim_cuGreenCtxGetId(CUgreenCtx ctx, unsigned long long *id)
{
    SIM_BEGIN_ARGS(cuGreenCtxGetId, !id);
    sim_ctx c = {0, ctx ? sim_green_get(ctx) : NULL};
    SIM_FAIL_IF(ctx && !c.green, GCU_ERROR_INVALID_HANDLE);
    if (!ctx) /* NULL asks for the current green context */
        SIM_CHECK(sim_ctx_current(&c));
    SIM_FAIL_IF(!c.green, GCU_ERROR_INVALID_CONTEXT);
    *id = c.green->id;
    SIM_END();
}

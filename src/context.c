/* Green contexts: creation (with workqueue settings), adoption, queries. */
#include <stdlib.h>
#include <string.h>

#include "context_cache.h"
#include "log.h"

static void release_driver_context(const gctx__driver *drv, gctx_context *c)
{
    if (!gctx__cache_give(c))
        GCTX__RELEASE(drv, GREEN_CONTEXT, green, c->driver.green);
}

static void context_destroy(gctx__object *object)
{
    gctx_context *c = (gctx_context *)object;
    const gctx__driver *drv;
    /* An object exists only after the driver loaded; after a fault it is destroyed too. */
    if (c->owned && gctx__driver_loaded(&drv))
        release_driver_context(drv, c);
    if (c->partition)
        gctx__object_release(&c->partition->base);
    free(c);
}

static int wants_workqueue(const gctx_context_options *options)
{
    return options->workqueue_scope != GCTX_WORKQUEUE_SCOPE_DEFAULT ||
           options->workqueue_concurrency_limit != 0;
}

static gctx_status check_options(const gctx__driver *drv, const gctx_context_options *caller,
                                 gctx_context_options *local)
{
    *local = (gctx_context_options)GCTX_CONTEXT_OPTIONS_INIT;
    if (!caller)
        return GCTX_SUCCESS;
    GCTX_TRY(gctx__sized_in(local, sizeof *local, caller, GCTX__MIN_CONTEXT_OPTIONS, "options",
                            "GCTX_CONTEXT_OPTIONS_INIT"));
    const gctx_context_options *options = local;
    if ((unsigned)options->workqueue_scope > GCTX_WORKQUEUE_SCOPE_BALANCED)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "workqueue_scope %d is not a gctx_workqueue_scope value",
                          (int)options->workqueue_scope);
    if (options->flags & ~(unsigned)GCTX_CONTEXT_FRESH)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->flags 0x%x has bits that are not GCTX_CONTEXT_* flags "
                          "(GCTX_CONTEXT_FRESH is 0x%x)",
                          options->flags, (unsigned)GCTX_CONTEXT_FRESH);
    if (wants_workqueue(options) && !drv->features[GCTX_FEATURE_WORKQUEUES].available)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "workqueue scope and concurrency limit need driver 13.1: %s",
                          drv->features[GCTX_FEATURE_WORKQUEUES].reason);
    return GCTX_SUCCESS;
}

/* A descriptor of the partition's SMs plus a workqueue configuration (13.1+): the driver
 * provisions workqueues when the context is created from it. */
static gctx_status workqueue_desc(const gctx__driver *drv, gctx_partition *p,
                                  const gctx_context_options *options, gcu_resource_desc *desc)
{
    gcu_dev_resource *list = calloc(p->nb_resources + 1, sizeof *list);
    if (!list)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a green context");
    memcpy(list, p->resources, p->nb_resources * sizeof *list);
    gcu_dev_resource *wq = &list[p->nb_resources];
    gctx_status s;
    GCTX_CHECK(gctx__device_resource(drv, p->device, GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG, wq),
               done);
    /* The one documented exception to "never edit a resource": configure it in place. */
    if (options->workqueue_scope != GCTX_WORKQUEUE_SCOPE_DEFAULT)
        wq->u.wqConfig.sharingScope = options->workqueue_scope == GCTX_WORKQUEUE_SCOPE_BALANCED
                                          ? GCU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED
                                          : GCU_WORKQUEUE_SCOPE_DEVICE_CTX;
    if (options->workqueue_concurrency_limit)
        wq->u.wqConfig.wqConcurrencyLimit = options->workqueue_concurrency_limit;
    s = gctx__check_cuda(drv->cuDevResourceGenerateDesc(desc, list, p->nb_resources + 1),
                         "cuDevResourceGenerateDesc with a workqueue configuration");
done:
    free(list);
    return s;
}

/* The driver-side handles and the workqueue settings the context really got (13.1+), for
 * its info; on failure the caller destroys what it owns. */
static gctx_status finish_context(const gctx__driver *drv, gctx_context *c)
{
    GCTX_TRY(gctx__check_cuda(drv->cuCtxFromGreenCtx(&c->driver.context, c->driver.green),
                              "cuCtxFromGreenCtx"));
    if (drv->cuGreenCtxGetId) {
        GCTX_TRY(gctx__check_cuda(drv->cuGreenCtxGetId(c->driver.green, &c->driver.id),
                                  "cuGreenCtxGetId"));
        c->driver.has_id = 1;
    }
    if (!drv->features[GCTX_FEATURE_WORKQUEUES].available)
        return GCTX_SUCCESS;
    gcu_dev_resource wq;
    GCTX_TRY(gctx__context_resource(drv, c, GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG, &wq));
    c->driver.workqueue_limit = wq.u.wqConfig.wqConcurrencyLimit;
    c->driver.workqueue_scope = wq.u.wqConfig.sharingScope == GCU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED
                             ? GCTX_WORKQUEUE_SCOPE_BALANCED
                             : GCTX_WORKQUEUE_SCOPE_DEVICE_CTX;
    return GCTX_SUCCESS;
}

static gctx_status make_driver_context(const gctx__driver *drv, gctx_partition *partition,
                                       const gctx_context_options *options, gctx_context *c)
{
    gcu_resource_desc desc;
    GCTX_TRY(wants_workqueue(options) ? workqueue_desc(drv, partition, options, &desc)
                                      : gctx__partition_desc(partition, &desc));
    /* DEFAULT_STREAM is required up to driver 13.2 and accepted after. */
    gcu_result r = drv->cuGreenCtxCreate(&c->driver.green, desc, partition->device,
                                         GCU_GREEN_CTX_DEFAULT_STREAM);
    GCTX__DEBUG_CALL("cuGreenCtxCreate", r);
    GCTX_TRY(gctx__check_cuda(r, "cuGreenCtxCreate for %u SMs on device %d", partition->sm_count,
                              partition->device));
    gctx_status s = finish_context(drv, c);
    if (s != GCTX_SUCCESS) {
        GCTX__RELEASE(drv, GREEN_CONTEXT, green, c->driver.green);
        c->driver.green = NULL;
    }
    return s;
}

/* A cached context is handed out only if the driver still runs work in it (a fault met
 * outside greenctx loses every context): an idle stream synchronizes, then goes out unchecked
 * (idle.checked); without one, the context synchronizes. */
static gctx_status check_cached(const gctx__driver *drv, gctx_context *c)
{
    if (c->driver.idle.n) {
        GCTX_TRY(gctx__check_cuda(drv->cuStreamSynchronize(c->driver.idle.stream[0]),
                                  "cuStreamSynchronize of a stream of a cached green context"));
        c->driver.idle.checked = c->driver.idle.stream[0];
        return GCTX_SUCCESS;
    }
    GCTX_TRY(gctx__push_context(drv, c->driver.context));
    return gctx__pop_context(drv, gctx__check_cuda(drv->cuCtxSynchronize(),
                                                   "cuCtxSynchronize of a cached green context"));
}

gctx_status gctx__context_create(gctx_partition *partition, const gctx_context_options *options,
                                 gctx_context **out)
{
    const gctx__driver *drv;
    gctx_context_options opts;
    GCTX_TRY(gctx__driver_load_green(&drv));
    GCTX_TRY(check_options(drv, options, &opts));
    options = &opts;
    gctx_context *c = calloc(1, sizeof *c);
    if (!c)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a green context");
    c->device = partition->device;
    gctx_status s;
    GCTX_CHECK(gctx__cache_take(partition, options, c), fail);
    if (c->driver.green && (s = check_cached(drv, c)) != GCTX_SUCCESS) {
        gctx__cache_discard(drv, c);
        goto fail;
    }
    if (!c->driver.green)
        GCTX_CHECK(make_driver_context(drv, partition, options, c), fail);
    c->owned = 1;
    gctx__cache_count_live(c);
    GCTX_CHECK(gctx__object_init(&c->base, GCTX__TYPE_CONTEXT, context_destroy), fail);
    gctx__object_retain(&partition->base);
    c->partition = partition;
    *out = c;
    return GCTX_SUCCESS;
fail:
    if (c->owned)
        release_driver_context(drv, c);
    gctx__cache_forget(c);
    free(c);
    return s;
}

void gctx__context_release(gctx_context *context) { gctx__object_release(&context->base); }

gctx_status gctx_context_create(gctx_partition *partition, const gctx_context_options *options,
                                gctx_context **context)
{
    GCTX_TRY(gctx__handle_resolve(&partition, GCTX__TYPE_PARTITION, "partition"));
    GCTX_TRY_OUTPUT(context);
    gctx_context *c;
    GCTX_TRY(gctx__context_create(partition, options, &c));
    *context = gctx__handle_give(&c->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_context_adopt(CUgreenCtx green, gctx_context **context)
{
    if (!green)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "green (the context to adopt) is NULL");
    GCTX_TRY_OUTPUT(context);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    gctx_context *c = calloc(1, sizeof *c);
    if (!c)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory adopting a green context");
    c->driver.green = green;
    gctx_status s;
    GCTX_CHECK(gctx__check_cuda(drv->cuCtxFromGreenCtx(&c->driver.context, green),
                                "cuCtxFromGreenCtx: the handle to adopt is not a live green "
                                "context"),
               fail);
    gcu_device device = 0;
    GCTX_CHECK(gctx__push_context(drv, c->driver.context), fail);
    GCTX_CHECK(gctx__pop_context(drv, gctx__check_cuda(drv->cuCtxGetDevice(&device),
                                                       "cuCtxGetDevice of the adopted green "
                                                       "context")),
               fail);
    c->device = device;
    GCTX_CHECK(finish_context(drv, c), fail);
    GCTX_CHECK(gctx__object_init(&c->base, GCTX__TYPE_CONTEXT, context_destroy), fail);
    *context = gctx__handle_give(&c->base);
    return GCTX_SUCCESS;
fail:
    free(c);
    return s;
}

GCTX__HANDLE_REFS(context, CONTEXT)

gctx_status gctx__context_resource(const gctx__driver *drv, const gctx_context *context,
                                   gcu_dev_resource_type type, gcu_dev_resource *out)
{
    memset(out, 0, sizeof *out);
    return gctx__check_cuda(drv->cuGreenCtxGetDevResource(context->driver.green, out, type),
                            "cuGreenCtxGetDevResource(%s)", gctx__resource_type_name(type));
}

gctx_status gctx_context_get_info(const gctx_context *context, gctx_context_info *info)
{
    GCTX_TRY(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"));
    GCTX_TRY(gctx__sized_check(info, GCTX__MIN_CONTEXT_INFO, "info", "GCTX_CONTEXT_INFO_INIT"));
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    gcu_dev_resource sm;
    GCTX_TRY(gctx__context_resource(drv, context, GCU_DEV_RESOURCE_TYPE_SM, &sm));
    const gctx__driver_context *d = &context->driver;
    gctx_context_info out = {
        .size = sizeof out, .device = context->device, .sm_count = sm.u.sm.smCount,
        .has_id = d->has_id, .id = d->id, .adopted = !context->owned,
        .workqueue_scope = d->workqueue_scope, .workqueue_concurrency_limit = d->workqueue_limit};
    gctx__sized_out(info, &out, sizeof out);
    return GCTX_SUCCESS;
}

gctx_status gctx_context_partition(gctx_context *context, gctx_partition **partition)
{
    GCTX_TRY(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"));
    GCTX_TRY_OUTPUT(partition);
    gctx_partition *p;
    GCTX_TRY(gctx__partition_from_context(context, &p));
    *partition = gctx__handle_give(&p->base);
    return GCTX_SUCCESS;
}

gctx_status gctx_context_locality_domain(const gctx_context *context, unsigned *domain)
{
    GCTX_TRY(gctx__handle_resolve(&context, GCTX__TYPE_CONTEXT, "context"));
    GCTX_TRY_OUTPUT(domain);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    if (!drv->features[GCTX_FEATURE_LOCALITY_DOMAINS].available)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "locality domains: %s",
                          drv->features[GCTX_FEATURE_LOCALITY_DOMAINS].reason);
    gcu_dev_resource sm;
    GCTX_TRY(gctx__context_resource(drv, context, GCU_DEV_RESOURCE_TYPE_SM, &sm));
    if (!(sm.u.sm.flags & GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID))
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "this context's SMs carry no locality domain (the device has none, or "
                          "its SMs span several)");
    *domain = sm.u.sm.localityDomainId;
    return GCTX_SUCCESS;
}

GCTX__RAW_HANDLE(CUgreenCtx, gctx_context_green_handle, context, CONTEXT, context->driver.green)
GCTX__RAW_HANDLE(CUcontext, gctx_context_cu_context, context, CONTEXT, context->driver.context)

gctx_status gctx_context_relation(const gctx_context *a, const gctx_context *b,
                                  gctx_relation *relation)
{
    GCTX_TRY(gctx__handle_resolve(&a, GCTX__TYPE_CONTEXT, "context a"));
    GCTX_TRY(gctx__handle_resolve(&b, GCTX__TYPE_CONTEXT, "context b"));
    GCTX_TRY_OUTPUT(relation);
    if (a->driver.green != b->driver.green && a->partition && b->partition)
        return gctx__partition_relation(a->partition, b->partition, relation);
    /* One green context, or an adopted one: greenctx doesn't know its history. */
    *relation = a->device != b->device           ? GCTX_RELATION_DISJOINT
                : a->driver.green == b->driver.green ? GCTX_RELATION_OVERLAP
                                                     : GCTX_RELATION_MAY_OVERLAP;
    return GCTX_SUCCESS;
}

gctx_status gctx_device_get_max_workqueue_concurrency(int device, unsigned *limit)
{
    GCTX_TRY_OUTPUT(limit);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    GCTX_TRY(gctx__check_device(drv, device));
    if (!drv->features[GCTX_FEATURE_WORKQUEUES].available)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "workqueue concurrency: %s",
                          drv->features[GCTX_FEATURE_WORKQUEUES].reason);
    gcu_dev_resource wq;
    GCTX_TRY(gctx__device_resource(drv, device, GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG, &wq));
    *limit = wq.u.wqConfig.wqConcurrencyLimit;
    return GCTX_SUCCESS;
}

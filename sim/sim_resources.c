/* Device resources: what a CUdevResource's padding carries, queries, descriptors. */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "sim_internal.h"

#define SIM_RES_MAGIC 0x4d495347u /* "GSIM" */

sim_pool sim_descs = {.item_size = sizeof(sim_desc), .tag = SIM_TAG_DESC};

void sim_resources_reset(void) { sim_pool_clear(&sim_descs); }

/* Where the H200's driver 580 keeps what differs from one process to the next (a probe of the
 * H200 showed): bytes 8..15 hold a pointer of the process, 20..23 a tag that changes with it,
 * 24..95 what identifies the SMs. The simulator writes per-process values there too, so code
 * that compares resources across processes must skip them; its own record starts after them. */
#define SIM_RES_PROCESS_POINTER 8
#define SIM_RES_PROCESS_TAG 20
#define SIM_RES_RECORD 24
#define SIM_RES_PADDING 4 /* offsetof(gcu_dev_resource, _internal_padding) */

_Static_assert(offsetof(gcu_dev_resource, _internal_padding) == SIM_RES_PADDING,
               "the padding follows the type");
_Static_assert(SIM_RES_RECORD - SIM_RES_PADDING + sizeof(sim_res) <=
                   sizeof(((gcu_dev_resource *)0)->_internal_padding),
               "the record fits in the driver's padding after the per-process bytes");

uint32_t sim_fnv1a(uint32_t h, const void *bytes, size_t size)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static uint32_t res_check(const sim_res *r)
{
    return sim_fnv1a(2166136261u, r, offsetof(sim_res, check));
}

sim_res sim_res_new(int type, int dev)
{
    sim_res r;
    memset(&r, 0, sizeof r);
    r.magic = SIM_RES_MAGIC;
    r.epoch = sim.epoch;
    r.type = (uint16_t)type;
    r.device = (uint8_t)dev;
    return r;
}

/* The locality domain a 13.4 driver reports: the group's, else its SMs' one; -1 for none. */
static int res_domain(const sim_res *r)
{
    if (!sim_version_at_least(13040))
        return -1;
    if (r->flags & GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID)
        return r->domain;
    return sim_set_domain(sim.dev[r->device], &r->sms);
}

/* The process-specific bytes: this process's address of a static, mixed with a tag. */
static void write_process_bytes(gcu_dev_resource *out, const sim_res *r)
{
    static const char anchor;
    uint64_t pointer = (uint64_t)(uintptr_t)&anchor ^ ((uint64_t)getpid() << 20);
    uint32_t tag = sim_fnv1a(sim_fnv1a(2166136261u, &pointer, sizeof pointer), r, sizeof *r);
    memcpy((unsigned char *)out + SIM_RES_PROCESS_POINTER, &pointer, sizeof pointer);
    memcpy((unsigned char *)out + SIM_RES_PROCESS_TAG, &tag, sizeof tag);
}

void sim_res_write(gcu_dev_resource *out, const sim_res *r)
{
    sim_res sealed = *r;
    sealed.check = res_check(&sealed);
    memset(out, 0, sizeof *out);
    memcpy((unsigned char *)out + SIM_RES_RECORD, &sealed, sizeof sealed);
    write_process_bytes(out, &sealed);
    out->type = (gcu_dev_resource_type)r->type;
    if (r->type == GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG) {
        out->u.wqConfig.device = r->device;
        out->u.wqConfig.wqConcurrencyLimit = r->wq_limit;
        out->u.wqConfig.sharingScope = (gcu_workqueue_scope)r->wq_scope;
    }
    if (r->type != GCU_DEV_RESOURCE_TYPE_SM)
        return;
    /* Fields appear in the versions that introduced them; older drivers leave them 0. */
    out->u.sm.smCount = sim_set_count(&r->sms);
    if (sim_version_at_least(13000)) {
        out->u.sm.minSmPartitionSize = r->report_min;
        out->u.sm.smCoscheduledAlignment = r->report_align;
    }
    if (sim_version_at_least(13010))
        out->u.sm.flags = r->flags & GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
    int domain = res_domain(r);
    if (domain >= 0) {
        out->u.sm.flags |= GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID;
        out->u.sm.localityDomainId = (unsigned)domain;
    }
}

/* The resource types this driver version has. */
static bool type_known(int type)
{
    return type == GCU_DEV_RESOURCE_TYPE_SM ||
           (sim_version_at_least(13010) && (type == GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG ||
                                            type == GCU_DEV_RESOURCE_TYPE_WORKQUEUE));
}

gcu_result sim_res_read(const gcu_dev_resource *in, sim_res *out)
{
    if (!in)
        return GCU_ERROR_INVALID_VALUE;
    if (!type_known(in->type))
        return GCU_ERROR_INVALID_RESOURCE_TYPE;
    memcpy(out, (const unsigned char *)in + SIM_RES_RECORD, sizeof *out);
    if (out->magic != SIM_RES_MAGIC || out->epoch != sim.epoch || out->check != res_check(out) ||
        out->type != in->type || out->device >= sim.ndev)
        return GCU_ERROR_INVALID_VALUE;
    return GCU_SUCCESS;
}

gcu_result sim_res_of_context(gcu_dev_resource *out, int type, const sim_ctx *c)
{
    if (!out)
        return GCU_ERROR_INVALID_VALUE;
    if (!type_known(type))
        return GCU_ERROR_INVALID_RESOURCE_TYPE;
    const sim_green *g = c->green;
    sim_res r = sim_res_new(type, c->dev);
    if (type == GCU_DEV_RESOURCE_TYPE_SM) {
        r.structured = g ? g->structured : true;
        /* An unstructured set (one holding remainder SMs) is reported with the TPC-pair rules. */
        r.report_min = (uint8_t)(r.structured ? sim.dev[c->dev]->min_part : 2);
        r.report_align = (uint8_t)(r.structured ? sim.dev[c->dev]->align : 2);
        r.sms = sim_ctx_sms(c);
    } else {
        r.wq_limit = g ? g->wq_limit : sim.wq_limit;
        r.wq_scope = g ? g->wq_scope : GCU_WORKQUEUE_SCOPE_DEVICE_CTX;
    }
    sim_res_write(out, &r);
    return GCU_SUCCESS;
}

gcu_result sim_cuDeviceGetDevResource(gcu_device dev, gcu_dev_resource *resource,
                                      gcu_dev_resource_type type)
{
    SIM_BEGIN_DEVICE(cuDeviceGetDevResource, false, dev);
    SIM_CHECK(sim_res_of_context(resource, (int)type, &(sim_ctx){dev, NULL}));
    SIM_END();
}

/* ---- descriptors ------------------------------------------------------------------------- */

gcu_result sim_cuDevResourceGenerateDesc(gcu_resource_desc *desc, gcu_dev_resource *resources,
                                         unsigned int nbResources)
{
    SIM_BEGIN_ARGS(cuDevResourceGenerateDesc, !desc || !resources || nbResources == 0);
    sim_desc d = {.dev = -1, .structured = true};
    unsigned nsm = 0;
    uint32_t split_id = 0;
    int domain = -1;
    for (unsigned i = 0; i < nbResources; i++) {
        sim_res r;
        SIM_CHECK(sim_res_read(&resources[i], &r));
        SIM_FAIL_IF(d.dev >= 0 && r.device != d.dev, GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
        d.dev = r.device;
        if (r.type != GCU_DEV_RESOURCE_TYPE_SM) {
            SIM_FAIL_IF(d.has_wq, GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
            d.has_wq = true;
            d.wq_limit = r.wq_limit;
            d.wq_scope = r.wq_scope;
            if (r.type == GCU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG) {
                /* The one resource callers edit in place: its visible fields are the input. */
                const gcu_dev_workqueue_config_resource *c = &resources[i].u.wqConfig;
                SIM_FAIL_IF(c->device != r.device, GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
                if (c->wqConcurrencyLimit == 0 ||
                    (c->sharingScope != GCU_WORKQUEUE_SCOPE_DEVICE_CTX &&
                     c->sharingScope != GCU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED))
                    SIM_FAIL(GCU_ERROR_INVALID_VALUE);
                d.wq_limit = c->wqConcurrencyLimit;
                d.wq_scope = (int)c->sharingScope;
            }
            continue;
        }
        /* Several SM resources only as outputs (groups or remainder) of one split; outputs of
         * two identical split calls are the same bytes, so they count as one. */
        if (nsm > 0 && (split_id == 0 || r.split_id != split_id))
            SIM_FAIL(GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
        /* 13.4: and all in one locality domain. */
        int in_domain = res_domain(&r);
        if (in_domain >= 0 && domain >= 0 && in_domain != domain)
            SIM_FAIL(GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
        if (in_domain >= 0)
            domain = in_domain;
        split_id = r.split_id;
        d.structured = d.structured && r.structured;
        sim_set_union(&d.sms, &r.sms);
        nsm++;
    }
    SIM_FAIL_IF(nsm == 0, GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
    uintptr_t handle;
    sim_desc *made = sim_pool_alloc(&sim_descs, &handle);
    SIM_FAIL_IF(!made, GCU_ERROR_OUT_OF_MEMORY);
    d.slot = made->slot;
    *made = d;
    sim.descs_made++;
    *desc = (gcu_resource_desc)handle;
    SIM_END();
}

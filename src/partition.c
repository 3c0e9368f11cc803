/* Partition objects: from a device, from a split, from a green context; info; provenance. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* One lock for every partition's descriptor: taken once per context made (a cache miss). */
static pthread_mutex_t desc_lock = PTHREAD_MUTEX_INITIALIZER;

static void partition_destroy(gctx__object *object)
{
    gctx_partition *p = (gctx_partition *)object;
    gctx__split *split = p->split;
    const gctx__driver *drv;
    if (p->holds_primary && gctx__driver_loaded(&drv))
        gctx__device_drop_primary(drv, p->device);
    if (p->context)
        gctx__context_release(p->context);
    if (!p->in_split_block)
        free(p);
    /* Last: in its record's block, p goes with the record's last reference. */
    if (split)
        gctx__split_release(split);
}

/* The fields of a partition whose resources are in place, for any kind; the caller sets what
 * depends on its kind, and its object. in_split_block: the memory is its split record's. */
static void partition_fields(gctx_partition *p, int device, gctx_partition_kind kind,
                             unsigned nb_resources, unsigned sm_count, int in_split_block)
{
    _Static_assert(offsetof(gctx_partition, resources) == sizeof(gctx_partition),
                   "assigning the struct leaves the resources already written alone");
    *p = (gctx_partition){.device = device, .kind = kind, .sm_count = sm_count,
                          .nb_resources = nb_resources, .in_split_block = in_split_block};
}

/* A partition with its resources copied, in one block of its own; at the top of a provenance
 * tree (DEVICE, CONTEXT) it holds the primary context. */
static gctx_status partition_new(int device, gctx_partition_kind kind,
                                 const gcu_dev_resource *resources, unsigned nb_resources,
                                 gctx_partition **out)
{
    gctx_partition *p = malloc(gctx__partition_bytes(nb_resources));
    if (!p)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory making a partition");
    memcpy(p->resources, resources, nb_resources * sizeof *resources);
    unsigned sm_count = 0;
    for (unsigned i = 0; i < nb_resources; i++)
        sm_count += resources[i].u.sm.smCount;
    partition_fields(p, device, kind, nb_resources, sm_count, 0);
    const gctx__driver *drv = NULL;
    gctx_status s;
    GCTX_CHECK(gctx__driver_load(&drv), fail);
    if (kind == GCTX_PARTITION_DEVICE || kind == GCTX_PARTITION_CONTEXT) {
        GCTX_CHECK(gctx__device_hold_primary(drv, device), fail);
        p->holds_primary = 1;
    }
    GCTX_CHECK(gctx__object_init(&p->base, GCTX__TYPE_PARTITION, partition_destroy), fail);
    *out = p;
    return GCTX_SUCCESS;
fail:
    if (p->holds_primary)
        gctx__device_drop_primary(drv, device);
    free(p);
    return s;
}

/* Locality and flags exist only in newer drivers' resources. */
static void read_driver_fields(const gctx__driver *drv, gctx_partition *p)
{
    const gcu_dev_sm_resource *sm = &p->resources[0].u.sm;
    /* The flags field came with the structured split's group flags. */
    if (gctx__driver_reaches(drv, GCTX_FEATURE_STRUCTURED_SPLIT))
        p->flags = sm->flags;
    if (gctx__driver_reaches(drv, GCTX_FEATURE_LOCALITY_DOMAINS) &&
        (sm->flags & GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID)) {
        p->has_locality = 1;
        p->locality = sm->localityDomainId;
    }
}

/* A DEVICE or CONTEXT partition of one resource; arch: the device's rules. */
static gctx_status top_partition(const gctx__driver *drv, int device, gctx_partition_kind kind,
                                 const gcu_dev_resource *resource, gctx__sm_rules *arch,
                                 gctx_partition **out)
{
    gctx__sm_rules rules;
    int major = 0;
    GCTX_TRY(gctx__resource_rules(drv, device, resource, &rules));
    if (arch)
        GCTX_TRY(gctx__device_arch_rules(drv, device, arch));
    GCTX_TRY(gctx__device_cc_major(drv, device, &major));
    gctx_partition *p = NULL;
    GCTX_TRY(partition_new(device, kind, resource, 1, &p));
    p->cc_major = major;
    p->rules = rules;
    read_driver_fields(drv, p);
    *out = p;
    return GCTX_SUCCESS;
}

gctx_status gctx_partition_from_device(int device, gctx_partition **partition)
{
    GCTX_TRY_OUTPUT(partition);
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    GCTX_TRY(gctx__check_device(drv, device));
    gcu_dev_resource resource;
    GCTX_TRY(gctx__device_resource(drv, device, GCU_DEV_RESOURCE_TYPE_SM, &resource));
    gctx_partition *p;
    GCTX_TRY(top_partition(drv, device, GCTX_PARTITION_DEVICE, &resource, NULL, &p));
    p->structured = 1;
    *partition = gctx__handle_give(&p->base);
    return GCTX_SUCCESS;
}

/* What a partition of a split's outputs takes from its split. */
static void take_split(const gctx__driver *drv, gctx_partition *p, gctx__split *split,
                       unsigned index, const gctx__sm_rules *rules, int structured)
{
    p->cc_major = split->input->cc_major;
    p->rules = *rules;
    p->structured = structured;
    p->split = split;
    p->index = index;
    if (p->nb_resources == 1)
        read_driver_fields(drv, p);
}

gctx_status gctx__partition_from_split(gctx__split *split, unsigned index, gctx_partition_kind kind,
                                       const gcu_dev_resource *resources, unsigned nb_resources,
                                       const gctx__sm_rules *rules, int structured,
                                       gctx_partition **out)
{
    const gctx__driver *drv;
    gctx_partition *p = NULL;
    GCTX_TRY(gctx__driver_load(&drv));
    GCTX_TRY(partition_new(split->input->device, kind, resources, nb_resources, &p));
    take_split(drv, p, split, index, rules, structured);
    gctx__split_retain(split);
    *out = p;
    return GCTX_SUCCESS;
}

void gctx__partition_in_split_block(const gctx__driver *drv, gctx__split *split,
                                    gctx_partition *p, unsigned index, gctx_partition_kind kind,
                                    unsigned nb_resources, unsigned sm_count,
                                    const gctx__sm_rules *rules, int structured)
{
    partition_fields(p, split->input->device, kind, nb_resources, sm_count, 1);
    gctx__object_prepare(&p->base, GCTX__TYPE_PARTITION, partition_destroy);
    take_split(drv, p, split, index, rules, structured);
}

gctx_status gctx__partition_from_context(gctx_context *context, gctx_partition **out)
{
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    gcu_dev_resource resource;
    GCTX_TRY(gctx__context_resource(drv, context, GCU_DEV_RESOURCE_TYPE_SM, &resource));
    gctx__sm_rules device_rules;
    gctx_partition *p;
    GCTX_TRY(top_partition(drv, context->device, GCTX_PARTITION_CONTEXT, &resource,
                           &device_rules, &p));
    /* What it was made from tells whether its SMs keep co-scheduling; for an adopted context,
     * an alignment finer than the architecture's says it came from a remainder. */
    p->structured = context->partition ? context->partition->structured
                                       : p->rules.alignment >= device_rules.alignment;
    p->context = context;
    gctx__object_retain(&context->base);
    *out = p;
    return GCTX_SUCCESS;
}

gctx_status gctx__partition_desc(gctx_partition *p, gcu_resource_desc *desc)
{
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    gctx_status s = GCTX_SUCCESS;
    pthread_mutex_lock(&desc_lock);
    if (!p->desc) {
        s = gctx__check_cuda(drv->cuDevResourceGenerateDesc(&p->desc, p->resources,
                                                            p->nb_resources),
                             "cuDevResourceGenerateDesc for a partition of %u SMs", p->sm_count);
        if (s != GCTX_SUCCESS)
            p->desc = NULL;
    }
    *desc = p->desc;
    pthread_mutex_unlock(&desc_lock);
    return s;
}

gctx_status gctx_partition_get_info(const gctx_partition *partition, gctx_partition_info *info)
{
    GCTX_TRY(gctx__handle_resolve(&partition, GCTX__TYPE_PARTITION, "partition"));
    GCTX_TRY(gctx__sized_check(info, GCTX__MIN_PARTITION_INFO, "info", "GCTX_PARTITION_INFO_INIT"));
    const gctx_partition *p = partition;
    gctx_partition_info out = {
        .size = sizeof out, .device = p->device, .kind = p->kind, .sm_count = p->sm_count,
        .min_partition_sms = p->rules.min_partition, .coscheduled_alignment = p->rules.alignment,
        .structured = p->structured, .flags = p->flags, .has_locality_domain = p->has_locality,
        .locality_domain_id = p->locality};
    gctx__sized_out(info, &out, sizeof out);
    return GCTX_SUCCESS;
}

GCTX__HANDLE_REFS(partition, PARTITION)

/* ---- provenance ---- */

/* The partition whose SMs these are: a context's SMs are those it was made from. */
static const gctx_partition *canonical(const gctx_partition *p)
{
    while (p->kind == GCTX_PARTITION_CONTEXT) {
        /* gctx__partition_from_context, the only maker of CONTEXT partitions, sets context. */
        assert(p->context);
        if (!p->context->partition)
            break;
        p = p->context->partition;
    }
    return p;
}

/* The partition this one was split from, or NULL at the top (a device, an adopted context). */
static const gctx_partition *parent(const gctx_partition *p)
{
    return p->split ? canonical(p->split->input) : NULL;
}

static int depth(const gctx_partition *p)
{
    int d = 0;
    for (; p; p = parent(p))
        d++;
    return d;
}

/* One node of the provenance tree: every whole-device partition. */
static int same_node(const gctx_partition *a, const gctx_partition *b)
{
    return a == b || (a->kind == GCTX_PARTITION_DEVICE && b->kind == GCTX_PARTITION_DEVICE &&
                      a->device == b->device);
}

gctx_status gctx_partition_relation(const gctx_partition *a, const gctx_partition *b,
                                    gctx_relation *relation)
{
    GCTX_TRY(gctx__handle_resolve(&a, GCTX__TYPE_PARTITION, "partition a"));
    GCTX_TRY(gctx__handle_resolve(&b, GCTX__TYPE_PARTITION, "partition b"));
    GCTX_TRY_OUTPUT(relation);
    return gctx__partition_relation(a, b, relation);
}

gctx_status gctx__partition_relation(const gctx_partition *a, const gctx_partition *b,
                                     gctx_relation *relation)
{
    if (a->device != b->device) {
        *relation = GCTX_RELATION_DISJOINT;
        return GCTX_SUCCESS;
    }
    a = canonical(a);
    b = canonical(b);
    int da = depth(a), db = depth(b);
    /* Walk the deeper one up to the other's depth; meeting the other means one holds it. */
    for (; da > db; da--)
        a = parent(a);
    for (; db > da; db--)
        b = parent(b);
    if (same_node(a, b)) {
        *relation = GCTX_RELATION_OVERLAP;
        return GCTX_SUCCESS;
    }
    /* Same depth, different: climb together to the children of the lowest common ancestor. */
    while (parent(a) && parent(b) && !same_node(parent(a), parent(b))) {
        a = parent(a);
        b = parent(b);
    }
    if (!parent(a) || !parent(b)) {
        /* No common ancestor: adopted contexts, whose history greenctx doesn't know. */
        *relation = GCTX_RELATION_MAY_OVERLAP;
        return GCTX_SUCCESS;
    }
    *relation = a->split == b->split ? GCTX_RELATION_DISJOINT : GCTX_RELATION_MAY_OVERLAP;
    return GCTX_SUCCESS;
}

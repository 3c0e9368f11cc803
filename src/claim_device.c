/* A device's canonical granules as the driver gives them, and partitions on sets of them. */
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "partition.h"

/* What makes granule indices mean the same SMs in every process: FNV-1a of each granule's
 * type and bytes from GCTX__RESOURCE_SHARED_BYTES on (bytes 4..23 differ between processes),
 * nextResource left out. */
#define GCTX__RESOURCE_SHARED_BYTES 24

static unsigned long long granules_hash(const gcu_dev_resource *resources, unsigned n)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < n; i++) {
        const unsigned char *bytes = (const unsigned char *)&resources[i];
        for (size_t k = 0; k < sizeof resources[i].type; k++)
            h = (h ^ bytes[k]) * 0x100000001b3ull;
        for (size_t k = GCTX__RESOURCE_SHARED_BYTES; k < offsetof(gcu_dev_resource, nextResource);
             k++)
            h = (h ^ bytes[k]) * 0x100000001b3ull;
    }
    return h;
}

/* One split of whole by granule: 0 when the driver made one. */
static gcu_result split_by(const gctx__driver *drv, const gctx_partition *whole, unsigned granule,
                           unsigned flags, gctx__device_granules *out, unsigned *nb,
                           gcu_dev_resource *remainder)
{
    *nb = GCTX_CLAIM_MAX_GRANULES - 1;
    memset(remainder, 0, sizeof *remainder);
    return drv->cuDevSmResourceSplitByCount(out->resources, nb, &whole->resources[0], remainder,
                                            flags, granule);
}

/* GREENCTX_CLAIM_GRANULES: structured (the default) or fine (claim.h, gctx__granule_layout). */
static gctx_status claim_granules_mode(int *fine)
{
    const char *v = getenv("GREENCTX_CLAIM_GRANULES");
    *fine = v && strcmp(v, "fine") == 0;
    if (!v || !*v || *fine || strcmp(v, "structured") == 0)
        return GCTX_SUCCESS;
    return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                      "GREENCTX_CLAIM_GRANULES='%.40s' is neither 'structured' (the default: "
                      "co-scheduled granules, thread-block clusters of up to 8 SMs as cuBLAS "
                      "and CUTLASS launch them) nor 'fine' (the planner's granules: every count "
                      "it gives, clusters of up to 2 SMs)",
                      v);
}

/* The claims' granules: the split claim.h's gctx__granule_layout describes. */
static gctx_status canonical_split(const gctx__driver *drv, const gctx_partition *whole,
                                   gctx__device_granules *out)
{
    gcu_dev_resource remainder;
    unsigned nb, granule = whole->rules.min_partition, flags = 0;
    unsigned unit = whole->rules.alignment >= 2 ? whole->rules.alignment : 2;
    int fine, can_fine = drv->features[GCTX_FEATURE_FINE_GRANULES].available;
    GCTX_TRY(claim_granules_mode(&fine));
    gcu_result r = split_by(drv, whole, granule, 0, out, &nb, &remainder);
    unsigned structured_sms = nb ? nb * out->resources[0].u.sm.smCount : 0;
    int coarser = nb && out->resources[0].u.sm.smCount > unit;
    int strands = structured_sms + unit <= whole->sm_count - whole->sm_count % unit;
    if (r == GCU_SUCCESS && fine && can_fine && (coarser || strands)) {
        granule = unit;
        flags = GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING;
        r = split_by(drv, whole, granule, flags, out, &nb, &remainder);
    } else if (r == GCU_SUCCESS && strands && !fine) {
        /* Co-scheduled granules of twice, three times... the minimum partition, the first
         * that leave no more SMs over than the alignment does, when any does with two
         * granules at least. */
        unsigned most = whole->sm_count - whole->sm_count % unit, n, found = 0;
        for (unsigned g = 2 * granule; 2 * g <= whole->sm_count && !found; g += granule)
            if (split_by(drv, whole, g, 0, out, &n, &remainder) == GCU_SUCCESS && n >= 2 &&
                n * out->resources[0].u.sm.smCount == most)
                found = g, nb = n; /* out and remainder hold that split */
        if (found)
            granule = found;
        else /* the tries overwrote the minimum's split */
            r = split_by(drv, whole, granule, 0, out, &nb, &remainder);
    }
    if (r != GCU_SUCCESS)
        return gctx__check_cuda(r, "cuDevSmResourceSplitByCount(minCount %u, flags %u) of device "
                                   "%d's %u SMs, its granules for claims",
                                granule, flags, whole->device, whole->sm_count);
    gctx__granule_layout *l = &out->identity.layout;
    *l = (gctx__granule_layout){
        .nb_regular = nb, .regular_sms = nb ? out->resources[0].u.sm.smCount : 0,
        .remainder_sms = remainder.type == GCU_DEV_RESOURCE_TYPE_SM ? remainder.u.sm.smCount : 0,
        .min_sms = whole->rules.min_partition, .split_flags = flags, .fine = fine};
    if (l->remainder_sms)
        out->resources[nb] = remainder;
    if (nb == 0 || gctx__layout_total(l) != whole->sm_count)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "device %d's split into granules of %u SMs gave %u granules and %u SMs "
                          "left, not its %u SMs: claims need every SM in a granule",
                          whole->device, granule, nb, l->remainder_sms, whole->sm_count);
    out->identity.hash = granules_hash(out->resources, gctx__layout_count(l));
    return GCTX_SUCCESS;
}

gctx_status gctx__device_granules_get(int device, gctx__device_granules *out)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load_green(&drv));
    if (!drv->cuDeviceGetUuid)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "the driver has no cuDeviceGetUuid: claims name GPUs by UUID");
    GCTX_TRY(gctx_partition_from_device(device, &out->whole));
    gctx_status s;
    gctx_partition *whole = out->whole;
    gcu_uuid uuid;
    GCTX_CHECK(gctx__check_cuda(drv->cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid on device %d",
                                device),
               fail);
    GCTX_CHECK(gctx__handle_resolve(&whole, GCTX__TYPE_PARTITION, "device partition"), fail);
    GCTX_CHECK(canonical_split(drv, whole, out), fail);
    gctx__format_uuid(&uuid, out->identity.uuid, sizeof out->identity.uuid);
    out->identity.driver_version = drv->version;
    return GCTX_SUCCESS;
fail:
    gctx__device_granules_end(out);
    return s;
}

void gctx__device_granules_end(gctx__device_granules *g)
{
    gctx_partition_release(g->whole);
    g->whole = NULL;
}

gctx_status gctx__granules_partition(const gctx__device_granules *g, const gctx__granules *set,
                                     gctx_partition **out)
{
    gctx_partition *whole = g->whole;
    GCTX_TRY(gctx__handle_resolve(&whole, GCTX__TYPE_PARTITION, "device partition"));
    const gctx__granule_layout *l = &g->identity.layout;
    gcu_dev_resource list[GCTX_CLAIM_MAX_GRANULES];
    unsigned n = 0;
    for (unsigned i = 0; i < gctx__layout_count(l); i++)
        if (gctx__granules_has(set, i))
            list[n++] = g->resources[i];
    /* The remainder granule carries no co-scheduling guarantee, nor does a set holding it,
     * nor the granules of a split that ignored co-scheduling. */
    int loose = l->split_flags || (l->remainder_sms && gctx__granules_has(set, l->nb_regular));
    int remainder_alone = l->remainder_sms && gctx__granules_has(set, l->nb_regular) && n == 1;
    const gctx__sm_rules unstructured = {2, 2, 0};
    gctx__split *record;
    GCTX_TRY(gctx__split_new(whole, &record));
    gctx_partition *p = NULL;
    gctx_status s = gctx__partition_from_split(record, 0,
                                   remainder_alone ? GCTX_PARTITION_REMAINDER
                                                   : GCTX_PARTITION_GROUP,
                                   list, n, loose ? &unstructured : &whole->rules,
                                   !loose && whole->structured, &p);
    gctx__split_release(record); /* the partition holds it now, or nothing does */
    if (s == GCTX_SUCCESS)
        *out = gctx__handle_give(&p->base);
    return s;
}

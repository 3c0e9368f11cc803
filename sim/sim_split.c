/* The two split calls: cuDevSmResourceSplitByCount and cuDevSmResourceSplit (13.1+). Both take
 * coscheduled units from sim_layout_units, so they hand out SMs in the same order. */
#include <string.h>

#include "sim_internal.h"

/* The split_id of a split of `in` with a request of `size` bytes: deterministic, never 0. */
static uint32_t split_id_of(const sim_res *in, int call, const void *request, size_t size)
{
    uint32_t h = sim_fnv1a(in->check, &call, sizeof call); /* check: the input's hash */
    h = sim_fnv1a(h, request, size);
    return h ? h : 1;
}

static sim_res res_part(const sim_res *in, uint32_t split_id, const sim_smset *sms)
{
    sim_res r = sim_res_new(GCU_DEV_RESOURCE_TYPE_SM, in->device);
    r.split_id = split_id;
    r.sms = *sms;
    return r;
}

static void write_remainder(gcu_dev_resource *out, const sim_res *in, uint32_t split_id,
                            const sim_smset *left)
{
    if (!out)
        return;
    /* An empty remainder is the INVALID resource: type 0, smCount 0. */
    if (sim_set_count(left) == 0) {
        memset(out, 0, sizeof *out);
        return;
    }
    sim_res r = res_part(in, split_id, left);
    sim_res_write(out, &r);
}

static gcu_result split_input(const gcu_dev_resource *input, sim_res *in)
{
    gcu_result rc = sim_res_read(input, in);
    if (rc != GCU_SUCCESS)
        return rc;
    if (in->type != GCU_DEV_RESOURCE_TYPE_SM)
        return GCU_ERROR_INVALID_RESOURCE_TYPE;
    /* Only a queried resource splits: a split's output must become a green context first. */
    return in->split_id == 0 ? GCU_SUCCESS : GCU_ERROR_INVALID_RESOURCE_CONFIGURATION;
}

/* Split-by-count of an unstructured SM resource (the resource of a green context made from a
 * remainder) without IGNORE_SM_COSCHEDULING. The H200 gives groups smaller than asked here,
 * by rules read off the measurements (testdata/h200-split-sweep.txt, the rem_after_* rows):
 * with s = minCount rounded up to even, groups = min(11, floor(N/s)), and the size is s capped
 * by a per-group-count limit that depends on N and on the flags. The limits below reproduce
 * every measured row for N = 124, 100 and 68. */
#define SIM_UNSTRUCTURED_MAX_GROUPS 11u

typedef struct measured_caps {
    unsigned sms;
    unsigned flags;                                   /* 0 or MAX_POTENTIAL_CLUSTER_SIZE */
    unsigned char cap[SIM_UNSTRUCTURED_MAX_GROUPS + 1]; /* by group count; 0: no cap seen */
} measured_caps;

static const measured_caps measured[] = {
    {124, 0, {0, 0, 56, 34, 18, 18, 16, 0, 2, 2, 2, 2}},
    {124, 2, {0, 0, 54, 36, 18, 18, 18, 0, 2, 2, 2, 2}},
    {100, 0, {0, 0, 46, 26, 18, 10, 10, 10, 2, 2, 2, 2}},
    {100, 2, {0, 0, 46, 28, 20, 10, 10, 10, 2, 2, 2, 2}},
    {68, 0, {0, 0, 30, 20, 10, 10, 0, 0, 2, 2, 2, 2}},
    {68, 2, {0, 0, 30, 20, 10, 10, 0, 0, 2, 2, 2, 2}},
};

static void unstructured_split(const sim_model *m, unsigned sms, unsigned min_count,
                               unsigned flags, unsigned *groups, unsigned *size)
{
    unsigned s = min_count > 2 ? (min_count + 1) / 2 * 2 : 2;
    unsigned g = sms / s;
    if (g > SIM_UNSTRUCTURED_MAX_GROUPS)
        g = SIM_UNSTRUCTURED_MAX_GROUPS;
    *groups = g;
    *size = s;
    if (g < 2)
        return;
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        if (m->layout == SIM_LAYOUT_GH100 && measured[i].sms == sms && measured[i].flags == flags) {
            if (measured[i].cap[g] && measured[i].cap[g] < s)
                *size = measured[i].cap[g];
            return;
        }
    }
    /* Unmeasured sizes (an approximation): a group keeps one TPC pair plus whole 8-SM
     * granules, the largest 8k+2 not above s, so most counts give less than asked as on the
     * H200. */
    *size = s < 10 ? 2 : (s - 2) / 8 * 8 + 2;
}

typedef struct sim_plan {
    unsigned groups, size;
    unsigned order[SIM_MAX_SMS]; /* group i is order[i*size .. (i+1)*size) */
} sim_plan;

static unsigned round_up(unsigned v, unsigned to) { return (v + to - 1) / to * to; }

static void plan_by_count(const sim_res *in, unsigned flags, unsigned min_count, sim_plan *p)
{
    const sim_model *m = sim.dev[in->device];
    unsigned n = sim_set_count(&in->sms);
    if (flags & GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) {
        p->size = round_up(min_count > 2 ? min_count : 2, 2);
        p->groups = n / p->size;
        sim_set_ids(&in->sms, p->order);
    } else if (in->structured) {
        unsigned size = round_up(min_count, m->align);
        p->size = size > m->min_part ? size : m->min_part;
        p->groups = sim_layout_units(m, &in->sms, p->size, p->order) / p->size;
    } else {
        unstructured_split(m, n, min_count, flags, &p->groups, &p->size);
        sim_set_ids(&in->sms, p->order);
    }
    /* A count the coscheduled units cannot hold, but the resource can: measured on the H200
     * (minCount 129..132) as one group of every SM and an empty remainder. */
    if (p->groups == 0) {
        p->groups = 1;
        p->size = n;
        sim_set_ids(&in->sms, p->order);
    }
}

/* The H200 deals 16-SM units round robin over the groups of one split: one group of 64 got
 * SMs 0-63, but of two groups of 64 the first got 0 1 4 5 8 9 ... 124 125 and the second
 * 2 3 6 7 ... 126 127 (testdata/h200-context-identity.txt). */
static void deal_units(sim_plan *p, unsigned groups)
{
    static unsigned dealt[SIM_MAX_SMS];
    unsigned per = p->size / 16;
    for (unsigned g = 0; g < groups; g++)
        for (unsigned j = 0; j < per; j++)
            memcpy(&dealt[(g * per + j) * 16], &p->order[(j * groups + g) * 16],
                   16 * sizeof *dealt);
    memcpy(p->order, dealt, groups * p->size * sizeof *dealt);
}

gcu_result sim_cuDevSmResourceSplitByCount(gcu_dev_resource *result, unsigned int *nbGroups,
                                           const gcu_dev_resource *input,
                                           gcu_dev_resource *remaining, unsigned int useFlags,
                                           unsigned int minCount)
{
    static sim_plan plan; /* large; the global lock serialises its use */
    SIM_BEGIN_ARGS(cuDevSmResourceSplitByCount, !nbGroups);
    sim_res in;
    SIM_CHECK(split_input(input, &in));
    if ((useFlags != 0 && !sim_version_at_least(12050)) ||
        useFlags > GCU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_FAIL_IF(minCount > sim_set_count(&in.sms), GCU_ERROR_INVALID_RESOURCE_CONFIGURATION);
    plan_by_count(&in, useFlags, minCount, &plan);
    if (!result) {
        *nbGroups = plan.groups;
        goto out;
    }
    SIM_FAIL_IF(*nbGroups == 0, GCU_ERROR_INVALID_VALUE);
    /* With less room than groups, the groups that do not fit go to the remainder. */
    unsigned groups = plan.groups < *nbGroups ? plan.groups : *nbGroups;
    if (sim.dev[in.device]->layout == SIM_LAYOUT_GH100 && in.structured &&
        !(useFlags & GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) && plan.size % 16 == 0 &&
        plan.groups * plan.size <= sim_set_count(&in.sms))
        deal_units(&plan, groups);
    const unsigned request[3] = {useFlags, minCount, *nbGroups};
    uint32_t split_id = split_id_of(&in, SIM_SYM_cuDevSmResourceSplitByCount, request,
                                     sizeof request);
    sim_smset left = in.sms;
    for (unsigned g = 0; g < groups; g++) {
        sim_smset sms = sim_set_of(&plan.order[g * plan.size], plan.size);
        sim_set_minus(&left, &sms);
        sim_res part = res_part(&in, split_id, &sms);
        part.structured = in.structured && !(useFlags & GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING);
        sim_res_write(&result[g], &part);
    }
    write_remainder(remaining, &in, split_id, &left);
    *nbGroups = groups;
    SIM_END();
}


/* Plans one group from `pool` into `out`, its size into p->smCount; a dry run (real false)
 * may report empty groups. */
static gcu_result plan_group(const sim_model *m, gcu_dev_sm_resource_group_params *p,
                             unsigned align_in, sim_smset *pool, sim_smset *out, bool real)
{
    unsigned order[SIM_MAX_SMS], ids[SIM_MAX_SMS];
    unsigned allowed = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL |
                       (sim_version_at_least(13040) ? GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID : 0);
    bool backfill = p->flags & GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
    bool local = p->flags & GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID;
    unsigned cs = p->coscheduledSmCount ? p->coscheduledSmCount : align_in;
    if ((p->flags & ~allowed) || cs < 2 || cs % 2 || cs > m->max_coscheduled ||
        (local && p->localityDomainId >= m->locality_domains))
        return GCU_ERROR_INVALID_VALUE;
    if (p->smCount % 2 || (!backfill && p->smCount % cs))
        return GCU_ERROR_INVALID_RESOURCE_CONFIGURATION;

    /* Locality: units come from the domain; a backfill may then reach outside it. */
    sim_smset first = *pool;
    if (local) {
        sim_smset outside = *pool, dom = sim_domain_set(m, p->localityDomainId);
        sim_set_minus(&outside, &dom);
        sim_set_minus(&first, &outside);
    }
    unsigned have = sim_layout_units(m, &first, cs, order) / cs;
    unsigned want = p->smCount ? p->smCount / cs : have;
    unsigned units = want < have ? want : have;
    if (!backfill && units < want)
        return GCU_ERROR_INVALID_RESOURCE_CONFIGURATION;
    *out = sim_set_of(order, units * cs);
    if (backfill) {
        sim_smset sources[2] = {first, *pool};
        for (int s = 0; s < (local ? 2 : 1); s++) {
            sim_set_minus(&sources[s], out);
            unsigned n = sim_set_ids(&sources[s], ids);
            for (unsigned i = 0; i < n && (!p->smCount || sim_set_count(out) < p->smCount); i++)
                sim_set_add(out, ids[i]);
        }
        if (p->smCount && sim_set_count(out) < p->smCount)
            return GCU_ERROR_INVALID_RESOURCE_CONFIGURATION;
    }
    /* A real group needs at least one whole coscheduled unit; a dry run reports what it got. */
    if (real && units == 0)
        return GCU_ERROR_INVALID_RESOURCE_CONFIGURATION;
    p->smCount = sim_set_count(out);
    sim_set_minus(pool, out);
    return GCU_SUCCESS;
}

gcu_result sim_cuDevSmResourceSplit(gcu_dev_resource *result, unsigned int nbGroups,
                                    const gcu_dev_resource *input, gcu_dev_resource *remainder,
                                    unsigned int flags, gcu_dev_sm_resource_group_params *groupParams)
{
    /* Work copies, so a failing call changes nothing; the global lock serialises their use. */
    static gcu_dev_sm_resource_group_params params[SIM_MAX_SMS];
    static sim_smset sets[SIM_MAX_SMS];
    SIM_BEGIN_ARGS(cuDevSmResourceSplit,
                   !groupParams || nbGroups == 0 || nbGroups > SIM_MAX_SMS || flags != 0);
    sim_res in;
    SIM_CHECK(split_input(input, &in));
    const sim_model *m = sim.dev[in.device];
    memcpy(params, groupParams, nbGroups * sizeof *params);
    sim_smset pool = in.sms;
    for (unsigned g = 0; g < nbGroups; g++)
        SIM_CHECK(plan_group(m, &params[g], in.report_align, &pool, &sets[g], result != NULL));
    if (result) {
        /* groupParams still holds the request: the outputs go back to it below. */
        uint32_t split_id = split_id_of(&in, SIM_SYM_cuDevSmResourceSplit, groupParams,
                                         nbGroups * sizeof *groupParams);
        for (unsigned g = 0; g < nbGroups; g++) {
            sim_res part = res_part(&in, split_id, &sets[g]);
            part.structured = !(params[g].flags & GCU_DEV_SM_RESOURCE_GROUP_BACKFILL);
            part.report_min = in.report_min;
            part.report_align = in.report_align;
            part.flags = (uint8_t)params[g].flags;
            part.domain = (uint8_t)params[g].localityDomainId;
            sim_res_write(&result[g], &part);
        }
        write_remainder(remainder, &in, split_id, &pool);
    }
    memcpy(groupParams, params, nbGroups * sizeof *params);
    SIM_END();
}

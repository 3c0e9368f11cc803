/*
 * cuDevSmResourceSplit (13.1+): per-group counts, coscheduled units, discovery and backfill.
 * Coscheduled units are the same as split-by-count's (sim_layout_units), so both calls hand out
 * SMs in the same order.
 */
#include <string.h>

#include "sim_internal.h"

/* Plans one group from the SMs still in `pool`; writes its SMs to `out` and its size back to
 * p->smCount. `real` is false for a dry run (result == NULL), which may report empty groups. */
static gcu_result plan_group(const sim_model *m, gcu_dev_sm_resource_group_params *p,
                             unsigned align_in, sim_smset *pool, sim_smset *out, bool real)
{
    unsigned order[SIM_MAX_SMS], ids[SIM_MAX_SMS];
    unsigned allowed = GCU_DEV_SM_RESOURCE_GROUP_BACKFILL |
                       (sim_version_at_least(13040) ? GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID : 0);
    bool backfill = p->flags & GCU_DEV_SM_RESOURCE_GROUP_BACKFILL;
    bool local = p->flags & GCU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID;
    unsigned cs = p->coscheduledSmCount ? p->coscheduledSmCount : align_in;
    unsigned max_cs = m->cc_major >= 9 ? 32 : 2;
    if ((p->flags & ~allowed) || cs < 2 || cs % 2 || cs > max_cs ||
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
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < units * cs; i++)
        sim_set_add(out, order[i]);
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
    SIM_BEGIN(cuDevSmResourceSplit);
    if (!groupParams || nbGroups == 0 || nbGroups > SIM_MAX_SMS || flags != 0)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    sim_res in;
    SIM_CHECK(sim_res_split_input(input, &in));
    const sim_model *m = sim.dev[in.device];
    memcpy(params, groupParams, nbGroups * sizeof *params);
    sim_smset pool = in.sms;
    for (unsigned g = 0; g < nbGroups; g++)
        SIM_CHECK(plan_group(m, &params[g], in.report_align, &pool, &sets[g], result != NULL));
    if (result) {
        /* groupParams still holds the request: the outputs go back to it below. */
        uint32_t split_id = sim_split_id(&in, SIM_SYM_cuDevSmResourceSplit, groupParams,
                                         nbGroups * sizeof *groupParams);
        for (unsigned g = 0; g < nbGroups; g++) {
            sim_res part = sim_res_part(&in, split_id, SIM_ORIGIN_GROUP, &sets[g]);
            part.structured = !(params[g].flags & GCU_DEV_SM_RESOURCE_GROUP_BACKFILL);
            part.report_min = in.report_min;
            part.report_align = in.report_align;
            part.flags = (uint8_t)params[g].flags;
            part.domain = (uint8_t)params[g].localityDomainId;
            sim_res_write(&result[g], &part);
        }
        sim_res_write_remainder(remainder, &in, split_id, &pool);
    }
    memcpy(groupParams, params, nbGroups * sizeof *params);
    SIM_END();
}

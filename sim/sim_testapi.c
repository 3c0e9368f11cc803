/* The gctxsim_* functions tests use to look inside the simulator (greenctx_sim.h). */
#include <string.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

static int greens_live(void) { return sim_pool_live(&sim_greens, NULL); }

GCTXSIM_API int gctxsim_live_objects(const char *kind)
{
    /* "all" is their sum; "desc" counts the descriptors made, which are never destroyed. */
    static const struct {
        const char *kind;
        int (*live)(void);
    } kinds[] = {{"green_ctx", greens_live}, {"stream", sim_streams_live},
                 {"event", sim_events_live}, {"primary_ctx", sim_primary_refs},
                 {"module", sim_modules_live}, {"memory", sim_memory_live}};
    if (!kind)
        return -1;
    bool all = strcmp(kind, "all") == 0;
    sim_lock();
    int n = all ? 0 : strcmp(kind, "desc") == 0 ? sim.descs_made : -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (all || strcmp(kind, kinds[i].kind) == 0)
            n = (all ? n : 0) + kinds[i].live();
    sim_unlock();
    return n;
}

static int copy_ids(const sim_smset *sms, unsigned *ids, int capacity)
{
    unsigned all[SIM_MAX_SMS];
    unsigned n = sim_set_ids(sms, all);
    for (unsigned i = 0; ids && i < n && (int)i < capacity; i++)
        ids[i] = all[i];
    return (int)n;
}

GCTXSIM_API int gctxsim_resource_sm_ids(const void *resource, unsigned *ids, int capacity)
{
    sim_lock();
    sim_res r;
    int n = sim_res_read(resource, &r) == GCU_SUCCESS && r.type == GCU_DEV_RESOURCE_TYPE_SM
                ? copy_ids(&r.sms, ids, capacity)
                : -1;
    sim_unlock();
    return n;
}

GCTXSIM_API int gctxsim_green_ctx_sm_ids(CUgreenCtx ctx, unsigned *ids, int capacity)
{
    sim_lock();
    const sim_green *g = sim_green_get(ctx);
    int n = g ? copy_ids(&g->sms, ids, capacity) : -1;
    sim_unlock();
    return n;
}

GCTXSIM_API int gctxsim_stream_sm_ids(CUstream stream, unsigned *ids, int capacity)
{
    sim_lock();
    sim_ctx c;
    int n = -1;
    if (sim_stream_ctx(stream, &c) == GCU_SUCCESS) {
        sim_smset sms = sim_ctx_sms(&c);
        n = copy_ids(&sms, ids, capacity);
    }
    sim_unlock();
    return n;
}

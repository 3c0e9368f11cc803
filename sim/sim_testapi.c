/* The gctxsim_* functions tests use to look inside the simulator (greenctx_sim.h). */
#include <string.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

GCTXSIM_API int gctxsim_live_objects(const char *kind)
{
    if (!kind)
        return -1;
    sim_lock();
    int greens = sim_pool_live(&sim_greens, NULL);
    int n = -1;
    if (strcmp(kind, "green_ctx") == 0)
        n = greens;
    else if (strcmp(kind, "stream") == 0)
        n = sim_streams_live();
    else if (strcmp(kind, "event") == 0)
        n = sim_events_live();
    else if (strcmp(kind, "primary_ctx") == 0)
        n = sim_primary_refs();
    else if (strcmp(kind, "module") == 0)
        n = sim_modules_live();
    else if (strcmp(kind, "memory") == 0)
        n = sim_memory_live();
    else if (strcmp(kind, "desc") == 0)
        n = sim.descs_made;
    else if (strcmp(kind, "all") == 0)
        n = greens + sim_streams_live() + sim_events_live() + sim_primary_refs() +
            sim_modules_live() + sim_memory_live();
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

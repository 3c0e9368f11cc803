/* --report FILE.json: what was confined and what the program did with it, written when the
 * program exits (by the process that was confined, not by a child that forked from it). */
#include <stdio.h>
#include <unistd.h>

#include "run_preload.h"
#include "tool.h"

static void device_json(FILE *f, const run_device *d)
{
    fprintf(f, "{\"device\":%d,\"request\":", d->ordinal);
    greenctx_json_string(f, run_request_for(&run_cfg.request, d->ordinal));
    fprintf(f, ",\"device_sm_count\":%u,\"sm_count\":%u,\"whole_device\":%s,\"green_context_id\":%llu,"
               "\"sm_ids\":",
            d->plan.device_sms, d->plan.sm_count, d->plan.whole ? "true" : "false", d->green_id);
    if (d->sm_ids_error[0]) {
        fputs("null,\"sm_ids_error\":", f);
        greenctx_json_string(f, d->sm_ids_error);
    } else {
        fputc('[', f);
        for (unsigned i = 0; i < d->nb_sm_ids && i < RUN_MAX_SM_IDS; i++)
            fprintf(f, "%s%u", i ? "," : "", d->sm_ids[i]);
        fputs("],\"sm_ids_error\":null", f);
    }
    const gctx_claim_info *info = &d->claim_info;
    if (info->size) {
        fprintf(f, ",\"claim\":{\"sm_count\":%u,\"granules\":[", info->sm_count);
        for (unsigned i = 0; i < info->nb_granules && i < GCTX_CLAIM_MAX_GRANULES; i++)
            fprintf(f, "%s%u", i ? "," : "", info->granules[i]);
        fputs("]}", f);
    } else {
        fputs(",\"claim\":null", f);
    }
    fputc('}', f);
}

void run_report_at_exit(void)
{
    if ((long)getpid() != run_cfg.pid)
        return;
    FILE *f = fopen(run_cfg.report, "w");
    if (!f) {
        perror("greenctx run: the report could not be written");
        return;
    }
    /* A program that never reached the driver was never confined, and never needed to be. */
    int used = run_setup_done();
    fprintf(f, "{\"pid\":%ld,\"cuda_used\":%s,\"driver_version\":%d,\"driver_path\":",
            run_cfg.pid, used ? "true" : "false", run.drv.version);
    greenctx_json_string(f, used ? gctx_driver_path() : NULL);
    fputs(",\"request\":", f);
    greenctx_json_string(f, run_cfg.sms);
    fprintf(f, ",\"setup_ms\":%.3f,\"driver_ms\":%.3f,\"observe_ms\":%.3f,\"devices\":[",
            run.setup_ms, run.driver_ms, run.observe_ms);
    for (unsigned i = 0; i < run.nb_devices; i++) {
        if (i)
            fputc(',', f);
        device_json(f, &run.devices[i]);
    }
    fprintf(f,
            "],\"binds_redirected\":%ld,\"binds_passed\":%ld,\"current_shown_primary\":%ld,"
            "\"primary_retains\":%ld,\"primary_releases\":%ld,\"threads_seen\":%ld,"
            "\"refused\":{\"cuCtxCreate\":%ld,\"cuGreenCtxCreate\":%ld,"
            "\"cuDevicePrimaryCtxReset\":%ld,\"unconfined_context\":%ld,"
            "\"unconfined_device\":%ld}}\n",
            atomic_load(&run_count.binds_redirected), atomic_load(&run_count.binds_passed),
            atomic_load(&run_count.current_shown_primary), atomic_load(&run_count.retains),
            atomic_load(&run_count.releases), atomic_load(&run_count.threads_seen),
            atomic_load(&run_count.refused_ctx_create),
            atomic_load(&run_count.refused_green_ctx_create),
            atomic_load(&run_count.refused_reset), atomic_load(&run_count.refused_context),
            atomic_load(&run_count.refused_device));
    if (fclose(f) != 0)
        perror("greenctx run: the report could not be written");
}

/* --report FILE.json: each process that uses CUDA writes its own part in
 * GREENCTX_RUN_REPORT_DIR for the tool to merge. A part is announced (NAME.started) before the
 * process can launch anything, so that one never written (killed, _exit) is known. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "run_preload.h"
#include "json.h"

/* The SM count the program is shown: the partition's, or the device's (physical). */
static unsigned device_sms_shown(const run_device *d)
{
    return run_cfg.device_sms == RUN_DEVICE_SMS_PHYSICAL ? d->joined.plan.device_sms
                                                         : d->joined.plan.sm_count;
}

static void device_json(FILE *f, const run_device *d)
{
    fprintf(f, "{\"device\":%d,\"request\":", d->ordinal);
    greenctx_json_string(f, run_request_for(&run_cfg.request, d->ordinal));
    fprintf(f, ",\"device_sm_count\":%u,\"sm_count\":%u,\"sm_count_shown\":%u,"
               "\"whole_device\":%s,\"green_context_id\":%llu,\"sm_ids\":",
            d->joined.plan.device_sms, d->joined.plan.sm_count, device_sms_shown(d),
            d->joined.plan.whole ? "true" : "false", d->green_id);
    if (d->sm_ids_error[0]) {
        fputs("null,\"sm_ids_error\":", f);
        greenctx_json_string(f, d->sm_ids_error);
    } else {
        fputc('[', f);
        for (unsigned i = 0; i < d->nb_sm_ids && i < RUN_MAX_SM_IDS; i++)
            fprintf(f, "%s%u", i ? "," : "", d->sm_ids[i]);
        fputs("],\"sm_ids_error\":null", f);
    }
    const gctx_claim_info *info = &d->joined.claim_info;
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

/* This process's part, "" until it uses CUDA; part_pid: a forked copy writes nothing. */
static char part[sizeof run_cfg.report_dir + 64];
static long part_pid;

void run_report_started(void)
{
    if (!run_cfg.report_dir[0])
        return;
    long long ns = clock_now_ns();
    char started[sizeof part + sizeof RUN_PART_STARTED];
    int n = snprintf(part, sizeof part, "%s/%020lld-%ld", run_cfg.report_dir, ns, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof part)
        run_die("%s is too long for a report part", GREENCTX_RUN_REPORT_DIR);
    snprintf(started, sizeof started, "%s%s", part, RUN_PART_STARTED);
    int fd = open(started, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        run_die("the report's part %s could not be created (%s), so this process's work would be "
                "missing from the report",
                started, strerror(errno));
    close(fd);
    part_pid = (long)getpid();
}

static void write_json(FILE *f)
{
    /* A process whose set-up failed was stopped before it wrote anything. */
    int used = run_setup_done();
    fprintf(f, "{\"pid\":%ld,\"cuda_used\":%s,\"driver_version\":%d,\"driver_path\":",
            part_pid, used ? "true" : "false", run.drv.version);
    greenctx_json_string(f, used ? gctx_driver_path() : NULL);
    fputs(",\"request\":", f);
    greenctx_json_string(f, run_cfg.sms);
    fprintf(f, ",\"device_sms\":\"%s\"", run_device_sms_name(run_cfg.device_sms));
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
            "\"sm_count_shown_calls\":%ld,"
            "\"refused\":{\"cuCtxCreate\":%ld,\"cuGreenCtxCreate\":%ld,"
            "\"cuDevicePrimaryCtxReset\":%ld,\"unconfined_context\":%ld,"
            "\"unconfined_device\":%ld}}\n",
            atomic_load(&run_count.binds_redirected), atomic_load(&run_count.binds_passed),
            atomic_load(&run_count.current_shown_primary), atomic_load(&run_count.retains),
            atomic_load(&run_count.releases), atomic_load(&run_count.threads_seen),
            atomic_load(&run_count.sm_count_shown),
            atomic_load(&run_count.refused_ctx_create),
            atomic_load(&run_count.refused_green_ctx_create),
            atomic_load(&run_count.refused_reset), atomic_load(&run_count.refused_context),
            atomic_load(&run_count.refused_device));
}

/* Into NAME.part.tmp, then renamed: the tool never reads half a part. */
void run_report_write_part(void)
{
    if (!part_pid || (long)getpid() != part_pid)
        return;
    char done[sizeof part + sizeof RUN_PART_DONE], tmp[sizeof done + 4];
    snprintf(done, sizeof done, "%s%s", part, RUN_PART_DONE);
    snprintf(tmp, sizeof tmp, "%s.tmp", done);
    FILE *f = fopen(tmp, "we");
    if (f) {
        write_json(f);
        if (fclose(f) == 0 && rename(tmp, done) == 0)
            return;
    }
    fprintf(stderr, "greenctx run: the report's part %s could not be written: %s\n", done,
            strerror(errno));
}

/* `greenctx run`'s request, checked before anything is claimed or started: its grammar (the
 * preload's, common/run_request.c), its GROUPs' syntax, the devices it names, and with
 * --shared the planner's split. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "run_tool.h"

/* A GROUP's syntax alone (no device needed): a typo is bad usage, not a failed plan. A
 * claim is a count of SMs, so a GROUP's suffixes (16:c2) need --shared. */
static int check_syntax(const run_job *job, const run_request *request)
{
    const greenctx_tool_options *opts = job->opts;
    for (unsigned i = 0; i < request->nb_entries; i++) {
        char *text = (char *)request->entries[i].text;
        group_request groups;
        if (strcmp(text, "all") == 0)
            continue;
        if (!job->options.shared && strchr(text, ':'))
            return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                       "'%s': a claim is a count or a share of the SMs; a "
                                       "GROUP's suffixes need --shared (no claim)",
                                       text);
        if (tool_parse_groups(opts, 1, &text, 100, 1, &groups) != 0)
            return GREENCTX_EXIT_USAGE;
        group_request_free(&groups);
    }
    return GREENCTX_EXIT_OK;
}

int run_check_request(const run_job *job, const char *request, char *text, size_t text_size,
                      run_device_plan *plans, unsigned *nb_plans)
{
    const greenctx_tool_options *opts = job->opts;
    int device = job->options.device;
    if (device >= 0 && strpbrk(request, "=,"))
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "with --device, give one GROUP or all, not '%s'", request);
    int n = device >= 0 ? snprintf(text, text_size, "%d=%s", device, request)
                        : snprintf(text, text_size, "%s", request);
    /* Cut, a device would get another size (the preload reads at most as much). */
    if (n < 0 || (size_t)n >= text_size)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "the request is %zu bytes long; the preload takes at most %zu "
                                   "(with --device's DEV=)",
                                   strlen(request), text_size - 1);
    run_request parsed;
    char why[512];
    if (run_request_parse(text, &parsed, why, sizeof why) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s", why);
    int rc = check_syntax(job, &parsed), count = 0;
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    gctx_status s = gctx_device_count(&count);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(opts, s);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (count == 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                   "the driver shows no device (CUDA_VISIBLE_DEVICES=%s); the "
                                   "program was not started",
                                   visible ? visible : "unset");
    for (unsigned i = 0; i < parsed.nb_entries; i++) {
        if (parsed.entries[i].device >= count)
            return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_NO_DEVICE",
                                       "there is no device %d: the driver shows %d (valid devices "
                                       "are 0 to %d; CUDA_VISIBLE_DEVICES=%s applies)",
                                       parsed.entries[i].device, count, count - 1,
                                       visible ? visible : "unset");
    }
    *nb_plans = 0;
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        const char *req = run_request_for(&parsed, dev);
        if (!req)
            continue;
        s = job->options.shared
                ? run_plan_device(dev, req, job->options.round, &plans[*nb_plans], NULL, why,
                                  sizeof why)
                : run_plan_claim(dev, req, &plans[*nb_plans], why, sizeof why);
        if (s != GCTX_SUCCESS)
            return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                       "%s\n  the program was not started", why);
        (*nb_plans)++;
    }
    return GREENCTX_EXIT_OK;
}

/* `greenctx run`'s request, checked before anything is claimed or started. */
#include <stdio.h>
#include <string.h>

#include "groups.h"
#include "run_tool.h"

/* A GROUP's syntax alone: a typo is bad usage. A claim is a count: suffixes need --shared. */
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

void run_session_request_of(const run_job *job, const char *sms, run_session_request *req)
{
    const run_options *o = &job->options;
    *req = (run_session_request){.sms = sms,
                                 .round = o->round,
                                 .shared = o->shared,
                                 .rest_option = "--sms rest",
                                 .round_option = "--round up|down|nearest",
                                 .waiting_note = "greenctx run",
                                 .preload = job->preload,
                                 .program_preload = job->program_preload,
                                 .report_dir = job->report_dir[0] ? job->report_dir : NULL,
                                 .no_inherit = o->no_inherit,
                                 .device_sms = o->device_sms,
                                 .memory = o->memory};
    gctx_claim_options *claim = &req->claim;
    *claim = (gctx_claim_options)GCTX_CLAIM_OPTIONS_INIT;
    claim->flags = GCTX_CLAIM_INHERIT | (o->wait ? GCTX_CLAIM_WAIT : 0u);
    claim->timeout_ms = o->wait_ms;
    if (o->round)
        claim->rounding = (gctx_rounding)group_syntax_rounding(o->round);
    claim->label = o->label;
    claim->tenant_class = o->tenant_class;
    claim->target_ms = o->target_ms;
    claim->target_factor = o->target_factor;
    claim->command = job->command_text;
}

int run_check_request(const run_job *job, const char *request, run_session *session)
{
    const greenctx_tool_options *opts = job->opts;
    int device = job->options.device;
    char text[RUN_MAX_SMS_TEXT], why[512];
    if (device >= 0 && strpbrk(request, "=,"))
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "with --device, give one GROUP or all, not '%s'", request);
    int n = device >= 0 ? snprintf(text, sizeof text, "%d=%s", device, request)
                        : snprintf(text, sizeof text, "%s", request);
    /* Cut, a device would get another size (the preload reads at most as much). */
    if (n < 0 || (size_t)n >= sizeof text)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                   "the request is %zu bytes long; the preload takes at most %zu "
                                   "(with --device's DEV=)",
                                   strlen(request), sizeof text - 1);
    run_request parsed;
    if (run_request_parse(text, &parsed, why, sizeof why) != 0)
        return greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s", why);
    int rc = check_syntax(job, &parsed);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    run_session_request req;
    run_session_request_of(job, text, &req);
    gctx_status s = run_session_plan(&req, session, why, sizeof why);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                   "%s\n  the program was not started", why);
    return GREENCTX_EXIT_OK;
}

/* greenctx run's request, checked before anything is claimed or started; its claims, taken
 * before the program starts so that two runs never share SMs (the preload joins them); what MPS
 * must allow; the program's environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define MPS_HINT "start one with `greenctx mps start` and export the CUDA_MPS_PIPE_DIRECTORY it prints"

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

/* The session's request for `sms` (--sms or a sweep's size) and the command line's options. */
static void run_session_request_of(const run_job *job, const char *sms,
                                   run_session_request *req)
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

/* --memory SIZE: digits and an optional K, M, G or T, as CUDA_MPS_PINNED_DEVICE_MEM_LIMIT takes. */
static int valid_size(const char *text)
{
    size_t digits = strspn(text, "0123456789");
    if (digits == 0 || strtoull(text, NULL, 10) == 0)
        return 0;
    return text[digits] == '\0' ||
           (strchr("KMGTkmgt", text[digits]) && text[digits + 1] == '\0');
}

int run_check_mps(const run_job *job)
{
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    gctx_status s = gctx_mps_get_info(&mps);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(job->opts, s);
    if (mps.active_thread_percentage < 100)
        return greenctx_tool_error(
            job->opts, GREENCTX_EXIT_USAGE, "usage",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d is refused: below 100 the driver refuses green "
            "splits inside an MPS client (CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION), and the "
            "percentage is a cap, not a reservation (measured on the H200: a victim's p99 5.9x "
            "worse at 12%%); unset it: the claim gives the program its own SMs. The program "
            "was not started",
            mps.active_thread_percentage);
    if (job->options.memory && !valid_size(job->options.memory))
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage",
                                   "--memory takes a size such as 16G, 512M or 1073741824; got "
                                   "'%s'",
                                   job->options.memory);
    if (job->options.memory && !mps.daemon_running)
        return greenctx_tool_error(
            job->opts, GREENCTX_EXIT_USAGE, "usage",
            "--memory %s sets the MPS client's device-memory limit "
            "(CUDA_MPS_PINNED_DEVICE_MEM_LIMIT), which only an MPS client obeys, and no MPS "
            "control daemon answers on %s: %s. The program was not started",
            job->options.memory, mps.pipe_dir, MPS_HINT);
    return GREENCTX_EXIT_OK;
}

/* Once per run (a sweep claims once per size): another tenant on a GPU confined, and no MPS. */
static void warn_without_mps(run_job *job, const run_device_plan *plans, unsigned nb_plans)
{
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    if (job->warned_without_mps || gctx_mps_get_info(&mps) != GCTX_SUCCESS || mps.daemon_running)
        return;
    for (unsigned i = 0; i < nb_plans; i++) {
        gctx_claim_info others[8];
        unsigned count = 0;
        for (unsigned k = 0; k < 8; k++)
            others[k] = (gctx_claim_info)GCTX_CLAIM_INFO_INIT;
        if (gctx_claim_list(plans[i].device, NULL, others, 8, &count, NULL) != GCTX_SUCCESS)
            continue;
        for (unsigned k = 0; k < count && k < 8; k++) {
            if (others[k].self)
                continue;
            fprintf(stderr,
                    "greenctx run: device %d: another tenant holds SMs (pid %d, %s, %u SMs: %s) "
                    "and no MPS daemon answers on %s, so the two are time-sliced, not run side "
                    "by side (measured on the H200: the latency victim's p99 3.6x worse, the "
                    "throughput hog at 0.66x); %s\n",
                    plans[i].device, others[k].pid, others[k].user, others[k].sm_count,
                    others[k].command, mps.pipe_dir, MPS_HINT);
            job->warned_without_mps = 1;
            return;
        }
    }
}

int run_take_claims(run_job *job, run_session *session)
{
    run_session_request req;
    char why[1024];
    run_session_request_of(job, session->sms, &req);
    gctx_status s = run_session_claim(&req, session, why, sizeof why);
    const run_device_plan *plan = &session->plans[session->failed];
    if (s == GCTX_ERROR_BUSY)
        return greenctx_tool_error(
            job->opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
            "%s\n  %s%s--wait[=SECONDS] queues for the SMs, --shared runs without a claim (the "
            "SMs may then be shared); the program was not started",
            why, plan->whole ? "`all` claims every SM, so it waits for every other tenant; " : "",
            job->options.wait ? "waited in vain; " : "");
    if (s != GCTX_SUCCESS)
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                   "device %d: the SMs could not be claimed: %s\n  the program "
                                   "was not started",
                                   plan->device, why);
    warn_without_mps(job, session->plans, session->nb_plans);
    return GREENCTX_EXIT_OK;
}

const char *run_claim_note(const run_job *job, const run_session *session, unsigned i, char *buf,
                           size_t size)
{
    if (job->options.shared)
        snprintf(buf, size, " (--shared: not claimed, other tenants may run on the same SMs)");
    else
        snprintf(buf, size, " (claimed granules %s)", session->plans[i].granules);
    return buf;
}

static int set_variable(void *unused, const char *name, const char *value)
{
    (void)unused;
    return value ? setenv(name, value, 1) : unsetenv(name);
}

int run_set_environment(const run_job *job, const run_session *session)
{
    run_session_request req;
    run_session_request_of(job, session->sms, &req);
    if (run_session_environment(&req, session, set_variable, NULL) != 0) {
        fprintf(stderr, "greenctx run: the program's environment could not be set (LD_PRELOAD "
                        "or the memory limit is too long)\n");
        return -1;
    }
    return 0;
}

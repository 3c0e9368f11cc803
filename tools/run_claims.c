/* greenctx run's claims: before the program starts, each confined device's SMs are claimed
 * in the registry (gctx_claim_acquire), so that two runs never share SMs; the program's
 * preload joins the claim (GREENCTX_RUN_CLAIM) and makes its green context on exactly those
 * SMs. And what MPS must allow for that: tenants run side by side only under MPS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim_text.h"
#include "groups.h"
#include "run_tool.h"

#define MPS_HINT "start one with `greenctx mps start` and export the CUDA_MPS_PIPE_DIRECTORY it prints"

/* --memory SIZE: digits and an optional K, M, G or T, as CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
 * takes them. */
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

/* Once per run (a sweep claims once per size): another tenant on a GPU this run confines,
 * and no MPS. */
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
            break;
        }
        if (job->warned_without_mps)
            return;
    }
}

void run_drop_claims(run_claims *claims)
{
    for (unsigned i = 0; i < claims->nb_claims; i++)
        gctx_claim_release(claims->claims[i]);
    memset(claims, 0, sizeof *claims);
}

/* What the claim asks for: the request as given (a count, a share, rest, or all: every SM
 * of the device, refused while anyone else holds a claim there). */
static int take_one(const run_job *job, const char *text, run_device_plan *plan,
                    gctx_claim **claim)
{
    char request[RUN_MAX_REQUEST], command[256];
    snprintf(request, sizeof request, "%s", text);
    gctx_claim_options options = GCTX_CLAIM_OPTIONS_INIT;
    options.flags = GCTX_CLAIM_INHERIT;
    options.timeout_ms = job->options.wait_ms;
    if (job->options.round)
        options.rounding = (gctx_rounding)group_syntax_rounding(job->options.round);
    options.label = job->options.label;
    options.tenant_class = job->options.tenant_class;
    options.target_ms = job->options.target_ms;
    options.target_factor = job->options.target_factor;
    options.command = text_join_words(job->options.command, command, sizeof command);
    gctx_status s = gctx_claim_acquire(plan->device, request, &options, claim);
    if (s == GCTX_ERROR_BUSY && job->options.wait) {
        /* Queued, the tool would be silent for as long as the holders keep the SMs. */
        char bound[32] = "as long as it takes";
        if (options.timeout_ms >= 0)
            snprintf(bound, sizeof bound, "up to %d s", (options.timeout_ms + 999) / 1000);
        fprintf(stderr,
                "greenctx run: device %d: --sms %s is not free now; waiting for it %s "
                "(greenctx ps shows the holders; Ctrl-C gives up)\n",
                plan->device, request, bound);
        options.flags |= GCTX_CLAIM_WAIT;
        s = gctx_claim_acquire(plan->device, request, &options, claim);
    }
    if (s == GCTX_ERROR_BUSY) {
        char why[1024], hint[256] = "";
        snprintf(why, sizeof why, "%s", gctx_last_error());
        gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
        unsigned count = 0, asked = (unsigned)strtoul(request, NULL, 10);
        /* Free SMs that can't make the count: granules are whole, and the SMs left over
         * from them (4 on an H200) go with rest only. */
        int a_count = request[strspn(request, "0123456789")] == '\0';
        if (a_count &&
            gctx_claim_list(plan->device, NULL, NULL, 0, &count, &usage) == GCTX_SUCCESS &&
            usage.free_sms >= asked)
            snprintf(hint, sizeof hint,
                     "the %u free SMs can't make exactly %u of whole granules: --sms rest takes "
                     "them all, --round up|down|nearest the nearest count they make; ",
                     usage.free_sms, asked);
        return greenctx_tool_error(
            job->opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
            "%s\n  %s%s%s--wait[=SECONDS] queues for the SMs, --shared runs without a claim (the "
            "SMs may then be shared); the program was not started",
            why, hint,
            plan->whole ? "`all` claims every SM, so it waits for every other tenant; " : "",
            job->options.wait ? "waited in vain; " : "");
    }
    if (s != GCTX_SUCCESS)
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                                   "device %d: the SMs could not be claimed: %s\n  the program "
                                   "was not started",
                                   plan->device, gctx_last_error());
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    if (gctx_claim_get_info(*claim, &info) == GCTX_SUCCESS)
        plan->sm_count = info.sm_count; /* what the program gets, rounding included */
    return GREENCTX_EXIT_OK;
}

int run_take_claims(run_job *job, const char *text, run_device_plan *plans,
                    unsigned nb_plans, run_claims *claims)
{
    memset(claims, 0, sizeof *claims);
    run_request parsed;
    char why[256];
    if (job->options.shared)
        return GREENCTX_EXIT_OK;
    if (run_request_parse(text, &parsed, why, sizeof why) != 0) /* checked before: can't fail */
        return greenctx_tool_error(job->opts, GREENCTX_EXIT_USAGE, "usage", "%s", why);
    for (unsigned i = 0; i < nb_plans; i++) {
        gctx_claim *claim = NULL;
        char token[1024];
        int rc = take_one(job, run_request_for(&parsed, plans[i].device), &plans[i], &claim);
        if (rc != GREENCTX_EXIT_OK) {
            run_drop_claims(claims);
            return rc;
        }
        claims->claims[claims->nb_claims++] = claim;
        gctx_status s = gctx_claim_export(claim, token, sizeof token);
        if (s != GCTX_SUCCESS || run_claim_list_add(claims->variable, sizeof claims->variable,
                                                    plans[i].device, token) != 0) {
            run_drop_claims(claims);
            return greenctx_tool_error(job->opts, GREENCTX_EXIT_FAILED, "GCTX_ERROR_REGISTRY",
                                       "device %d: the claim could not be handed to the program "
                                       "(%s)",
                                       plans[i].device,
                                       s != GCTX_SUCCESS ? gctx_last_error()
                                                         : "its token holds a comma or is too long");
        }
    }
    warn_without_mps(job, plans, nb_plans);
    return GREENCTX_EXIT_OK;
}

const char *run_claim_note(const run_job *job, const run_claims *claims, unsigned i, char *buf,
                           size_t size)
{
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    char ranges[512];
    if (job->options.shared)
        snprintf(buf, size, " (--shared: not claimed, other tenants may run on the same SMs)");
    else if (i < claims->nb_claims && gctx_claim_get_info(claims->claims[i], &info) == GCTX_SUCCESS)
        snprintf(buf, size, " (claimed granules %s)",
                 text_granule_ranges(info.granules, info.nb_granules, ranges, sizeof ranges));
    else
        buf[0] = '\0';
    return buf;
}

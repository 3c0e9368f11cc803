/* One `greenctx run` session: planned, claimed and joined with the library's public calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "claim_text.h"
#include "group_syntax.h"
#include "run_session.h"

static gctx_status failed(gctx_status s, int device, char *err, size_t size)
{
    run_say(err, size, "device %d: %s", device, gctx_last_error());
    return s;
}

/* A GROUP: planned, or split off the device (the remainder is dropped) and made a context. */
static gctx_status plan_group(gctx_partition *whole, const char *text, unsigned unit_sms,
                              const char *round, run_device_plan *plan, gctx_context **context,
                              char *err, size_t size)
{
    char *argv[1] = {(char *)text};
    group_request request;
    group_syntax_error why;
    if (group_syntax_parse(1, argv, plan->device_sms, unit_sms, &request, &why) != GCTX_SUCCESS) {
        run_say(err, size, "%s", why.message);
        return why.status;
    }
    gctx_split_options options = GCTX_SPLIT_OPTIONS_INIT;
    if (round) /* a mode: the tool's option parser and the preload's variables checked it */
        options.rounding = (gctx_rounding)group_syntax_rounding(round);
    gctx_group_plan group;
    gctx_status s;
    if (context) {
        gctx_partition *part = NULL;
        s = gctx_partition_split(whole, request.groups, 1, &options, &part, NULL, NULL, &group);
        if (s == GCTX_SUCCESS)
            s = gctx_context_create(part, NULL, context);
        gctx_partition_release(part);
    } else {
        s = gctx_partition_plan(whole, request.groups, 1, &options, NULL, &group);
    }
    group_request_free(&request);
    if (s != GCTX_SUCCESS)
        return failed(s, plan->device, err, size);
    plan->sm_count = group.sm_count;
    return GCTX_SUCCESS;
}

/* What a request is on plan's device when the SMs are claimed: the device's facts. */
static gctx_status plan_claim(const char *text, run_device_plan *plan, char *err, size_t size)
{
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    gctx_status s = gctx_device_get_info(plan->device, &info);
    if (s != GCTX_SUCCESS)
        return failed(s, plan->device, err, size);
    plan->device_sms = info.sm_count;
    plan->whole = strcmp(text, "all") == 0;
    return GCTX_SUCCESS;
}

/* `text` on plan's device with the planner and, when context is not NULL, its green context. */
static gctx_status plan_split(const char *text, const char *round, run_device_plan *plan,
                              gctx_context **context, char *err, size_t size)
{
    int device = plan->device;
    gctx_partition *whole = NULL;
    gctx_status s = gctx_partition_from_device(device, &whole);
    if (s != GCTX_SUCCESS)
        return failed(s, device, err, size);
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    s = gctx_partition_get_info(whole, &info);
    plan->device_sms = info.sm_count;
    if (s != GCTX_SUCCESS) {
        failed(s, device, err, size);
    } else if (strcmp(text, "all") == 0) {
        plan->whole = 1;
        plan->sm_count = info.sm_count;
        /* A green context of every SM: the program's own work is still in a green context,
         * the baseline a sweep compares the smaller sizes with. */
        if (context && (s = gctx_context_create(whole, NULL, context)) != GCTX_SUCCESS)
            failed(s, device, err, size);
    } else {
        s = plan_group(whole, text, info.min_partition_sms, round, plan, context, err, size);
    }
    gctx_partition_release(whole);
    return s;
}

gctx_status run_session_open(const run_session_request *req, run_session *s, char *err,
                             size_t size)
{
    memset(s, 0, sizeof *s);
    snprintf(s->sms, sizeof s->sms, "%s", req->sms ? req->sms : "");
    if (run_request_parse(s->sms, &s->request, err, size) != 0)
        return GCTX_ERROR_INVALID_ARGUMENT;
    const char *word = req->device_word ? req->device_word : "device";
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    gctx_status st = gctx_device_count(&s->device_count);
    if (st != GCTX_SUCCESS)
        return run_say(err, size, "%s", gctx_last_error()), st;
    if (s->device_count == 0)
        return run_say(err, size, "the driver shows no %s (CUDA_VISIBLE_DEVICES=%s)", word,
                       visible ? visible : "unset"),
               GCTX_ERROR_NO_DEVICE;
    for (unsigned i = 0; i < s->request.nb_entries; i++) {
        int device = s->request.entries[i].device;
        if (device >= s->device_count)
            return run_say(err, size, "the request names %s %d, but the driver shows %d, "
                                      "numbered 0 to %d (CUDA_VISIBLE_DEVICES=%s): there is no "
                                      "%s %d",
                           word, device, s->device_count, s->device_count - 1,
                           visible ? visible : "unset", word, device),
                   GCTX_ERROR_NO_DEVICE;
    }
    for (int dev = 0; dev < s->device_count && dev < RUN_MAX_DEVICES; dev++)
        if (run_request_for(&s->request, dev))
            s->plans[s->nb_plans++].device = dev;
    return GCTX_SUCCESS;
}

gctx_status run_session_plan(const run_session_request *req, run_session *s, char *err,
                             size_t size)
{
    gctx_status st = run_session_open(req, s, err, size);
    for (unsigned i = 0; st == GCTX_SUCCESS && i < s->nb_plans; i++) {
        run_device_plan *plan = &s->plans[i];
        const char *text = run_request_for(&s->request, plan->device);
        st = req->shared ? plan_split(text, req->round, plan, NULL, err, size)
                         : plan_claim(text, plan, err, size);
    }
    return st;
}

void run_session_release(run_session *s)
{
    for (unsigned i = 0; i < s->nb_claims; i++)
        gctx_claim_release(s->claims[i]);
    s->nb_claims = 0;
    s->claim_list[0] = '\0';
}

/* A count refused busy though enough SMs are free: granules are whole, and the SMs left over
 * from them (4 on an H200) go with rest only. */
static void advise(const run_session_request *req, int device, const char *text, char *err,
                   size_t size)
{
    gctx_claim_usage usage = GCTX_CLAIM_USAGE_INIT;
    unsigned count = 0, asked = (unsigned)strtoul(text, NULL, 10);
    size_t used = strlen(err);
    if (text[strspn(text, "0123456789")] == '\0' && req->rest_option && req->round_option &&
        gctx_claim_list(device, req->claim.runtime_dir, NULL, 0, &count, &usage) == GCTX_SUCCESS &&
        usage.free_sms >= asked)
        snprintf(err + used, size - used, "; the %u free SMs can't make exactly %u of whole "
                                          "granules: %s takes them all, %s the next count "
                                          "they make",
                 usage.free_sms, asked, req->rest_option, req->round_option);
}

/* gctx_claim_acquire, first without waiting when the request waits and the room says so. */
static gctx_status take(const run_session_request *req, int device, const char *text,
                        gctx_claim **claim)
{
    gctx_claim_options options = req->claim;
    int note = req->waiting_note && (options.flags & GCTX_CLAIM_WAIT);
    if (note)
        options.flags &= ~GCTX_CLAIM_WAIT;
    gctx_status st = gctx_claim_acquire(device, text, &options, claim);
    if (st != GCTX_ERROR_BUSY || !note)
        return st;
    char bound[32] = "as long as it takes";
    if (options.timeout_ms >= 0)
        snprintf(bound, sizeof bound, "up to %d s", (options.timeout_ms + 999) / 1000);
    fprintf(stderr, "%s: device %d: --sms %s is not free now; waiting for it %s (greenctx ps "
                    "shows the holders; Ctrl-C gives up)\n",
            req->waiting_note, device, text, bound);
    options.flags |= GCTX_CLAIM_WAIT;
    return gctx_claim_acquire(device, text, &options, claim);
}

gctx_status run_session_claim(const run_session_request *req, run_session *s, char *err,
                              size_t size)
{
    for (unsigned i = 0; !req->shared && i < s->nb_plans; i++) {
        run_device_plan *plan = &s->plans[i];
        const char *text = run_request_for(&s->request, plan->device);
        gctx_claim *claim = NULL;
        char token[1024];
        gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
        gctx_status st = take(req, plan->device, text, &claim);
        s->failed = i;
        if (st != GCTX_SUCCESS) {
            run_say(err, size, "%s", gctx_last_error());
            if (st == GCTX_ERROR_BUSY)
                advise(req, plan->device, text, err, size);
            run_session_release(s);
            return st;
        }
        s->claims[s->nb_claims++] = claim;
        if ((st = gctx_claim_export(claim, token, sizeof token)) != GCTX_SUCCESS ||
            run_device_list_add(s->claim_list, sizeof s->claim_list, plan->device, token) != 0) {
            run_say(err, size, "the claim could not be handed to the program (%s)",
                    st != GCTX_SUCCESS ? gctx_last_error()
                                       : "its token holds a comma or is too long");
            run_session_release(s);
            return GCTX_ERROR_REGISTRY;
        }
        if (gctx_claim_get_info(claim, &info) == GCTX_SUCCESS) {
            plan->sm_count = info.sm_count; /* what the program gets, rounding included */
            text_granule_ranges(info.granules, info.nb_granules, plan->granules,
                                sizeof plan->granules);
        }
    }
    return GCTX_SUCCESS;
}

/* The green context on exactly the SMs of the claim taken before the program started. */
static gctx_status join_claim(const run_session_request *req, const char *text, int device,
                              run_member *m, char *err, size_t size)
{
    char token[1024];
    if (run_device_list_find(req->claim_list, device, token, sizeof token) != 0)
        return run_say(err, size, "%s=%s has no claim for device %d, which %s=%s confines",
                       GREENCTX_RUN_CLAIM, req->claim_list, device, GREENCTX_RUN_SMS, req->sms),
               GCTX_ERROR_REGISTRY;
    gctx_status st = gctx_claim_join(device, token, &m->claim);
    if (st != GCTX_SUCCESS)
        return run_say(err, size, "device %d: the claim greenctx run took could not be joined "
                                  "(%s: %s)",
                       device, gctx_status_name(st), gctx_last_error()),
               st;
    if ((st = plan_claim(text, &m->plan, err, size)) != GCTX_SUCCESS)
        return st;
    m->claim_info = (gctx_claim_info)GCTX_CLAIM_INFO_INIT;
    if ((st = gctx_claim_get_info(m->claim, &m->claim_info)) != GCTX_SUCCESS ||
        (st = gctx_claim_context(m->claim, NULL, &m->context)) != GCTX_SUCCESS ||
        (st = gctx_claim_stream(m->claim, &m->probe)) != GCTX_SUCCESS)
        return run_say(err, size, "device %d: no green context on the claim's SMs (%s: %s)",
                       device, gctx_status_name(st), gctx_last_error()),
               st;
    m->plan.sm_count = m->claim_info.sm_count;
    struct stat file;
    if (gctx_claim_token_descriptor(token, &m->claim_fd) == GCTX_SUCCESS &&
        fstat(m->claim_fd, &file) == 0) {
        m->claim_dev = file.st_dev;
        m->claim_ino = file.st_ino;
    }
    return GCTX_SUCCESS;
}

gctx_status run_session_join(const run_session_request *req, const run_session *s, unsigned i,
                             run_member *m, char *err, size_t size)
{
    int device = s->plans[i].device;
    const char *text = run_request_for(&s->request, device);
    *m = (run_member){.plan.device = device, .claim_fd = -1};
    if (req->claim_list && req->claim_list[0])
        return join_claim(req, text, device, m, err, size);
    return plan_split(text, req->round, &m->plan, &m->context, err, size);
}

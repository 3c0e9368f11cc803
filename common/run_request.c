/* GREENCTX_RUN_SMS's grammar, and one request made into a plan or a green context. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group_syntax.h"
#include "run_request.h"

static int say(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, size_t size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, size, fmt, args);
    va_end(args);
    return -1;
}

/* One comma-separated entry: REQ or DEV=REQ. */
static int parse_entry(const char *start, size_t len, run_request_entry *e, char *err, size_t size)
{
    const char *eq = memchr(start, '=', len);
    e->device = -1;
    if (eq) {
        char number[16];
        size_t n = (size_t)(eq - start);
        char *end = NULL;
        if (n == 0 || n >= sizeof number)
            return say(err, size, "'%.*s' needs a device number before '='", (int)len, start);
        memcpy(number, start, n);
        number[n] = '\0';
        long d = strtol(number, &end, 10);
        if (*end || d < 0 || d >= RUN_MAX_DEVICES)
            return say(err, size, "'%s' is not a device number (0 to %d)", number,
                       RUN_MAX_DEVICES - 1);
        e->device = (int)d;
        len -= n + 1;
        start = eq + 1;
    }
    if (len == 0 || len >= sizeof e->text)
        return say(err, size, "an empty or too long request in '%.*s'", (int)len, start);
    memcpy(e->text, start, len);
    e->text[len] = '\0';
    return 0;
}

int run_request_parse(const char *text, run_request *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return say(err, err_size, "%s is empty: give a GROUP (16, 25%%, ...), all, or "
                                  "DEV=GROUP,DEV=GROUP",
                   GREENCTX_RUN_SMS);
    /* " 16" would read as 16 here and as something else to a user: no spaces at all. */
    if (text[strcspn(text, " \t\n\v\f\r")])
        return say(err, err_size, "'%s' has white space: a request is written without (16, 25%%, "
                                  "0=16,1=8)",
                   text);
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (out->nb_entries == RUN_MAX_DEVICES)
            return say(err, err_size, "%s: more than %d entries", GREENCTX_RUN_SMS,
                       RUN_MAX_DEVICES);
        run_request_entry *e = &out->entries[out->nb_entries];
        if (parse_entry(p, len, e, err, err_size) != 0)
            return -1;
        for (unsigned i = 0; i < out->nb_entries; i++) {
            if ((out->entries[i].device < 0) != (e->device < 0))
                return say(err, err_size, "%s='%s' mixes a request for every device with "
                                          "requests per device (DEV=GROUP)",
                           GREENCTX_RUN_SMS, text);
            if (e->device >= 0 && out->entries[i].device == e->device)
                return say(err, err_size, "%s names device %d twice", GREENCTX_RUN_SMS,
                           e->device);
        }
        if (e->device < 0 && out->nb_entries > 0)
            return say(err, err_size, "%s='%s': one request for every device, or DEV=GROUP "
                                      "entries",
                       GREENCTX_RUN_SMS, text);
        out->nb_entries++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int run_device_sms_parse(const char *text)
{
    if (text && strcmp(text, "partition") == 0)
        return RUN_DEVICE_SMS_PARTITION;
    if (text && strcmp(text, "physical") == 0)
        return RUN_DEVICE_SMS_PHYSICAL;
    return -1;
}

const char *run_device_sms_name(int mode)
{
    return mode == RUN_DEVICE_SMS_PHYSICAL ? "physical" : "partition";
}

const char *run_request_for(const run_request *request, int device)
{
    for (unsigned i = 0; i < request->nb_entries; i++)
        if (request->entries[i].device < 0 || request->entries[i].device == device)
            return request->entries[i].text;
    return NULL;
}

int run_claim_list_add(char *list, size_t size, int device, const char *token)
{
    size_t used = strlen(list);
    if (strchr(token, ','))
        return -1;
    int n = snprintf(list + used, size - used, "%s%d=%s", used ? "," : "", device, token);
    return n < 0 || (size_t)n >= size - used ? -1 : 0;
}

int run_claim_list_find(const char *list, int device, char *token, size_t size)
{
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *end = NULL;
        long d = strtol(p, &end, 10);
        if (end != p && *end == '=' && d == device && (size_t)(end + 1 - p) <= len) {
            size_t n = len - (size_t)(end + 1 - p);
            if (n >= size)
                return -1;
            memcpy(token, end + 1, n);
            token[n] = '\0';
            return 0;
        }
        p = comma ? comma + 1 : NULL;
    }
    return -1;
}

static gctx_status failed(gctx_status s, int device, char *err, size_t size)
{
    say(err, size, "device %d: %s", device, gctx_last_error());
    return s;
}

/* A GROUP: planned, or split off the device (the remainder is dropped) and made a context. */
static gctx_status plan_group(gctx_partition *whole, int device, const char *text,
                              unsigned unit_sms, const char *round, run_device_plan *plan,
                              gctx_context **context, char *err, size_t size)
{
    char *argv[1] = {(char *)text};
    group_request request;
    group_syntax_error why;
    if (group_syntax_parse(1, argv, plan->device_sms, unit_sms, &request, &why) != GCTX_SUCCESS) {
        say(err, size, "%s", why.message);
        return why.status;
    }
    gctx_split_options options = GCTX_SPLIT_OPTIONS_INIT;
    int rounding = round ? group_syntax_rounding(round) : -1;
    if (round && rounding < 0) {
        group_request_free(&request);
        say(err, size, "%s='%s': use strict, down, nearest or up", GREENCTX_RUN_ROUND, round);
        return GCTX_ERROR_INVALID_ARGUMENT;
    }
    if (rounding >= 0)
        options.rounding = (gctx_rounding)rounding;
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
        return failed(s, device, err, size);
    plan->sm_count = group.sm_count;
    return GCTX_SUCCESS;
}

gctx_status run_plan_claim(int device, const char *text, run_device_plan *plan, char *err,
                           size_t err_size)
{
    memset(plan, 0, sizeof *plan);
    plan->device = device;
    gctx_device_info info = GCTX_DEVICE_INFO_INIT;
    gctx_status s = gctx_device_get_info(device, &info);
    if (s != GCTX_SUCCESS)
        return failed(s, device, err, err_size);
    plan->device_sms = info.sm_count;
    plan->whole = strcmp(text, "all") == 0;
    return GCTX_SUCCESS;
}

gctx_status run_plan_device(int device, const char *text, const char *round, run_device_plan *plan,
                            gctx_context **context, char *err, size_t err_size)
{
    memset(plan, 0, sizeof *plan);
    plan->device = device;
    gctx_partition *whole = NULL;
    gctx_status s = gctx_partition_from_device(device, &whole);
    if (s != GCTX_SUCCESS)
        return failed(s, device, err, err_size);
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    s = gctx_partition_get_info(whole, &info);
    plan->device_sms = info.sm_count;
    if (s != GCTX_SUCCESS) {
        failed(s, device, err, err_size);
    } else if (strcmp(text, "all") == 0) {
        plan->whole = 1;
        plan->sm_count = info.sm_count;
        /* A green context of every SM: the program's own work is still in a green context,
         * the baseline a sweep compares the smaller sizes with. */
        if (context && (s = gctx_context_create(whole, NULL, context)) != GCTX_SUCCESS)
            failed(s, device, err, err_size);
    } else {
        s = plan_group(whole, device, text, info.min_partition_sms, round, plan, context, err,
                       err_size);
    }
    gctx_partition_release(whole);
    return s;
}

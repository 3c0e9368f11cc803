/* GREENCTX_RUN_*: the request's grammar, the claims' list and the program's environment. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_request.h"

int run_say(char *err, size_t size, const char *fmt, ...)
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
            return run_say(err, size, "'%.*s' needs a device number before '='", (int)len, start);
        memcpy(number, start, n);
        number[n] = '\0';
        long d = strtol(number, &end, 10);
        if (*end || d < 0 || d >= RUN_MAX_DEVICES)
            return run_say(err, size, "'%s' is not a device number (0 to %d)", number,
                           RUN_MAX_DEVICES - 1);
        e->device = (int)d;
        len -= n + 1;
        start = eq + 1;
    }
    if (len == 0 || len >= sizeof e->text)
        return run_say(err, size, "an empty or too long request in '%.*s'", (int)len, start);
    memcpy(e->text, start, len);
    e->text[len] = '\0';
    return 0;
}

int run_request_parse(const char *text, run_request *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return run_say(err, err_size, "%s is empty: give a GROUP (16, 25%%, ...), all, or "
                                      "DEV=GROUP,DEV=GROUP",
                       GREENCTX_RUN_SMS);
    /* " 16" would read as 16 here and as something else to a user: no spaces at all. */
    if (text[strcspn(text, " \t\n\v\f\r")])
        return run_say(err, err_size, "'%s' has white space: a request is written without (16, "
                                      "25%%, 0=16,1=8)",
                       text);
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (out->nb_entries == RUN_MAX_DEVICES)
            return run_say(err, err_size, "%s: more than %d entries", GREENCTX_RUN_SMS,
                           RUN_MAX_DEVICES);
        run_request_entry *e = &out->entries[out->nb_entries];
        if (parse_entry(p, len, e, err, err_size) != 0)
            return -1;
        for (unsigned i = 0; i < out->nb_entries; i++) {
            if ((out->entries[i].device < 0) != (e->device < 0))
                return run_say(err, err_size, "%s='%s' mixes a request for every device with "
                                              "requests per device (DEV=GROUP)",
                               GREENCTX_RUN_SMS, text);
            if (e->device >= 0 && out->entries[i].device == e->device)
                return run_say(err, err_size, "%s names device %d twice", GREENCTX_RUN_SMS,
                               e->device);
        }
        if (e->device < 0 && out->nb_entries > 0)
            return run_say(err, err_size, "%s='%s': one request for every device, or DEV=GROUP "
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

int run_device_list_add(char *list, size_t size, int device, const char *value)
{
    size_t used = strlen(list);
    if (strchr(value, ','))
        return -1;
    int n = snprintf(list + used, size - used, "%s%d=%s", used ? "," : "", device, value);
    return n < 0 || (size_t)n >= size - used ? -1 : 0;
}

int run_device_list_find(const char *list, int device, char *value, size_t size)
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
            memcpy(value, end + 1, n);
            value[n] = '\0';
            return 0;
        }
        p = comma ? comma + 1 : NULL;
    }
    return -1;
}

int run_session_environment(const run_session_request *req, const run_session *s,
                            run_setenv_fn *set, void *room)
{
    char ld_preload[8192], memory[1024] = "";
    const char *own = req->program_preload ? req->program_preload : "";
    size_t len = strlen(req->preload);
    /* First, so that its dlsym is the one the program finds (a step of a Slurm job whose
     * batch script was confined has it already). */
    int n = strncmp(own, req->preload, len) == 0 && (own[len] == '\0' || own[len] == ' ')
                ? snprintf(ld_preload, sizeof ld_preload, "%s", own)
                : snprintf(ld_preload, sizeof ld_preload, "%s%s%s", req->preload,
                           *own ? " " : "", own);
    int bad = n < 0 || (size_t)n >= sizeof ld_preload;
    bad |= set(room, "LD_PRELOAD", ld_preload);
    bad |= set(room, GREENCTX_RUN_SMS, s->sms);
    bad |= set(room, GREENCTX_RUN_ROUND, req->round);
    bad |= set(room, GREENCTX_RUN_REPORT_DIR, req->report_dir);
    bad |= set(room, GREENCTX_RUN_INHERIT, req->no_inherit ? "0" : NULL);
    bad |= set(room, GREENCTX_RUN_DEVICE_SMS, run_device_sms_name(req->device_sms));
    bad |= set(room, GREENCTX_RUN_CLAIM, s->claim_list[0] ? s->claim_list : NULL);
    /* Only an MPS client obeys it. */
    for (unsigned i = 0; req->memory && i < s->nb_plans; i++)
        bad |= run_device_list_add(memory, sizeof memory, s->plans[i].device, req->memory);
    if (req->memory)
        bad |= set(room, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", memory);
    /* So that `greenctx ps` in the program shows the registry several users share. */
    if (req->claim.runtime_dir && (req->claim.flags & GCTX_CLAIM_SHARED_DIR)) {
        bad |= set(room, "GREENCTX_RUNTIME_DIR", req->claim.runtime_dir);
        bad |= set(room, "GREENCTX_RUNTIME_SHARED", "1");
    }
    return bad ? -1 : 0;
}

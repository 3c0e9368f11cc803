/* The registry's text formats: a claim's record, the events, the identity. Pure: no files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"

#define FORMAT_VERSION 1

/* ---- claim records ---- */

/* Text fields are one line each: line breaks become spaces. */
static void one_line(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++)
        dst[i] = src[i] == '\n' || src[i] == '\r' ? ' ' : src[i];
    dst[i] = '\0';
}

void gctx__record_format(const gctx__record *r, char *out, size_t size)
{
    char granules[GCTX_CLAIM_MAX_GRANULES * 4], user[sizeof r->user], command[sizeof r->command],
        label[sizeof r->label];
    gctx__granules_text(&r->granules, granules, sizeof granules);
    /* A command's arguments may hold line breaks (python -c 'script'). */
    one_line(user, sizeof user, r->user);
    one_line(command, sizeof command, r->command);
    one_line(label, sizeof label, r->label);
    int n = snprintf(out, size,
                     "greenctx-claim %d\npid %d\nuid %u\nuser %s\ncommand %s\nlabel %s\n"
                     "since_ns %lld\nmps %d\ngranules %s\n",
                     FORMAT_VERSION, r->pid, r->uid, user, command, label, r->since_ns, r->mps,
                     granules);
    /* After the granules, where readers before the guard stop reading. */
    if (r->tenant_class != GCTX_TENANT_UNGUARDED && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "class %s target_ms %.4f factor %.4f\n",
                 r->tenant_class == GCTX_TENANT_LATENCY ? "latency" : "best-effort",
                 r->target_ms, r->target_factor);
}

static int take_line(const char **cursor, const char *key, char *value, size_t size)
{
    size_t klen = strlen(key);
    const char *p = *cursor;
    if (strncmp(p, key, klen) != 0 || p[klen] != ' ')
        return -1;
    p += klen + 1;
    const char *end = strchr(p, '\n');
    if (!end)
        return -1;
    size_t len = (size_t)(end - p);
    if (len >= size)
        len = size - 1;
    memcpy(value, p, len);
    value[len] = '\0';
    *cursor = end + 1;
    return 0;
}

static int parse_long(const char *text, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(text, &end, 10);
    return errno || end == text || *end ? -1 : 0;
}

/* why gets "line N: " and what is wrong in it; -1. */
GCTX_PRINTF(4, 5)
static int bad_line(char *why, size_t size, unsigned line, const char *fmt, ...)
{
    int n = snprintf(why, size, "line %u: ", line);
    va_list args;
    va_start(args, fmt);
    if (n > 0 && (size_t)n < size)
        vsnprintf(why + n, size - (size_t)n, fmt, args);
    va_end(args);
    return -1;
}

enum { VERSION, PID, UID, USER, COMMAND, LABEL, SINCE, MPS, GRANULES, NB_FIELDS };
static const char *const field_keys[NB_FIELDS] = {
    "greenctx-claim", "pid", "uid", "user", "command", "label", "since_ns", "mps", "granules"};
#define NUMERIC_FIELDS (1u << PID | 1u << UID | 1u << SINCE | 1u << MPS)

int gctx__record_parse(const char *text, const gctx__identity *id, gctx__record *r, char *why,
                       size_t why_size)
{
    char v[NB_FIELDS][300];
    long long n[NB_FIELDS] = {0};
    const char *c = text;
    memset(r, 0, sizeof *r);
    for (unsigned i = 0; i < NB_FIELDS; i++) {
        if (take_line(&c, field_keys[i], v[i], sizeof v[i]) != 0)
            return bad_line(why, why_size, i + 1, "no '%s' line where expected", field_keys[i]);
        if (i == VERSION && (parse_long(v[i], &n[i]) || n[i] != FORMAT_VERSION))
            return bad_line(why, why_size, i + 1, "format %.40s, this greenctx writes %d", v[i],
                            FORMAT_VERSION);
        if ((NUMERIC_FIELDS >> i & 1) && parse_long(v[i], &n[i]))
            return bad_line(why, why_size, i + 1, "%s '%.40s' is not a number", field_keys[i],
                            v[i]);
    }
    r->pid = (int)n[PID];
    r->uid = (unsigned)n[UID];
    one_line(r->user, sizeof r->user, v[USER]);
    one_line(r->command, sizeof r->command, v[COMMAND]);
    one_line(r->label, sizeof r->label, v[LABEL]);
    r->since_ns = n[SINCE];
    r->mps = n[MPS] != 0;
    char *save = NULL;
    long long g;
    unsigned nb = gctx__layout_count(&id->layout);
    for (char *tok = strtok_r(v[GRANULES], " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (parse_long(tok, &g) || g < 0 || g >= (long long)nb ||
            gctx__granules_has(&r->granules, (unsigned)g))
            return bad_line(why, why_size, GRANULES + 1,
                            "granule '%s' is no granule of this device's %u, or twice", tok, nb);
        gctx__granules_add(&r->granules, (unsigned)g);
    }
    if (!gctx__granules_count(&r->granules))
        return bad_line(why, why_size, GRANULES + 1, "it holds no granule");
    char klass[16], line[300];
    if (take_line(&c, "class", line, sizeof line) == 0) {
        if (sscanf(line, "%15s target_ms %lf factor %lf", klass, &r->target_ms,
                   &r->target_factor) != 3 ||
            (strcmp(klass, "latency") != 0 && strcmp(klass, "best-effort") != 0))
            return bad_line(why, why_size, NB_FIELDS + 1,
                            "class '%.60s' is not 'latency|best-effort target_ms T factor F'",
                            line);
        r->tenant_class = klass[0] == 'l' ? GCTX_TENANT_LATENCY : GCTX_TENANT_BEST_EFFORT;
    }
    return 0;
}

/* ---- events ---- */

void gctx__event_format(const gctx__event_record *e, char *out, size_t size)
{
    char command[256];
    one_line(command, sizeof command, e->command);
    snprintf(out, size, "%d %lld %d %d %u %s\n", (int)e->kind, e->time_ns, e->pid, e->cuda_result,
             e->sm_count, command);
}

static int parse_event(const char *line, gctx__event_record *e)
{
    int kind, used = 0;
    memset(e, 0, sizeof *e);
    if (sscanf(line, "%d %lld %d %d %u %n", &kind, &e->time_ns, &e->pid, &e->cuda_result,
               &e->sm_count, &used) < 5 ||
        kind < GCTX_CLAIM_EVENT_RELEASED || kind > GCTX_CLAIM_EVENT_FAULT)
        return -1;
    e->kind = (gctx_claim_event_kind)kind;
    one_line(e->command, sizeof e->command, line + used);
    return 0;
}

unsigned gctx__events_parse(char *text, gctx__event_record *out)
{
    unsigned n = 0;
    char *save = NULL;
    /* A line that doesn't parse is skipped: events are a record for people, not state. */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (parse_event(line, &out[n]) == 0 && ++n == GCTX__EVENTS_KEPT + 1) {
            memmove(out, out + 1, GCTX__EVENTS_KEPT * sizeof *out);
            n = GCTX__EVENTS_KEPT;
        }
    return n;
}

/* ---- identity ---- */

void gctx__identity_format(const gctx__identity *id, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size,
                                "greenctx-claims %d\nversion %s\nuuid %s\ndriver %d\n"
                                "claim-granules %s\ngranules",
                                FORMAT_VERSION, gctx_version_string(), id->uuid,
                                id->driver_version, id->layout.fine ? "fine" : "structured");
    for (unsigned i = 0; i < gctx__layout_count(&id->layout) && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, " %u", gctx__layout_sms(&id->layout, i));
    if (n < size)
        snprintf(out + n, size - n, "\nsplit-flags %u\nhash %016llx\n",
                 id->layout.split_flags, id->hash);
}

int gctx__identity_parse(const char *text, const char *uuid, gctx__identity *id)
{
    char mode[16], again[4096];
    unsigned sms[GCTX_CLAIM_MAX_GRANULES], nb = 0;
    int used = 0;
    gctx__granule_layout *l = &id->layout;
    memset(id, 0, sizeof *id);
    snprintf(id->uuid, sizeof id->uuid, "%s", uuid);
    if (sscanf(text,
               "greenctx-claims %*d version %*s uuid %*s driver %d claim-granules %15s granules%n",
               &id->driver_version, mode, &used) != 2)
        return -1;
    const char *p = text + used;
    for (; nb < GCTX_CLAIM_MAX_GRANULES && sscanf(p, "%*[ ]%u%n", &sms[nb], &used) == 1; p += used)
        nb++;
    sscanf(p, " split-flags %u hash %llx", &l->split_flags, &id->hash);
    l->fine = strcmp(mode, "fine") == 0;
    l->regular_sms = nb ? sms[0] : 0;
    l->nb_regular = nb && sms[nb - 1] != sms[0] ? nb - 1 : nb;
    l->remainder_sms = l->nb_regular < nb ? sms[nb - 1] : 0;
    gctx__identity_format(id, again, sizeof again);
    return nb && strcmp(text, again) == 0 ? 0 : -1;
}

void gctx__identity_difference(const char *found, const char *expected, char *why, size_t size)
{
    static const char mode[] = "claim-granules ";
    const size_t m = sizeof mode - 1;
    for (const char *f = found, *e = expected; *e;) {
        size_t fl = strcspn(f, "\n"), el = strcspn(e, "\n");
        int same = fl == el && strncmp(f, e, el) == 0;
        int n = fl > m ? (int)(fl - m > 12 ? 12 : fl - m) : 0;
        if (!same && strncmp(f, mode, m) == 0 && strncmp(e, mode, m) == 0) {
            snprintf(why, size,
                     "its claims are over GREENCTX_CLAIM_GRANULES=%.*s granules, this process's "
                     "over %.*s: run it with GREENCTX_CLAIM_GRANULES=%.*s to share the GPU with "
                     "them",
                     n, f + m, (int)(el - m), e + m, n, f + m);
            return;
        }
        if (!same) {
            snprintf(why, size, "its identity says '%.*s' where this process has '%.*s'",
                     (int)(fl > 80 ? 80 : fl), f, (int)(el > 80 ? 80 : el), e);
            return;
        }
        if (!f[fl] || !e[el])
            break;
        f += fl + 1;
        e += el + 1;
    }
    snprintf(why, size, "its identity file is corrupt (trailing text)");
}

/* The group syntax (group_syntax.h): what a GROUP means, and why one is refused. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group_syntax.h"
#include "numbers.h"

const char group_syntax_help[] =
    "GROUP is COUNT[:cN][:pN][:b], P%[...], 0 or rest:\n"
    "  24       24 SMs                 25%      a quarter of the partition's SMs\n"
    "  0        discovery: all SMs still free when its turn comes\n"
    "  rest     the last group, taking everything left (discovery with backfill)\n"
    "  :c2      co-scheduled units of 2 SMs (below the alignment: finer, no large clusters)\n"
    "  :p16     preferred co-scheduled units of 16 SMs (driver 13.1+; before, plan says ignored)\n"
    "  :b       backfill: the group may take SMs outside whole units to reach its count\n"
    "  e.g. 24 40 rest   25% 75%   16:c2 rest   20:b\n";

const char *const group_syntax_roundings[] = {"strict", "down", "nearest", "up", NULL};

int group_syntax_rounding(const char *text)
{
    for (int i = 0; group_syntax_roundings[i]; i++)
        if (strcmp(text, group_syntax_roundings[i]) == 0)
            return i;
    return -1;
}

/* Plain decimal digits only: "+16", "016" or " 16" are not taken for 16 (a count written
 * oddly is more likely a mistake than a choice, and 016 reads as octal to some). */
static int parse_unsigned(const char *text, unsigned *value)
{
    size_t digits = strspn(text, "0123456789");
    int v;
    if (digits == 0 || text[digits] != '\0' || (text[0] == '0' && digits > 1) ||
        greenctx_parse_int(text, 0, 1 << 20, &v) != 0)
        return -1;
    *value = (unsigned)v;
    return 0;
}

/* Why text is not a count: the near-misses a user types, named; "" when nothing more to say. */
static const char *count_mistake(const char *text)
{
    size_t digits = strspn(text, "0123456789");
    if (digits && text[digits] == '\0')
        return "out of range: a count is at most 1048576 SMs";
    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        return "counts are decimal: hex (0x...) is not accepted";
    if (digits && (text[digits] == 'e' || text[digits] == 'E'))
        return "write the count in plain digits, with no exponent (1000, not 1e3)";
    if (digits && text[digits] == '.')
        return "a count is a whole number of SMs";
    for (const char *p = text; *p; p++)
        if ((unsigned char)*p >= 0x80)
            return "only ASCII digits make a count (no full-width or other characters)";
    return "";
}

/* A space in a GROUP: around it (' 16', a stray quote) or between groups ('24 40'). */
static const char *space_mistake(const char *arg)
{
    const char *first = arg + strspn(arg, " \t\n"), *last = arg + strlen(arg);
    while (last > first && strchr(" \t\n", last[-1]))
        last--;
    for (const char *p = first; p < last; p++)
        if (strchr(" \t\n", *p))
            return "a GROUP has no spaces: give each group as its own argument (24 40)";
    return "a GROUP has no spaces: remove the leading or trailing space";
}

/* One GROUP; *percent gets P of "P%" (else 0). NULL, or what is wrong ("": not a GROUP). */
static const char *parse_one(const char *arg, gctx_group *g, unsigned *percent)
{
    static const char *const not_a_group = "";
    char buf[64];
    if (strpbrk(arg, " \t\n"))
        return space_mistake(arg);
    if (strchr(arg, ','))
        return "groups are separate arguments (24 40, not 24,40)";
    if (arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9')
        return "a count must be positive: give 1 or more SMs (or 0 for discovery)";
    if (arg[0] == '+' || (arg[0] == '0' && arg[1] >= '0' && arg[1] <= '9'))
        return "write a count in plain digits (16, not +16 or 016)";
    size_t arg_len = strlen(arg);
    if (arg[0] == ':' || (arg_len && arg[arg_len - 1] == ':') || strstr(arg, "::"))
        return "after ':' come cN, pN or b (e.g. 16:c2, 20:b), never nothing";
    if (strlen(arg) >= sizeof buf)
        return not_a_group;
    strcpy(buf, arg);
    memset(g, 0, sizeof *g);
    *percent = 0;
    char *save = NULL;
    char *head = strtok_r(buf, ":", &save);
    if (!head)
        return not_a_group;
    size_t len = strlen(head);
    if (strcmp(head, "rest") == 0) {
        g->backfill = 1;
    } else if (len > 1 && head[len - 1] == '%') {
        head[len - 1] = '\0';
        if (parse_unsigned(head, percent) != 0 || *percent == 0 || *percent > 100)
            return "a percentage is a whole number from 1% to 100%";
    } else if (parse_unsigned(head, &g->num_sms) != 0) {
        return count_mistake(head);
    }
    for (char *mod = strtok_r(NULL, ":", &save); mod; mod = strtok_r(NULL, ":", &save)) {
        if (strcmp(mod, "b") == 0)
            g->backfill = 1;
        else if ((mod[0] == 'c' || mod[0] == 'p') && !strcmp(mod + 1, "0"))
            return "a unit of 0 SMs means nothing: cN and pN take 1 or more (or leave them out)";
        else if (mod[0] == 'c' && parse_unsigned(mod + 1, &g->coscheduled_sm_count) == 0)
            continue;
        else if (mod[0] == 'p' && parse_unsigned(mod + 1, &g->preferred_coscheduled_sm_count) == 0)
            continue;
        else
            return "after ':' come cN, pN or b (e.g. 16:c2, 20:b)";
    }
    return NULL;
}

/* Percent shares into SM counts that always fit when they add up to at most 100%: each ends at
 * the cumulative percentage rounded down to a whole unit (the smallest partition: legal on
 * every path), with at least one unit; a last group that brings the total to 100% takes what
 * is left, so no SM is lost to rounding. */
static void share_percentages(gctx_group *groups, const unsigned *percent, unsigned n,
                              unsigned sm_count, unsigned unit)
{
    unsigned long long cumulative = 0;
    unsigned given = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!percent[i])
            continue;
        cumulative += percent[i];
        if (cumulative == 100 && i == n - 1) {
            groups[i].num_sms = 0;
            groups[i].backfill = 1;
            continue;
        }
        unsigned bound = (unsigned)(cumulative * sm_count / 100 / unit * unit);
        unsigned count = bound > given ? bound - given : 0;
        groups[i].num_sms = count >= unit ? count : unit;
        given += groups[i].num_sms;
    }
}

static gctx_status refuse(group_syntax_error *err, gctx_status status, int about_syntax,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static gctx_status refuse(group_syntax_error *err, gctx_status status, int about_syntax,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = status;
    err->about_syntax = about_syntax;
    return status;
}

gctx_status group_syntax_parse(int argc, char **argv, unsigned sm_count, unsigned unit_sms,
                               group_request *out, group_syntax_error *err)
{
    memset(out, 0, sizeof *out);
    if (argc <= 0)
        return refuse(err, GCTX_ERROR_INVALID_ARGUMENT, 1,
                      "give at least one GROUP (e.g. 24 40 rest)");
    out->groups = calloc((size_t)argc, sizeof *out->groups);
    out->nb_groups = (unsigned)argc;
    out->texts = argv;
    out->unit_sms = unit_sms ? unit_sms : 1;
    unsigned *percent = calloc((size_t)argc, sizeof *percent);
    unsigned total = 0;
    gctx_status s;
    if (!out->groups || !percent) {
        s = refuse(err, GCTX_ERROR_OUT_OF_MEMORY, 0, "out of memory for %d groups", argc);
        goto fail;
    }
    for (int i = 0; i < argc; i++) {
        const char *why = parse_one(argv[i], &out->groups[i], &percent[i]);
        if (why) {
            s = refuse(err, GCTX_ERROR_INVALID_ARGUMENT, 1, "'%s' is not a GROUP%s%s", argv[i],
                       *why ? ": " : "", why);
            goto fail;
        }
        total += percent[i];
        out->has_percent |= percent[i] != 0;
    }
    if (total > 100) {
        s = refuse(err, GCTX_ERROR_INVALID_ARGUMENT, 0,
                   "the percentages add up to %u%%; they can share at most 100%%", total);
        goto fail;
    }
    share_percentages(out->groups, percent, out->nb_groups, sm_count, out->unit_sms);
    free(percent);
    return GCTX_SUCCESS;
fail:
    free(percent);
    group_request_free(out);
    return s;
}

void group_request_free(group_request *request)
{
    free(request->groups);
    request->groups = NULL;
    request->nb_groups = 0;
}

/* Claims as sets of granules: request syntax, counts, best fit. Pure. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "plan.h"

int gctx__granules_has(const gctx__granules *g, unsigned i)
{
    return i < GCTX_CLAIM_MAX_GRANULES && (g->w[i / 64] >> (i % 64)) & 1u;
}

void gctx__granules_add(gctx__granules *g, unsigned i)
{
    if (i < GCTX_CLAIM_MAX_GRANULES)
        g->w[i / 64] |= 1ull << (i % 64);
}

unsigned gctx__granules_count(const gctx__granules *g)
{
    unsigned n = 0;
    for (unsigned i = 0; i < GCTX_CLAIM_MAX_GRANULES; i++)
        n += (unsigned)gctx__granules_has(g, i);
    return n;
}

gctx__granules gctx__granules_union(const gctx__granules *a, const gctx__granules *b)
{
    gctx__granules out;
    for (unsigned k = 0; k < GCTX__GRANULE_WORDS; k++)
        out.w[k] = a->w[k] | b->w[k];
    return out;
}

gctx__granules gctx__granules_minus(const gctx__granules *a, const gctx__granules *b)
{
    gctx__granules out;
    for (unsigned k = 0; k < GCTX__GRANULE_WORDS; k++)
        out.w[k] = a->w[k] & ~b->w[k];
    return out;
}

int gctx__granules_meet(const gctx__granules *a, const gctx__granules *b)
{
    for (unsigned k = 0; k < GCTX__GRANULE_WORDS; k++)
        if (a->w[k] & b->w[k])
            return 1;
    return 0;
}

const char *gctx__granules_text(const gctx__granules *g, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < GCTX_CLAIM_MAX_GRANULES && n < size; i++)
        if (gctx__granules_has(g, i))
            n += (size_t)snprintf(buf + n, size - n, "%s%u", n ? " " : "", i);
    return buf;
}

unsigned gctx__layout_count(const gctx__granule_layout *l)
{
    return l->nb_regular + (l->remainder_sms ? 1u : 0u);
}

unsigned gctx__layout_sms(const gctx__granule_layout *l, unsigned granule)
{
    return granule < l->nb_regular ? l->regular_sms
                                   : granule == l->nb_regular ? l->remainder_sms : 0;
}

/* Whether a count may take the remainder granule: when it is co-scheduled and a granule's
 * worth; never on fine granules, nor when fewer SMs are left over than a granule has (a count
 * plan refuses them), which only "rest" and "all" take. */
static int remainder_counts(const gctx__granule_layout *l)
{
    return !l->split_flags && l->remainder_sms >= l->regular_sms;
}

unsigned gctx__uncounted_sms(const gctx__granule_layout *l, const gctx__granules *g)
{
    return l->remainder_sms && !remainder_counts(l) && gctx__granules_has(g, l->nb_regular)
               ? l->remainder_sms
               : 0;
}

unsigned gctx__layout_total(const gctx__granule_layout *l)
{
    return l->nb_regular * l->regular_sms + l->remainder_sms;
}

unsigned gctx__granules_sms(const gctx__granule_layout *l, const gctx__granules *g)
{
    unsigned n = 0;
    for (unsigned i = 0; i < gctx__layout_count(l); i++)
        if (gctx__granules_has(g, i))
            n += gctx__layout_sms(l, i);
    return n;
}

/* Regular granules making count with or without the remainder; -1: none. */
static int regular_needed(const gctx__granule_layout *l, unsigned count, int with_remainder)
{
    if (with_remainder) {
        if (!l->remainder_sms || count < l->remainder_sms)
            return -1;
        count -= l->remainder_sms;
    }
    if (!l->regular_sms || count % l->regular_sms || count / l->regular_sms > l->nb_regular)
        return -1;
    return (int)(count / l->regular_sms);
}

int gctx__layout_claimable(const gctx__granule_layout *l, unsigned count)
{
    return count > 0 && count >= l->min_sms &&
           (regular_needed(l, count, 0) >= 0 ||
            (remainder_counts(l) && regular_needed(l, count, 1) >= 0));
}

unsigned gctx__layout_fit(const gctx__granule_layout *l, unsigned count)
{
    if (!gctx__layout_claimable(l, count))
        return 0;
    /* a count with the remainder granule: one claim at a time holds it */
    return count % l->regular_sms ? 1 : l->nb_regular / (count / l->regular_sms);
}

gctx_status gctx__request_parse(const char *text, gctx__request *out)
{
    if (!text)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "request is NULL: ask for a count (\"16\"), a share (\"25%%\"), "
                          "\"rest\" or \"all\"");
    if (strcmp(text, "rest") == 0 || strcmp(text, "all") == 0) {
        out->kind = text[0] == 'r' ? GCTX__REQUEST_REST : GCTX__REQUEST_ALL;
        out->value = 0;
        return GCTX_SUCCESS;
    }
    char *end = NULL;
    unsigned long v = text[0] >= '0' && text[0] <= '9' ? strtoul(text, &end, 10) : 0;
    int percent = end && end[0] == '%' && end[1] == '\0';
    if (!end || end == text || (*end && !percent) || v == 0 || v > (percent ? 100ul : 1ul << 20))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "request \"%s\": a claim asks for a count of SMs (\"16\"), a share of "
                          "the device from 1%% to 100%% (\"25%%\"), \"rest\" (every free SM) or "
                          "\"all\" (every SM)",
                          text);
    out->kind = percent ? GCTX__REQUEST_PERCENT : GCTX__REQUEST_COUNT;
    out->value = (unsigned)v;
    return GCTX_SUCCESS;
}

static void neighbours(const gctx__granule_layout *l, unsigned count, unsigned *below,
                       unsigned *above)
{
    *below = *above = 0;
    for (unsigned c = count; c-- > 1;)
        if (gctx__layout_claimable(l, c)) {
            *below = c;
            break;
        }
    for (unsigned c = count + 1; c <= gctx__layout_total(l); c++)
        if (gctx__layout_claimable(l, c)) {
            *above = c;
            break;
        }
}

static gctx_status not_claimable(const gctx__granule_layout *l, unsigned count)
{
    unsigned below, above;
    neighbours(l, count, &below, &above);
    char nearest[96];
    if (below && above)
        snprintf(nearest, sizeof nearest, "the nearest counts that can be claimed are %u and %u",
                 below, above);
    else
        snprintf(nearest, sizeof nearest, "the nearest count that can be claimed is %u",
                 below ? below : above);
    char remainder[96] = "";
    if (l->remainder_sms && remainder_counts(l))
        snprintf(remainder, sizeof remainder, ", with or without the %u SM%s left over",
                 l->remainder_sms, GCTX__PLURAL(l->remainder_sms));
    else if (l->remainder_sms)
        snprintf(remainder, sizeof remainder, "; the %u SM%s left over go%s with \"rest\"",
                 l->remainder_sms, GCTX__PLURAL(l->remainder_sms),
                 l->remainder_sms == 1 ? "es" : "");
    /* Where co-scheduled granules are coarser than the planner's, fine ones would give it. */
    char fine[112] = "";
    if (!l->fine && l->regular_sms > l->min_sms && count % l->min_sms == 0)
        snprintf(fine, sizeof fine, "; GREENCTX_CLAIM_GRANULES=fine claims %u, with thread-block "
                 "clusters of up to 2 SMs", count);
    return gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                      "%u SMs can't be claimed on this device: a claim is whole claim granules, "
                      "as greenctx info --sizes shows (multiples of %u up to %u%s); %s (or ask "
                      "with rounding down, nearest or up)%s",
                      count, l->regular_sms, l->nb_regular * l->regular_sms, remainder, nearest,
                      fine);
}

gctx_status gctx__request_count(const gctx__granule_layout *l, const gctx__request *r,
                                gctx_rounding rounding, unsigned *count)
{
    unsigned total = gctx__layout_total(l);
    if (r->kind == GCTX__REQUEST_REST || r->kind == GCTX__REQUEST_ALL) {
        *count = r->kind == GCTX__REQUEST_ALL ? total : 0;
        return GCTX_SUCCESS;
    }
    unsigned below, above, asked = r->value;
    if (r->kind == GCTX__REQUEST_PERCENT) {
        unsigned c = (unsigned)((unsigned long long)r->value * total / 100);
        while (c > 0 && !gctx__layout_claimable(l, c))
            c--;
        neighbours(l, 0, &below, &above); /* the smallest claimable count, for none below */
        *count = c ? c : above;
        return GCTX_SUCCESS;
    }
    if (asked > total)
        return gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                          "%u SMs can't be claimed: the device has %u SMs in all", asked, total);
    if (gctx__layout_claimable(l, asked)) {
        *count = asked;
        return GCTX_SUCCESS;
    }
    neighbours(l, asked, &below, &above);
    switch (rounding) {
    case GCTX_ROUND_DOWN:
        *count = below ? below : above;
        return GCTX_SUCCESS;
    case GCTX_ROUND_UP:
        *count = above ? above : below;
        return GCTX_SUCCESS;
    case GCTX_ROUND_NEAREST:
        *count = !below || (above && above - asked <= asked - below) ? above : below;
        return GCTX_SUCCESS;
    default:
        return not_claimable(l, asked);
    }
}

/* Takes m granules of pool into out: a run of adjacent ones when one is long enough (the
 * shortest such run, lowest first), else the longest runs first. */
static void take_adjacent(const gctx__granule_layout *l, gctx__granules pool, unsigned m,
                          gctx__granules *out)
{
    while (m > 0) {
        unsigned best_start = 0, best_len = 0, fit_start = 0, fit_len = 0;
        for (unsigned i = 0; i < l->nb_regular;) {
            if (!gctx__granules_has(&pool, i)) {
                i++;
                continue;
            }
            unsigned start = i;
            while (i < l->nb_regular && gctx__granules_has(&pool, i))
                i++;
            unsigned len = i - start;
            if (len > best_len) {
                best_start = start;
                best_len = len;
            }
            if (len >= m && (!fit_len || len < fit_len)) {
                fit_start = start;
                fit_len = len;
            }
        }
        unsigned start = fit_len ? fit_start : best_start;
        unsigned len = fit_len ? m : best_len;
        if (len == 0)
            return; /* the caller counted pool: never reached */
        for (unsigned i = start; i < start + len; i++) {
            gctx__granules_add(out, i);
            pool.w[i / 64] &= ~(1ull << (i % 64));
        }
        m -= len;
    }
}

/* Distance from regular granule i to the nearest granule of `of` (UINT_MAX: none). */
static unsigned distance_to(const gctx__granule_layout *l, unsigned i, const gctx__granules *of)
{
    unsigned best = UINT_MAX;
    for (unsigned j = 0; j < l->nb_regular; j++)
        if (gctx__granules_has(of, j)) {
            unsigned d = j > i ? j - i : i - j;
            best = d < best ? d : best;
        }
    return best;
}

/* Moves the m granules of from that rank first (the lowest distance to `to` first when near,
 * the highest when not; ties to the lower index) into out. */
static void take_ranked(const gctx__granule_layout *l, gctx__granules from, unsigned m,
                        const gctx__granules *to, int near, gctx__granules *out)
{
    for (; m > 0; m--) {
        unsigned pick = UINT_MAX, pick_d = 0;
        for (unsigned i = 0; i < l->nb_regular; i++) {
            if (!gctx__granules_has(&from, i))
                continue;
            unsigned d = distance_to(l, i, to);
            if (pick == UINT_MAX || (near ? d < pick_d : d > pick_d)) {
                pick = i;
                pick_d = d;
            }
        }
        if (pick == UINT_MAX)
            return; /* the caller counted from: never reached */
        gctx__granules_add(out, pick);
        from.w[pick / 64] &= ~(1ull << (pick % 64));
    }
}

/* A shrinking claim keeps the m granules farthest from the other claims' (those not in
 * avail), so it gives back the ones next to its neighbours: a neighbour that grows gets SMs
 * beside its own, the same set for the same count every time, and its contexts from the
 * cache. With no neighbour, the lowest. */
static void take_farthest(const gctx__granule_layout *l, const gctx__granules *kept,
                          const gctx__granules *avail_regular, unsigned m, gctx__granules *out)
{
    gctx__granules others = {{0}};
    for (unsigned i = 0; i < l->nb_regular; i++)
        if (!gctx__granules_has(avail_regular, i))
            gctx__granules_add(&others, i);
    take_ranked(l, *kept, m, &others, 0, out);
}

int gctx__granules_choose(const gctx__granule_layout *l, unsigned count,
                          const gctx__granules *avail, const gctx__granules *keep,
                          gctx__granules *out)
{
    if (count == 0) {
        /* Every free granule; fine granules' remainder goes alone (claim.h). */
        *out = *avail;
        gctx__granules remainder = {{0}};
        gctx__granules_add(&remainder, l->nb_regular);
        gctx__granules regular = gctx__granules_minus(avail, &remainder);
        if (l->remainder_sms && l->split_flags && gctx__granules_count(&regular))
            *out = regular;
        return gctx__granules_count(avail) > 0;
    }
    gctx__granules regular = {{0}}, kept_regular = {{0}};
    for (unsigned i = 0; i < l->nb_regular; i++)
        if (gctx__granules_has(avail, i)) {
            gctx__granules_add(&regular, i);
            if (gctx__granules_has(keep, i))
                gctx__granules_add(&kept_regular, i);
        }
    unsigned nb_avail = gctx__granules_count(&regular);
    int remainder_free = l->remainder_sms && gctx__granules_has(avail, l->nb_regular);
    int keeps_remainder = remainder_free && gctx__granules_has(keep, l->nb_regular);
    /* Without the remainder first, unless the claim holds it and can keep it. */
    int order[2] = {keeps_remainder, !keeps_remainder};
    for (int o = 0; o < 2; o++) {
        int with = order[o];
        int k = regular_needed(l, count, with);
        if (k < 0 || (unsigned)k > nb_avail || (with && !remainder_free))
            continue;
        gctx__granules chosen = {{0}};
        if (with)
            gctx__granules_add(&chosen, l->nb_regular);
        unsigned m = (unsigned)k, nb_kept = gctx__granules_count(&kept_regular);
        if (nb_kept >= m) {
            take_farthest(l, &kept_regular, &regular, m, &chosen);
        } else {
            chosen = gctx__granules_union(&chosen, &kept_regular);
            gctx__granules pool = gctx__granules_minus(&regular, &kept_regular);
            /* A growing claim takes the free granules nearest to its own first (it grows as
             * one run where it can, so its sets repeat and its contexts come from the cache). */
            if (nb_kept)
                take_ranked(l, pool, m - nb_kept, &kept_regular, 1, &chosen);
            else
                take_adjacent(l, pool, m, &chosen);
        }
        *out = chosen;
        return 1;
    }
    return 0;
}

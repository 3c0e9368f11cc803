/* Split planning (DESIGN.md, "Splitting on every driver"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plan.h"

#define FINE_UNIT 2u /* what the ignore-co-scheduling flag splits into: one TPC's SM pair */

static unsigned gcd(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static unsigned lcm(unsigned a, unsigned b) { return a / gcd(a, b) * b; }

/* a rounded down to a multiple of b. */
static unsigned round_down(unsigned a, unsigned b) { return a / b * b; }

static const char *where(const gctx__plan_input *in)
{
    return in->whole_device ? "this device" : "this partition";
}

/* The first group asking for units finer than the alignment, or 2-SM ones; n when none. */
static unsigned finer_group(const gctx__plan_input *in, const gctx_group *groups, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned c = groups[i].coscheduled_sm_count;
        if (c && (c < in->alignment || c <= FINE_UNIT))
            return i;
    }
    return n;
}

/* The co-scheduled unit of group i, checked against what the path can honour. */
static gctx_status coscheduled_unit(const gctx__plan_input *in, int fine, unsigned i,
                                    const gctx_group *g, unsigned *unit)
{
    unsigned c = g->coscheduled_sm_count;
    if (in->structured_api) {
        c = c ? c : in->alignment;
        if (c < 2 || c % 2 || c > in->max_coscheduled)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "group %u: coscheduled_sm_count %u: on %s it must be even, from 2 "
                              "to %u (0 means %u)",
                              i, g->coscheduled_sm_count, where(in), in->max_coscheduled,
                              in->alignment);
    } else if (fine) {
        if (c > FINE_UNIT) {
            if (!in->structured)
                return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                                  "group %u: coscheduled_sm_count %u: this partition is a "
                                  "split's remainder (or made from one), whose SMs carry no "
                                  "co-scheduling guarantee; only 0 or 2 can be honoured",
                                  i, c);
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "group %u: coscheduled_sm_count %u can't be combined with a group "
                              "co-scheduled below the alignment (%u) in one split before driver "
                              "13.1: split twice, or give every group a count below %u",
                              i, c, in->alignment, in->alignment);
        }
        c = FINE_UNIT;
    } else {
        c = c ? c : in->alignment;
        if (c % in->alignment || c > in->max_coscheduled)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "group %u: coscheduled_sm_count %u: on %s it must be a multiple of "
                              "%u up to %u, or below %u for 2-SM units",
                              i, g->coscheduled_sm_count, where(in), in->alignment,
                              in->max_coscheduled, in->alignment);
    }
    if (g->preferred_coscheduled_sm_count &&
        (g->preferred_coscheduled_sm_count < c || g->preferred_coscheduled_sm_count % c))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "group %u: preferred_coscheduled_sm_count %u must be 0 or a multiple "
                          "of the co-scheduled unit (%u)",
                          i, g->preferred_coscheduled_sm_count, c);
    *unit = c;
    return GCTX_SUCCESS;
}

/* A multiple of unit, at least minimum, at most the whole. */
static gctx_status legal_count(const gctx__plan_input *in, unsigned i, unsigned asked,
                               unsigned unit, unsigned minimum, gctx_rounding rounding,
                               unsigned *count, int *rounded)
{
    unsigned most = round_down(in->sm_count, unit);
    if (asked % unit == 0 && asked >= minimum) {
        *count = asked;
        *rounded = 0;
        return GCTX_SUCCESS;
    }
    unsigned below = round_down(asked, unit), above = below + unit;
    if (below < minimum)
        below = 0;
    if (above < minimum)
        above = minimum;
    if (above > most)
        above = 0;
    if (rounding == GCTX_ROUND_STRICT || (!below && !above)) {
        char nearest[64];
        if (below && above)
            snprintf(nearest, sizeof nearest, "%u or %u", below, above);
        else
            snprintf(nearest, sizeof nearest, "%u", below ? below : above);
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "group %u: %u SMs: on %s groups are multiples of %u (min %u); "
                          "nearest: %s",
                          i, asked, where(in), unit, minimum, below || above ? nearest : "none");
    }
    if (rounding == GCTX_ROUND_DOWN)
        *count = below ? below : above;
    else if (rounding == GCTX_ROUND_UP)
        *count = above ? above : below;
    else if (!below || !above)
        *count = below ? below : above;
    else
        *count = asked - below < above - asked ? below : above;
    *rounded = 1;
    return GCTX_SUCCESS;
}

/* The request's sums, gathered while normalize checks it. */
typedef struct request_sums {
    unsigned unit_lcm;       /* of the groups' co-scheduled units */
    unsigned counts_gcd;     /* of the counts of groups without backfill; 0 when none has one */
    unsigned explicit_total; /* the SMs of the groups with a count */
    int have_discovery;
} request_sums;

/* Group i checked and rounded into *o: its count, 0 for discovery. */
static gctx_status normalize_group(const gctx__plan_input *in, int fine, unsigned i, unsigned n,
                                   const gctx_group *g, gctx_rounding rounding,
                                   gctx__normal_group *o)
{
    unsigned unit = 0;
    GCTX_TRY(coscheduled_unit(in, fine, i, g, &unit));
    *o = (gctx__normal_group){.coscheduled = unit, .preferred = g->preferred_coscheduled_sm_count,
                              .backfill = g->backfill != 0};
    if (g->num_sms == 0) {
        if (o->backfill && i + 1 != n)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "group %u is discovery with backfill, which takes everything "
                              "left, so it must be the last group (it is %u of %u)",
                              i, i + 1, n);
        return GCTX_SUCCESS;
    }
    if (g->num_sms > in->sm_count)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "group %u asks for %u SMs; %s has %u", i,
                          g->num_sms, where(in), in->sm_count);
    if (o->backfill) {
        if (g->num_sms < unit)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "group %u: a backfill group needs at least one whole "
                              "co-scheduled unit (%u SMs); it asks for %u",
                              i, unit, g->num_sms);
        o->num_sms = g->num_sms;
        return GCTX_SUCCESS;
    }
    unsigned minimum = in->structured_api || fine ? unit : in->min_partition;
    minimum = round_down(minimum + unit - 1, unit);
    return legal_count(in, i, g->num_sms, unit, minimum, rounding, &o->num_sms, &o->rounded);
}

/* Every group checked and rounded into plan, summing the request. */
static gctx_status normalize(const gctx__plan_input *in, int fine, const gctx_group *groups,
                             unsigned n, gctx_rounding rounding, gctx__plan *plan,
                             request_sums *sums)
{
    *sums = (request_sums){1, 0, 0, 0};
    for (unsigned i = 0; i < n; i++) {
        gctx__normal_group *o = &plan->normal[i];
        GCTX_TRY(normalize_group(in, fine, i, n, &groups[i], rounding, o));
        plan->groups[i] = (gctx_group_plan){.requested_sms = groups[i].num_sms,
                                            .coscheduled_sm_count = o->coscheduled,
                                            .rounded = o->rounded};
        plan->rounded |= o->rounded;
        sums->unit_lcm = lcm(sums->unit_lcm, o->coscheduled);
        sums->explicit_total += o->num_sms;
        sums->have_discovery |= o->num_sms == 0;
        if (o->num_sms && !o->backfill)
            sums->counts_gcd = gcd(sums->counts_gcd, o->num_sms);
    }
    if (sums->explicit_total > in->sm_count)
        return gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                          "the groups ask for %u SMs in all; %s has %u", sums->explicit_total,
                          where(in), in->sm_count);
    return GCTX_SUCCESS;
}

/* One candidate granule: assign granules to groups in order. Returns 1 when every group is
 * satisfied, writing its SM total for discovery groups; else writes why not. */
static int try_granule(const gctx__plan_input *in, const gctx__plan *plan, unsigned g,
                       const gctx__granule_split *split, gctx__assignment *assign,
                       unsigned *discovered, char *why, size_t why_size)
{
    unsigned next = 0, free_granules = split->groups;
    int remainder_free = split->remainder > 0;
    int taker = -1; /* the discovery group that took the rest, for messages */
    *discovered = 0;
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        const gctx__normal_group *o = &plan->normal[i];
        gctx__assignment *a = &assign[i];
        a->first_granule = next;
        a->granules = 0;
        a->takes_remainder = 0;
        if (o->num_sms == 0) {
            a->granules = free_granules;
            a->takes_remainder = o->backfill && remainder_free;
            if (!a->granules && !a->takes_remainder) {
                snprintf(why, why_size,
                         "group %u (discovery) gets no SMs: the groups before it took the %u "
                         "granule%s of %u SMs",
                         i, split->groups, GCTX__PLURAL(split->groups), g);
                return 0;
            }
            *discovered += a->granules * g + (a->takes_remainder ? split->remainder : 0);
            taker = (int)i;
        } else if (o->num_sms % g == 0 && o->num_sms / g <= free_granules) {
            a->granules = o->num_sms / g;
        } else if (o->backfill && remainder_free && o->num_sms >= split->remainder &&
                   (o->num_sms - split->remainder) % g == 0 &&
                   (o->num_sms - split->remainder) / g <= free_granules) {
            a->granules = (o->num_sms - split->remainder) / g;
            a->takes_remainder = 1;
        } else {
            if (taker >= 0)
                snprintf(why, why_size,
                         "group %u needs %u SMs but group %d (discovery) took every SM left "
                         "before it: put discovery groups last",
                         i, o->num_sms, taker);
            else if (o->backfill && o->num_sms % g)
                snprintf(why, why_size,
                         "group %u (backfill) asks for %u SMs: with granules of %u and %u SM%s "
                         "outside whole granules it can have a multiple of %u, or a multiple "
                         "of %u plus those %u",
                         i, o->num_sms, g, split->remainder, GCTX__PLURAL(split->remainder), g, g,
                         split->remainder);
            else
                snprintf(why, why_size,
                         "the groups need more than %u granule%s of %u SMs: a split of %s by "
                         "%u gives %u granule%s (%u SMs) and leaves %u SM%s outside whole "
                         "granules, which only a backfill group can take",
                         split->groups, GCTX__PLURAL(split->groups), g, where(in), g, split->groups,
                         GCTX__PLURAL(split->groups), split->groups * g, split->remainder,
                         GCTX__PLURAL(split->remainder));
            return 0;
        }
        next += a->granules;
        free_granules -= a->granules;
        if (a->takes_remainder)
            remainder_free = 0;
    }
    return 1;
}

/* The granules of g the groups take when each asks for whole ones (the driver's room, as
 * cuda.core asks); 0 when a group needs to see every granule. */
static unsigned granules_taken(const gctx__plan *plan, unsigned g)
{
    unsigned n = 0;
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        unsigned sms = plan->normal[i].num_sms;
        if (!sms || sms % g)
            return 0;
        n += sms / g;
    }
    return n;
}

static gctx_status plan_granules(const gctx__plan_input *in, int fine, const request_sums *sums,
                                 gctx__plan *plan)
{
    const unsigned unit_lcm = sums->unit_lcm, counts_gcd = sums->counts_gcd;
    const unsigned explicit_total = sums->explicit_total;
    const int have_discovery = sums->have_discovery;
    unsigned minimum = fine ? FINE_UNIT : in->min_partition;
    unsigned start = round_down(counts_gcd ? counts_gcd : in->sm_count, unit_lcm);
    char why[512];
    why[0] = '\0';
    int found = 0;
    unsigned best_discovered = 0;
    plan->flags = fine ? GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
    for (unsigned g = start; g >= unit_lcm && g >= minimum && g > 0; g -= unit_lcm) {
        if (counts_gcd && counts_gcd % g)
            continue;
        gctx__granule_split split;
        /* A discovery group needs to see every granule: no loop over the groups to learn it. */
        unsigned room = have_discovery ? 0 : granules_taken(plan, g);
        GCTX_TRY(in->oracle(in->oracle_context, g, room, plan->flags, &split));
        if (split.size != g || split.groups == 0)
            continue; /* the driver rounds this granule to another size */
        unsigned discovered;
        char reason[512];
        int ok = try_granule(in, plan, g, &split, plan->trial, &discovered, reason,
                             sizeof reason);
        if (!ok) {
            if (!why[0])
                memcpy(why, reason, sizeof why);
            continue;
        }
        if (!found || discovered > best_discovered) {
            found = 1;
            best_discovered = discovered;
            plan->granule = g;
            plan->split_groups = split.groups;
            plan->split_remainder = split.remainder;
            /* The arrays swap rather than copy. */
            gctx__assignment *best = plan->trial;
            plan->trial = plan->assign;
            plan->assign = best;
        }
        /* The largest granule that works is the one to use, unless discovery could get more
         * from a smaller one; nothing beats discovery taking every SM the counts leave. */
        if (!have_discovery || discovered + explicit_total == in->sm_count)
            break;
    }
    if (!found) {
        if (!why[0])
            snprintf(why, sizeof why,
                     "no granule of at least %u SMs (a multiple of %u) divides every count "
                     "(their greatest common divisor is %u), so one split of %s can't give "
                     "them before driver 13.1: use counts that are multiples of a common "
                     "granule of at least %u",
                     minimum, unit_lcm, counts_gcd, where(in), minimum);
        return gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS, "%s", why);
    }
    for (unsigned i = 0; i < plan->nb_groups; i++) { /* the sums start at 0 (gctx__plan_make) */
        const gctx__assignment *a = &plan->assign[i];
        gctx_group_plan *out = &plan->groups[i];
        out->sm_count = a->granules * plan->granule + (a->takes_remainder ? plan->split_remainder : 0);
        out->backfilled = a->takes_remainder;
        plan->used_granules += a->granules;
        plan->remainder_taken |= a->takes_remainder;
    }
    plan->remainder_sms = (plan->split_groups - plan->used_granules) * plan->granule +
                          (plan->remainder_taken ? 0 : plan->split_remainder);
    return GCTX_SUCCESS;
}

gctx_status gctx__plan_make(const gctx__plan_input *in, const gctx_group *groups,
                            unsigned nb_groups, gctx_rounding rounding, gctx__plan *plan)
{
    /* Not the small arrays: each is written before it is read. */
    memset(plan, 0, offsetof(gctx__plan, small));
    if (!groups)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "groups is NULL");
    if (nb_groups == 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "nb_groups is 0: ask for at least one group");
    if (nb_groups > in->sm_count / FINE_UNIT)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "%u groups asked: %s has %u SMs, so at most %u groups of 2", nb_groups,
                          where(in), in->sm_count, in->sm_count / FINE_UNIT);
    if ((unsigned)rounding > GCTX_ROUND_UP)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "rounding %d is not a gctx_rounding value", (int)rounding);
    /* The granule paths' fine flag: no co-scheduling to keep, or a group asks finer units. */
    int fine = !in->structured_api &&
               (!in->structured || finer_group(in, groups, nb_groups) < nb_groups);
    if (fine && !in->fine_flag && !in->structured)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "splitting a remainder (or a context made from one) into exact "
                          "counts needs the driver's ignore-co-scheduling flag: driver 12.5 or "
                          "later");
    if (fine && !in->fine_flag) {
        unsigned i = finer_group(in, groups, nb_groups);
        return gctx__fail(GCTX_ERROR_UNSUPPORTED,
                          "group %u: co-scheduled units of %u SMs are finer than the "
                          "driver's granules (units below the alignment of %u, and 2-SM "
                          "pairs, are): they need the driver's ignore-co-scheduling flag, "
                          "driver 12.5 or later; on this driver leave the co-scheduled count "
                          "at 0 (the driver's own units)",
                          i, groups[i].coscheduled_sm_count, in->alignment);
    }
    plan->nb_groups = nb_groups;
    if (nb_groups <= GCTX__PLAN_SMALL) {
        plan->groups = plan->small.groups; /* each written whole below before it is read */
        plan->normal = plan->small.normal;
        plan->assign = plan->small.assign;
        plan->trial = plan->small.trial;
    } else {
        /* One block for the arrays, widest alignment first. */
        void *block = calloc(nb_groups, sizeof *plan->groups + sizeof *plan->normal +
                                            2 * sizeof *plan->assign);
        if (!block)
            return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory planning a split");
        plan->groups = block;
        plan->normal = (gctx__normal_group *)(plan->groups + nb_groups);
        plan->assign = (gctx__assignment *)(plan->normal + nb_groups);
        plan->trial = plan->assign + nb_groups;
    }
    request_sums sums;
    gctx_status s;
    GCTX_CHECK(normalize(in, fine, groups, nb_groups, rounding, plan, &sums), fail);
    plan->path = in->structured_api ? GCTX_SPLIT_PATH_STRUCTURED
                 : fine             ? GCTX_SPLIT_PATH_FINE_GRANULES
                                    : GCTX_SPLIT_PATH_GRANULES;
    if (!in->structured_api)
        GCTX_CHECK(plan_granules(in, fine, &sums, plan), fail);
    return GCTX_SUCCESS;
fail:
    gctx__plan_free(plan);
    return s;
}

gctx_status gctx__plan_take_structured(const gctx__plan_input *in, gctx__plan *plan,
                                       const unsigned *sizes)
{
    unsigned total = 0;
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        const gctx__normal_group *o = &plan->normal[i];
        if (o->num_sms && sizes[i] != o->num_sms)
            return gctx__fail(GCTX_ERROR_DRIVER,
                              "group %u: the driver's split would give %u SMs where %u were "
                              "asked; greenctx never hands back a group of another size",
                              i, sizes[i], o->num_sms);
        if (!sizes[i])
            return gctx__fail(GCTX_ERROR_INSUFFICIENT_SMS,
                              "group %u (discovery) gets no SMs on %s: the groups before it "
                              "took them all",
                              i, where(in));
        plan->groups[i].sm_count = sizes[i];
        plan->groups[i].backfilled = o->backfill && sizes[i] % o->coscheduled;
        total += sizes[i];
    }
    if (total > in->sm_count)
        return gctx__fail(GCTX_ERROR_DRIVER,
                          "the driver's split would give %u SMs from %u", total, in->sm_count);
    plan->remainder_sms = in->sm_count - total;
    return GCTX_SUCCESS;
}

void gctx__plan_free(gctx__plan *plan)
{
    if (plan->groups != plan->small.groups)
        free(plan->groups); /* the block of every array */
    plan->groups = NULL;
    plan->normal = NULL;
    plan->assign = NULL;
    plan->trial = NULL;
}

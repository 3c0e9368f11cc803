/* greenctx plan [--device N] [--json] [--round MODE] GROUP...: a split's result, made not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* Whether one process may claim each group's count (run --sms N): claims come in claim
 * granules, which need not be the plan's. claim[i] 1 or 0, the first refusal's message in why;
 * groups with no count answer yes. Other errors are returned (run would fail on them too). */
static gctx_status claimable(const tool_split_setup *st, const gctx_split_plan *plan,
                             const gctx_group_plan *groups, int *claim, char *why,
                             size_t why_size)
{
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        claim[i] = 1;
        if (st->request.groups[i].num_sms == 0)
            continue;
        char request[16];
        unsigned count;
        snprintf(request, sizeof request, "%u", groups[i].sm_count);
        gctx_status s = gctx_claim_count(plan->device, request, GCTX_ROUND_STRICT, &count, NULL);
        if (s != GCTX_SUCCESS && s != GCTX_ERROR_INSUFFICIENT_SMS)
            return s;
        claim[i] = s == GCTX_SUCCESS;
        if (!claim[i] && !why[0])
            snprintf(why, why_size, "%s", gctx_last_error());
    }
    return GCTX_SUCCESS;
}

/* :pN reaches only the structured path (13.1+), not the granule paths: said, not dropped. */
static int preferred_ignored(const gctx_split_plan *plan, const gctx_group *g)
{
    return g->preferred_coscheduled_sm_count && plan->path != GCTX_SPLIT_PATH_STRUCTURED;
}

static void print_json(const tool_split_setup *st, const gctx_split_plan *plan,
                       const gctx_group_plan *groups, const int *claim)
{
    json_writer w;
    json_begin(&w, stdout, "greenctx.plan/1");
    json_int(&w, "device", plan->device);
    json_int(&w, "driver_version", plan->driver_version);
    json_uint(&w, "sm_count", st->info.sm_count);
    json_string(&w, "path", tool_path(plan->path)->name);
    json_uint(&w, "granule_sms", plan->granule_sms);
    json_bool(&w, "rounded", plan->rounded);
    json_array(&w, "groups");
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        const gctx_group *g = &st->request.groups[i];
        json_object(&w, NULL);
        json_uint(&w, "sm_count", groups[i].sm_count);
        json_uint(&w, "requested", groups[i].requested_sms);
        json_bool(&w, "discovery", g->num_sms == 0);
        json_bool(&w, "backfill", g->backfill);
        json_uint(&w, "coscheduled_sm_count", groups[i].coscheduled_sm_count);
        json_uint(&w, "preferred_coscheduled_sm_count", g->preferred_coscheduled_sm_count);
        json_bool(&w, "preferred_ignored", preferred_ignored(plan, g));
        json_bool(&w, "rounded", groups[i].rounded);
        json_bool(&w, "backfilled", groups[i].backfilled);
        json_bool(&w, "claimable", claim[i]);
        json_close(&w);
    }
    json_close(&w);
    if (plan->remainder_sms) {
        json_object(&w, "remainder");
        json_uint(&w, "sm_count", plan->remainder_sms);
        json_close(&w);
    } else {
        json_null(&w, "remainder");
    }
    json_end(&w);
}

static void print_text(const tool_split_setup *st, const gctx_split_plan *plan,
                       const gctx_group_plan *groups, const int *claim, const char *why)
{
    char version[16];
    printf("device %d: %u SMs (groups in multiples of %u, min %u)\n", plan->device,
           st->info.sm_count, st->info.coscheduled_alignment, st->info.min_partition_sms);
    printf("driver %s: %s", greenctx_format_driver_version(plan->driver_version, version,
                                                           sizeof version),
           tool_path(plan->path)->text);
    if (plan->granule_sms)
        printf(", granule %u SMs", plan->granule_sms);
    printf("\n\n%-6s %-10s %6s %9s %6s  %s\n", "group", "asked", "SMs", "unit", "claim", "notes");
    for (unsigned i = 0; i < plan->nb_groups; i++) {
        char notes[160] = "";
        if (groups[i].rounded)
            strcat(notes, "rounded from the request; ");
        if (groups[i].backfilled)
            strcat(notes, "includes SMs outside whole units; ");
        if (st->request.groups[i].num_sms == 0)
            strcat(notes, st->request.groups[i].backfill ? "everything left; " : "discovery; ");
        if (preferred_ignored(plan, &st->request.groups[i]))
            strcat(notes, ":p ignored (needs the 13.1+ split); ");
        size_t n = strlen(notes);
        if (n >= 2)
            notes[n - 2] = '\0';
        printf("%-6u %-10s %6u %9u %6s  %s\n", i, st->request.texts[i], groups[i].sm_count,
               groups[i].coscheduled_sm_count, claim[i] ? "yes" : "no", notes);
    }
    if (plan->remainder_sms)
        printf("%-6s %-10s %6u %9s %6s  %s\n", "rest", "-", plan->remainder_sms, "-", "-",
               "left over: no co-scheduling guarantee");
    else
        printf("no SMs left over\n");
    if (why[0])
        printf("\nclaim: whether one process can claim that many (greenctx run --sms N): %s\n",
               why);
    if (st->request.has_percent)
        printf("\npercentages: each share ends at a multiple of %u SMs (the smallest partition); "
               "a last share completing 100%% takes what is left\n",
               st->request.unit_sms);
    for (unsigned i = 0; i < plan->nb_groups; i++)
        if (preferred_ignored(plan, &st->request.groups[i])) {
            printf("\n:pN (preferred co-scheduled units) was ignored: only driver 13.1+'s "
                   "cuDevSmResourceSplit takes it, and this plan is %s\n",
                   tool_path(plan->path)->text);
            break;
        }
    if (plan->rounded)
        printf("\nsome counts were rounded (--round %s)\n",
               group_syntax_roundings[st->options.rounding]);
}

int greenctx_cmd_plan(int argc, char **argv, greenctx_tool_options *opts)
{
    tool_split_setup st;
    int rc = tool_split_setup_begin(argc, argv, opts, &st);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
    gctx_group_plan *groups = calloc(st.request.nb_groups, sizeof *groups);
    int *claim = calloc(st.request.nb_groups, sizeof *claim);
    char why[512] = "";
    gctx_status s = groups && claim ? gctx_partition_plan(st.device, st.request.groups,
                                                          st.request.nb_groups, &st.options,
                                                          &plan, groups)
                                    : GCTX_ERROR_OUT_OF_MEMORY;
    if (s == GCTX_SUCCESS)
        s = claimable(&st, &plan, groups, claim, why, sizeof why);
    if (s != GCTX_SUCCESS)
        rc = tool_split_fail(opts, &st, s);
    else if (opts->json)
        print_json(&st, &plan, groups, claim);
    else
        print_text(&st, &plan, groups, claim, why);
    free(claim);
    free(groups);
    tool_split_setup_end(&st);
    return rc;
}

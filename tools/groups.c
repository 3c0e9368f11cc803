/* Groups on the tool's command line: the syntax's errors as the tool prints them, and what
 * `plan` and `map` share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const tool_path_words paths[] = {
    [GCTX_SPLIT_PATH_STRUCTURED] = {"structured",
                                    "the driver's per-group split (cuDevSmResourceSplit)"},
    [GCTX_SPLIT_PATH_GRANULES] = {"granules", "one split-by-count into equal granules, whole "
                                              "granules aggregated per group"},
    [GCTX_SPLIT_PATH_FINE_GRANULES] = {"fine_granules", "one split-by-count into 2-SM granules "
                                                        "(co-scheduling ignored), aggregated per "
                                                        "group"},
};

const tool_path_words *tool_path(gctx_split_path path)
{
    static const tool_path_words unknown = {"unknown", "unknown"};
    return path > 0 && path <= GCTX_SPLIT_PATH_FINE_GRANULES ? &paths[path] : &unknown;
}

int tool_parse_groups(const greenctx_tool_options *opts, int argc, char **argv, unsigned sm_count,
                      unsigned unit_sms, group_request *out)
{
    group_syntax_error err;
    gctx_status s = group_syntax_parse(argc, argv, sm_count, unit_sms, out, &err);
    if (s == GCTX_ERROR_OUT_OF_MEMORY)
        greenctx_tool_fail(opts, s);
    else if (s != GCTX_SUCCESS && err.about_syntax)
        greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                            "%s (how a GROUP is written: greenctx help %s)", err.message,
                            opts->command);
    else if (s != GCTX_SUCCESS)
        greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "%s", err.message);
    return s == GCTX_SUCCESS ? 0 : -1;
}

/* Each command's usage line, what it does in one line, then what both take. */
#define SPLIT_SYNOPSIS " [--device N] [--json] [--round MODE] GROUP...\n"
#define SPLIT_ROUND                                                                        \
    "  --round MODE  a count the device can't give: strict (default: refuse), down,\n"    \
    "                nearest, up\n"
const char *const greenctx_plan_usage[] = {
    "usage: greenctx plan" SPLIT_SYNOPSIS "A dry run of a split: each group's SMs, unit and "
    "claimability, the path, the SMs left.\n" SPLIT_ROUND,
    group_syntax_help, NULL};
const char *const greenctx_map_usage[] = {
    "usage: greenctx map" SPLIT_SYNOPSIS "Makes the split and shows the physical SMs a kernel "
    "ran on in each partition.\n" SPLIT_ROUND,
    group_syntax_help, NULL};

const greenctx_option tool_split_options[] = {{"--round", greenctx_values_round}, {NULL, NULL}};

int tool_split_setup_begin(int argc, char **argv, greenctx_tool_options *opts,
                           tool_split_setup *setup)
{
    *setup = (tool_split_setup){.info = GCTX_PARTITION_INFO_INIT,
                                .options = GCTX_SPLIT_OPTIONS_INIT};
    /* The groups, in order; argv[0] is the command's name. */
    char **groups = calloc((size_t)argc, sizeof *groups);
    if (!groups)
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    setup->request.texts = groups; /* freed by tool_split_setup_end, whatever happens next */
    int nb_groups = 0, rc = GREENCTX_EXIT_OK;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    args.negative_positional = 1; /* `plan -3`: a group, refused as one */
    for (int id, rounding; rc == GREENCTX_EXIT_OK &&
                           (id = greenctx_args_next(&args, tool_split_options)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_POSITIONAL)
            groups[nb_groups++] = argv[args.next - 1];
        else if (id == GREENCTX_ARG_STOP)
            rc = args.rc;
        else if ((rounding = group_syntax_rounding(args.value)) < 0)
            rc = greenctx_args_refuse(&args);
        else
            setup->options.rounding = (gctx_rounding)rounding;
    }
    if (rc == GREENCTX_EXIT_OK && nb_groups == 0)
        rc = greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                                 "which groups? e.g. greenctx %s 24 40 rest (how a GROUP is "
                                 "written: greenctx help %s)",
                                 opts->command, opts->command);
    if (rc == GREENCTX_EXIT_OK)
        rc = greenctx_tool_start(opts);
    setup->device_ordinal = opts->device; /* found by its UUID there */
    gctx_status s = GCTX_SUCCESS;
    if (rc == GREENCTX_EXIT_OK &&
        ((s = gctx_partition_from_device(opts->device, &setup->device)) != GCTX_SUCCESS ||
         (s = gctx_partition_get_info(setup->device, &setup->info)) != GCTX_SUCCESS))
        rc = greenctx_tool_fail(opts, s);
    if (rc == GREENCTX_EXIT_OK &&
        tool_parse_groups(opts, nb_groups, groups, setup->info.sm_count,
                          setup->info.min_partition_sms, &setup->request) != 0)
        rc = GREENCTX_EXIT_USAGE;
    setup->request.texts = groups; /* the parse wrote the request anew */
    if (rc != GREENCTX_EXIT_OK)
        tool_split_setup_end(setup);
    return rc;
}

/* The refused request with its counts scaled down, each to a multiple of its unit, until the
 * planner (the judge: none of its rules are repeated here) accepts it, written as the user
 * wrote it; 0 when nothing fits or the groups are percentages. */
static int scaled_request(const tool_split_setup *st, char *text, size_t size)
{
    const group_request *r = &st->request;
    unsigned long asked = 0;
    for (unsigned i = 0; i < r->nb_groups; i++)
        asked += r->groups[i].num_sms;
    gctx_group *groups = malloc(r->nb_groups * sizeof *groups);
    gctx_group_plan *plans = malloc(r->nb_groups * sizeof *plans);
    int found = 0;
    for (unsigned long total = st->info.sm_count; groups && plans && !r->has_percent && total > 0 &&
                                                   total < asked && !found;
         total--) {
        for (unsigned i = 0; i < r->nb_groups; i++) {
            groups[i] = r->groups[i];
            unsigned unit = groups[i].coscheduled_sm_count ? groups[i].coscheduled_sm_count
                                                           : st->info.coscheduled_alignment;
            unsigned scaled = (unsigned)(groups[i].num_sms * total / asked);
            scaled -= unit ? scaled % unit : 0;
            if (groups[i].num_sms)
                groups[i].num_sms = scaled > st->info.min_partition_sms ? scaled
                                                                        : st->info.min_partition_sms;
        }
        gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
        found = gctx_partition_plan(st->device, groups, r->nb_groups, &st->options, &plan, plans) ==
                GCTX_SUCCESS;
    }
    size_t used = 0;
    for (unsigned i = 0; found && i < r->nb_groups; i++) {
        const char *rest = r->texts[i];
        char count[16] = "";
        if (r->groups[i].num_sms) {
            rest += strspn(rest, "0123456789"); /* the count replaced, its suffix (:c8) kept */
            snprintf(count, sizeof count, "%u", groups[i].num_sms);
        }
        int n = snprintf(text + used, size - used, "%s%s%s", i ? " " : "", count, rest);
        found = n > 0 && (size_t)n < size - used;
        used += found ? (size_t)n : 0;
    }
    free(groups);
    free(plans);
    return found;
}

int tool_split_fail(const greenctx_tool_options *opts, const tool_split_setup *st, gctx_status s)
{
    char why[512], fits[256];
    snprintf(why, sizeof why, "%s", gctx_last_error()); /* the tries below overwrite it */
    if (s != GCTX_ERROR_INSUFFICIENT_SMS || !*why)
        return greenctx_tool_fail(opts, s);
    if (!scaled_request(st, fits, sizeof fits))
        return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s), "%s", why);
    return greenctx_tool_error(opts, GREENCTX_EXIT_FAILED, gctx_status_name(s),
                               "%s; try %s %s (the counts scaled to fit)", why, opts->command,
                               fits);
}

void tool_split_setup_end(tool_split_setup *setup)
{
    gctx_partition_release(setup->device);
    setup->device = NULL;
    group_request_free(&setup->request);
    free(setup->request.texts);
    setup->request.texts = NULL;
}

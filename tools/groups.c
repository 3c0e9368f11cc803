#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "options.h"
#include "tool.h"

const char tool_groups_help[] =
    "GROUP is COUNT[:cN][:pN][:b], P%[...], 0 or rest:\n"
    "  24       24 SMs                 25%      a quarter of the partition's SMs\n"
    "  0        discovery: all SMs still free when its turn comes\n"
    "  rest     the last group, taking everything left (discovery with backfill)\n"
    "  :c2      co-scheduled units of 2 SMs (below the alignment: finer, no large clusters)\n"
    "  :p16     preferred co-scheduled units of 16 SMs (driver 13.1+)\n"
    "  :b       backfill: the group may take SMs outside whole units to reach its count\n"
    "  e.g. 24 40 rest   25% 75%   16:c2 rest   20:b\n";

int tool_parse_rounding(const char *text)
{
    static const char *const names[] = {"strict", "down", "nearest", "up"};
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

static int parse_unsigned(const char *text, unsigned *value)
{
    int v;
    if (greenctx_parse_int(text, 0, 1 << 20, &v) != 0)
        return -1;
    *value = (unsigned)v;
    return 0;
}

/* One GROUP argument; *percent gets P of "P%" (0 otherwise). Returns NULL, or what is wrong
 * when more can be said than "not a GROUP". */
static const char *parse_one(const char *arg, gctx_group *g, unsigned *percent)
{
    static const char *const not_a_group = "";
    char buf[64];
    if (strchr(arg, ','))
        return "groups are separate arguments (24 40, not 24,40)";
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
        return not_a_group;
    }
    for (char *mod = strtok_r(NULL, ":", &save); mod; mod = strtok_r(NULL, ":", &save)) {
        if (strcmp(mod, "b") == 0)
            g->backfill = 1;
        else if (mod[0] == 'c' && parse_unsigned(mod + 1, &g->coscheduled_sm_count) == 0)
            continue;
        else if (mod[0] == 'p' && parse_unsigned(mod + 1, &g->preferred_coscheduled_sm_count) == 0)
            continue;
        else
            return "after ':' come cN, pN or b (e.g. 16:c2, 20:b)";
    }
    return NULL;
}

/* Percent shares into SM counts that always fit when they add up to at most 100%: each
 * group's share ends at the cumulative percentage of the SMs, rounded down to a whole unit
 * (so the bounds never pass the device), and gets at least one unit. Units of the smallest
 * partition are legal counts on every path and share one granule on drivers before 13.1.
 * The group that brings the total to 100%, when it is the last group, takes what is left
 * (discovery with backfill), so no SM is lost to rounding. */
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

int tool_parse_groups(const greenctx_tool_options *opts, int argc, char **argv, unsigned sm_count,
                      unsigned unit_sms, tool_group_request *out)
{
    memset(out, 0, sizeof *out);
    if (argc <= 0) {
        greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                            "give at least one GROUP (e.g. 24 40 rest)\n%s", tool_groups_help);
        return -1;
    }
    out->groups = calloc((size_t)argc, sizeof *out->groups);
    unsigned *percent = calloc((size_t)argc, sizeof *percent);
    if (!out->groups || !percent) {
        free(percent);
        tool_free_groups(out);
        greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    out->nb_groups = (unsigned)argc;
    out->texts = argv;
    out->unit_sms = unit_sms ? unit_sms : 1;
    unsigned total = 0;
    for (int i = 0; i < argc; i++) {
        const char *why = parse_one(argv[i], &out->groups[i], &percent[i]);
        if (why) {
            greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage", "'%s' is not a GROUP%s%s\n%s",
                                argv[i], *why ? ": " : "", why, tool_groups_help);
            free(percent);
            tool_free_groups(out);
            return -1;
        }
        total += percent[i];
        out->has_percent |= percent[i] != 0;
    }
    if (total > 100) {
        greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                            "the percentages add up to %u%%; they can share at most 100%%",
                            total);
        free(percent);
        tool_free_groups(out);
        return -1;
    }
    share_percentages(out->groups, percent, out->nb_groups, sm_count, out->unit_sms);
    free(percent);
    return 0;
}

void tool_free_groups(tool_group_request *request)
{
    free(request->groups);
    request->groups = NULL;
    request->nb_groups = 0;
}

const char *tool_path_text(gctx_split_path path)
{
    switch (path) {
    case GCTX_SPLIT_PATH_STRUCTURED:
        return "the driver's per-group split (cuDevSmResourceSplit)";
    case GCTX_SPLIT_PATH_GRANULES:
        return "one split-by-count into equal granules, whole granules aggregated per group";
    case GCTX_SPLIT_PATH_FINE_GRANULES:
        return "one split-by-count into 2-SM granules (co-scheduling ignored), aggregated per "
               "group";
    }
    return "unknown";
}

static void split_usage(const char *command)
{
    printf("usage: greenctx %s [--device N] [--json] [--round MODE] GROUP...\n"
           "  --round MODE  a count the device can't give: strict (default: refuse), down,\n"
           "                nearest, up\n%s",
           command, tool_groups_help);
}

int tool_split_setup_begin(int argc, char **argv, greenctx_tool_options *opts,
                           tool_split_setup *setup)
{
    static const greenctx_option own[] = {{"--round", "strict, down, nearest or up"},
                                          {NULL, NULL}};
    memset(setup, 0, sizeof *setup);
    gctx_split_options defaults = GCTX_SPLIT_OPTIONS_INIT;
    setup->options = defaults;
    /* The groups, in order; argv[0] is the command's name. */
    char **groups = calloc((size_t)argc, sizeof *groups);
    if (!groups)
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    int nb_groups = 0;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_POSITIONAL) {
            groups[nb_groups++] = argv[args.next - 1];
            continue;
        }
        int rc = id == GREENCTX_ARG_HELP   ? TOOL_SPLIT_HELP_SHOWN
                 : id == GREENCTX_ARG_STOP ? args.rc
                                           : GREENCTX_EXIT_OK;
        int rounding = rc == GREENCTX_EXIT_OK ? tool_parse_rounding(args.value) : 0;
        if (rounding < 0)
            rc = greenctx_args_bad(&args, "--round takes %s; got '%s'", own[0].value_help,
                                   args.value);
        if (rc == TOOL_SPLIT_HELP_SHOWN)
            split_usage(opts->command);
        if (rc != GREENCTX_EXIT_OK) {
            free(groups);
            return rc;
        }
        setup->options.rounding = (gctx_rounding)rounding;
    }
    setup->request.texts = groups; /* freed by tool_split_setup_end, whatever happens next */
    if (nb_groups == 0) {
        greenctx_tool_error(opts, GREENCTX_EXIT_USAGE, "usage",
                            "which groups? usage: greenctx %s [--device N] [--json] [--round "
                            "MODE] GROUP...\n%s",
                            opts->command, tool_groups_help);
        tool_split_setup_end(setup);
        return GREENCTX_EXIT_USAGE;
    }
    setup->device_ordinal = opts->device;
    int rc = greenctx_tool_start(opts);
    gctx_status s = rc == GREENCTX_EXIT_OK
                        ? gctx_partition_from_device(opts->device, &setup->device)
                        : GCTX_SUCCESS;
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    setup->info = info;
    if (rc == GREENCTX_EXIT_OK && s == GCTX_SUCCESS)
        s = gctx_partition_get_info(setup->device, &setup->info);
    if (rc == GREENCTX_EXIT_OK && s != GCTX_SUCCESS)
        rc = greenctx_tool_fail(opts, s);
    if (rc == GREENCTX_EXIT_OK &&
        tool_parse_groups(opts, nb_groups, groups, setup->info.sm_count,
                          setup->info.min_partition_sms, &setup->request) != 0)
        rc = GREENCTX_EXIT_USAGE;
    setup->request.texts = groups;
    if (rc != GREENCTX_EXIT_OK)
        tool_split_setup_end(setup);
    return rc;
}

void tool_split_setup_end(tool_split_setup *setup)
{
    gctx_partition_release(setup->device);
    setup->device = NULL;
    tool_free_groups(&setup->request);
    free(setup->request.texts);
    setup->request.texts = NULL;
}

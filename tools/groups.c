#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
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

/* One GROUP argument. */
static int parse_one(const char *arg, unsigned sm_count, gctx_group *g, int *percent)
{
    char buf[64];
    if (strlen(arg) >= sizeof buf)
        return -1;
    strcpy(buf, arg);
    memset(g, 0, sizeof *g);
    char *save = NULL;
    char *head = strtok_r(buf, ":", &save);
    if (!head)
        return -1;
    size_t len = strlen(head);
    if (strcmp(head, "rest") == 0) {
        g->backfill = 1;
    } else if (len > 1 && head[len - 1] == '%') {
        head[len - 1] = '\0';
        unsigned p;
        if (parse_unsigned(head, &p) != 0 || p == 0 || p > 100)
            return -1;
        g->num_sms = (unsigned)((unsigned long long)p * sm_count / 100);
        if (g->num_sms == 0)
            g->num_sms = 1; /* a nonzero share is never discovery; rounding lifts it */
        *percent = 1;
    } else if (parse_unsigned(head, &g->num_sms) != 0) {
        return -1;
    }
    for (char *mod = strtok_r(NULL, ":", &save); mod; mod = strtok_r(NULL, ":", &save)) {
        if (strcmp(mod, "b") == 0)
            g->backfill = 1;
        else if (mod[0] == 'c' && parse_unsigned(mod + 1, &g->coscheduled_sm_count) == 0)
            continue;
        else if (mod[0] == 'p' && parse_unsigned(mod + 1, &g->preferred_coscheduled_sm_count) == 0)
            continue;
        else
            return -1;
    }
    return 0;
}

int tool_parse_groups(const char *command, int argc, char **argv, unsigned sm_count,
                      tool_group_request *out)
{
    memset(out, 0, sizeof *out);
    if (argc <= 0) {
        fprintf(stderr, "greenctx %s: give at least one GROUP (e.g. 24 40 rest)\n", command);
        return -1;
    }
    out->groups = calloc((size_t)argc, sizeof *out->groups);
    if (!out->groups) {
        fprintf(stderr, "greenctx %s: out of memory\n", command);
        return -1;
    }
    out->nb_groups = (unsigned)argc;
    out->texts = argv;
    for (int i = 0; i < argc; i++) {
        if (parse_one(argv[i], sm_count, &out->groups[i], &out->has_percent) != 0) {
            fprintf(stderr, "greenctx %s: '%s' is not a GROUP\n%s", command, argv[i],
                    tool_groups_help);
            tool_free_groups(out);
            return -1;
        }
    }
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

int tool_split_setup_begin(const char *command, int argc, char **argv,
                           const greenctx_tool_options *opts, tool_split_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    gctx_split_options defaults = GCTX_SPLIT_OPTIONS_INIT;
    setup->options = defaults;
    int rc = greenctx_parse_common(&argc, argv, 0, &setup->args);
    if (rc != GREENCTX_EXIT_OK)
        return rc;
    int rounding = -1, first_group = 1;
    for (; first_group < argc; first_group++) {
        const char *a = argv[first_group];
        if (strcmp(a, "--round") == 0 && first_group + 1 < argc) {
            rounding = tool_parse_rounding(argv[++first_group]);
            if (rounding < 0) {
                fprintf(stderr, "greenctx %s: --round takes strict, down, nearest or up\n",
                        command);
                return GREENCTX_EXIT_USAGE;
            }
        } else if (strncmp(a, "--round=", 8) == 0) {
            if ((rounding = tool_parse_rounding(a + 8)) < 0) {
                fprintf(stderr, "greenctx %s: --round takes strict, down, nearest or up\n",
                        command);
                return GREENCTX_EXIT_USAGE;
            }
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: greenctx %s [--device N] [--json] [--round MODE] GROUP...\n"
                   "  --round MODE  strict (default; percentages: nearest), down, nearest, up\n%s",
                   command, tool_groups_help);
            return TOOL_SPLIT_HELP_SHOWN;
        } else if (strcmp(a, "--") == 0) {
            first_group++;
            break;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "greenctx %s: unknown option '%s'\n", command, a);
            return GREENCTX_EXIT_USAGE;
        } else {
            break;
        }
    }
    if (first_group >= argc) {
        fprintf(stderr,
                "usage: greenctx %s [--device N] [--json] [--round MODE] GROUP...\n%s",
                command, tool_groups_help);
        return GREENCTX_EXIT_USAGE;
    }
    if ((rc = greenctx_tool_start(opts, command, setup->args.json)) != GREENCTX_EXIT_OK)
        return rc;
    gctx_status s = gctx_partition_from_device(setup->args.device, &setup->device);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(command, s);
    gctx_partition_info info = GCTX_PARTITION_INFO_INIT;
    setup->info = info;
    if ((s = gctx_partition_get_info(setup->device, &setup->info))) {
        tool_split_setup_end(setup);
        return greenctx_tool_fail(command, s);
    }
    if (tool_parse_groups(command, argc - first_group, argv + first_group, setup->info.sm_count,
                          &setup->request) != 0) {
        tool_split_setup_end(setup);
        return GREENCTX_EXIT_USAGE;
    }
    /* Strict unless asked, as the library is; a share in percent means "about", so nearest. */
    if (rounding >= 0)
        setup->options.rounding = (gctx_rounding)rounding;
    else if (setup->request.has_percent)
        setup->options.rounding = GCTX_ROUND_NEAREST;
    return GREENCTX_EXIT_OK;
}

void tool_split_setup_end(tool_split_setup *setup)
{
    gctx_partition_release(setup->device);
    setup->device = NULL;
    tool_free_groups(&setup->request);
}

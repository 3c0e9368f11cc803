/* greenctx info --sizes: each device's partition sizes, and how many fit at once (planner's). */
#include <stdio.h>
#include <stdlib.h>

#include "greenctx_claims.h"
#include "groups.h"
#include "tool.h"

typedef struct size_row {
    unsigned sm_count;
    unsigned fit;       /* how many partitions of sm_count SMs one split gives */
    unsigned remainder; /* the SMs those leave */
    gctx_split_path path;
    unsigned granule_sms;
    unsigned claims; /* how many processes can claim that many at once (gctx_claim_count) */
} size_row;

/* The plan of `k` groups of `sms`: 0 when the split gives them, else -1. */
static int plan_equal(gctx_partition *device, unsigned sms, unsigned k, gctx_group *groups,
                      gctx_split_plan *plan)
{
    for (unsigned i = 0; i < k; i++) {
        groups[i] = (gctx_group)GCTX_GROUP_INIT;
        groups[i].num_sms = sms;
    }
    *plan = (gctx_split_plan)GCTX_SPLIT_PLAN_INIT;
    return gctx_partition_plan(device, groups, k, NULL, plan, NULL) == GCTX_SUCCESS ? 0 : -1;
}

/* Every count from 1 to the device's SMs that a one-group split gives, with how many fit. */
static unsigned device_rows(int ordinal, gctx_partition *device, unsigned sm_count,
                            size_row *rows, gctx_group *groups)
{
    unsigned n = 0;
    gctx_split_plan plan;
    for (unsigned sms = 1; sms <= sm_count; sms++) {
        size_row *r = &rows[n];
        for (unsigned k = 1; k * sms <= sm_count && !plan_equal(device, sms, k, groups, &plan);
             k++) {
            r->fit = k;
            r->remainder = plan.remainder_sms;
            r->path = plan.path;
            r->granule_sms = plan.granule_sms;
        }
        if (!r->fit)
            continue;
        n++;
        r->sm_count = sms;
        char request[16];
        unsigned claimed = 0;
        snprintf(request, sizeof request, "%u", sms);
        if (gctx_claim_count(ordinal, request, GCTX_ROUND_STRICT, &claimed, &r->claims))
            r->claims = 0;
    }
    return n;
}

int tool_info_sizes(const greenctx_tool_options *opts, const gctx_device_info *devices,
                    int nb_devices)
{
    json_writer w;
    if (opts->json) {
        json_begin(&w, stdout, "greenctx.info.sizes/1");
        json_array(&w, "devices");
    }
    for (int d = 0; d < nb_devices; d++) {
        const gctx_device_info *info = &devices[d];
        gctx_partition *device = NULL;
        size_row *rows = calloc(info->sm_count + 1, sizeof *rows);
        gctx_group *groups = calloc(info->sm_count + 1, sizeof *groups);
        gctx_status s = rows && groups ? gctx_partition_from_device(info->ordinal, &device)
                                       : GCTX_ERROR_OUT_OF_MEMORY;
        if (s != GCTX_SUCCESS) {
            free(rows);
            free(groups);
            return greenctx_tool_fail(opts, s);
        }
        unsigned n = device_rows(info->ordinal, device, info->sm_count, rows, groups);
        gctx_partition_release(device);
        if (opts->json) {
            json_object(&w, NULL);
            json_int(&w, "ordinal", info->ordinal);
            json_string(&w, "name", info->name);
            json_uint(&w, "sm_count", info->sm_count);
            json_array(&w, "sizes");
            for (unsigned i = 0; i < n; i++) {
                json_object(&w, NULL);
                json_uint(&w, "sm_count", rows[i].sm_count);
                json_uint(&w, "max_partitions", rows[i].fit);
                json_uint(&w, "remainder_sms", rows[i].remainder);
                json_string(&w, "path", tool_path_name(rows[i].path));
                json_uint(&w, "granule_sms", rows[i].granule_sms);
                json_uint(&w, "max_claims", rows[i].claims);
                json_close(&w);
            }
            json_close(&w);
            json_close(&w);
        } else {
            printf("%sdevice %d: %s, %u SMs\n", d ? "\n" : "", info->ordinal, info->name,
                   info->sm_count);
            printf("  %5s %11s %9s %7s  %s\n", "SMs", "partitions", "SMs left", "claims", "path");
            for (unsigned i = 0; i < n; i++) {
                char granule[32] = "";
                if (rows[i].granule_sms)
                    snprintf(granule, sizeof granule, " (granule %u)", rows[i].granule_sms);
                printf("  %5u %11u %9u %7u  %s%s\n", rows[i].sm_count, rows[i].fit,
                       rows[i].remainder, rows[i].claims, tool_path_name(rows[i].path), granule);
            }
        }
        free(rows);
        free(groups);
    }
    if (opts->json)
        json_end(&w);
    else
        printf("\nSMs: a partition size this driver gives; partitions: how many of that size "
               "one split\ngives at once; SMs left: what they leave (usable, without the "
               "co-scheduling guarantee);\nclaims: how many processes can hold that many "
               "at once (greenctx run --sms; the SMs left\nover go with --sms rest).\nAny mix that fits is possible: greenctx plan 24 40 "
               "rest shows one.\n");
    return GREENCTX_EXIT_OK;
}

/* greenctx info [--device N] [--json] [--sizes]: the driver, each device's SM rules, the
 * feature matrix; with --sizes, every partition size (info_sizes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info_sizes.h"
#include "options.h"
#include "tool.h"

#define MAX_WARNINGS 4

static const gctx_feature all_features[] = {
#define INFO_FEATURE_(name, value, text, version) GCTX_FEATURE_##name,
    GCTX_FEATURE_MAP(INFO_FEATURE_)
#undef INFO_FEATURE_
};
#define NB_FEATURES (sizeof all_features / sizeof all_features[0])

static const char derived_note[] =
    "derived from the architecture: driver before 13.0 reports none";

static void print_device_text(const gctx_device_info *d)
{
    printf("device %d: %s\n", d->ordinal, d->name);
    printf("  compute capability     %d.%d\n", d->cc_major, d->cc_minor);
    printf("  SMs                    %u\n", d->sm_count);
    printf("  minimum partition      %u SMs\n", d->min_partition_sms);
    printf("  co-scheduled alignment %u SMs\n", d->coscheduled_alignment);
    if (d->sm_rules_derived)
        printf("  (these two are %s)\n", derived_note);
    printf("  locality domains       %u\n", d->locality_domain_count);
}

static void print_device_json(json_writer *w, const gctx_device_info *d)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    json_object(w, NULL);
    json_int(w, "ordinal", d->ordinal);
    json_string(w, "name", d->name);
    json_string(w, "cc", cc);
    json_uint(w, "sm_count", d->sm_count);
    json_uint(w, "min_partition_sms", d->min_partition_sms);
    json_uint(w, "coscheduled_alignment", d->coscheduled_alignment);
    json_bool(w, "sm_rules_derived", d->sm_rules_derived);
    json_uint(w, "locality_domains", d->locality_domain_count);
    json_close(w);
}

static void usage(void)
{
    printf("usage: greenctx info [--device N] [--json] [--sizes]\n"
           "\n"
           "What the driver offers: its version, each device's SMs with the smallest partition\n"
           "it gives and the co-scheduled alignment (partitions come in multiples of it), and\n"
           "which green-context features this driver has.\n"
           "\n"
           "  --device N  only device N (default: every device)\n"
           "  --json      one JSON document on stdout\n"
           "  --sizes     every partition size each device gives, and how many fit at once\n"
           "e.g. greenctx info    greenctx --sim h200,a100@12050 info --device 1\n");
}

const greenctx_option greenctx_info_options[] = {{"--sizes", NULL}, {NULL, NULL}};

int greenctx_cmd_info(int argc, char **argv, greenctx_tool_options *opts)
{
    enum { OPT_SIZES };
    const greenctx_option *own = greenctx_info_options;
    int sizes = 0;
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        if (id == GREENCTX_ARG_HELP) {
            usage();
            return GREENCTX_EXIT_OK;
        }
        if (id == GREENCTX_ARG_STOP)
            return args.rc;
        if (id == OPT_SIZES) {
            sizes = 1;
            continue;
        }
        return greenctx_args_bad(&args, "unexpected argument '%s' (usage: greenctx info "
                                        "[--device N] [--json] [--sizes])",
                                 args.value);
    }
    int rc = greenctx_tool_start(opts);
    if (rc != GREENCTX_EXIT_OK)
        return rc;

    int version = 0, count = 0;
    gctx_status s = gctx_driver_version(&version);
    if (s == GCTX_SUCCESS)
        s = gctx_device_count(&count);
    if (s != GCTX_SUCCESS)
        return greenctx_tool_fail(opts, s);
    int first = 0, last = count - 1;
    if (opts->device_given) /* out of range: gctx_device_get_info names the valid ones */
        first = last = opts->device;
    int nb_devices = last >= first ? last - first + 1 : 0;
    gctx_device_info *devices = calloc(nb_devices ? (size_t)nb_devices : 1, sizeof *devices);
    if (!devices) {
        return greenctx_tool_fail(opts, GCTX_ERROR_OUT_OF_MEMORY);
    }
    for (int i = 0; i < nb_devices; i++) {
        devices[i] = (gctx_device_info)GCTX_DEVICE_INFO_INIT;
        s = gctx_device_get_info(first + i, &devices[i]);
        if (s != GCTX_SUCCESS) {
            free(devices);
            return greenctx_tool_fail(opts, s);
        }
    }

    if (sizes) {
        rc = tool_info_sizes(opts, devices, nb_devices);
        free(devices);
        return rc;
    }

    char warnings[MAX_WARNINGS][256];
    int nb_warnings = 0;
    const char *mps = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (mps && *mps)
        snprintf(warnings[nb_warnings++], sizeof warnings[0],
                 "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s is set: the MPS active thread percentage "
                 "overrides green-context SM limits, so partitions may not get the SMs they "
                 "ask for",
                 mps);
    if (count == 0)
        snprintf(warnings[nb_warnings++], sizeof warnings[0],
                 "the driver loaded but sees no CUDA device");

    const char *path = gctx_driver_path();
    char vtext[16];
    greenctx_format_driver_version(version, vtext, sizeof vtext);
    if (opts->json) {
        json_writer w;
        json_begin(&w, stdout, "greenctx.info/1");
        json_int(&w, "driver_version", version);
        json_string(&w, "driver_path", path);
        json_bool(&w, "simulated", greenctx_tool_simulated(opts));
        json_array(&w, "devices");
        for (int i = 0; i < nb_devices; i++)
            print_device_json(&w, &devices[i]);
        json_close(&w);
        json_object(&w, "features");
        for (size_t f = 0; f < NB_FEATURES; f++) {
            json_object(&w, gctx_feature_name(all_features[f]));
            json_bool(&w, "available", gctx_feature_available(all_features[f]));
            json_string(&w, "reason", gctx_feature_reason(all_features[f]));
            json_close(&w);
        }
        json_close(&w);
        json_array(&w, "warnings");
        for (int i = 0; i < nb_warnings; i++)
            json_string(&w, NULL, warnings[i]);
        json_end(&w);
    } else {
        printf("driver: %s (%d), loaded from %s\n", vtext, version, path ? path : "?");
        printf("devices: %d\n", count);
        for (int i = 0; i < nb_devices; i++)
            print_device_text(&devices[i]);
        printf("features:\n");
        for (size_t f = 0; f < NB_FEATURES; f++)
            printf("  %-18s %-4s %s\n", gctx_feature_name(all_features[f]),
                   gctx_feature_available(all_features[f]) ? "on" : "off",
                   gctx_feature_reason(all_features[f]));
        for (int w = 0; w < nb_warnings; w++)
            printf("warning: %s\n", warnings[w]);
    }
    free(devices);
    return GREENCTX_EXIT_OK;
}

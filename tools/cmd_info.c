/* greenctx info: the driver, each device's SM rules, the feature matrix; UUIDs, PCI bus ids and
 * the driver branch as nvidia-smi names them, --query, and --sizes (each device's partition
 * sizes, and how many fit at once: the planner's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
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

typedef struct info_identity {
    char uuid[GCTX_UUID_SIZE];             /* "" when the driver can't tell */
    char pci_bus_id[GCTX_PCI_BUS_ID_SIZE]; /* "" likewise */
} info_identity;

typedef struct info_driver {
    int cuda_version;  /* cuDriverGetVersion: 13000 */
    char branch[16];   /* "R580", from NVML's version or the CUDA version it reports; "" */
    char version[64];  /* NVML's "580.95.05", or "" without NVML */
} info_driver;

static void info_identity_get(int device, info_identity *out)
{
    if (gctx_device_uuid(device, out->uuid, sizeof out->uuid) != GCTX_SUCCESS)
        out->uuid[0] = '\0';
    if (gctx_device_pci_bus_id(device, out->pci_bus_id, sizeof out->pci_bus_id) != GCTX_SUCCESS)
        out->pci_bus_id[0] = '\0';
}

/* Each branch's CUDA version names it when NVML can't give the exact version (R580: 13.0). */
static const struct {
    int cuda_version, branch;
} branches[] = {{12000, 525}, {12010, 530}, {12020, 535}, {12030, 545}, {12040, 550},
                {12050, 555}, {12060, 560}, {12070, 565}, {12080, 570}, {12090, 575},
                {13000, 580}, {13010, 590}};

static void info_driver_get(int cuda_version, info_driver *out)
{
    *out = (info_driver){.cuda_version = cuda_version};
    char why[256];
    nvml_lib *nvml = nvml_lib_open(greenctx_driver_simulated(), why, sizeof why);
    unsigned major = 0;
    if (nvml && nvml_lib_driver_version(nvml, out->version, sizeof out->version) == 0 &&
        sscanf(out->version, "%u", &major) == 1)
        snprintf(out->branch, sizeof out->branch, "R%u", major);
    else
        out->version[0] = '\0';
    nvml_lib_close(nvml);
    for (size_t i = 0; !out->branch[0] && i < sizeof branches / sizeof branches[0]; i++)
        if (branches[i].cuda_version == cuda_version)
            snprintf(out->branch, sizeof out->branch, "R%d", branches[i].branch);
}

enum field_id {
    F_INDEX, F_NAME, F_UUID, F_PCI_BUS_ID, F_COMPUTE_CAP, F_SMS, F_MIN_PARTITION,
    F_ALIGNMENT, F_LOCALITY, F_DRIVER_VERSION, F_DRIVER_BRANCH, F_CUDA_VERSION
};

static const struct {
    const char *name;
    const char *help;
} fields[] = {
    [F_INDEX] = {"index", "the device's number, as --device N takes it"},
    [F_NAME] = {"name", "the device's name (cuDeviceGetName)"},
    [F_UUID] = {"uuid", "GPU-..., as nvidia-smi prints it; --device takes it or its start"},
    [F_PCI_BUS_ID] = {"pci.bus_id", "domain:bus:device.function, as the driver writes it"},
    [F_COMPUTE_CAP] = {"compute_cap", "the compute capability (9.0)"},
    [F_SMS] = {"sms", "the SMs green contexts can split"},
    [F_MIN_PARTITION] = {"min_partition_sms", "the smallest partition, in SMs"},
    [F_ALIGNMENT] = {"coscheduled_alignment", "partition sizes are multiples of it"},
    [F_LOCALITY] = {"locality_domains", "locality domains (driver 13.4+; 0 before)"},
    [F_DRIVER_VERSION] = {"driver_version", "the NVIDIA driver's version (NVML; [N/A] without it)"},
    [F_DRIVER_BRANCH] = {"driver_branch", "the driver's branch (R580), from NVML or the CUDA version"},
    [F_CUDA_VERSION] = {"cuda_version", "the CUDA version the driver supports (13.0)"},
};
#define NB_FIELDS (sizeof fields / sizeof fields[0])

/* --help-query: the fields, one a line with what each is. */
static void info_query_help(void)
{
    printf("Fields for greenctx info --query FIELD[,FIELD...] --format csv[,noheader]:\n");
    for (size_t f = 0; f < NB_FIELDS; f++)
        printf("  %-22s %s\n", fields[f].name, fields[f].help);
}

/* The field named by text[0..len), or -1. */
static int find_field(const char *text, size_t len)
{
    for (size_t f = 0; f < NB_FIELDS; f++)
        if (strlen(fields[f].name) == len && !strncmp(fields[f].name, text, len))
            return (int)f;
    return -1;
}

/* 0 when every field of the list is known; else -1 with the unknown one in bad. */
static int info_query_check(const char *list, char *bad, size_t bad_size)
{
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (find_field(p, len) < 0) {
            snprintf(bad, bad_size, "%.*s", (int)len, p);
            return -1;
        }
        p += len;
        if (!*p)
            return 0;
    }
}

static void field_text(int f, const gctx_device_info *d, const info_identity *id,
                       const info_driver *drv, char *out, size_t size)
{
    const char *na = "[N/A]"; /* nvidia-smi's word for what is not known */
    switch ((enum field_id)f) {
    case F_INDEX: snprintf(out, size, "%d", d->ordinal); break;
    case F_NAME: snprintf(out, size, "%s", d->name); break;
    case F_UUID: snprintf(out, size, "%s", id->uuid[0] ? id->uuid : na); break;
    case F_PCI_BUS_ID: snprintf(out, size, "%s", id->pci_bus_id[0] ? id->pci_bus_id : na); break;
    case F_COMPUTE_CAP: snprintf(out, size, "%d.%d", d->cc_major, d->cc_minor); break;
    case F_SMS: snprintf(out, size, "%u", d->sm_count); break;
    case F_MIN_PARTITION: snprintf(out, size, "%u", d->min_partition_sms); break;
    case F_ALIGNMENT: snprintf(out, size, "%u", d->coscheduled_alignment); break;
    case F_LOCALITY: snprintf(out, size, "%u", d->locality_domain_count); break;
    case F_DRIVER_VERSION: snprintf(out, size, "%s", drv->version[0] ? drv->version : na); break;
    case F_DRIVER_BRANCH: snprintf(out, size, "%s", drv->branch[0] ? drv->branch : na); break;
    case F_CUDA_VERSION: greenctx_format_driver_version(drv->cuda_version, out, size); break;
    }
}

/* Each device's fields as nvidia-smi writes them ("0, NVIDIA H200"), after a header line. */
static void info_query_print(const char *list, int noheader, const gctx_device_info *devices,
                      const info_identity *ids, int nb_devices, const info_driver *driver)
{
    for (int row = noheader ? 0 : -1; row < nb_devices; row++) {
        const char *p = list;
        for (int first = 1;; first = 0) {
            size_t len = strcspn(p, ",");
            char text[300];
            if (row < 0)
                snprintf(text, sizeof text, "%.*s", (int)len, p);
            else
                field_text(find_field(p, len), &devices[row], &ids[row], driver, text,
                           sizeof text);
            printf("%s%s", first ? "" : ", ", text);
            p += len;
            if (!*p++)
                break;
        }
        putchar('\n');
    }
}

static void print_device_text(const gctx_device_info *d, const info_identity *id)
{
    printf("device %d: %s\n", d->ordinal, d->name);
    printf("  UUID                   %s\n", id->uuid[0] ? id->uuid : "unknown");
    printf("  PCI bus id             %s\n", id->pci_bus_id[0] ? id->pci_bus_id : "unknown");
    printf("  compute capability     %d.%d\n", d->cc_major, d->cc_minor);
    printf("  SMs                    %u\n", d->sm_count);
    printf("  minimum partition      %u SMs\n", d->min_partition_sms);
    printf("  co-scheduled alignment %u SMs\n", d->coscheduled_alignment);
    if (d->sm_rules_derived)
        printf("  (these two are %s)\n", derived_note);
    printf("  locality domains       %u\n", d->locality_domain_count);
}

static void print_device_json(json_writer *w, const gctx_device_info *d, const info_identity *id)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    json_object(w, NULL);
    json_int(w, "ordinal", d->ordinal);
    json_string(w, "name", d->name);
    json_string(w, "uuid", id->uuid[0] ? id->uuid : NULL);
    json_string(w, "pci_bus_id", id->pci_bus_id[0] ? id->pci_bus_id : NULL);
    json_string(w, "cc", cc);
    json_uint(w, "sm_count", d->sm_count);
    json_uint(w, "min_partition_sms", d->min_partition_sms);
    json_uint(w, "coscheduled_alignment", d->coscheduled_alignment);
    json_bool(w, "sm_rules_derived", d->sm_rules_derived);
    json_uint(w, "locality_domains", d->locality_domain_count);
    json_close(w);
}

const char *const greenctx_info_usage[] = {
    "usage: greenctx info [--device N|UUID] [--json] [--sizes]\n"
    "       greenctx info [--device N|UUID] --query FIELD[,FIELD...] [--format "
    "csv[,noheader]]\n"
    "\n"
    "What the driver offers: its version, each device's SMs with the smallest partition\n"
    "it gives and the co-scheduled alignment (partitions come in multiples of it), and\n"
    "which green-context features this driver has.\n"
    "\n"
    "  --device N    only device N (default: every device), or the one with this UUID\n"
    "                (GPU-..., or its start) or PCI bus id, as nvidia-smi -i takes them\n"
    "  --json        one JSON document on stdout\n"
    "  --sizes       every partition size each device gives, and how many fit at once\n"
    "  --query F,F   only these fields of each device, one line each (--help-query\n"
    "                lists them: index, name, uuid, pci.bus_id, sms, driver_branch, ...)\n"
    "  --format csv  with --query: comma-separated with a header line (csv,noheader:\n"
    "                without it), as nvidia-smi --format takes it\n"
    "e.g. greenctx info    greenctx --sim h200,a100@12050 info --device 1\n"
    "     greenctx info --query index,uuid,pci.bus_id --format csv,noheader\n",
    NULL};

/* The text or JSON of plain `greenctx info`. */
static void print_info(const greenctx_tool_options *opts, int count,
                       const gctx_device_info *devices, const info_identity *ids, int nb_devices,
                       const info_driver *driver)
{
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
    greenctx_format_driver_version(driver->cuda_version, vtext, sizeof vtext);
    if (opts->json) {
        json_writer w;
        json_begin(&w, stdout, "greenctx.info/1");
        json_int(&w, "driver_version", driver->cuda_version);
        json_string(&w, "driver_branch", driver->branch[0] ? driver->branch : NULL);
        json_string(&w, "nvidia_driver_version", driver->version[0] ? driver->version : NULL);
        json_string(&w, "driver_path", path);
        json_bool(&w, "simulated", greenctx_tool_simulated(opts));
        json_array(&w, "devices");
        for (int i = 0; i < nb_devices; i++)
            print_device_json(&w, &devices[i], &ids[i]);
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
        printf("driver: CUDA %s (%d), %s%s%s%s, loaded from %s\n", vtext, driver->cuda_version,
               driver->branch[0] ? "branch " : "branch unknown", driver->branch,
               driver->version[0] ? " " : "", driver->version, path ? path : "?");
        printf("devices: %d\n", count);
        for (int i = 0; i < nb_devices; i++)
            print_device_text(&devices[i], &ids[i]);
        printf("features:\n");
        for (size_t f = 0; f < NB_FEATURES; f++)
            printf("  %-18s %-4s %s\n", gctx_feature_name(all_features[f]),
                   gctx_feature_available(all_features[f]) ? "on" : "off",
                   gctx_feature_reason(all_features[f]));
        for (int w = 0; w < nb_warnings; w++)
            printf("warning: %s\n", warnings[w]);
    }
}

typedef struct size_row {
    unsigned sm_count;
    unsigned fit;       /* how many partitions of sm_count SMs one split gives */
    unsigned remainder; /* the SMs those leave */
    gctx_split_path path;
    unsigned granule_sms;
    unsigned claims; /* how many processes can claim that many at once (gctx_claim_count) */
} size_row;

/* Every count from 1 to the device's SMs that a one-group split gives, with how many fit. */
static unsigned device_rows(int ordinal, gctx_partition *device, unsigned sm_count,
                            size_row *rows, gctx_group *groups)
{
    unsigned n = 0;
    for (unsigned sms = 1; sms <= sm_count; sms++) {
        size_row *r = &rows[n];
        for (unsigned k = 1; k * sms <= sm_count; k++) { /* k groups of sms: k - 1 set before */
            gctx_split_plan plan = GCTX_SPLIT_PLAN_INIT;
            groups[k - 1] = (gctx_group)GCTX_GROUP_INIT;
            groups[k - 1].num_sms = sms;
            if (gctx_partition_plan(device, groups, k, NULL, &plan, NULL) != GCTX_SUCCESS)
                break;
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

/* info --sizes: every legal partition size of each device and how many fit (text or JSON); an
 * exit code. */
static int print_sizes(const greenctx_tool_options *opts, const gctx_device_info *devices,
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
                json_string(&w, "path", tool_path(rows[i].path)->name);
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
                       rows[i].remainder, rows[i].claims, tool_path(rows[i].path)->name,
                       granule);
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

enum { OPT_SIZES, OPT_QUERY, OPT_FORMAT, OPT_HELP_QUERY, NB_INFO_OPTIONS };
const greenctx_option greenctx_info_options[] = {
    [OPT_SIZES] = {"--sizes", NULL},
    [OPT_QUERY] = {"--query", "fields, e.g. index,uuid,pci.bus_id"},
    [OPT_FORMAT] = {"--format", "csv or csv,noheader"},
    [OPT_HELP_QUERY] = {"--help-query", NULL},
    [NB_INFO_OPTIONS] = {NULL, NULL},
};

int greenctx_cmd_info(int argc, char **argv, greenctx_tool_options *opts)
{
    const greenctx_option *own = greenctx_info_options;
    int sizes = 0;
    const char *query = NULL, *format = NULL;
    char bad[64];
    greenctx_args args;
    greenctx_args_begin(&args, argc, argv, opts);
    for (int id; (id = greenctx_args_next(&args, own)) != GREENCTX_ARG_END;) {
        switch (id) {
        case GREENCTX_ARG_STOP: return args.rc;
        case OPT_SIZES: sizes = 1; break;
        case OPT_HELP_QUERY:
            info_query_help();
            return GREENCTX_EXIT_OK;
        case OPT_QUERY:
            if (info_query_check(args.value, bad, sizeof bad) != 0)
                return greenctx_args_bad(&args, "--query: no field '%s' (greenctx info "
                                                "--help-query lists them)",
                                         bad);
            query = args.value;
            break;
        case OPT_FORMAT:
            if (strcmp(args.value, "csv") && strcmp(args.value, "csv,noheader"))
                return greenctx_args_refuse(&args);
            format = args.value;
            break;
        default:
            return greenctx_args_bad(&args, "unexpected argument '%s' (usage: greenctx info "
                                            "[--device N] [--json] [--sizes])",
                                     args.value);
        }
    }
    if (format && !query)
        return greenctx_args_bad(&args, "--format goes with --query FIELDS");
    if (query && (sizes || opts->json))
        return greenctx_args_bad(&args, "--query is its own output: not with %s",
                                 sizes ? "--sizes" : "--json (which has every field)");
    opts->banner_on_stderr = query != NULL; /* stdout is the CSV, for scripts */
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
    info_identity *ids = calloc(nb_devices ? (size_t)nb_devices : 1, sizeof *ids);
    s = devices && ids ? GCTX_SUCCESS : GCTX_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < nb_devices && s == GCTX_SUCCESS; i++) {
        devices[i] = (gctx_device_info)GCTX_DEVICE_INFO_INIT;
        if ((s = gctx_device_get_info(first + i, &devices[i])) == GCTX_SUCCESS)
            info_identity_get(first + i, &ids[i]);
    }
    info_driver driver;
    if (s == GCTX_SUCCESS)
        info_driver_get(version, &driver);
    if (s != GCTX_SUCCESS)
        rc = greenctx_tool_fail(opts, s);
    else if (sizes)
        rc = print_sizes(opts, devices, nb_devices);
    else if (query)
        info_query_print(query, format && !strcmp(format, "csv,noheader"), devices, ids,
                         nb_devices, &driver);
    else
        print_info(opts, count, devices, ids, nb_devices, &driver);
    free(devices);
    free(ids);
    return rc;
}

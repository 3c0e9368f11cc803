/* UUIDs, PCI bus ids, the driver branch, and info --query (info.h). */
#include <stdio.h>
#include <string.h>

#include "info.h"
#include "nvml.h"

void info_identity_get(int device, info_identity *out)
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

void info_driver_get(int cuda_version, info_driver *out)
{
    memset(out, 0, sizeof *out);
    out->cuda_version = cuda_version;
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

void info_query_help(void)
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

int info_query_check(const char *list, char *bad, size_t bad_size)
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

void info_query_print(const char *list, int noheader, const gctx_device_info *devices,
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

/* greenctx info's parts: names as nvidia-smi gives them, --query, --sizes. */
#ifndef GREENCTX_TOOL_INFO_H
#define GREENCTX_TOOL_INFO_H

#include "tool.h"

typedef struct info_identity {
    char uuid[GCTX_UUID_SIZE];             /* "" when the driver can't tell */
    char pci_bus_id[GCTX_PCI_BUS_ID_SIZE]; /* "" likewise */
} info_identity;

typedef struct info_driver {
    int cuda_version;  /* cuDriverGetVersion: 13000 */
    char branch[16];   /* "R580", from NVML's version or the CUDA version it reports; "" */
    char version[64];  /* NVML's "580.95.05", or "" without NVML */
} info_driver;

void info_identity_get(int device, info_identity *out);
void info_driver_get(int cuda_version, info_driver *out);

/* --help-query: the fields, one a line with what each is. */
void info_query_help(void);
/* 0 when every field of the list is known; else -1 with the unknown one in bad. */
int info_query_check(const char *fields, char *bad, size_t bad_size);
/* Each device's fields as nvidia-smi writes them ("0, NVIDIA H200"), after a header line. */
void info_query_print(const char *fields, int noheader, const gctx_device_info *devices,
                      const info_identity *ids, int nb_devices, const info_driver *driver);

/* Every legal partition size of each device and how many fit (text or JSON); an exit code. */
int tool_info_sizes(const greenctx_tool_options *opts, const gctx_device_info *devices,
                    int nb_devices);

#endif

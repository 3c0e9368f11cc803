/* NVML (libnvidia-ml.so.1), loaded at run time when it is there and never linked: the one
 * loader of the library (the guard's signals) and the tool (info, ps). Without NVML,
 * nvml_lib_open says why and the callers leave its facts out. GREENCTX_NVML_LIBRARY names
 * another file (tests/fake_nvml.c). */
#ifndef GREENCTX_NVML_LIB_H
#define GREENCTX_NVML_LIB_H

#include <stddef.h>

typedef struct nvml_lib nvml_lib;

/* NULL with why[] when NVML is not there. simulated: the machine's NVML doesn't describe the
 * simulator's GPUs, so only GREENCTX_NVML_LIBRARY is opened. */
nvml_lib *nvml_lib_open(int simulated, char *why, size_t why_size);
void nvml_lib_close(nvml_lib *nvml);

/* The driver's version ("580.95.05"); 0 on success. */
int nvml_lib_driver_version(nvml_lib *nvml, char *out, size_t size);

/* One compute process of a GPU, as NVML sees it. */
typedef struct nvml_process {
    int pid;
    unsigned long long memory_bytes; /* ~0ULL: NVML can't tell (no permission, ...) */
} nvml_process;
/* The GPU's compute processes into *out (malloc'ed), *count; 0, or -1 with why[]. */
int nvml_lib_processes(nvml_lib *nvml, const char *uuid, nvml_process **out, unsigned *count,
                       char *why, size_t why_size);

/* NVML's clocks-event reasons (the former clocks-throttle reasons) the guard reads. */
#define NVML_LIB_REASON_SW_POWER_CAP 0x4ull
#define NVML_LIB_REASON_HW_SLOWDOWN 0x8ull
#define NVML_LIB_REASON_SW_THERMAL 0x20ull
#define NVML_LIB_REASON_HW_THERMAL 0x40ull
typedef struct nvml_clocks {
    unsigned sm_mhz, max_sm_mhz;
    unsigned long long reasons; /* NVML_LIB_REASON_* */
    unsigned memory_busy;       /* percent of the last sample period HBM was read or written */
} nvml_clocks;
/* The GPU's SM clock and maximum, clocks-event reasons, memory utilisation; 0 or -1. */
int nvml_lib_clocks(nvml_lib *nvml, const char *uuid, nvml_clocks *out);

#endif

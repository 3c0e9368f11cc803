/* NVML (libnvidia-ml.so.1), loaded at run time when it is there and never linked: what
 * nvidia-smi shows beside greenctx's own view, the exact driver version and the GPU's compute
 * processes. Everything here is optional: without NVML, tool_nvml_open says why and the
 * callers leave its facts out. GREENCTX_NVML_LIBRARY names another file (the tests' fake). */
#ifndef GREENCTX_TOOL_NVML_H
#define GREENCTX_TOOL_NVML_H

#include <stddef.h>

typedef struct tool_nvml tool_nvml;

/* One compute process of a GPU, as NVML sees it. */
typedef struct tool_nvml_process {
    int pid;
    unsigned long long memory_bytes; /* ~0ULL: NVML can't tell (no permission, ...) */
} tool_nvml_process;

/* NULL, with why in why[], when NVML is not there or does not start. */
tool_nvml *tool_nvml_open(char *why, size_t why_size);
void tool_nvml_close(tool_nvml *nvml);
/* The driver's version ("580.95.05"); 0 on success. */
int tool_nvml_driver_version(tool_nvml *nvml, char *out, size_t size);
/* The compute processes on the GPU with this UUID: at most capacity in out, their number in
 * *count (which may be larger); 0 on success, else -1 with why[]. */
int tool_nvml_processes(tool_nvml *nvml, const char *uuid, tool_nvml_process *out,
                        unsigned capacity, unsigned *count, char *why, size_t why_size);

#endif

/* NVML, loaded at run time. Each call is looked up alone: an NVML without one gives the rest. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

typedef struct nvml_process_info { /* nvmlProcessInfo_v2_t */
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvml_process_info;

typedef struct nvml_utilization { /* nvmlUtilization_t: percent of the last sample period */
    unsigned gpu, memory;
} nvml_utilization;

enum { NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_CLOCK_SM = 1 };

struct nvml_lib {
    void *lib;
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*driver_version)(char *, unsigned);
    int (*handle_by_uuid)(const char *, void **);
    int (*processes)(void *, unsigned *, nvml_process_info *);
    int (*clock)(void *, int, unsigned *);
    int (*max_clock)(void *, int, unsigned *);
    int (*reasons)(void *, unsigned long long *);
    int (*utilization)(void *, nvml_utilization *);
};

static void *symbol(void *lib, const char *name, const char *fallback)
{
    void *p = dlsym(lib, name);
    return p || !fallback ? p : dlsym(lib, fallback);
}

static const char *nvml_error(const nvml_lib *n, int r)
{
    const char *text = n && n->error_string ? n->error_string(r) : NULL;
    return text ? text : "unknown error";
}

nvml_lib *nvml_lib_open(int simulated, char *why, size_t why_size)
{
    const char *path = getenv("GREENCTX_NVML_LIBRARY");
    if (!path || !*path) {
        if (simulated) {
            snprintf(why, why_size, "NVML describes this machine's GPUs, not the simulated "
                                    "driver's");
            return NULL;
        }
        path = "libnvidia-ml.so.1";
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, why_size, "NVML (%s) is not installed: %s", path, dlerror());
        return NULL;
    }
    nvml_lib *n = calloc(1, sizeof *n);
    int (*init)(void) = NULL;
    if (n) {
        n->lib = lib;
        *(void **)&init = symbol(lib, "nvmlInit_v2", "nvmlInit");
        *(void **)&n->shutdown = symbol(lib, "nvmlShutdown", NULL);
        *(void **)&n->error_string = symbol(lib, "nvmlErrorString", NULL);
        *(void **)&n->driver_version = symbol(lib, "nvmlSystemGetDriverVersion", NULL);
        *(void **)&n->handle_by_uuid = symbol(lib, "nvmlDeviceGetHandleByUUID", NULL);
        *(void **)&n->processes = symbol(lib, "nvmlDeviceGetComputeRunningProcesses_v3",
                                         "nvmlDeviceGetComputeRunningProcesses_v2");
        *(void **)&n->clock = symbol(lib, "nvmlDeviceGetClockInfo", NULL);
        *(void **)&n->max_clock = symbol(lib, "nvmlDeviceGetMaxClockInfo", NULL);
        /* Renamed in 12.2; drivers before export the old name only. */
        *(void **)&n->reasons = symbol(lib, "nvmlDeviceGetCurrentClocksEventReasons",
                                       "nvmlDeviceGetCurrentClocksThrottleReasons");
        *(void **)&n->utilization = symbol(lib, "nvmlDeviceGetUtilizationRates", NULL);
    }
    int r = -1;
    if (!n || !init || !n->shutdown || !n->handle_by_uuid || (r = init()) != 0) {
        if (r > 0)
            snprintf(why, why_size, "NVML (%s) did not start: %s", path, nvml_error(n, r));
        else
            snprintf(why, why_size, "NVML (%s) lacks the calls greenctx needs", path);
        free(n);
        dlclose(lib);
        return NULL;
    }
    return n;
}

void nvml_lib_close(nvml_lib *nvml)
{
    if (!nvml)
        return;
    nvml->shutdown();
    dlclose(nvml->lib);
    free(nvml);
}

int nvml_lib_driver_version(nvml_lib *nvml, char *out, size_t size)
{
    return nvml->driver_version && nvml->driver_version(out, (unsigned)size) == 0 ? 0 : -1;
}

int nvml_lib_processes(nvml_lib *nvml, const char *uuid, nvml_process **out, unsigned *count,
                       char *why, size_t why_size)
{
    if (!nvml->processes) {
        snprintf(why, why_size, "this NVML lists no compute processes");
        return -1;
    }
    void *device = NULL;
    int r = nvml->handle_by_uuid(uuid, &device);
    /* Room for the processes that start while we ask: asked again while it grows. */
    nvml_process_info *infos = NULL;
    unsigned n = 0;
    for (unsigned room = 64; r == 0; room *= 2) {
        nvml_process_info *more = realloc(infos, room * sizeof *infos);
        if (!more) {
            snprintf(why, why_size, "out of memory for the GPU's processes");
            free(infos);
            return -1;
        }
        infos = more;
        n = room;
        r = nvml->processes(device, &n, infos);
        if (r != NVML_ERROR_INSUFFICIENT_SIZE || room > 65536)
            break;
        r = 0;
    }
    *out = r == 0 ? calloc(n ? n : 1, sizeof **out) : NULL;
    if (r != 0)
        snprintf(why, why_size, "NVML could not list the processes of %s: %s", uuid,
                 nvml_error(nvml, r));
    else if (!*out)
        snprintf(why, why_size, "out of memory for %u processes", n);
    for (unsigned i = 0; *out && i < n; i++)
        (*out)[i] = (nvml_process){(int)infos[i].pid, infos[i].usedGpuMemory};
    *count = *out ? n : 0;
    free(infos);
    return *out ? 0 : -1;
}

int nvml_lib_clocks(nvml_lib *nvml, const char *uuid, nvml_clocks *out)
{
    void *dev;
    nvml_utilization u = {0, 0};
    memset(out, 0, sizeof *out);
    if (!nvml->clock || !nvml->max_clock || !nvml->reasons || !nvml->utilization ||
        nvml->handle_by_uuid(uuid, &dev) != 0 || nvml->clock(dev, NVML_CLOCK_SM, &out->sm_mhz) ||
        nvml->max_clock(dev, NVML_CLOCK_SM, &out->max_sm_mhz) ||
        nvml->reasons(dev, &out->reasons) || nvml->utilization(dev, &u)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->memory_busy = u.memory;
    return 0;
}

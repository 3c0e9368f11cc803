/* NVML at run time (nvml.h): five entry points, resolved once. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

#define NVML_CLOCK_SM 1
/* nvmlClocksEventReason* (the former ClocksThrottleReason* bits) */
#define REASON_SW_POWER_CAP 0x4ull
#define REASON_HW_SLOWDOWN 0x8ull
#define REASON_SW_THERMAL 0x20ull
#define REASON_HW_THERMAL 0x40ull

typedef struct nvml_utilization {
    unsigned gpu, memory; /* percent of the last sample period */
} nvml_utilization;

static struct {
    int (*init)(void);
    int (*by_uuid)(const char *uuid, void **device);
    int (*clock)(void *device, int type, unsigned *mhz);
    int (*max_clock)(void *device, int type, unsigned *mhz);
    int (*reasons)(void *device, unsigned long long *reasons);
    int (*utilization)(void *device, nvml_utilization *u);
    int ready;
} nvml;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
    const char *path = getenv("GREENCTX_NVML_LIBRARY");
    void *h = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    *(void **)&nvml.init = dlsym(h, "nvmlInit_v2");
    *(void **)&nvml.by_uuid = dlsym(h, "nvmlDeviceGetHandleByUUID");
    *(void **)&nvml.clock = dlsym(h, "nvmlDeviceGetClockInfo");
    *(void **)&nvml.max_clock = dlsym(h, "nvmlDeviceGetMaxClockInfo");
    /* Renamed in 12.2; drivers before export the old name only. */
    *(void **)&nvml.reasons = dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.reasons)
        *(void **)&nvml.reasons = dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&nvml.utilization = dlsym(h, "nvmlDeviceGetUtilizationRates");
    nvml.ready = nvml.init && nvml.by_uuid && nvml.clock && nvml.max_clock && nvml.reasons &&
                 nvml.utilization && nvml.init() == 0;
}

int gctx__nvml_read(const char *uuid, gctx__guard_device *out)
{
    memset(out, 0, sizeof *out);
    pthread_once(&loaded, load);
    void *dev;
    unsigned long long reasons = 0;
    nvml_utilization u = {0, 0};
    if (!nvml.ready || nvml.by_uuid(uuid, &dev) != 0 ||
        nvml.clock(dev, NVML_CLOCK_SM, &out->sm_clock_mhz) != 0 ||
        nvml.max_clock(dev, NVML_CLOCK_SM, &out->max_sm_clock_mhz) != 0 ||
        nvml.reasons(dev, &reasons) != 0 || nvml.utilization(dev, &u) != 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->throttle = (reasons & REASON_SW_POWER_CAP ? GCTX__GUARD_THROTTLE_POWER : 0u) |
                    (reasons & (REASON_HW_SLOWDOWN | REASON_SW_THERMAL | REASON_HW_THERMAL)
                         ? GCTX__GUARD_THROTTLE_THERMAL
                         : 0u);
    /* NVML's memory utilisation: the share of the period the memory was being read or
     * written, the closest it gives to HBM throughput over peak. */
    out->hbm_busy = u.memory / 100.0;
    return 0;
}

/* A stand-in for libnvidia-ml.so.1 (GREENCTX_NVML_LIBRARY names it), so that what greenctx
 * shows from NVML is tested without a GPU: the driver 580.95.05, on every GPU the compute
 * processes FAKE_NVML_PROCESSES lists ("PID:MIB,PID:-", "-": memory NVML can't tell), and the
 * guard's signals (below). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
} process_info;

EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char *nvmlErrorString(int r) { return r == 6 ? "Not Found" : "Unknown Error"; }

EXPORT int nvmlSystemGetDriverVersion(char *version, unsigned length)
{
    return snprintf(version, length, "580.95.05") < (int)length ? 0 : 7;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **device)
{
    *device = (void *)1;
    return strncmp(uuid, "GPU-", 4) ? 6 : 0;
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned *count,
                                                   process_info *infos)
{
    (void)device;
    const char *list = getenv("FAKE_NVML_PROCESSES");
    unsigned n = 0, room = *count;
    for (const char *p = list && *list ? list : NULL; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (n < room) {
            infos[n].pid = (unsigned)strtoul(p, NULL, 10);
            const char *mib = strchr(p, ':');
            infos[n].usedGpuMemory =
                mib && mib[1] != '-' ? strtoull(mib + 1, NULL, 10) << 20 : ~0ULL;
        }
        n++;
    }
    *count = n;
    return n > room ? 7 : 0; /* NVML_ERROR_INSUFFICIENT_SIZE */
}

/* The guard's signals (common/nvml.c, read by src/claim_guard.c): FAKE_NVML_SM_CLOCK, FAKE_NVML_MAX_CLOCK (MHz),
 * FAKE_NVML_REASONS (the clocks event reasons' bits), FAKE_NVML_MEMORY (percent busy) and
 * FAKE_NVML_DELAY_MS (how long the utilisation takes to read: NVML's reads took tens of ms on
 * an H200 at its power cap). */
static unsigned long long env_number(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoull(v, NULL, 0) : 0;
}

EXPORT int nvmlDeviceGetClockInfo(void *device, int type, unsigned *mhz)
{
    (void)device;
    *mhz = (unsigned)env_number("FAKE_NVML_SM_CLOCK");
    return type == 1 ? 0 : 2; /* NVML_CLOCK_SM, else NVML_ERROR_INVALID_ARGUMENT */
}

EXPORT int nvmlDeviceGetMaxClockInfo(void *device, int type, unsigned *mhz)
{
    (void)device;
    *mhz = (unsigned)env_number("FAKE_NVML_MAX_CLOCK");
    return type == 1 ? 0 : 2;
}

EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons)
{
    (void)device;
    *reasons = env_number("FAKE_NVML_REASONS");
    return 0;
}

typedef struct {
    unsigned gpu, memory;
} utilization;

EXPORT int nvmlDeviceGetUtilizationRates(void *device, utilization *u)
{
    (void)device;
    unsigned long long ms = env_number("FAKE_NVML_DELAY_MS");
    struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
    u->gpu = 100;
    u->memory = (unsigned)env_number("FAKE_NVML_MEMORY");
    return 0;
}

/*
 * Loading and initialisation: the configuration from the environment, cuInit,
 * cuDriverGetVersion, cuGetErrorName and the cuGetProcAddress table through which every other
 * entry point is reached.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

sim_state sim;
static pthread_mutex_t sim_mutex = PTHREAD_MUTEX_INITIALIZER;

void sim_lock(void) { pthread_mutex_lock(&sim_mutex); }
void sim_unlock(void) { pthread_mutex_unlock(&sim_mutex); }

static char config_message[512];

void sim_config_refuse(const char *fmt, ...)
{
    if (sim.config_error == GCU_SUCCESS) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(config_message, sizeof config_message, fmt, ap);
        va_end(ap);
    }
    sim.ndev = 0;
    sim.config_error = GCU_ERROR_INVALID_VALUE;
}

bool sim_list_next(const char **list, char *item, size_t size)
{
    if (!**list)
        return false;
    size_t len = strcspn(*list, ","), n = len < size ? len : size - 1;
    memcpy(item, *list, n);
    item[n] = '\0';
    *list += len + ((*list)[len] == ',');
    return true;
}

static void load_devices(const char *list)
{
    const char *whole = list;
    char key[64];
    sim.ndev = 0;
    if (strcasecmp(list, "none") == 0)
        return;
    while (sim_list_next(&list, key, sizeof key)) {
        const sim_model *m = sim_model_find(key);
        if (!m) {
            sim_config_refuse("GREENCTX_SIM_DEVICES=%s: '%s' is not a simulated model; valid: "
                              "%s (comma-separated, at most %d), or none",
                              whole, key, sim_model_keys(), SIM_MAX_DEVICES);
            return;
        }
        if (sim.ndev == SIM_MAX_DEVICES) {
            sim_config_refuse("GREENCTX_SIM_DEVICES=%s: at most %d devices", whole,
                              SIM_MAX_DEVICES);
            return;
        }
        sim.dev[sim.ndev++] = m;
    }
}

static void load_config(void)
{
    sim.config_error = GCU_SUCCESS;
    config_message[0] = '\0';
    const char *env = getenv("GREENCTX_SIM_DRIVER_VERSION");
    char *end = NULL;
    long version = env && *env ? strtol(env, &end, 10) : 0;
    sim.driver_version = SIM_DEFAULT_DRIVER_VERSION;
    if (env && *env && (*end || version < 2000 || version >= 100000))
        sim_config_refuse("GREENCTX_SIM_DRIVER_VERSION=%s: a driver version is a number like "
                          "12040, 13000 or 13010 (1000 * major + 10 * minor, 2.0 and newer)",
                          env);
    else if (env && *env)
        sim.driver_version = (int)version;
    env = getenv("GREENCTX_SIM_DEVICES");
    load_devices(env && *env ? env : "h200");
    env = getenv("GREENCTX_SIM_DEFAULT_STREAM");
    sim.default_per_thread = env && strcmp(env, "per-thread") == 0;
    if (env && *env && !sim.default_per_thread && strcmp(env, "legacy") != 0)
        sim_config_refuse("GREENCTX_SIM_DEFAULT_STREAM=%s: legacy or per-thread (the default "
                          "stream of what cuGetProcAddress's flags 0 hands out)",
                          env);
    env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    long limit = env ? strtol(env, NULL, 10) : 0;
    sim.wq_limit = limit > 0 && limit <= 1024 ? (unsigned)limit : 32u;
    char why[sizeof config_message];
    if (sim_faults_reset(getenv("GREENCTX_SIM_FAIL"), why, sizeof why))
        sim_config_refuse("%s", why);
    sim.next_green_id = 1;
    sim.descs_made = 0;
    sim.configured = true;
}

void sim_configure(void)
{
    if (!sim.configured)
        load_config();
}

gcu_result sim_enter(int sym, bool need_init)
{
    sim_configure();
    gcu_result fault = sim_fault_for(sym, sim_count_call(sym));
    if (fault != GCU_SUCCESS)
        return fault;
    return need_init && !sim.initialized ? GCU_ERROR_NOT_INITIALIZED : GCU_SUCCESS;
}

gcu_result sim_cuInit(unsigned int flags)
{
    SIM_BEGIN_NOINIT(cuInit);
    if (flags != 0)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_CHECK(sim.config_error);
    sim.initialized = true;
    SIM_END();
}

gcu_result sim_cuDriverGetVersion(int *version)
{
    SIM_BEGIN_NOINIT(cuDriverGetVersion);
    if (!version)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    *version = sim.driver_version;
    SIM_END();
}

gcu_result sim_cuGetErrorName(gcu_result error, const char **name)
{
    static const struct {
        gcu_result code;
        const char *name;
    } names[] = {
        {GCU_SUCCESS, "CUDA_SUCCESS"},
        {GCU_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
        {GCU_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {GCU_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
        {GCU_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED"},
        {GCU_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
        {GCU_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
        {GCU_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
        {GCU_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
        {GCU_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
        {GCU_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
        {GCU_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
        {GCU_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"},
        {GCU_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {GCU_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT"},
        {GCU_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
        {GCU_ERROR_ASSERT, "CUDA_ERROR_ASSERT"},
        {GCU_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
        {GCU_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
        {GCU_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
        {GCU_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
        {GCU_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC"},
        {GCU_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
        {GCU_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
        {GCU_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED"},
        {GCU_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
        {GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
        {GCU_ERROR_INVALID_RESOURCE_TYPE, "CUDA_ERROR_INVALID_RESOURCE_TYPE"},
        {GCU_ERROR_INVALID_RESOURCE_CONFIGURATION, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"},
        {GCU_ERROR_STREAM_DETACHED, "CUDA_ERROR_STREAM_DETACHED"},
        {GCU_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
    };
    SIM_BEGIN_NOINIT(cuGetErrorName);
    if (!name)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    *name = NULL;
    rc = GCU_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == error) {
            *name = names[i].name;
            rc = GCU_SUCCESS;
        }
    SIM_END();
}

/* ---- cuGetProcAddress -------------------------------------------------------------------- */

typedef struct sim_proc {
    const char *name;
    int version; /* the driver version that first has the entry point */
    void *fn;
} sim_proc;

#define SIM_PROC_(name, version, required, params) {#name, version, (void *)sim_##name},
static const sim_proc procs[] = {
    GCU_DRIVER_SYMBOLS(SIM_PROC_){
        "cuGetProcAddress", GCU_VERSION_cuGetProcAddress, (void *)sim_cuGetProcAddress},
};
#undef SIM_PROC_

gcu_result sim_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                unsigned long long flags, int *symbolStatus)
{
    SIM_BEGIN_NOINIT(cuGetProcAddress);
    if (!symbol || !pfn || flags > 2 || cudaVersion > sim.driver_version)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    const sim_proc *found = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (strcmp(procs[i].name, symbol) == 0)
            found = &procs[i];
    sim_proc extra = {symbol, 0, NULL};
    if (!found && (extra.fn = sim_extra_proc(symbol, &extra.version)) != NULL)
        found = &extra;
    int status = GCU_GET_PROC_ADDRESS_SUCCESS;
    if (!found || found->version > sim.driver_version)
        status = GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    else if (found->version > cudaVersion)
        status = GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    /* Flags 1 and 2 ask for the legacy or the per-thread default stream's entry points; 0 for
     * the driver's default, which its documentation leaves open: GREENCTX_SIM_DEFAULT_STREAM
     * picks it (legacy unless set), so that callers are tested against both. */
    void *per_thread = flags == 2 || (flags == 0 && sim.default_per_thread)
                           ? sim_per_thread_proc(symbol)
                           : NULL;
    *pfn = status != GCU_GET_PROC_ADDRESS_SUCCESS ? NULL : per_thread ? per_thread : found->fn;
    if (symbolStatus)
        *symbolStatus = status;
    SIM_END();
}

/* ---- the exported names ------------------------------------------------------------------ */

GCTXSIM_API gcu_result cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                           unsigned long long flags, int *symbolStatus)
{
    return sim_cuGetProcAddress(symbol, pfn, cudaVersion, flags, symbolStatus);
}

GCTXSIM_API gcu_result cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                        unsigned long long flags, int *symbolStatus)
{
    return sim_cuGetProcAddress(symbol, pfn, cudaVersion, flags, symbolStatus);
}

GCTXSIM_API gcu_result cuDriverGetVersion(int *version) { return sim_cuDriverGetVersion(version); }

GCTXSIM_API gcu_result cuInit(unsigned int flags) { return sim_cuInit(flags); }

/* ---- reset (test API) -------------------------------------------------------------------- */

GCTXSIM_API const char *gctxsim_config_error(void)
{
    sim_lock();
    sim_configure();
    const char *message = sim.config_error == GCU_SUCCESS ? NULL : config_message;
    sim_unlock();
    return message;
}

GCTXSIM_API void gctxsim_reset(void)
{
    sim_lock();
    bool was_initialized = sim.initialized;
    sim_contexts_reset();
    sim_resources_reset();
    sim_streams_reset();
    sim_memory_reset();
    sim_kernels_reset();
    sim.epoch++;
    load_config();
    sim.initialized = was_initialized && sim.config_error == GCU_SUCCESS;
    sim_unlock();
}

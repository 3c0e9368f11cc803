/* Loading the CUDA driver at run time, resolving its entry points, the feature matrix. */
#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_DRIVER "libcuda.so.1"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gctx__driver driver;
static gctx_status load_status;
static char load_message[1024];
static int load_cuda_result;
static int driver_has_no_device;

/* "13.1" from 13010. */
static void format_version(char *out, size_t size, int version)
{
    snprintf(out, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

static void set_feature(gctx_feature feature, int available, const char *fmt, ...)
    GCTX_PRINTF(3, 4);
static void set_feature(gctx_feature feature, int available, const char *fmt, ...)
{
    gctx__feature_state *state = &driver.features[feature];
    state->available = available;
    va_list args;
    va_start(args, fmt);
    vsnprintf(state->reason, sizeof state->reason, fmt, args);
    va_end(args);
}

/* A feature that needs a driver version and one entry point (NULL: the version alone). */
static void decide_feature(gctx_feature feature, int needs_version, const char *symbol,
                           const void *entry_point)
{
    char need[16], have[16];
    format_version(need, sizeof need, needs_version);
    format_version(have, sizeof have, driver.version);
    if (driver.version < needs_version)
        set_feature(feature, 0, "needs driver %s, found %s", need, have);
    else if (symbol && !entry_point)
        set_feature(feature, 0, "symbol %s not exported by the driver", symbol);
    else
        set_feature(feature, 1, "driver %s has it (since %s)", have, need);
}

static void decide_features(void)
{
    decide_feature(GCTX_FEATURE_GREEN_CONTEXTS, 12040, "cuGreenCtxCreate",
                   (const void *)driver.cuGreenCtxCreate);
    /* Every 12.4 entry point is needed for green contexts, not just the one named above. */
    if (driver.features[GCTX_FEATURE_GREEN_CONTEXTS].available) {
#define GCTX_CHECK_BASE_(name, abi, required, params)                                       \
    if (abi == 12040 && !driver.name)                                                      \
        set_feature(GCTX_FEATURE_GREEN_CONTEXTS, 0, "symbol %s not exported by the driver",    \
                    #name);
        GCU_DRIVER_SYMBOLS(GCTX_CHECK_BASE_)
#undef GCTX_CHECK_BASE_
    }
    decide_feature(GCTX_FEATURE_GREEN_STREAMS, 12050, "cuGreenCtxStreamCreate",
                   (const void *)driver.cuGreenCtxStreamCreate);
    decide_feature(GCTX_FEATURE_CONTEXT_IDS, 12090, "cuGreenCtxGetId",
                   (const void *)driver.cuGreenCtxGetId);
    decide_feature(GCTX_FEATURE_REPORTED_SM_RULES, 13000, NULL, NULL);
    decide_feature(GCTX_FEATURE_STRUCTURED_SPLIT, 13010, "cuDevSmResourceSplit",
                   (const void *)driver.cuDevSmResourceSplit);
    decide_feature(GCTX_FEATURE_WORKQUEUES, 13010, NULL, NULL);
    decide_feature(GCTX_FEATURE_LOCALITY_DOMAINS, 13040, NULL, NULL);
}

static void fail_load(gctx_status status, int cuda_result, const char *fmt, ...)
    GCTX_PRINTF(3, 4);
static void fail_load(gctx_status status, int cuda_result, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(load_message, sizeof load_message, fmt, args);
    va_end(args);
    load_status = status;
    load_cuda_result = cuda_result;
}

typedef gcu_result (*get_proc_v1)(const char *, void **, int, unsigned long long);

static void load(void)
{
    const char *override = getenv("GREENCTX_CUDA_LIBRARY");
    const char *path = override && *override ? override : DEFAULT_DRIVER;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        fail_load(GCTX_ERROR_NO_DRIVER, 0,
                  "could not load the CUDA driver %s%s (%s): install the NVIDIA driver, set "
                  "GREENCTX_CUDA_LIBRARY to its libcuda file, or try the simulated driver "
                  "(greenctx --sim h200 info)",
                  path, override && *override ? ", named by GREENCTX_CUDA_LIBRARY" : "",
                  why ? why : "no reason given");
        return;
    }
    snprintf(driver.path, sizeof driver.path, "%s", path);

    gcu_pfn_cuGetProcAddress get_proc = (gcu_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2");
    get_proc_v1 get_proc_old = (get_proc_v1)dlsym(lib, "cuGetProcAddress");
    gcu_pfn_cuDriverGetVersion get_version =
        (gcu_pfn_cuDriverGetVersion)dlsym(lib, "cuDriverGetVersion");
    if ((!get_proc && !get_proc_old) || !get_version) {
        fail_load(GCTX_ERROR_NO_DRIVER, 0,
                  "%s is not a CUDA driver greenctx can use: it exports no cuGetProcAddress "
                  "(drivers of CUDA 11.3 and later do)",
                  path);
        dlclose(lib);
        return;
    }
    gcu_result r = get_version(&driver.version);
    if (r != GCU_SUCCESS) {
        fail_load(GCTX_ERROR_NO_DRIVER, r, "cuDriverGetVersion failed in %s: %s (%d)", path,
                  gctx__cuda_result_name(r), r);
        dlclose(lib);
        return;
    }

    char have[16];
    format_version(have, sizeof have, driver.version);
#define GCTX_RESOLVE_(name, abi, required, params)                                          \
    if (abi <= driver.version) {                                                               \
        void *fn = NULL;                                                                       \
        int symbol_status = 0;                                                                 \
        gcu_result rr = get_proc ? get_proc(#name, &fn, abi, 0, &symbol_status)            \
                                 : get_proc_old(#name, &fn, abi, 0);                       \
        if (rr == GCU_SUCCESS && fn)                                                           \
            driver.name = (gcu_pfn_##name)fn;                                                  \
        else if (required) {                                                                   \
            fail_load(GCTX_ERROR_NO_DRIVER, rr,                                                \
                      "the CUDA driver %s (%s) does not give %s at ABI version %d "            \
                      "(cuGetProcAddress returned %d, symbol status %d)",                      \
                      path, have, #name, abi, rr, symbol_status);                          \
            dlclose(lib);                                                                      \
            return;                                                                            \
        }                                                                                      \
    } else if (required) {                                                                     \
        fail_load(GCTX_ERROR_NO_DRIVER, 0,                                                     \
                  "the CUDA driver %s is %s, older than greenctx can use: %s needs %d",        \
                  path, have, #name, abi);                                                 \
        dlclose(lib);                                                                          \
        return;                                                                                \
    }
    GCU_DRIVER_SYMBOLS(GCTX_RESOLVE_)
#undef GCTX_RESOLVE_

    r = driver.cuInit(0);
    /* No device is not a load failure: the driver is there, it just counts zero devices. */
    if (r != GCU_SUCCESS && r != GCU_ERROR_NO_DEVICE) {
        fail_load(GCTX_ERROR_DRIVER, r, "cuInit failed in %s: %s (%d)", path,
                  gctx__cuda_result_name(r), r);
        dlclose(lib);
        return;
    }
    driver_has_no_device = r == GCU_ERROR_NO_DEVICE;
    decide_features();
    load_status = GCTX_SUCCESS;
}

gctx_status gctx__driver_load(const gctx__driver **out)
{
    pthread_once(&load_once, load);
    if (load_status != GCTX_SUCCESS) {
        if (load_cuda_result)
            gctx__fail_cuda(load_cuda_result, "%s", load_message);
        else
            gctx__fail(load_status, "%s", load_message);
        return load_status;
    }
    *out = &driver;
    return GCTX_SUCCESS;
}

gctx_status gctx__driver_load_green(const gctx__driver **out)
{
    gctx_status s = gctx__driver_load(out);
    if (s == GCTX_SUCCESS && !driver.features[GCTX_FEATURE_GREEN_CONTEXTS].available)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "green contexts are not available: %s",
                          driver.features[GCTX_FEATURE_GREEN_CONTEXTS].reason);
    return s;
}

int gctx__driver_has_no_device(void) { return driver_has_no_device; }

gctx_status gctx_init(void)
{
    const gctx__driver *drv;
    return gctx__driver_load(&drv);
}

gctx_status gctx_driver_version(int *version)
{
    if (!version)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "version is NULL");
    gctx_status s = gctx_init();
    if (s != GCTX_SUCCESS)
        return s;
    *version = driver.version;
    return GCTX_SUCCESS;
}

const char *gctx_driver_path(void)
{
    pthread_once(&load_once, load);
    return load_status == GCTX_SUCCESS ? driver.path : NULL;
}

static int valid_feature(gctx_feature feature)
{
    return (int)feature >= 0 && (int)feature < (int)(sizeof driver.features / sizeof driver.features[0]);
}

int gctx_feature_available(gctx_feature feature)
{
    pthread_once(&load_once, load);
    return load_status == GCTX_SUCCESS && valid_feature(feature) &&
           driver.features[feature].available;
}

const char *gctx_feature_reason(gctx_feature feature)
{
    pthread_once(&load_once, load);
    if (!valid_feature(feature))
        return "no such feature";
    if (load_status != GCTX_SUCCESS)
        return "no CUDA driver is loaded";
    return driver.features[feature].reason;
}

const char *gctx_feature_name(gctx_feature feature)
{
    switch (feature) {
#define GCTX_FEATURE_NAME_(name, value, text, version)                                          \
    case GCTX_FEATURE_##name:                                                                  \
        return text;
        GCTX_FEATURE_MAP(GCTX_FEATURE_NAME_)
#undef GCTX_FEATURE_NAME_
    default:
        return NULL;
    }
}

const char *gctx__cuda_result_name(gcu_result result)
{
    switch (result) {
#define GCTX_RESULT_NAME_(name)                                                                 \
    case GCU_##name:                                                                           \
        return "CUDA_" #name;
        GCTX_RESULT_NAME_(SUCCESS)
        GCTX_RESULT_NAME_(ERROR_INVALID_VALUE)
        GCTX_RESULT_NAME_(ERROR_OUT_OF_MEMORY)
        GCTX_RESULT_NAME_(ERROR_NOT_INITIALIZED)
        GCTX_RESULT_NAME_(ERROR_DEINITIALIZED)
        GCTX_RESULT_NAME_(ERROR_NO_DEVICE)
        GCTX_RESULT_NAME_(ERROR_INVALID_DEVICE)
        GCTX_RESULT_NAME_(ERROR_INVALID_IMAGE)
        GCTX_RESULT_NAME_(ERROR_INVALID_CONTEXT)
        GCTX_RESULT_NAME_(ERROR_INVALID_PTX)
        GCTX_RESULT_NAME_(ERROR_INVALID_HANDLE)
        GCTX_RESULT_NAME_(ERROR_NOT_FOUND)
        GCTX_RESULT_NAME_(ERROR_NOT_READY)
        GCTX_RESULT_NAME_(ERROR_CONTEXT_IS_DESTROYED)
        GCTX_RESULT_NAME_(ERROR_NOT_PERMITTED)
        GCTX_RESULT_NAME_(ERROR_NOT_SUPPORTED)
        GCTX_RESULT_NAME_(ERROR_STREAM_CAPTURE_UNSUPPORTED)
        GCTX_RESULT_NAME_(ERROR_INVALID_RESOURCE_TYPE)
        GCTX_RESULT_NAME_(ERROR_INVALID_RESOURCE_CONFIGURATION)
        GCTX_RESULT_NAME_(ERROR_STREAM_DETACHED)
        GCTX_RESULT_NAME_(ERROR_UNKNOWN)
#undef GCTX_RESULT_NAME_
    default:
        break;
    }
    const char *name = NULL;
    if (load_status == GCTX_SUCCESS && driver.cuGetErrorName &&
        driver.cuGetErrorName(result, &name) == GCU_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNRECOGNISED";
}

gctx_status gctx__push_context(const gctx__driver *drv, CUcontext ctx)
{
    gcu_result r = drv->cuCtxPushCurrent(ctx);
    return r == GCU_SUCCESS ? GCTX_SUCCESS : gctx__fail_cuda(r, "cuCtxPushCurrent");
}

gctx_status gctx__pop_context(const gctx__driver *drv)
{
    CUcontext popped;
    gcu_result r = drv->cuCtxPopCurrent(&popped);
    return r == GCU_SUCCESS ? GCTX_SUCCESS : gctx__fail_cuda(r, "cuCtxPopCurrent");
}

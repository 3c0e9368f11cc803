/* Loading the CUDA driver at run time, resolving its entry points, the feature matrix. */
#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define DEFAULT_DRIVER "libcuda.so.1"

/* Loaded by the first call that succeeds: a failed attempt leaves nothing behind. `loaded` is
 * stored (release) once the table is complete, so a reader that sees it sees the whole. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int loaded;
static gctx__driver driver;
static int driver_has_no_device;
/* The loading driver's version as people write it ("13.1"), for messages. */
static char have[16];

/* "13.1" from 13010. */
static void format_version(char *out, size_t size, int version)
{
    snprintf(out, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* An entry point: name, ABI version asked of cuGetProcAddress, required, place in driver. */
typedef struct symbol_row {
    const char *name;
    int abi;
    int required;
    size_t offset;
} symbol_row;

static const symbol_row symbols[] = {
#define GCTX_SYMBOL_ROW_(name, abi, required, params)                                          \
    {#name, abi, required, offsetof(gctx__driver, name)},
    GCU_LIBRARY_SYMBOLS(GCTX_SYMBOL_ROW_)
#undef GCTX_SYMBOL_ROW_
};

static void *entry_point(size_t offset)
{
    void *fn;
    memcpy(&fn, (const char *)&driver + offset, sizeof fn);
    return fn;
}

#define FEATURES (sizeof driver.features / sizeof driver.features[0])

static const struct {
    const char *name;
    int version;
} features[] = {
#define GCTX_FEATURE_ROW_(name, value, text, version) [value] = {text, version},
    GCTX_FEATURE_MAP(GCTX_FEATURE_ROW_)
#undef GCTX_FEATURE_ROW_
};

/* The entry point some features need besides their version. */
static const struct {
    const char *name;
    size_t offset;
} feature_symbols[FEATURES] = {
#define GCTX_FEATURE_SYMBOL_(feature, symbol)                                                   \
    [GCTX_FEATURE_##feature] = {#symbol, offsetof(gctx__driver, symbol)},
    GCTX_FEATURE_SYMBOL_(GREEN_CONTEXTS, cuGreenCtxCreate)
    GCTX_FEATURE_SYMBOL_(GREEN_STREAMS, cuGreenCtxStreamCreate)
    GCTX_FEATURE_SYMBOL_(CONTEXT_IDS, cuGreenCtxGetId)
    GCTX_FEATURE_SYMBOL_(STRUCTURED_SPLIT, cuDevSmResourceSplit)
#undef GCTX_FEATURE_SYMBOL_
};

GCTX_PRINTF(3, 4)
static void set_feature(gctx_feature feature, int available, const char *fmt, ...)
{
    gctx__feature_state *state = &driver.features[feature];
    state->available = available;
    va_list args;
    va_start(args, fmt);
    vsnprintf(state->reason, sizeof state->reason, fmt, args);
    va_end(args);
}

/* A feature needs its version from the map and, for some, one entry point. */
static void decide_features(void)
{
    for (unsigned f = 0; f < FEATURES; f++) {
        char need[16];
        format_version(need, sizeof need, features[f].version);
        const char *symbol = feature_symbols[f].name;
        driver.features[f].reached = driver.version >= features[f].version;
        if (!gctx__driver_reaches(&driver, f))
            set_feature(f, 0, "needs driver %s, found %s", need, have);
        else if (symbol && !entry_point(feature_symbols[f].offset))
            set_feature(f, 0, "symbol %s not exported by the driver", symbol);
        else
            set_feature(f, 1, "driver %s has it (since %s)", have, need);
    }
    /* Every entry point of the green contexts' first version is needed for them. */
    if (!driver.features[GCTX_FEATURE_GREEN_CONTEXTS].available)
        return;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
        if (symbols[i].abi == features[GCTX_FEATURE_GREEN_CONTEXTS].version &&
            !entry_point(symbols[i].offset))
            set_feature(GCTX_FEATURE_GREEN_CONTEXTS, 0, "symbol %s not exported by the driver",
                        symbols[i].name);
}

/* With a CUresult the driver is there and answered with an error: worth another call. */
GCTX_PRINTF(3, 4)
static gctx_status fail_load(gctx_status status, int cuda_result, const char *fmt, ...)
{
    char what[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    if (!cuda_result)
        return gctx__fail(status, "%s", what);
    gctx__check_cuda(cuda_result, "%s", what);
    gctx__append_error("greenctx tries again on the next call");
    return status;
}

typedef gcu_result (*get_proc_v1)(const char *, void **, int, unsigned long long);

/* Resolves the table's entry points at their ABI versions, never above the driver's own. */
static gctx_status resolve_symbols(void *lib, const char *path)
{
    gcu_pfn_cuGetProcAddress get_proc = (gcu_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2");
    get_proc_v1 get_proc_old = (get_proc_v1)dlsym(lib, "cuGetProcAddress");
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        const symbol_row *row = &symbols[i];
        if (row->abi > driver.version) {
            if (row->required)
                return fail_load(GCTX_ERROR_NO_DRIVER, 0,
                                 "the CUDA driver %s is %s, older than greenctx can use: %s "
                                 "needs %d",
                                 path, have, row->name, row->abi);
            continue;
        }
        void *fn = NULL;
        int symbol_status = 0;
        gcu_result r = get_proc ? get_proc(row->name, &fn, row->abi, 0, &symbol_status)
                                : get_proc_old(row->name, &fn, row->abi, 0);
        if (r == GCU_SUCCESS && fn)
            memcpy((char *)&driver + row->offset, &fn, sizeof fn);
        else if (row->required)
            return fail_load(GCTX_ERROR_NO_DRIVER, r,
                             "the CUDA driver %s (%s) does not give %s at ABI version %d "
                             "(cuGetProcAddress returned %d, symbol status %d)",
                             path, have, row->name, row->abi, r, symbol_status);
    }
    return GCTX_SUCCESS;
}

static gctx_status load_from(void *lib, const char *path)
{
    gcu_pfn_cuDriverGetVersion get_version =
        (gcu_pfn_cuDriverGetVersion)dlsym(lib, "cuDriverGetVersion");
    if ((!dlsym(lib, "cuGetProcAddress_v2") && !dlsym(lib, "cuGetProcAddress")) || !get_version)
        return fail_load(GCTX_ERROR_NO_DRIVER, 0,
                         "%s is not a CUDA driver greenctx can use: it exports no "
                         "cuGetProcAddress (drivers of CUDA 11.3 and later do)",
                         path);
    gcu_result r = get_version(&driver.version);
    if (r != GCU_SUCCESS)
        return fail_load(GCTX_ERROR_NO_DRIVER, r, "cuDriverGetVersion failed in %s", path);
    format_version(have, sizeof have, driver.version);
    GCTX_TRY(resolve_symbols(lib, path));
    /* No device is not a load failure: the driver is there and counts zero devices. */
    if ((r = driver.cuInit(0)) != GCU_SUCCESS && r != GCU_ERROR_NO_DEVICE)
        return fail_load(GCTX_ERROR_DRIVER, r, "cuInit failed in %s", path);
    driver_has_no_device = r == GCU_ERROR_NO_DEVICE;
    decide_features();
    GCTX__INFO("driver %s loaded from %s%s", have, path,
               driver_has_no_device ? " (it sees no device)" : "");
    for (unsigned f = 0; f < FEATURES; f++)
        GCTX__DEBUG("feature %s: %s, %s", features[f].name,
                    driver.features[f].available ? "on" : "off", driver.features[f].reason);
    return GCTX_SUCCESS;
}

/* One attempt, under load_lock: on failure nothing stays loaded. */
static gctx_status load_attempt(void)
{
    memset(&driver, 0, sizeof driver);
    GCTX_TRY(gctx__log_configure());
    const char *override = getenv("GREENCTX_CUDA_LIBRARY");
    const char *path = override && *override ? override : DEFAULT_DRIVER;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        return fail_load(GCTX_ERROR_NO_DRIVER, 0,
                         "could not load the CUDA driver %s%s (%s): install the NVIDIA driver, "
                         "set GREENCTX_CUDA_LIBRARY to its libcuda file (or to "
                         "libgreenctx_sim.so, the simulated driver)",
                         path, override && *override ? ", named by GREENCTX_CUDA_LIBRARY" : "",
                         why ? why : "no reason given");
    }
    snprintf(driver.path, sizeof driver.path, "%s", path);
    gctx_status s = load_from(lib, path);
    if (s != GCTX_SUCCESS) {
        dlclose(lib);
        memset(&driver, 0, sizeof driver);
    }
    return s;
}

static gctx_status ensure_loaded(void)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire))
        return GCTX_SUCCESS;
    pthread_mutex_lock(&load_lock);
    gctx_status s = GCTX_SUCCESS;
    if (!atomic_load_explicit(&loaded, memory_order_relaxed)) {
        s = load_attempt();
        if (s == GCTX_SUCCESS)
            atomic_store_explicit(&loaded, 1, memory_order_release);
    }
    pthread_mutex_unlock(&load_lock);
    return s;
}

/* For the calls that report rather than fail: the caller's last error left as it was. */
static int is_loaded(void)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire))
        return 1;
    gctx__error_state saved;
    gctx__error_save(&saved);
    int ok = ensure_loaded() == GCTX_SUCCESS;
    gctx__error_restore(&saved);
    return ok;
}

gctx_status gctx__driver_load(const gctx__driver **out)
{
    GCTX_TRY(ensure_loaded());
    GCTX_TRY(gctx__fault_check());
    *out = &driver;
    return GCTX_SUCCESS;
}

int gctx__driver_loaded(const gctx__driver **out)
{
    if (!atomic_load_explicit(&loaded, memory_order_acquire))
        return 0;
    *out = &driver;
    return 1;
}

gctx_status gctx__driver_load_green(const gctx__driver **out)
{
    GCTX_TRY(gctx__driver_load(out));
    if (!driver.features[GCTX_FEATURE_GREEN_CONTEXTS].available)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "green contexts are not available: %s",
                          driver.features[GCTX_FEATURE_GREEN_CONTEXTS].reason);
    return GCTX_SUCCESS;
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
    GCTX_TRY(gctx_init());
    *version = driver.version;
    return GCTX_SUCCESS;
}

const char *gctx_driver_path(void)
{
    return is_loaded() ? driver.path : NULL;
}

static int valid_feature(gctx_feature feature)
{
    return (int)feature >= 0 && (int)feature < (int)FEATURES;
}

int gctx_feature_available(gctx_feature feature)
{
    return is_loaded() && valid_feature(feature) && driver.features[feature].available;
}

const char *gctx_feature_reason(gctx_feature feature)
{
    if (!valid_feature(feature))
        return "no such feature";
    if (!is_loaded())
        return "no CUDA driver is loaded";
    return driver.features[feature].reason;
}

const char *gctx_feature_name(gctx_feature feature)
{
    return valid_feature(feature) ? features[feature].name : NULL;
}

const char *gctx__cuda_result_name(gcu_result result)
{
    switch (result) {
#define GCTX_RESULT_NAME_(name, value, sticky)                                                  \
    case GCU_##name:                                                                           \
        return "CUDA_" #name;
        GCU_RESULTS(GCTX_RESULT_NAME_)
#undef GCTX_RESULT_NAME_
    default:
        break;
    }
    const char *name = NULL;
    if (atomic_load_explicit(&loaded, memory_order_acquire) && driver.cuGetErrorName &&
        driver.cuGetErrorName(result, &name) == GCU_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNRECOGNISED";
}

gctx_status gctx__push_context(const gctx__driver *drv, CUcontext ctx)
{
    return gctx__check_cuda(drv->cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
}

gctx_status gctx__pop_context(const gctx__driver *drv, gctx_status status)
{
    CUcontext popped;
    gcu_result r = drv->cuCtxPopCurrent(&popped);
    if (r == GCU_SUCCESS)
        return status;
    /* The caller's context must not stay buried under ours: try once more. */
    int restored = drv->cuCtxPopCurrent(&popped) == GCU_SUCCESS;
    if (status == GCTX_SUCCESS)
        status = gctx__check_cuda(r, "cuCtxPopCurrent");
    else
        gctx__append_error("then cuCtxPopCurrent failed: %s (%d)", gctx__cuda_result_name(r), r);
    gctx__append_error(restored ? "a second pop restored this thread's current context"
                                : "greenctx's context stays current on this thread");
    return status;
}

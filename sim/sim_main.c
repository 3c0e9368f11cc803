/* Loading and initialisation: the environment's configuration, cuInit, cuGetProcAddress; the
 * gctxsim_* functions tests use to look inside the simulator (greenctx_sim.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

#define SIM_DEFAULT_DRIVER_VERSION 13000
/* A device-to-device copy's rate, of the H200's order (a copy kernel moved 3.9 TB/s of HBM
 * traffic, half of it read); tests slow it down to see copies take time. */
#define SIM_DEFAULT_COPY_GBPS 1950.0

sim_state sim;
static pthread_mutex_t sim_mutex = PTHREAD_MUTEX_INITIALIZER;

void sim_lock(void) { pthread_mutex_lock(&sim_mutex); }
void sim_unlock(void) { pthread_mutex_unlock(&sim_mutex); }

static char config_message[512];

/* A configuration the simulator refuses: cuInit fails and gctxsim_config_error() says why. */
static void sim_config_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sim_config_refuse(const char *fmt, ...)
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
                              whole, key, gctxsim_models(), SIM_MAX_DEVICES);
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
    env = getenv("GREENCTX_SIM_COPY_GBPS");
    double gbps = env && *env ? strtod(env, &end) : SIM_DEFAULT_COPY_GBPS;
    if (env && *env && (*end || !(gbps > 0 && gbps <= 1e6))) {
        sim_config_refuse("GREENCTX_SIM_COPY_GBPS=%s: the rate of an async copy in GB/s, a "
                          "positive number like 0.1 or 1950",
                          env);
        gbps = SIM_DEFAULT_COPY_GBPS;
    }
    sim.copy_bytes_per_ns = gbps; /* GB/s are bytes per ns */
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
    gcu_result fault = sim_count_call(sym);
    if (fault != GCU_SUCCESS)
        return fault;
    return need_init && !sim.initialized ? GCU_ERROR_NOT_INITIALIZED : GCU_SUCCESS;
}

gcu_result sim_cuInit(unsigned int flags)
{
    SIM_BEGIN_NOINIT(cuInit, flags != 0);
    SIM_CHECK(sim.config_error);
    sim.initialized = true;
    SIM_END();
}

gcu_result sim_cuDriverGetVersion(int *version)
{
    SIM_BEGIN_NOINIT(cuDriverGetVersion, !version);
    *version = sim.driver_version;
    SIM_END();
}

gcu_result sim_cuGetErrorName(gcu_result error, const char **name)
{
    SIM_BEGIN_NOINIT(cuGetErrorName, !name);
    switch (error) {
#define SIM_RESULT_NAME_(result, value, sticky)                                                 \
    case GCU_##result:                                                                         \
        *name = "CUDA_" #result;                                                               \
        break;
        GCU_RESULTS(SIM_RESULT_NAME_)
#undef SIM_RESULT_NAME_
    default:
        *name = NULL;
        rc = GCU_ERROR_INVALID_VALUE;
    }
    SIM_END();
}

/* ---- cuGetProcAddress -------------------------------------------------------------------- */

typedef struct sim_proc {
    const char *name;
    int version; /* the driver version that first has the entry point */
    void *fn;
} sim_proc;

static const sim_proc *proc_find(const sim_proc *table, size_t n, const char *symbol)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, symbol) == 0)
            return &table[i];
    return NULL;
}

/* The per-thread default stream's entry points (cuda.h's _ptsz names): NULL is the calling
 * thread's per-thread stream. Only those with a stream that programs under `greenctx run`
 * launch or wait on; the others are the same function in both modes, as for the driver. */
static CUstream per_thread(CUstream s) { return s ? s : SIM_STREAM_PER_THREAD; }

/* name's _ptsz function: its params, and the arguments it passes on (per_thread(stream)). */
#define SIM_PTSZ_(name, params, args)                                                           \
    static gcu_result name##_ptsz params { return sim_##name args; }
SIM_PTSZ_(cuLaunchKernel,
          (gcu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
           unsigned bz, unsigned shmem, CUstream stream, void **params, void **extra),
          (fn, gx, gy, gz, bx, by, bz, shmem, per_thread(stream), params, extra))
SIM_PTSZ_(cuEventRecord, (CUevent event, CUstream stream), (event, per_thread(stream)))
SIM_PTSZ_(cuStreamSynchronize, (CUstream stream), (per_thread(stream)))
SIM_PTSZ_(cuStreamQuery, (CUstream stream), (per_thread(stream)))
SIM_PTSZ_(cuMemcpyAsync, (gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream),
          (dst, src, bytes, per_thread(stream)))
SIM_PTSZ_(cuMemcpyDtoDAsync,
          (gcu_deviceptr dst, gcu_deviceptr src, size_t bytes, CUstream stream),
          (dst, src, bytes, per_thread(stream)))
#undef SIM_PTSZ_

#define SIM_PTSZ_PROC_(name) {#name, 0, (void *)name##_ptsz}
static const sim_proc ptsz_procs[] = {
    SIM_PTSZ_PROC_(cuLaunchKernel),      SIM_PTSZ_PROC_(cuEventRecord),
    SIM_PTSZ_PROC_(cuStreamSynchronize), SIM_PTSZ_PROC_(cuStreamQuery),
    SIM_PTSZ_PROC_(cuMemcpyAsync),       SIM_PTSZ_PROC_(cuMemcpyDtoDAsync),
};
#undef SIM_PTSZ_PROC_

/* cuCtxCreate, which the preload wraps: offered so that tests see it refused. Makes nothing. */
static gcu_result sim_cuCtxCreate(CUcontext *ctx, unsigned int flags, gcu_device dev)
{
    (void)flags, (void)dev;
    return ctx ? GCU_ERROR_NOT_SUPPORTED : GCU_ERROR_INVALID_VALUE;
}

#define SIM_PROC_(name, version, required, params) {#name, version, (void *)sim_##name},
static const sim_proc procs[] = {
    GCU_DRIVER_SYMBOLS(SIM_PROC_){
        "cuGetProcAddress", GCU_VERSION_cuGetProcAddress, (void *)sim_cuGetProcAddress},
    {"cuCtxCreate", 3020, (void *)sim_cuCtxCreate},
};
#undef SIM_PROC_

gcu_result sim_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                unsigned long long flags, int *symbolStatus)
{
    SIM_BEGIN_NOINIT(cuGetProcAddress,
                     !symbol || !pfn || flags > 2 || cudaVersion > sim.driver_version);
    const sim_proc *found = proc_find(procs, sizeof procs / sizeof procs[0], symbol);
    int status = GCU_GET_PROC_ADDRESS_SUCCESS;
    if (!found || found->version > sim.driver_version)
        status = GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    else if (found->version > cudaVersion)
        status = GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    /* Flags 1 and 2 ask for the legacy or the per-thread entry points; 0 for the driver's
     * default, left open by its documentation: GREENCTX_SIM_DEFAULT_STREAM picks it, so that
     * callers are tested against both. */
    const sim_proc *ptsz = NULL;
    if (flags == 2 || (flags == 0 && sim.default_per_thread))
        ptsz = proc_find(ptsz_procs, sizeof ptsz_procs / sizeof ptsz_procs[0], symbol);
    *pfn = status != GCU_GET_PROC_ADDRESS_SUCCESS ? NULL : (ptsz ? ptsz : found)->fn;
    if (symbolStatus)
        *symbolStatus = status;
    SIM_END();
}

/* ---- the exported names ------------------------------------------------------------------ */

GCTXSIM_API gcu_result cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *)
    __attribute__((alias("sim_cuGetProcAddress")));
GCTXSIM_API gcu_result cuGetProcAddress(const char *, void **, int, unsigned long long, int *)
    __attribute__((alias("sim_cuGetProcAddress")));
GCTXSIM_API gcu_result cuDriverGetVersion(int *) __attribute__((alias("sim_cuDriverGetVersion")));
GCTXSIM_API gcu_result cuInit(unsigned int) __attribute__((alias("sim_cuInit")));

/* ---- the test API ------------------------------------------------------------------------ */

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

static int greens_live(void) { return sim_pool_live(&sim_greens, NULL); }

GCTXSIM_API int gctxsim_live_objects(const char *kind)
{
    /* "all" is their sum; "desc" counts the descriptors made, which are never destroyed. */
    static const struct {
        const char *kind;
        int (*live)(void);
    } kinds[] = {{"green_ctx", greens_live}, {"stream", sim_streams_live},
                 {"event", sim_events_live}, {"primary_ctx", sim_primary_refs},
                 {"module", sim_modules_live}, {"memory", sim_memory_live}};
    if (!kind)
        return -1;
    bool all = strcmp(kind, "all") == 0;
    sim_lock();
    int n = all ? 0 : strcmp(kind, "desc") == 0 ? sim.descs_made : -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (all || strcmp(kind, kinds[i].kind) == 0)
            n = (all ? n : 0) + kinds[i].live();
    sim_unlock();
    return n;
}

static int copy_ids(sim_smset sms, unsigned *ids, int capacity)
{
    unsigned all[SIM_MAX_SMS];
    unsigned n = sim_set_ids(&sms, all);
    for (unsigned i = 0; ids && i < n && (int)i < capacity; i++)
        ids[i] = all[i];
    return (int)n;
}

GCTXSIM_API int gctxsim_resource_sm_ids(const void *resource, unsigned *ids, int capacity)
{
    sim_lock();
    sim_res r;
    int n = sim_res_read(resource, &r) == GCU_SUCCESS && r.type == GCU_DEV_RESOURCE_TYPE_SM
                ? copy_ids(r.sms, ids, capacity)
                : -1;
    sim_unlock();
    return n;
}

GCTXSIM_API int gctxsim_green_ctx_sm_ids(CUgreenCtx ctx, unsigned *ids, int capacity)
{
    sim_lock();
    const sim_green *g = sim_green_get(ctx);
    int n = g ? copy_ids(g->sms, ids, capacity) : -1;
    sim_unlock();
    return n;
}

GCTXSIM_API int gctxsim_stream_sm_ids(CUstream stream, unsigned *ids, int capacity)
{
    sim_lock();
    sim_ctx c;
    int n = sim_stream_ctx(stream, &c) == GCU_SUCCESS ? copy_ids(sim_ctx_sms(&c), ids, capacity)
                                                      : -1;
    sim_unlock();
    return n;
}

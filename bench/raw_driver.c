/* Raw driver calls outside the library: see raw_driver.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "raw_driver.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int loaded; /* stored (release) once table is complete */
static raw_driver table;

static const struct {
    const char *name;
    int abi; /* its GCU_VERSION_ */
    int required;
    size_t offset;
} rows[] = {
#define RAW_DRIVER_ROW_(name, version, required, params)                                        \
    {#name, version, required, offsetof(raw_driver, name)},
    GCU_DRIVER_SYMBOLS(RAW_DRIVER_ROW_)
#undef RAW_DRIVER_ROW_
};

static int resolve(char *why, size_t why_size)
{
    int version = 0;
    if (gctx_init() != GCTX_SUCCESS || gctx_driver_version(&version) != GCTX_SUCCESS) {
        snprintf(why, why_size, "%s", gctx_last_error());
        return -1;
    }
    /* The file is loaded already: RTLD_NOLOAD hands back that same library (its state, its
     * handles), never a second copy. The reference is kept for the process's life. */
    const char *path = gctx_driver_path();
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    gcu_pfn_cuGetProcAddress get_proc =
        lib ? (gcu_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!get_proc) {
        snprintf(why, why_size, "could not reopen the driver %s for raw calls: %s",
                 path ? path : "(none)", lib ? "no cuGetProcAddress_v2" : dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        void *fn = NULL;
        if (rows[i].abi <= version)
            get_proc(rows[i].name, &fn, rows[i].abi, 0, NULL);
        if (!fn && rows[i].required) {
            snprintf(why, why_size, "the driver %s does not give %s at ABI version %d", path,
                     rows[i].name, rows[i].abi);
            return -1;
        }
        memcpy((char *)&table + rows[i].offset, &fn, sizeof fn);
    }
    return 0;
}

const raw_driver *raw_driver_load(char *why, size_t why_size)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire))
        return &table;
    pthread_mutex_lock(&lock);
    int ok = atomic_load_explicit(&loaded, memory_order_relaxed) || resolve(why, why_size) == 0;
    if (ok)
        atomic_store_explicit(&loaded, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
    return ok ? &table : NULL;
}

const char *raw_result_name(gcu_result r)
{
    const char *name = NULL;
    if (atomic_load_explicit(&loaded, memory_order_acquire) &&
        table.cuGetErrorName(r, &name) == GCU_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNRECOGNISED";
}

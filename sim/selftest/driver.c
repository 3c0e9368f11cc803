/* The simulated driver, loaded and reached as greenctx reaches it, and the check counter. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "selftest.h"

selftest_driver D;
gcu_pfn_cuGetProcAddress get_proc;
#define HOOK_(name, symbol) __typeof__(symbol) *name;
SELFTEST_HOOKS(HOOK_)
#undef HOOK_

int passed, failed;

void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

void resolve(void)
{
    int version = 0;
    D.cuDriverGetVersion = NULL;
    get_proc("cuDriverGetVersion", (void **)&D.cuDriverGetVersion, 2020, 0, NULL);
    D.cuDriverGetVersion(&version);
#define X(name, ver, required, params)                                                          \
    D.name = NULL;                                                                              \
    if (ver <= version)                                                                         \
        get_proc(#name, (void **)&D.name, ver, 0, NULL);
    GCU_DRIVER_SYMBOLS(X)
#undef X
}

void configure(const char *devices, const char *version, const char *faults)
{
    setenv("GREENCTX_SIM_DEVICES", devices, 1);
    setenv("GREENCTX_SIM_DRIVER_VERSION", version, 1);
    if (faults)
        setenv("GREENCTX_SIM_FAIL", faults, 1);
    else
        unsetenv("GREENCTX_SIM_FAIL");
    reset();
    resolve();
    D.cuInit(0);
}

void load(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
#define LOAD_(name, symbol)                                                                     \
    if (!(*(void **)&name = dlsym(lib, #symbol))) {                                             \
        fprintf(stderr, "%s lacks %s\n", path, #symbol);                                        \
        exit(2);                                                                                \
    }
    LOAD_(get_proc, cuGetProcAddress_v2)
    SELFTEST_HOOKS(LOAD_)
#undef LOAD_
    check(dlsym(lib, "sim_cuStreamCreate") == NULL && dlsym(lib, "cuStreamCreate") == NULL,
          "internal entry points are not exported");
}

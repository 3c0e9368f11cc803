/* The simulated driver, loaded and reached as greenctx reaches it, and the check counter. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "selftest.h"

selftest_driver D;
gcu_pfn_cuGetProcAddress get_proc;
int (*live)(const char *);
int (*res_ids)(const void *, unsigned *, int);
int (*green_ids)(CUgreenCtx, unsigned *, int);
int (*stream_ids)(CUstream, unsigned *, int);
long (*calls)(const char *);
void (*reset)(void);
void (*fail_after)(const char *, int, int);
const char *(*config_error)(void);
int (*kernel_model)(const char *, gctxsim_work_fn, void *);
int (*last_launch)(unsigned long long *, unsigned long long *);
long (*default_stream_calls)(const char *, CUstream);

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
    *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
    *(void **)&live = dlsym(lib, "gctxsim_live_objects");
    *(void **)&res_ids = dlsym(lib, "gctxsim_resource_sm_ids");
    *(void **)&green_ids = dlsym(lib, "gctxsim_green_ctx_sm_ids");
    *(void **)&stream_ids = dlsym(lib, "gctxsim_stream_sm_ids");
    *(void **)&calls = dlsym(lib, "gctxsim_calls");
    *(void **)&reset = dlsym(lib, "gctxsim_reset");
    *(void **)&fail_after = dlsym(lib, "gctxsim_fail_after");
    *(void **)&config_error = dlsym(lib, "gctxsim_config_error");
    *(void **)&kernel_model = dlsym(lib, "gctxsim_kernel_model");
    *(void **)&last_launch = dlsym(lib, "gctxsim_last_launch");
    *(void **)&default_stream_calls = dlsym(lib, "gctxsim_default_stream_calls");
    if (!get_proc || !live || !res_ids || !green_ids || !stream_ids || !calls || !reset ||
        !fail_after || !config_error || !kernel_model || !last_launch || !default_stream_calls) {
        fprintf(stderr, "%s lacks an exported symbol\n", path);
        exit(2);
    }
    check(dlsym(lib, "sim_cuStreamCreate") == NULL && dlsym(lib, "cuStreamCreate") == NULL,
          "internal entry points are not exported");
}

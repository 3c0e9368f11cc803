/* The test harness's main() and driver helpers (see harness.h). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>

#include "harness.h"

#define MAX_TESTS 256

static struct {
    const char *name;
    gt_test_fn fn;
} tests[MAX_TESTS];
static int nb_tests;
static char skip_reason[512];
int gt_state;

void gt_register(const char *name, gt_test_fn fn)
{
    if (nb_tests == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests in one binary\n", MAX_TESTS);
        abort();
    }
    tests[nb_tests].name = name;
    tests[nb_tests].fn = fn;
    nb_tests++;
}

void gt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    printf("#   %s:%d: ", file, line);
    vprintf(fmt, args);
    printf("\n");
    va_end(args);
    gt_state = 1;
}

void gt_skip(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(skip_reason, sizeof skip_reason, fmt, args);
    va_end(args);
    if (gt_state == 0)
        gt_state = 2;
}

static int selected(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < nb_tests; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        int known = 0;
        for (int t = 0; t < nb_tests; t++)
            known |= !strcmp(argv[i], tests[t].name);
        if (!known) {
            fprintf(stderr, "%s: no test named %s (--list shows them)\n", argv[0], argv[i]);
            return 1;
        }
    }
    int n = 0, passed = 0, failed = 0, skipped = 0;
    for (int t = 0; t < nb_tests; t++) {
        if (!selected(argc, argv, tests[t].name))
            continue;
        n++;
        gt_state = 0;
        skip_reason[0] = '\0';
        fflush(stdout);
        tests[t].fn();
        if (gt_state == 1) {
            printf("not ok %d %s\n", n, tests[t].name);
            failed++;
        } else if (gt_state == 2) {
            printf("ok %d %s # SKIP %s\n", n, tests[t].name, skip_reason);
            skipped++;
        } else {
            printf("ok %d %s\n", n, tests[t].name);
            passed++;
        }
        fflush(stdout);
    }
    printf("1..%d\n# passed %d, failed %d, skipped %d\n", n, passed, failed, skipped);
    if (failed)
        return 1;
    return passed ? 0 : 77;
}

void *gt_sim_symbol(const char *name)
{
    const char *path = getenv("GREENCTX_CUDA_LIBRARY");
    if (!path || !*path)
        return NULL;
    /* The library has loaded it already (or will): this gets the same handle. The reference
     * is kept for the process's life, like the library's. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    return lib ? dlsym(lib, name) : NULL;
}

int gt_on_sim(void) { return gt_sim_symbol("gctxsim_live_objects") != NULL; }

void gt_require_sim(int driver_version, const char *devices)
{
    if (!gt_on_sim()) {
        gt_skip("needs the simulated driver (GREENCTX_CUDA_LIBRARY names no simulator)");
        return;
    }
    const char *v = getenv("GREENCTX_SIM_DRIVER_VERSION");
    int have = v && *v ? atoi(v) : 13000; /* the simulator's default */
    if (driver_version && have != driver_version) {
        gt_skip("needs GREENCTX_SIM_DRIVER_VERSION=%d (this run has %d)", driver_version, have);
        return;
    }
    const char *d = getenv("GREENCTX_SIM_DEVICES");
    if (devices && (!d || strcmp(d, devices) != 0))
        gt_skip("needs GREENCTX_SIM_DEVICES=%s (this run has %s)", devices, d ? d : "unset");
}

void gt_require_device(void)
{
    int count = 0;
    if (gctx_init() != GCTX_SUCCESS) {
        gt_skip("no CUDA driver: %s", gctx_last_error());
        return;
    }
    if (gctx_device_count(&count) != GCTX_SUCCESS || count < 1)
        gt_skip("no CUDA device");
}

int gt_sim_live(const char *kind)
{
    int (*live)(const char *) = (int (*)(const char *))gt_sim_symbol("gctxsim_live_objects");
    return live ? live(kind) : -1;
}

long gt_sim_calls(const char *symbol)
{
    long (*calls)(const char *) = (long (*)(const char *))gt_sim_symbol("gctxsim_calls");
    return calls ? calls(symbol) : -1;
}

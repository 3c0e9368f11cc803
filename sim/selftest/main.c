/*
 * sim_selftest LIBRARY TESTDATA_DIR
 *
 * Loads the simulated driver as greenctx does (dlopen, then cuGetProcAddress_v2 for every
 * entry point) and checks two things:
 *  1. fidelity: every line of the .txt files in TESTDATA_DIR is a measurement of the real H200 driver; the
 *     same operation is run on the simulator, printed in the same format and compared as text;
 *  2. behaviour the measurements do not cover: version gating, 13.1+ splits, workqueues,
 *     locality, faults, handle validation, kernels registered with a cost model, co-residency
 *     (occupancy, cooperative launches, persistent grids), kernels that take time and the
 *     waits for them, the per-thread default stream's entry points, threads and live-object
 *     accounting.
 * Ends with "sim_reproduces_h200: N passed, M failed" and exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "selftest.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBRARY TESTDATA_DIR\n", argv[0]);
        return 2;
    }
    setenv("GREENCTX_SIM_DEVICES", "h200", 1);
    setenv("GREENCTX_SIM_DRIVER_VERSION", "13000", 1);
    unsetenv("GREENCTX_SIM_FAIL");
    load(argv[1]);
    void *fn = NULL;
    get_proc("cuDeviceGetCount", &fn, 2000, 0, NULL);
    int count;
    check(fn && ((gcu_pfn_cuDeviceGetCount)fn)(&count) == GCU_ERROR_NOT_INITIALIZED,
          "calls before cuInit");
    resolve();
    check(D.cuInit(0) == 0, "cuInit");

    replay(argv[2], "h200-split-sweep.txt", sweep_handler);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-driver-580-probe.txt", probe_line);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-aggregation.txt", aggregation_line);
    configure("h200", "13000", NULL);
    replay(argv[2], "h200-context-identity.txt", identity_line);

    check_loading();
    check_structured_split();
    check_errors_and_faults();
    check_kernel_model();
    check_co_residency();
    check_waits();
    check_threads();

    printf("sim_reproduces_h200: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

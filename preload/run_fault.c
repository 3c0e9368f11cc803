/* A program whose context died of a sticky fault. Under MPS one client's fatal fault reaches
 * every client, so it may be another tenant's: the claims registry names who faulted first.
 * The program's error and exit status pass through; this adds one line on stderr. */
#include <stdio.h>

#include "run_preload.h"

typedef cu_result (*cu_stream_query_fn)(CUstream stream);

void run_fault_seen(run_device *d, cu_result result)
{
    static atomic_int reported;
    if (!gctx_cuda_result_is_sticky(result) || !d || !d->joined.claim ||
        atomic_exchange(&reported, 1))
        return;
    run_inside++;
    gctx_status s = gctx_claim_report_fault(d->joined.claim, result);
    if (s == GCTX_SUCCESS)
        fprintf(stderr, "greenctx run: %s\n", gctx_last_error());
    else
        fprintf(stderr,
                "greenctx run: device %d: the program's context died of CUDA error %d (a sticky "
                "fault: every later call on it fails); the claims registry could not record it: "
                "%s\n",
                d->ordinal, result, gctx_last_error());
    run_inside--;
}

void run_fault_check_at_exit(void)
{
    void *fn = NULL;
    int status = 0;
    run_inside++;
    cu_result r = run.drv.getproc("cuStreamQuery", &fn, 2000, 0, &status);
    run_inside--;
    if (r != CU_OK || !fn)
        return;
    for (unsigned i = 0; i < run.nb_devices; i++) {
        run_device *d = &run.devices[i];
        if (d->joined.probe)
            run_fault_seen(d, ((cu_stream_query_fn)fn)(gctx_stream_handle(d->joined.probe)));
    }
}

/* After a sticky fault the process's CUDA state is lost (green contexts split SMs, not fault
 * domains: shared/measurements/h200-faults.md), and calls that make no driver call would go
 * on as if nothing happened: the first sticky CUresult is kept, and every later call that
 * loads the driver fails with it; releases still destroy. */
#include <pthread.h>
#include <stdio.h>

#include "internal.h"

static atomic_int fault; /* the first sticky CUresult seen, 0 before */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char first_call[192]; /* what answered it (under lock, written once) */

void gctx__fault_note(gcu_result result, const char *what)
{
    if (!gcu_result_is_sticky(result) || atomic_load(&fault))
        return;
    pthread_mutex_lock(&lock);
    if (!atomic_load(&fault)) {
        snprintf(first_call, sizeof first_call, "%s", what);
        atomic_store(&fault, result);
    }
    pthread_mutex_unlock(&lock);
}

int gctx_cuda_result_is_sticky(int cuda_result) { return gcu_result_is_sticky(cuda_result); }

gcu_result gctx__faulted(void) { return atomic_load(&fault); }

/* The refusal of a call after the fault `result`. */
static GCTX_COLD gctx_status refuse(gcu_result result)
{
    char what[sizeof first_call];
    pthread_mutex_lock(&lock);
    snprintf(what, sizeof what, "%s", first_call);
    pthread_mutex_unlock(&lock);
    return gctx__check_cuda(result, "refused: an earlier call (%s) met a fault", what);
}

gctx_status gctx__fault_check(void)
{
    gcu_result result = atomic_load(&fault);
    return result ? refuse(result) : GCTX_SUCCESS;
}

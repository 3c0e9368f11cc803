/* Status names, the thread-local error message, and the process's fault. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static _Thread_local char last_message[1024];
static _Thread_local int last_cuda_result;

static const struct {
    const char *name, *text;
} statuses[] = {
#define GCTX_STATUS_ROW_(name, value, text) [value] = {"GCTX_" #name, text},
    GCTX_STATUS_MAP(GCTX_STATUS_ROW_)
#undef GCTX_STATUS_ROW_
};

static int known(gctx_status status)
{
    return (int)status >= 0 && (size_t)status < sizeof statuses / sizeof statuses[0];
}

const char *gctx_status_name(gctx_status status)
{
    return known(status) ? statuses[status].name : "GCTX_UNKNOWN_STATUS";
}

const char *gctx_status_string(gctx_status status)
{
    return known(status) ? statuses[status].text : "unknown status";
}

const char *gctx_last_error(void) { return last_message; }

int gctx_last_cuda_result(void) { return last_cuda_result; }

gctx_status gctx__fail(gctx_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, args);
    va_end(args);
    last_cuda_result = 0;
    return status;
}

/* ---- after a fault ---- */

/* After a sticky fault the process's CUDA state is lost (green contexts split SMs, not fault
 * domains: shared/measurements/h200-faults.md), and calls that make no driver call would go
 * on as if nothing happened: the first sticky CUresult is kept, and every later call that
 * loads the driver fails with it; releases still destroy. */
static atomic_int fault; /* the first sticky CUresult seen, 0 before */
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_call[192]; /* what answered it (under fault_lock, written once) */

static GCTX_COLD void fault_note(gcu_result result, const char *what)
{
    if (atomic_load(&fault))
        return;
    pthread_mutex_lock(&fault_lock);
    if (!atomic_load(&fault)) {
        snprintf(first_call, sizeof first_call, "%s", what);
        atomic_store(&fault, result);
    }
    pthread_mutex_unlock(&fault_lock);
}

gctx_status gctx__check_cuda(gcu_result result, const char *fmt, ...)
{
    if (result == GCU_SUCCESS)
        return GCTX_SUCCESS;
    char what[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    snprintf(last_message, sizeof last_message, "%s: %s (%d)", what,
             gctx__cuda_result_name(result), result);
    last_cuda_result = result;
    GCTX__DEBUG("driver call failed: %s", last_message);
    if (gcu_result_is_sticky(result)) {
        fault_note(result, what);
        gctx__append_error("this process's CUDA state is lost after a fault: green contexts "
                           "split SMs, not fault domains, so every context of the process "
                           "(its siblings, the primary context, new ones) fails from now on; "
                           "restart the process");
    }
    return result == GCU_ERROR_INVALID_DEVICE ? GCTX_ERROR_NO_DEVICE : GCTX_ERROR_DRIVER;
}

void gctx__append_error(const char *fmt, ...)
{
    size_t used = strlen(last_message);
    if (used + 2 >= sizeof last_message)
        return;
    memcpy(last_message + used, "; ", 2);
    used += 2;
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_message + used, sizeof last_message - used, fmt, args);
    va_end(args);
}

void gctx__error_save(gctx__error_state *state)
{
    memcpy(state->message, last_message, sizeof state->message);
    state->cuda_result = last_cuda_result;
}

void gctx__error_restore(const gctx__error_state *state)
{
    memcpy(last_message, state->message, sizeof last_message);
    last_cuda_result = state->cuda_result;
}

const char *gctx__shown(const char *value, char *buf, size_t size)
{
    size_t len = strlen(value), keep = len > 40 ? 40 : len;
    /* Back over continuation bytes (10xxxxxx): the cut falls before a character's first byte. */
    while (keep < len && keep > 0 && ((unsigned char)value[keep] & 0xc0) == 0x80)
        keep--;
    snprintf(buf, size, "%.*s%s", (int)keep, value, keep < len ? "..." : "");
    return buf;
}

int gctx_cuda_result_is_sticky(int cuda_result) { return gcu_result_is_sticky(cuda_result); }

gcu_result gctx__faulted(void) { return atomic_load(&fault); }

/* The refusal of a call after the fault `result`. */
static GCTX_COLD gctx_status refuse(gcu_result result)
{
    char what[sizeof first_call];
    pthread_mutex_lock(&fault_lock);
    snprintf(what, sizeof what, "%s", first_call);
    pthread_mutex_unlock(&fault_lock);
    return gctx__check_cuda(result, "refused: an earlier call (%s) met a fault", what);
}

gctx_status gctx__fault_check(void)
{
    gcu_result result = atomic_load(&fault);
    return result ? refuse(result) : GCTX_SUCCESS;
}

/* The driver's destroy calls behind every release: a failure is counted, and the object kept
 * to be destroyed again later, since a release returns nothing its caller could act on. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *const destroy_names[GCTX__RELEASE_KINDS] = {
    [GCTX__RELEASE_EVENT] = "cuEventDestroy",
    [GCTX__RELEASE_STREAM] = "cuStreamDestroy",
    [GCTX__RELEASE_GREEN_CONTEXT] = "cuGreenCtxDestroy",
    [GCTX__RELEASE_PRIMARY_CONTEXT] = "cuDevicePrimaryCtxRelease",
    [GCTX__RELEASE_MODULE] = "cuModuleUnload",
    [GCTX__RELEASE_MEMORY] = "cuMemFree",
};

typedef struct kept_object {
    gctx__release_kind kind;
    gctx__driver_object object;
} kept_object;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kept_object *kept;
static unsigned nb_kept, kept_capacity;
static unsigned long long failed[GCTX__RELEASE_KINDS];
static int last_result;
static char last_message[256];

static gcu_result destroy(const gctx__driver *drv, gctx__release_kind kind,
                          gctx__driver_object o)
{
    switch (kind) {
    case GCTX__RELEASE_EVENT:
        return drv->cuEventDestroy(o.event);
    case GCTX__RELEASE_STREAM:
        return drv->cuStreamDestroy(o.stream);
    case GCTX__RELEASE_GREEN_CONTEXT:
        return drv->cuGreenCtxDestroy(o.green);
    case GCTX__RELEASE_PRIMARY_CONTEXT:
        return drv->cuDevicePrimaryCtxRelease(o.device);
    case GCTX__RELEASE_MODULE:
        return drv->cuModuleUnload(o.module);
    case GCTX__RELEASE_MEMORY:
        return drv->cuMemFree(o.memory);
    case GCTX__RELEASE_KINDS:
        break;
    }
    return GCU_ERROR_INVALID_VALUE;
}

/* Under the lock. */
static void count_failure(gctx__release_kind kind, const char *call, gcu_result r)
{
    failed[kind]++;
    last_result = r;
    snprintf(last_message, sizeof last_message, "%s: %s (%d)", call, gctx__cuda_result_name(r),
             r);
}

void gctx__release_count_failure(gctx__release_kind kind, const char *call, gcu_result result)
{
    pthread_mutex_lock(&lock);
    count_failure(kind, call, result);
    pthread_mutex_unlock(&lock);
}

/* Under the lock: retries the kept objects of one kind (or all), dropping those found gone. */
static void retry_kept(const gctx__driver *drv, gctx__release_kind kind)
{
    unsigned left = 0;
    for (unsigned i = 0; i < nb_kept; i++) {
        kept_object k = kept[i];
        if (kind == GCTX__RELEASE_KINDS || k.kind == kind) {
            gcu_result r = destroy(drv, k.kind, k.object);
            if (r == GCU_SUCCESS || r == GCU_ERROR_CONTEXT_IS_DESTROYED ||
                r == GCU_ERROR_INVALID_HANDLE)
                continue;
            count_failure(k.kind, destroy_names[k.kind], r);
        }
        kept[left++] = k;
    }
    nb_kept = left;
}

void gctx__release_driver_object(const gctx__driver *drv, gctx__release_kind kind,
                                 gctx__driver_object object)
{
    pthread_mutex_lock(&lock);
    /* A context goes after whatever was kept of it: every kind is retried first. */
    int context = kind == GCTX__RELEASE_GREEN_CONTEXT || kind == GCTX__RELEASE_PRIMARY_CONTEXT;
    retry_kept(drv, context ? GCTX__RELEASE_KINDS : kind);
    gcu_result r = destroy(drv, kind, object);
    GCTX__DEBUG_CALL(destroy_names[kind], r);
    if (r != GCU_SUCCESS) {
        GCTX__INFO("release: %s failed (%s); the object is kept and tried again",
                   destroy_names[kind], gctx__cuda_result_name(r));
        count_failure(kind, destroy_names[kind], r);
        if (nb_kept == kept_capacity) {
            unsigned capacity = kept_capacity ? 2 * kept_capacity : 16;
            kept_object *grown = realloc(kept, capacity * sizeof *grown);
            if (grown) {
                kept = grown;
                kept_capacity = capacity;
            }
        }
        /* Out of memory: the failure is still counted and its message kept. */
        if (nb_kept < kept_capacity)
            kept[nb_kept++] = (kept_object){kind, object};
    }
    pthread_mutex_unlock(&lock);
}

gctx_status gctx_release_failures_get(gctx_release_failures *failures)
{
    GCTX_TRY(gctx__sized_check(failures, GCTX__MIN_RELEASE_FAILURES, "failures",
                               "GCTX_RELEASE_FAILURES_INIT"));
    pthread_mutex_lock(&lock);
    gctx_release_failures out = {
        .size = sizeof out, .events = failed[GCTX__RELEASE_EVENT],
        .streams = failed[GCTX__RELEASE_STREAM],
        .green_contexts = failed[GCTX__RELEASE_GREEN_CONTEXT],
        .primary_contexts = failed[GCTX__RELEASE_PRIMARY_CONTEXT],
        .kernels = failed[GCTX__RELEASE_MODULE] + failed[GCTX__RELEASE_MEMORY],
        .pending = nb_kept, .last_cuda_result = last_result};
    for (int k = 0; k < GCTX__RELEASE_KINDS; k++)
        out.total += failed[k];
    memcpy(out.last_message, last_message, sizeof out.last_message);
    pthread_mutex_unlock(&lock);
    gctx__sized_out(failures, &out, sizeof out);
    return GCTX_SUCCESS;
}

gctx_status gctx_release_failures_retry(void)
{
    pthread_mutex_lock(&lock);
    unsigned left = nb_kept;
    const gctx__driver *drv;
    /* Objects are kept only after the driver loaded, so with some kept this load succeeds. */
    if (left && gctx__driver_loaded(&drv)) {
        retry_kept(drv, GCTX__RELEASE_KINDS);
        left = nb_kept;
    }
    char message[sizeof last_message];
    memcpy(message, last_message, sizeof message);
    int result = last_result;
    pthread_mutex_unlock(&lock);
    if (!left)
        return GCTX_SUCCESS;
    gctx_status s = gctx__check_cuda(result, "%u driver object%s could not be destroyed yet; last "
                                             "failure %s", left, left == 1 ? "" : "s", message);
    return s == GCTX_ERROR_NO_DEVICE ? GCTX_ERROR_DRIVER : s;
}

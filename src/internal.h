/* Declarations shared by the library's own files; nothing here is public. */
#ifndef GREENCTX_INTERNAL_H
#define GREENCTX_INTERNAL_H

#include <stdatomic.h>

#include "cuda_abi.h"
#include "greenctx.h"

#if defined(__GNUC__)
#define GCTX_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
/* A rare path kept out of line, so that the hot function that tests for it sets up no frame. */
#define GCTX_COLD __attribute__((cold, noinline))
#else
#define GCTX_PRINTF(fmt, args)
#define GCTX_COLD
#endif

/* ---- errors (error.c) ---- */

/* The error idiom: with cleanup, `gctx_status s` and one label (`fail` or `done`) that
 * GCTX_CHECK jumps to; without, GCTX_TRY returns early. */
#define GCTX_CHECK(call, label)                                                               \
    do {                                                                                      \
        if ((s = (call)) != GCTX_SUCCESS)                                                     \
            goto label;                                                                       \
    } while (0)
#define GCTX_TRY(call)                                                                        \
    do {                                                                                      \
        gctx_status try_status_ = (call);                                                     \
        if (try_status_ != GCTX_SUCCESS)                                                      \
            return try_status_;                                                               \
    } while (0)

/* An output pointer's check: "<out> (the output) is NULL". */
#define GCTX_TRY_OUTPUT(out)                                                                  \
    GCTX_TRY((out) ? GCTX_SUCCESS                                                             \
                   : gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, #out " (the output) is NULL"))

/* Sets this thread's message (and clears its CUresult); returns status. */
gctx_status gctx__fail(gctx_status status, const char *fmt, ...) GCTX_PRINTF(2, 3);
/* GCTX_SUCCESS for CUDA_SUCCESS; else GCTX_ERROR_DRIVER (NO_DEVICE for an invalid device),
 * "<what>: <CUresult name> (<n>)". */
gctx_status gctx__check_cuda(gcu_result result, const char *fmt, ...) GCTX_PRINTF(2, 3);
/* Appends "; " and more text to this thread's message. */
void gctx__append_error(const char *fmt, ...) GCTX_PRINTF(1, 2);
/* An environment value as a message shows it: 40 bytes, cut between UTF-8. */
const char *gctx__shown(const char *value, char *buf, size_t size);
/* Around cleanup that may itself fail: the first failure is what the caller sees. */
typedef struct gctx__error_state {
    char message[1024];
    int cuda_result;
} gctx__error_state;
void gctx__error_save(gctx__error_state *state);
void gctx__error_restore(const gctx__error_state *state);

/* ---- after a fault (error.c) ---- */

/* A sticky result loses the process's CUDA state: from the first on every call is refused. */
gctx_status gctx__fault_check(void);
/* The fault's CUresult, 0 before any; no error state touched (for releases). */
gcu_result gctx__faulted(void);

/* ---- the loaded driver (driver.c) ---- */

typedef struct gctx__feature_state {
    int available;
    int reached; /* by the driver's version alone (gctx__driver_reaches) */
    char reason[160];
} gctx__feature_state;

#define GCTX__COUNT_FEATURE_(name, value, text, version) +1
typedef struct gctx__driver {
    int version; /* cuDriverGetVersion */
    char path[512];
#define GCTX_DRIVER_MEMBER_(name, version, required, params) gcu_pfn_##name name;
    GCU_LIBRARY_SYMBOLS(GCTX_DRIVER_MEMBER_)
#undef GCTX_DRIVER_MEMBER_
    gctx__feature_state features[0 GCTX_FEATURE_MAP(GCTX__COUNT_FEATURE_)];
} gctx__driver;

/* The driver table: loaded by the first call that succeeds, then never changed. */
gctx_status gctx__driver_load(const gctx__driver **driver);
/* For releases, which go on after a fault: 1 when loaded; the thread's error untouched. */
int gctx__driver_loaded(const gctx__driver **driver);
/* gctx__driver_load, and GCTX_ERROR_UNSUPPORTED where green contexts are unavailable. */
gctx_status gctx__driver_load_green(const gctx__driver **driver);
/* By the version alone, whatever the entry points: which fields a resource carries. */
static inline int gctx__driver_reaches(const gctx__driver *drv, gctx_feature feature)
{
    return drv->features[feature].reached;
}
/* 1 when cuInit answered CUDA_ERROR_NO_DEVICE: the driver loaded and counts no device. */
int gctx__driver_has_no_device(void);

const char *gctx__cuda_result_name(gcu_result result);

/* Until gctx__pop_context: greenctx never changes the caller's context stack. */
gctx_status gctx__push_context(const gctx__driver *drv, CUcontext ctx);
/* Pops it; returns status (the work's own) when it failed, else the pop's. */
gctx_status gctx__pop_context(const gctx__driver *drv, gctx_status status);

/* ---- devices (device.c) ---- */

gctx_status gctx__check_device(const gctx__driver *drv, int device);
gctx_status gctx__device_resource(const gctx__driver *drv, int device, gcu_dev_resource_type type,
                                  gcu_dev_resource *out);
static inline const char *gctx__resource_type_name(gcu_dev_resource_type type)
{
    return type == GCU_DEV_RESOURCE_TYPE_SM ? "SM" : "WORKQUEUE_CONFIG";
}
/* "GPU-xxxxxxxx-...", as nvidia-smi prints it. */
void gctx__format_uuid(const gcu_uuid *u, char *out, size_t size);

/* The driver's SM partitioning rules (13.0+), else the architecture's (derived = 1). */
typedef struct gctx__sm_rules {
    unsigned min_partition;
    unsigned alignment;
    int derived;
} gctx__sm_rules;
gctx_status gctx__device_cc_major(const gctx__driver *drv, int device, int *major);
/* Partitions hold the primary context, so that green contexts don't initialise it again. */
gctx_status gctx__device_hold_primary(const gctx__driver *drv, int device);
void gctx__device_drop_primary(const gctx__driver *drv, int device);
gctx_status gctx__device_arch_rules(const gctx__driver *drv, int device, gctx__sm_rules *rules);
gctx_status gctx__resource_rules(const gctx__driver *drv, int device,
                                 const gcu_dev_resource *resource, gctx__sm_rules *rules);

/* ---- objects and handles (object.c) ---- */

typedef enum gctx__type {
    GCTX__TYPE_PARTITION = 0x50415254, /* 'PART' */
    GCTX__TYPE_CONTEXT = 0x43545854,   /* 'CTXT' */
    GCTX__TYPE_STREAM = 0x5354524d,    /* 'STRM' */
    GCTX__TYPE_EVENT = 0x45564e54,     /* 'EVNT' */
    GCTX__TYPE_LAYOUTS = 0x4c41594f,   /* 'LAYO' */
    GCTX__TYPE_CONTROLLER = 0x4354524c, /* 'CTRL' */
    GCTX__TYPE_CLAIM = 0x434c414d       /* 'CLAM' */
} gctx__type;

typedef struct gctx__object {
    gctx__type type;
    atomic_int refs; /* the library's own references, plus one while a public handle is out */
    void (*destroy)(struct gctx__object *object);
    unsigned slot; /* its slot in the handle table (object.c) */
} gctx__object;

/* One reference (the creator's). Fails only when out of memory. */
gctx_status gctx__object_init(gctx__object *object, gctx__type type,
                              void (*destroy)(gctx__object *));
/* gctx__object_init in two steps for objects made together: registered all or none. */
static inline void gctx__object_prepare(gctx__object *object, gctx__type type,
                                        void (*destroy)(gctx__object *))
{
    object->type = type;
    atomic_init(&object->refs, 1);
    object->destroy = destroy;
}
gctx_status gctx__objects_register(gctx__object *const *objects, unsigned n);
static inline void gctx__object_retain(gctx__object *object)
{
    atomic_fetch_add(&object->refs, 1);
}
void gctx__object_release(gctx__object *object);
/* Consumes an object reference for a caller reference of its handle: the same value while
 * one is out, a new one once callers released it. Cannot fail. */
void *gctx__handle_give(gctx__object *object);
/* gctx__handle_give of a just registered object, nothing else holding it. */
void *gctx__handle_give_new(gctx__object *object);
/* A handle callers use without a reference (the layouts'): the lender is one caller reference
 * however often it lends, so a caller's extra release retires at most the handle. */
void *gctx__handle_lend(gctx__object *object);
/* Takes the lender's reference back from the handle, if the lent value is still out. */
void gctx__handle_unlend(gctx__object *object);
/* Replaces the handle in *var by its object; INVALID_ARGUMENT or INVALID_HANDLE naming
 * `what`. Reads only the handle table, never memory a stale handle pointed to. */
gctx_status gctx__handle_resolve(void *var, gctx__type type, const char *what);
void *gctx__handle_retain(void *handle, gctx__type type);
void gctx__handle_release(void *handle, gctx__type type);
/* The public gctx_NAME_retain and gctx_NAME_release of a type. */
#define GCTX__HANDLE_REFS(name, TYPE)                                                          \
    gctx_##name *gctx_##name##_retain(gctx_##name *handle)                                     \
    {                                                                                          \
        return gctx__handle_retain(handle, GCTX__TYPE_##TYPE);                                 \
    }                                                                                          \
    void gctx_##name##_release(gctx_##name *handle)                                            \
    {                                                                                          \
        gctx__handle_release(handle, GCTX__TYPE_##TYPE);                                       \
    }
/* A public accessor of a raw CUDA handle: NULL for a value that is no live handle. */
#define GCTX__RAW_HANDLE(Raw, function, name, TYPE, expr)                                      \
    Raw function(const gctx_##name *name)                                                      \
    {                                                                                          \
        return gctx__handle_resolve(&name, GCTX__TYPE_##TYPE, #name) == GCTX_SUCCESS ? (expr)  \
                                                                                     : NULL;   \
    }
/* Size-prefixed structs and group arrays across header versions (sized.c). */
#include "sized.h"

/* ---- the driver's destroy calls (release.c) ---- */

typedef enum gctx__release_kind {
    GCTX__RELEASE_EVENT,
    GCTX__RELEASE_STREAM,
    GCTX__RELEASE_GREEN_CONTEXT,
    GCTX__RELEASE_PRIMARY_CONTEXT,
    GCTX__RELEASE_MODULE,
    GCTX__RELEASE_MEMORY,
    GCTX__RELEASE_KINDS
} gctx__release_kind;
typedef union gctx__driver_object {
    CUevent event;
    CUstream stream;
    CUgreenCtx green;
    int device; /* a primary context: its device */
    gcu_module module;
    gcu_deviceptr memory;
} gctx__driver_object;
/* A failure is counted and the object kept for a retry; the thread's error is left alone. */
void gctx__release_driver_object(const gctx__driver *drv, gctx__release_kind kind,
                                 gctx__driver_object object);
#define GCTX__RELEASE(drv, KIND, field, value)                                                 \
    gctx__release_driver_object((drv), GCTX__RELEASE_##KIND,                                   \
                                (gctx__driver_object){.field = (value)})
/* Another call of a release failed (a synchronize before a destroy): counted. */
void gctx__release_count_failure(gctx__release_kind kind, const char *call, gcu_result result);

#endif

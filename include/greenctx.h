/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx.h, the core: carve a CUDA GPU's SMs into disjoint partitions with the driver's green
 * contexts (devices, partitions, splits, green contexts, streams, events, the context cache,
 * layouts). greenctx_claims.h (tenancy) and greenctx_controller.h (policy) build on it. Needs
 * no CUDA header: the four CUDA handle types are declared as cuda.h declares them.
 * This is the reference; docs/api.md (installed in share/doc/greenctx/) is the guide: an
 * example, the conventions every function follows, handles, structs that grow, the reasons.
 * In short: a fallible function returns gctx_status and writes no output on failure
 * (gctx_last_error() says why); beside the failures its comment names ("X" is GCTX_ERROR_X),
 * any may fail INVALID_ARGUMENT, INVALID_HANDLE, NO_DRIVER, DRIVER, OUT_OF_MEMORY, and
 * UNSUPPORTED below its "Driver X.Y+". Objects are reference-counted: a create gives the
 * caller a reference, *_release drops one (NULL ignored), an object keeps alive what it was
 * made from. Any function may be called from any thread.
 */
#ifndef GREENCTX_H
#define GREENCTX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GCTX_API
#elif defined(__GNUC__)
#define GCTX_API __attribute__((visibility("default")))
#else
#define GCTX_API
#endif

/* ==== The stable API: what a program that splits a GPU needs ==== */
/* ---- Version ---- */
#define GCTX_VERSION_MAJOR 0
#define GCTX_VERSION_MINOR 3
#define GCTX_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH; never re-encoded. ABI rules: docs/api.md, "Versions". */
#define GCTX_VERSION (GCTX_VERSION_MAJOR * 10000 + GCTX_VERSION_MINOR * 100 + GCTX_VERSION_PATCH)

/* The library's GCTX_VERSION, to compare with the header's at run time. */
GCTX_API int gctx_version(void);
/* "MAJOR.MINOR.PATCH"; static storage. */
GCTX_API const char *gctx_version_string(void);

/* ---- CUDA handle types, as cuda.h declares them (identical typedefs may repeat) ---- */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgreenCtx_st *CUgreenCtx;

/* ---- Status codes and errors ---- */
/* X(NAME, value, description): values are fixed and never reused. */
#define GCTX_STATUS_MAP(X)                                                                     \
    X(SUCCESS, 0, "success")                                                                   \
    X(ERROR_INVALID_ARGUMENT, 1, "invalid argument")                                           \
    X(ERROR_INVALID_HANDLE, 2, "invalid or released handle")                                   \
    X(ERROR_NO_DRIVER, 3, "no CUDA driver could be loaded")                                    \
    X(ERROR_NO_DEVICE, 4, "no such CUDA device")                                               \
    X(ERROR_UNSUPPORTED, 5, "not supported by this driver or device")                          \
    X(ERROR_DRIVER, 6, "the CUDA driver reported an error")                                    \
    X(ERROR_OUT_OF_MEMORY, 7, "out of host memory")                                            \
    X(ERROR_INSUFFICIENT_SMS, 8, "the partition has too few SMs for the request")             \
    X(ERROR_BUSY, 9, "the SMs asked for are held by other claims")                             \
    X(ERROR_REGISTRY, 10, "the claims registry can't be trusted (foreign, corrupt or unsafe)")

typedef enum gctx_status {
#define GCTX_STATUS_ENUM_(name, value, text) GCTX_##name = value,
    GCTX_STATUS_MAP(GCTX_STATUS_ENUM_)
#undef GCTX_STATUS_ENUM_
    GCTX_STATUS_FORCE_INT_ = 0x7fffffff
} gctx_status;

/* "GCTX_ERROR_INVALID_ARGUMENT", ...; "GCTX_UNKNOWN_STATUS" for values not in the table. */
GCTX_API const char *gctx_status_name(gctx_status status);
/* A one-line description; never NULL. */
GCTX_API const char *gctx_status_string(gctx_status status);
/* This thread's message for its last failed call ("" when none). Owned by the library, valid
 * until the next failing greenctx call on this thread. Successful calls leave it alone. */
GCTX_API const char *gctx_last_error(void);
/* The CUresult behind this thread's last failed call; 0 when the driver did not fail it. */
GCTX_API int gctx_last_cuda_result(void);

/* ---- Driver ---- */
/* Loads the driver (libcuda.so.1 or $GREENCTX_CUDA_LIBRARY) and runs cuInit; idempotent,
 * thread-safe, retried after a failure. NO_DRIVER (naming what was tried); DRIVER: cuInit. */
GCTX_API gctx_status gctx_init(void);
/* cuDriverGetVersion: 1000*major + 10*minor (13000 for CUDA 13.0). Fails as gctx_init. */
GCTX_API gctx_status gctx_driver_version(int *version);
/* The file the driver was loaded from, or NULL before a successful gctx_init(). */
GCTX_API const char *gctx_driver_path(void);

/* X(NAME, value, short name, first driver version that can have it). */
#define GCTX_FEATURE_MAP(X)                                                                    \
    X(GREEN_CONTEXTS, 0, "green_contexts", 12040)                                              \
    X(GREEN_STREAMS, 1, "green_streams", 12050)                                                \
    X(CONTEXT_IDS, 2, "context_ids", 12090)                                                    \
    X(REPORTED_SM_RULES, 3, "reported_sm_rules", 13000)                                        \
    X(STRUCTURED_SPLIT, 4, "structured_split", 13010)                                          \
    X(WORKQUEUES, 5, "workqueues", 13010)                                                      \
    X(LOCALITY_DOMAINS, 6, "locality_domains", 13040)                                          \
    X(FINE_GRANULES, 7, "fine_granules", 12050)

typedef enum gctx_feature {
#define GCTX_FEATURE_ENUM_(name, value, text, version) GCTX_FEATURE_##name = value,
    GCTX_FEATURE_MAP(GCTX_FEATURE_ENUM_)
#undef GCTX_FEATURE_ENUM_
    GCTX_FEATURE_FORCE_INT_ = 0x7fffffff
} gctx_feature;

/* 1 when the loaded driver has the feature, else 0 (also when no driver loads). */
GCTX_API int gctx_feature_available(gctx_feature feature);
/* Why it is on or off ("needs driver 13.1, found 13.0"); static storage, never NULL. */
GCTX_API const char *gctx_feature_reason(gctx_feature feature);
/* "green_contexts", ...; NULL for values not in the table. */
GCTX_API const char *gctx_feature_name(gctx_feature feature);

/* ---- Devices ---- */
/* The number of CUDA devices; 0 when the driver loads but finds none. Fails as gctx_init. */
GCTX_API gctx_status gctx_device_count(int *count);

typedef struct gctx_device_info {
    size_t size;                    /* set by the caller: sizeof(gctx_device_info) */
    int ordinal;                    /* the device index passed in */
    char name[256];                 /* cuDeviceGetName */
    int cc_major, cc_minor;         /* compute capability */
    unsigned sm_count;              /* SMs in the device's SM resource */
    unsigned min_partition_sms;     /* smallest SM count one partition can have */
    unsigned coscheduled_alignment; /* partition sizes are multiples of this */
    int sm_rules_derived;           /* 1: the two above are the architecture's (before 13.0) */
    unsigned locality_domain_count; /* 0 when the driver or device has none */
} gctx_device_info;
#define GCTX_DEVICE_INFO_INIT {sizeof(gctx_device_info), 0, {0}, 0, 0, 0, 0, 0, 0, 0}

/* Facts about one device, on any driver (before 12.4 sm_count is the multiprocessor count;
 * locality needs 13.4). NO_DEVICE: ordinal out of range (the message names the range). */
GCTX_API gctx_status gctx_device_get_info(int device, gctx_device_info *info);

/* "GPU-" and 8-4-4-4-12 hex digits, as nvidia-smi prints it. CUDA 11.4+. */
#define GCTX_UUID_SIZE 41
GCTX_API gctx_status gctx_device_uuid(int device, char *uuid, size_t size);
/* domain:bus:device.function, as the driver writes it ("0000:18:00.0"). */
#define GCTX_PCI_BUS_ID_SIZE 32
GCTX_API gctx_status gctx_device_pci_bus_id(int device, char *bus_id, size_t size);

/* ---- SM partitions ---- */
/* An immutable set of SMs of one device that green contexts can be made from. */
typedef struct gctx_partition gctx_partition;

typedef enum gctx_partition_kind {
    GCTX_PARTITION_DEVICE = 0,    /* every SM of a device */
    GCTX_PARTITION_GROUP = 1,     /* one group of a split */
    GCTX_PARTITION_REMAINDER = 2, /* what a split left over: no co-scheduling guarantee */
    GCTX_PARTITION_CONTEXT = 3    /* the SMs of a green context */
} gctx_partition_kind;

typedef struct gctx_partition_info {
    size_t size; /* set by the caller: sizeof(gctx_partition_info) */
    int device;
    gctx_partition_kind kind;
    unsigned sm_count;
    unsigned min_partition_sms;     /* smallest group a split of this partition can give */
    unsigned coscheduled_alignment; /* group sizes of a split of it are multiples of this */
    int structured;                 /* 0 for remainders and what is made from them */
    unsigned flags;                 /* the driver's CUdevSmResource flags (13.1+), else 0 */
    int has_locality_domain;        /* 1 when locality_domain_id is meaningful (13.4+) */
    unsigned locality_domain_id;
} gctx_partition_info;
#define GCTX_PARTITION_INFO_INIT {sizeof(gctx_partition_info), 0, GCTX_PARTITION_DEVICE, 0, 0, 0, 0, 0, 0, 0}

/* Every SM of a device. Driver 12.4+. NO_DEVICE: ordinal out of range. */
GCTX_API gctx_status gctx_partition_from_device(int device, gctx_partition **partition);
/* Its facts; reads no driver state. */
GCTX_API gctx_status gctx_partition_get_info(const gctx_partition *partition,
                                             gctx_partition_info *info);
/* Every *_retain adds a reference and returns the handle (NULL for NULL, a released or a
 * foreign handle); every *_release drops one. Both refuse a stale handle: docs/api.md. */
GCTX_API gctx_partition *gctx_partition_retain(gctx_partition *partition);
GCTX_API void gctx_partition_release(gctx_partition *partition);

/* One group of a split; all zeros but num_sms is the common case (field rules: docs/api.md). */
typedef struct gctx_group {
    unsigned num_sms;              /* 0: discovery, every SM still free in whole units */
    unsigned coscheduled_sm_count; /* SMs one cluster needs together; 0: the alignment */
    unsigned preferred_coscheduled_sm_count; /* a larger unit to try (13.1+); 0: the same */
    int backfill;                  /* nonzero: may take SMs outside whole units */
    unsigned reserved[4];          /* must be zero (INVALID_ARGUMENT naming the group) */
} gctx_group;
/* Every field zero (C and C++): set num_sms and the rest after. */
#define GCTX_GROUP_INIT {0, 0, 0, 0, {0, 0, 0, 0}}

typedef enum gctx_rounding {
    GCTX_ROUND_STRICT = 0,  /* a count the hardware can't give is an error (the default) */
    GCTX_ROUND_DOWN = 1,    /* the nearest legal count below (never below the minimum) */
    GCTX_ROUND_NEAREST = 2, /* the nearest legal count; ties go up */
    GCTX_ROUND_UP = 3       /* the nearest legal count above */
} gctx_rounding;

typedef struct gctx_split_options {
    size_t size; /* sizeof(gctx_split_options), set by GCTX_SPLIT_OPTIONS_INIT */
    gctx_rounding rounding;
} gctx_split_options;
#define GCTX_SPLIT_OPTIONS_INIT {sizeof(gctx_split_options), GCTX_ROUND_STRICT}

typedef enum gctx_split_path {
    GCTX_SPLIT_PATH_STRUCTURED = 1, /* the driver's per-group split (cuDevSmResourceSplit, 13.1+) */
    GCTX_SPLIT_PATH_GRANULES = 2,   /* equal granules by count, whole ones per group (12.4-13.0) */
    GCTX_SPLIT_PATH_FINE_GRANULES = 3 /* as GRANULES ignoring co-scheduling: 2-SM granules */
} gctx_split_path;

/* What a split gives, or would give: one per group. */
typedef struct gctx_group_plan {
    unsigned requested_sms; /* num_sms as asked (0 for discovery) */
    unsigned sm_count;      /* what the group gets */
    unsigned coscheduled_sm_count; /* the co-scheduled unit the group is made of */
    int rounded;            /* 1 when sm_count differs from a nonzero request by rounding */
    int backfilled;         /* 1 when the group includes SMs outside whole units */
    unsigned reserved[4];   /* written as zero; fields added before 1.0 take these slots */
} gctx_group_plan;

typedef struct gctx_split_plan {
    size_t size; /* set by the caller: sizeof(gctx_split_plan) */
    int device;
    int driver_version;
    gctx_split_path path;
    unsigned granule_sms;   /* the granule of the GRANULES paths, else 0 */
    unsigned nb_groups;
    unsigned remainder_sms; /* SMs in no group; 0 when there is no remainder */
    int rounded;            /* 1 when any group was rounded */
    int nested;             /* 1: the input is a split output or remainder (via a green context) */
} gctx_split_plan;
#define GCTX_SPLIT_PLAN_INIT {sizeof(gctx_split_plan), 0, 0, GCTX_SPLIT_PATH_STRUCTURED, 0, 0, 0, 0, 0}

/* Dry run of gctx_partition_split, creating nothing; plan and group_plans (nb_groups) are
 * optional outputs. Driver 12.4+. Fails as gctx_partition_split. */
GCTX_API gctx_status gctx_partition_plan(const gctx_partition *input, const gctx_group *groups,
                                         unsigned nb_groups, const gctx_split_options *options,
                                         gctx_split_plan *plan, gctx_group_plan *group_plans);

/* Splits input, of any kind, into nb_groups disjoint partitions and the remainder (optional;
 * NULL when nothing is left). options NULL: strict; plan, group_plans: optional outputs.
 * Driver 12.4+. INVALID_ARGUMENT: groups NULL or nb_groups 0, a count it can't give (naming
 * the nearest), a discovery-with-backfill group not last, a nonzero reserved field;
 * INSUFFICIENT_SMS: the groups don't fit. */
GCTX_API gctx_status gctx_partition_split(gctx_partition *input, const gctx_group *groups,
                                          unsigned nb_groups, const gctx_split_options *options,
                                          gctx_partition **partitions, gctx_partition **remainder,
                                          gctx_split_plan *plan, gctx_group_plan *group_plans);

typedef enum gctx_relation {
    GCTX_RELATION_DISJOINT = 0,      /* share no SM (one split, or disjoint ancestors) */
    GCTX_RELATION_MAY_OVERLAP = 1,   /* different splits: the driver may give the same SMs */
    GCTX_RELATION_OVERLAP = 2        /* known to share SMs (the same, or one holds the other) */
} gctx_relation;

/* What greenctx knows of two partitions' SMs, from how they were made; no driver call. */
GCTX_API gctx_status gctx_partition_relation(const gctx_partition *a, const gctx_partition *b,
                                             gctx_relation *relation);

/* ---- Green contexts ---- */
/* A CUDA context whose work runs only on one partition's SMs; keeps the partition alive. */
typedef struct gctx_context gctx_context;

typedef enum gctx_workqueue_scope {
    GCTX_WORKQUEUE_SCOPE_DEFAULT = 0,    /* leave the driver's choice (share with the device) */
    GCTX_WORKQUEUE_SCOPE_DEVICE_CTX = 1, /* share workqueues with every context (13.1+) */
    GCTX_WORKQUEUE_SCOPE_BALANCED = 2    /* keep apart from other balanced contexts (13.1+) */
} gctx_workqueue_scope;

/* gctx_context_options.flags */
#define GCTX_CONTEXT_FRESH 0x1u /* never a driver context from the cache (cached on release) */

typedef struct gctx_context_options {
    size_t size; /* sizeof(gctx_context_options), set by GCTX_CONTEXT_OPTIONS_INIT */
    gctx_workqueue_scope workqueue_scope;
    unsigned workqueue_concurrency_limit; /* concurrent stream-ordered work; 0: driver's; 13.1+ */
    unsigned flags; /* GCTX_CONTEXT_* (0.2.0: a caller of an older layout gets 0) */
} gctx_context_options;
#define GCTX_CONTEXT_OPTIONS_INIT {sizeof(gctx_context_options), GCTX_WORKQUEUE_SCOPE_DEFAULT, 0, 0}

/* A green context on the partition's SMs, maybe from the context cache. options may be NULL.
 * Driver 12.4+; workqueue options 13.1+. INVALID_ARGUMENT: a bad workqueue_scope or flags. */
GCTX_API gctx_status gctx_context_create(gctx_partition *partition,
                                         const gctx_context_options *options,
                                         gctx_context **context);

/* num_sms rounded up to the next group size the SMs have (all when none is that large). */
#define GCTX_CONTEXT_REQUEST_AT_LEAST 0x1u
typedef struct gctx_context_request {
    size_t size; /* sizeof(gctx_context_request), set by GCTX_CONTEXT_REQUEST_INIT */
    gctx_partition *partition;               /* the SMs: this partition's, */
    gctx_context *context;                   /* else this context's, */
    int device;                              /* else every SM of this device */
    const gctx_group *groups;                /* what of them: a split into these groups, */
    unsigned nb_groups;
    unsigned num_sms;                        /* else one context of num_sms, else all */
    unsigned flags;                          /* GCTX_CONTEXT_REQUEST_* */
    const gctx_split_options *split_options; /* the split's rounding; NULL: strict */
    const gctx_context_options *options;     /* every context's; NULL: the defaults */
} gctx_context_request;
#define GCTX_CONTEXT_REQUEST_INIT                                                              \
    {sizeof(gctx_context_request), NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL}

/* The contexts a request asks for: contexts gets nb_groups (one without groups); remainder
 * (optional) one on a split's leftover SMs, or NULL. All or nothing. Driver 12.4+. Fails as
 * split and create; INVALID_ARGUMENT naming the field; NO_DEVICE. Rules: docs/api.md. */
GCTX_API gctx_status gctx_contexts_create(const gctx_context_request *request,
                                          gctx_context **contexts, gctx_context **remainder);

/* The Python API's shapes of gctx_contexts_create: exactly num_sms of a device (strict,
 * remainder dropped; INVALID_ARGUMENT for 0), at least num_sms, one context per group. */
GCTX_API gctx_status gctx_context_create_with_sms(int device, unsigned num_sms,
                                                  const gctx_context_options *options,
                                                  gctx_context **context);
GCTX_API gctx_status gctx_context_create_at_least(int device, unsigned num_sms,
                                                  const gctx_context_options *options,
                                                  gctx_context **context);
GCTX_API gctx_status gctx_context_split_device(int device, const gctx_group *groups,
                                               unsigned nb_groups,
                                               const gctx_split_options *split_options,
                                               const gctx_context_options *options,
                                               gctx_context **contexts, gctx_context **remainder);
/* Borrows someone else's green context: never destroyed by greenctx, which the caller keeps
 * alive while the handle lives. Driver 12.4+. INVALID_ARGUMENT: NULL; DRIVER: not live. */
GCTX_API gctx_status gctx_context_adopt(CUgreenCtx green, gctx_context **context);
GCTX_API gctx_context *gctx_context_retain(gctx_context *context);
GCTX_API void gctx_context_release(gctx_context *context);

typedef struct gctx_context_info {
    size_t size; /* set by the caller: sizeof(gctx_context_info) */
    int device;
    unsigned sm_count;
    int has_id;              /* 1 when the driver gives context ids (12.9+) */
    unsigned long long id;   /* cuGreenCtxGetId: unique for the life of the process */
    int adopted;             /* 1: made by someone else, never destroyed by greenctx */
    gctx_workqueue_scope workqueue_scope;
    unsigned workqueue_concurrency_limit; /* 0 when unknown or not set */
} gctx_context_info;
#define GCTX_CONTEXT_INFO_INIT {sizeof(gctx_context_info), 0, 0, 0, 0, 0, GCTX_WORKQUEUE_SCOPE_DEFAULT, 0}

/* Its facts (asks the driver its SM count). Driver 12.4+; ids 12.9, workqueues 13.1. */
GCTX_API gctx_status gctx_context_get_info(const gctx_context *context, gctx_context_info *info);
/* Its SMs as a partition (kind CONTEXT) that keeps it alive. Driver 12.4+. */
GCTX_API gctx_status gctx_context_partition(gctx_context *context, gctx_partition **partition);
/* Driver 13.4+; UNSUPPORTED too where its SMs carry no single domain. */
GCTX_API gctx_status gctx_context_locality_domain(const gctx_context *context, unsigned *domain);
/* The raw handles, owned by the context and valid while it lives; NULL (gctx_last_error()
 * set) for a handle that is not a live context. cu_context: cuCtxFromGreenCtx. */
GCTX_API CUgreenCtx gctx_context_green_handle(const gctx_context *context);
GCTX_API CUcontext gctx_context_cu_context(const gctx_context *context);
/* As gctx_partition_relation, for two contexts' SMs. */
GCTX_API gctx_status gctx_context_relation(const gctx_context *a, const gctx_context *b,
                                           gctx_relation *relation);
/* A device's default workqueue concurrency limit (CUDA_DEVICE_MAX_CONNECTIONS). Driver 13.1+.
 * NO_DEVICE: ordinal out of range. */
GCTX_API gctx_status gctx_device_get_max_workqueue_concurrency(int device, unsigned *limit);

/* ---- Streams and events ---- */
/* A non-blocking stream on a context's SMs; keeps the context alive; its release waits for
 * its work. */
typedef struct gctx_stream gctx_stream;

typedef struct gctx_stream_options {
    size_t size;  /* sizeof(gctx_stream_options), set by GCTX_STREAM_OPTIONS_INIT */
    int priority; /* lower is higher priority; clamped to the device's range */
    int blocking; /* must stay 0: the driver refuses blocking green streams */
} gctx_stream_options;
#define GCTX_STREAM_OPTIONS_INIT {sizeof(gctx_stream_options), 0, 0}

/* options may be NULL. Driver 12.4+. INVALID_ARGUMENT: blocking != 0. */
GCTX_API gctx_status gctx_stream_create(gctx_context *context, const gctx_stream_options *options,
                                        gctx_stream **stream);
/* Borrows someone else's stream, and its green context. Driver 12.4+. INVALID_ARGUMENT:
 * NULL (the legacy default stream) or a stream of no green context. */
GCTX_API gctx_status gctx_stream_adopt(CUstream stream, gctx_stream **out);
GCTX_API gctx_stream *gctx_stream_retain(gctx_stream *stream);
GCTX_API void gctx_stream_release(gctx_stream *stream);
/* The raw stream, valid while the stream lives (NULL, gctx_last_error() set, if not live). */
GCTX_API CUstream gctx_stream_handle(const gctx_stream *stream);
/* The stream's context, retained for the caller. */
GCTX_API gctx_status gctx_stream_context(gctx_stream *stream, gctx_context **context);
/* cuStreamGetPriority. Driver 12.4+. */
GCTX_API gctx_status gctx_stream_priority(const gctx_stream *stream, int *priority);
/* Waits for the stream's work. Driver 12.4+. DRIVER carries an error of the work. */
GCTX_API gctx_status gctx_stream_synchronize(gctx_stream *stream);
/* A raw stream's green context, NULL for an ordinary one. Driver 12.4+. DRIVER: unknown. */
GCTX_API gctx_status gctx_stream_get_green_context(CUstream stream, CUgreenCtx *green);

/* An event, to order work on two partitions without a host sync. */
typedef struct gctx_event gctx_event;
/* An event of context's device (timing disabled: it only orders work). Driver 12.4+. */
GCTX_API gctx_status gctx_event_create(gctx_context *context, gctx_event **event);
GCTX_API gctx_event *gctx_event_retain(gctx_event *event);
GCTX_API void gctx_event_release(gctx_event *event);
/* The raw event, valid while the event lives (NULL for a handle that is not a live event). */
GCTX_API CUevent gctx_event_handle(const gctx_event *event);
/* Record after the work submitted so far to a stream, or to every stream of a context; make a
 * stream's or a context's later work wait. Driver 12.4+. DRIVER where the driver refuses. */
GCTX_API gctx_status gctx_event_record(gctx_event *event, gctx_stream *stream);
GCTX_API gctx_status gctx_event_record_context(gctx_event *event, gctx_context *context);
GCTX_API gctx_status gctx_stream_wait_event(gctx_stream *stream, gctx_event *event);
GCTX_API gctx_status gctx_context_wait_event(gctx_context *context, gctx_event *event);
/* Waits for the work before the event's last record. Driver 12.4+. */
GCTX_API gctx_status gctx_event_synchronize(gctx_event *event);

/* ==== The rest: the context cache, the current context, layouts, where work runs ==== */
/* ---- The context cache (docs/api.md: what a cached context carries over) ---- */
typedef struct gctx_cache_stats {
    size_t size;                  /* set by the caller: sizeof(gctx_cache_stats) */
    unsigned long long hits;      /* contexts made from a cached driver context */
    unsigned long long misses;    /* contexts the cache had nothing for (while on) */
    unsigned long long evictions; /* cached contexts destroyed: limit, set_limit, trim */
    unsigned cached;              /* idle driver contexts kept now */
    unsigned live;                /* contexts greenctx made that are in use now */
    unsigned limit;               /* the device's limit; 0: the cache is off */
} gctx_cache_stats;
#define GCTX_CACHE_STATS_INIT {sizeof(gctx_cache_stats), 0, 0, 0, 0, 0, 0}

/* The most idle contexts the device's cache keeps ($GREENCTX_CONTEXT_CACHE, else 16). */
GCTX_API gctx_status gctx_cache_get_limit(int device, unsigned *limit);
/* Sets it, destroying the oldest beyond it now; 0 turns the device's cache off. */
GCTX_API gctx_status gctx_cache_set_limit(int device, unsigned limit);
/* Destroys every context the device's cache holds; the limit stays. */
GCTX_API gctx_status gctx_cache_trim(int device);
/* The device's counters since the process started. */
GCTX_API gctx_status gctx_cache_get_stats(int device, gctx_cache_stats *stats);

/* ---- The calling thread's current context (any driver) ---- */
/* The top of the thread's context stack (NULL when empty), to restore after a library
 * (NCCL's init, cudaSetDevice) changed it. */
GCTX_API gctx_status gctx_current_context_save(CUcontext *saved); /* INVALID_ARGUMENT: NULL */
/* Makes saved current again (NULL: pops until nothing is); changed (optional) gets 1 when
 * something else was current. DRIVER: saved was destroyed (the current context untouched). */
GCTX_API gctx_status gctx_current_context_restore(CUcontext saved, int *changed);

/* The SMs the current context runs on (a green context's partition, else the device's), to
 * size a persistent kernel's grid. INVALID_ARGUMENT: NULL; DRIVER: nothing is current. */
GCTX_API gctx_status gctx_current_sm_count(unsigned *count);

/* ---- Layouts: re-partitioning without making driver objects ---- */
/* Partitionings of one device made up front, each partition with a context, a stream and an
 * event; switching from one to another makes no driver object (docs/api.md, "Layouts"). */
typedef struct gctx_layouts gctx_layouts;

/* sm_counts: nb_layouts rows of nb_parts SM counts, row l is layout l; a last 0 in a row takes
 * the rest. options: every context's (NULL: defaults). Layout 0 is active at first. */
GCTX_API gctx_status gctx_layouts_create(int device, const unsigned *sm_counts,
                                         unsigned nb_layouts, unsigned nb_parts,
                                         const gctx_context_options *options,
                                         gctx_layouts **layouts);
GCTX_API gctx_layouts *gctx_layouts_retain(gctx_layouts *layouts);
/* Synchronizes and destroys the streams, then the rest (the contexts go to the cache). */
GCTX_API void gctx_layouts_release(gctx_layouts *layouts);
/* Makes layout `index` active, its streams after the work submitted so far to the active
 * one's; streams (optional, nb_parts) gets them, owned by the layouts. On failure the active
 * layout stays. Thread-safe. gctx_layouts_switch_ordered with GCTX_LAYOUTS_ORDER_ALL. */
GCTX_API gctx_status gctx_layouts_switch(gctx_layouts *layouts, unsigned index,
                                         gctx_stream **streams);
#define GCTX_LAYOUTS_ORDER_ALL 0x0u     /* every new stream after every old one: a barrier */
#define GCTX_LAYOUTS_ORDER_BY_PART 0x1u /* new stream i after old stream i only */
/* flags: a GCTX_LAYOUTS_ORDER_* value (other bits: INVALID_ARGUMENT). */
GCTX_API gctx_status gctx_layouts_switch_ordered(gctx_layouts *layouts, unsigned index,
                                                 unsigned flags, gctx_stream **streams);
/* Partition `part` of layout `layout`: each output optional, owned by the layouts. */
GCTX_API gctx_status gctx_layouts_get(const gctx_layouts *layouts, unsigned layout, unsigned part,
                                      gctx_partition **partition, gctx_context **context,
                                      gctx_stream **stream);
GCTX_API gctx_status gctx_layouts_get_active(gctx_layouts *layouts, unsigned *index);

/* ---- Seeing where work runs ---- */
/* The physical SM ids (%smid, sorted) a kernel with blocks on every SM the stream may use ran
 * on: count gets how many, at most capacity written. Driver 12.4+. UNSUPPORTED where the
 * driver runs no kernels; INVALID_ARGUMENT: count NULL, or sm_ids NULL with a capacity. */
GCTX_API gctx_status gctx_stream_observe_sms(gctx_stream *stream, unsigned *sm_ids,
                                             unsigned capacity, unsigned *count);

/* ---- Failed releases: driver destroys that failed, kept and retried (docs/api.md) ---- */
typedef struct gctx_release_failures {
    size_t size; /* sizeof(gctx_release_failures), set by GCTX_RELEASE_FAILURES_INIT */
    unsigned long long events;           /* failed cuEventDestroy calls */
    unsigned long long streams;          /* failed cuStreamDestroy, cuStreamSynchronize calls */
    unsigned long long green_contexts;   /* failed cuGreenCtxDestroy calls */
    unsigned long long primary_contexts; /* failed cuDevicePrimaryCtxRelease calls */
    unsigned long long kernels;          /* failed cuModuleUnload and cuMemFree calls */
    unsigned long long total;            /* the sum of the above */
    unsigned pending;                    /* driver objects kept, not yet destroyed */
    int last_cuda_result;                /* the CUresult of the last failure (0: none) */
    char last_message[256];              /* "cuEventDestroy: CUDA_ERROR_... (n)" or "" */
} gctx_release_failures;
#define GCTX_RELEASE_FAILURES_INIT {sizeof(gctx_release_failures), 0, 0, 0, 0, 0, 0, 0, 0, {0}}
/* Copies the process's counts (reads no driver state). */
GCTX_API gctx_status gctx_release_failures_get(gctx_release_failures *failures);
/* Tries again to destroy every kept driver object. DRIVER, naming how many are left. */
GCTX_API gctx_status gctx_release_failures_retry(void);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_H */

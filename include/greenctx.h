/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx: carve a CUDA GPU's streaming multiprocessors (SMs) into disjoint partitions with
 * the driver's green contexts, and run work on them.
 *
 * This header is the core: devices, partitions and their splits, green contexts, streams,
 * events, the context cache and layouts. Two more headers of the same library build on it:
 * greenctx_claims.h (tenancy: SMs held across processes, the claims registry, MPS) and
 * greenctx_controller.h (policy: the elastic controller). It needs no CUDA header: the four
 * CUDA handle types that cross the API are declared here exactly as cuda.h declares them, so
 * this file may be included before or after <cuda.h>, or without it.
 *
 * Example: two disjoint partitions of 24 and 40 SMs, a green context and a stream on the first,
 * a kernel launched there through the raw stream, and everything released (error handling
 * shortened to CHECK; `fn` and `args` are the caller's kernel, as for cuLaunchKernel):
 *
 *   #define CHECK(call) do { gctx_status s_ = (call); if (s_ != GCTX_SUCCESS) {        \
 *       fprintf(stderr, "%s: %s\n", gctx_status_name(s_), gctx_last_error()); exit(1); } \
 *   } while (0)
 *
 *   int count;
 *   gctx_device_info info = GCTX_DEVICE_INFO_INIT;
 *   CHECK(gctx_device_count(&count));              // count > 0, else nothing to split
 *   CHECK(gctx_device_get_info(0, &info));         // info.sm_count, the alignment, ...
 *
 *   gctx_partition *device, *parts[2];
 *   gctx_group groups[2] = {GCTX_GROUP_INIT, GCTX_GROUP_INIT};
 *   groups[0].num_sms = 24;
 *   groups[1].num_sms = 40;
 *   CHECK(gctx_partition_from_device(0, &device));
 *   CHECK(gctx_partition_split(device, groups, 2, NULL, parts, NULL, NULL, NULL));
 *
 *   gctx_context *ctx;
 *   gctx_stream *stream;
 *   CHECK(gctx_context_create(parts[0], NULL, &ctx));
 *   CHECK(gctx_stream_create(ctx, NULL, &stream));
 *   CUstream raw = gctx_stream_handle(stream);     // or kernel<<<grid, block, 0, raw>>>(...)
 *   cuLaunchKernel(fn, 96, 1, 1, 128, 1, 1, 0, raw, args, NULL); // runs on 24 SMs only
 *   CHECK(gctx_stream_synchronize(stream));
 *
 *   gctx_stream_release(stream);                   // any order: objects keep what they need
 *   gctx_context_release(ctx);
 *   gctx_partition_release(parts[0]);
 *   gctx_partition_release(parts[1]);
 *   gctx_partition_release(device);
 *
 * Conventions (every function):
 * - Fallible functions return a gctx_status. Outputs go through pointer arguments and are left
 *   untouched on failure. On failure gctx_last_error() gives this thread's message, which says
 *   what was asked, which rule it broke and what would work; gctx_last_cuda_result() gives the
 *   CUresult behind a driver failure (0 when the failure was not the driver's).
 * - Failures every function may give, beside those its comment names:
 *   GCTX_ERROR_INVALID_ARGUMENT  a required pointer is NULL, a size-prefixed struct's size is
 *                                below its first layout or unset, a reserved field is nonzero;
 *   GCTX_ERROR_INVALID_HANDLE    a handle argument is released, never came from greenctx, or
 *                                is of another type (see Handles below);
 *   GCTX_ERROR_NO_DRIVER         (functions that use the driver) no libcuda could be loaded;
 *   GCTX_ERROR_UNSUPPORTED       (functions marked "Driver 12.4+" or later) the driver is too
 *                                old; the message names the version needed and the one found;
 *   GCTX_ERROR_DRIVER            a driver call failed (gctx_last_cuda_result() says which
 *                                CUresult; the message names the call);
 *   GCTX_ERROR_OUT_OF_MEMORY     host memory ran out.
 *   "Driver X.Y+" on a function: the lowest driver it works with, from GCTX_FEATURE_MAP.
 * - Objects are opaque and reference-counted. A create function returns a reference the caller
 *   owns; *_release drops it (NULL is accepted and ignored). An object keeps alive whatever it
 *   was made from, so releases may come in any order.
 * - Every function may be called from any thread. Objects are immutable after creation except
 *   their reference count. No function leaves the calling thread's current CUDA context changed
 *   (but gctx_current_context_restore, whose job it is).
 * - A call that fails leaves nothing behind: what it made before the failure is undone.
 * - After a fault the process's CUDA state is lost, on every context: green contexts split
 *   SMs, not fault domains (an illegal address on one green context fails every context of
 *   the process with 700). From the first call that meets a sticky CUresult
 *   (700, 702, 710, 714 to 719, 721), every call that uses the driver fails with it
 *   (GCTX_ERROR_DRIVER, gctx_last_cuda_result() that CUresult, the message saying the process
 *   must restart); a cached context or drained stream is checked before it is handed out
 *   (a drained stream that comes back with its context, by the context's check).
 *   Releases, gctx_release_failures_retry and gctx_cache_trim still destroy what they can.
 * - The CUDA driver is loaded on first use: libcuda.so.1, or the file named by the environment
 *   variable GREENCTX_CUDA_LIBRARY (tests point it at the simulated driver).
 *
 * Handles (gctx_partition *, gctx_context *, gctx_stream *, gctx_event *, gctx_layouts *):
 * - A handle is a value greenctx hands out, not the object's address: it names a slot of the
 *   library's handle table and that slot's generation. Copy it, compare it, pass it to any
 *   thread; never dereference it. *_retain returns the same value and adds a reference to it;
 *   each *_release drops one. When the last reference of a handle is released the handle is
 *   dead for good: greenctx never gives the same value again (an object that lives on inside
 *   another, e.g. a context held by its stream, comes back under a new value).
 * - A handle must not be released by one thread while another thread uses it: hold a
 *   reference (retain) for as long as any thread may be inside a call with it.
 * - What stale-handle detection catches (GCTX_ERROR_INVALID_HANDLE, the object untouched; a
 *   *_retain returns NULL, a *_release does nothing, and both set gctx_last_error()):
 *   a handle used after its last reference was released, even when its memory and its table
 *   slot now belong to a new object; a second release after the last one (it never drops a
 *   reference that another object or caller holds); a pointer that never came from greenctx
 *   (refused without reading the memory it points to); a handle of another object type.
 * - What it does not catch: a release racing with a use in another thread (the rule above:
 *   the object may be freed under the other call); more releases than retains of the same
 *   value while references remain (references are counted per handle value, so the extra
 *   release drops a reference another part of the program meant to hold: it is caught only
 *   once the count reaches zero); raw CUDA handles (CUstream, CUgreenCtx, ...) kept after
 *   their greenctx object was released; a handle kept while 2^42 more handles are given out
 *   from its table slot (the generation wraps; 2^10 on 32-bit systems).
 *
 * Structs that grow: a struct with a size field (gctx_device_info, gctx_partition_info,
 * gctx_split_options, gctx_split_plan, gctx_context_options, gctx_context_request,
 * gctx_context_info, gctx_stream_options, gctx_release_failures, gctx_cache_stats) is
 * initialised with its INIT macro, which sets size to the layout the caller was compiled with.
 * The library accepts every layout from the first published one (0.1.0; 0.2.0 for
 * gctx_release_failures and gctx_cache_stats; 0.3.0 for gctx_context_request) on: it reads
 * and writes only the first `size` bytes it knows. An input from an older header gets the
 * defaults for the fields it lacks; one from a newer header has the fields this library does
 * not know ignored (check gctx_version() before relying on a newer field). An
 * output is never written past the caller's size; bytes past the fields this library knows are
 * left as they were. A size below the first layout, or 0, is GCTX_ERROR_INVALID_ARGUMENT naming
 * the INIT macro. Arrays of gctx_group and gctx_group_plan grow through their reserved fields.
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

/* ======================================================================================== */
/* The stable API: what a program that splits a GPU needs                                   */
/* ======================================================================================== */

/* ---------------------------------------------------------------------------------------- */
/* Version                                                                                  */

#define GCTX_VERSION_MAJOR 0
#define GCTX_VERSION_MINOR 3
#define GCTX_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH; never re-encoded. From 1.0, the same major is ABI
 * compatible. Before 1.0 a minor version may change layouts (0.2 added the reserved fields
 * of gctx_group and gctx_group_plan, so code built with the 0.1 header must be rebuilt), so
 * each minor has its own SONAME (libgreenctx.so.0.3 for 0.3.x) and the CMake package accepts
 * only the same major.minor (SameMinorVersion). Size-prefixed structs (those with a size field) stay
 * compatible across every version: see "Structs that grow" above. */
#define GCTX_VERSION (GCTX_VERSION_MAJOR * 10000 + GCTX_VERSION_MINOR * 100 + GCTX_VERSION_PATCH)

/* The library's GCTX_VERSION, to compare with the header's at run time. */
GCTX_API int gctx_version(void);
/* "MAJOR.MINOR.PATCH"; static storage. */
GCTX_API const char *gctx_version_string(void);

/* ---------------------------------------------------------------------------------------- */
/* CUDA handle types, declared as cuda.h declares them (identical typedefs may repeat).     */

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgreenCtx_st *CUgreenCtx;

/* ---------------------------------------------------------------------------------------- */
/* Status codes and errors                                                                  */

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
/* The CUresult behind this thread's last failed call, or 0 when that failure was not the
 * driver's. */
GCTX_API int gctx_last_cuda_result(void);

/* ---------------------------------------------------------------------------------------- */
/* Driver                                                                                   */

/* Loads the driver and resolves its entry points; idempotent and thread-safe. Every other
 * function does this itself; call it to learn early whether a driver is there. A failed
 * attempt leaves nothing loaded and the next call tries again.
 * GCTX_ERROR_NO_DRIVER: no libcuda could be loaded (the message names what was tried);
 * GCTX_ERROR_DRIVER: cuInit failed. */
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
/* Why the feature is on or off, e.g. "needs driver 13.1, found 13.0" or
 * "symbol cuDevSmResourceSplit not exported by the driver"; static storage, never NULL. */
GCTX_API const char *gctx_feature_reason(gctx_feature feature);
/* "green_contexts", ...; NULL for values not in the table. */
GCTX_API const char *gctx_feature_name(gctx_feature feature);

/* ---------------------------------------------------------------------------------------- */
/* Devices                                                                                  */

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
    int sm_rules_derived;           /* 1: the two above come from the architecture rule
                                       because the driver (before 13.0) does not report them */
    unsigned locality_domain_count; /* 0 when the driver or device has none */
} gctx_device_info;
#define GCTX_DEVICE_INFO_INIT {sizeof(gctx_device_info), 0, {0}, 0, 0, 0, 0, 0, 0, 0}

/* Facts about one device, on any driver: before 12.4 sm_count is the multiprocessor count;
 * before 13.0 the SM rules are the architecture's (sm_rules_derived 1); locality_domain_count
 * needs 13.4 and is 0 before. GCTX_ERROR_NO_DEVICE for an ordinal out of range (the message
 * names the range). */
GCTX_API gctx_status gctx_device_get_info(int device, gctx_device_info *info);

/* The device's UUID as nvidia-smi prints it, "GPU-" and 8-4-4-4-12 hex digits (41 bytes with
 * the NUL: GCTX_UUID_SIZE), the name claims registries use; needs CUDA 11.4+
 * (GCTX_ERROR_UNSUPPORTED before). */
#define GCTX_UUID_SIZE 41
GCTX_API gctx_status gctx_device_uuid(int device, char *uuid, size_t size);
/* The device's PCI bus id as the driver writes it, domain:bus:device.function
 * ("0000:18:00.0"; at most GCTX_PCI_BUS_ID_SIZE bytes with the NUL). */
#define GCTX_PCI_BUS_ID_SIZE 32
GCTX_API gctx_status gctx_device_pci_bus_id(int device, char *bus_id, size_t size);

/* ---------------------------------------------------------------------------------------- */
/* SM partitions                                                                            */

/* A set of SMs on one device that green contexts can be made from: the whole device, one
 * group of a split, a split's remainder, or the SMs of a green context. Immutable. */
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
    int structured;                 /* 0 for remainders and what is made from them: their SMs
                                       carry no co-scheduling guarantee */
    unsigned flags;                 /* the driver's CUdevSmResource flags (13.1+), else 0 */
    int has_locality_domain;        /* 1 when locality_domain_id is meaningful (13.4+) */
    unsigned locality_domain_id;
} gctx_partition_info;
#define GCTX_PARTITION_INFO_INIT {sizeof(gctx_partition_info), 0, GCTX_PARTITION_DEVICE, 0, 0, 0, 0, 0, 0, 0}

/* Every SM of a device. Driver 12.4+. GCTX_ERROR_NO_DEVICE for an ordinal out of range. */
GCTX_API gctx_status gctx_partition_from_device(int device, gctx_partition **partition);
/* Its facts; reads no driver state (flags need 13.1, locality 13.4, and are 0 before). */
GCTX_API gctx_status gctx_partition_get_info(const gctx_partition *partition,
                                             gctx_partition_info *info);
/* Adds a reference to the handle and returns it; NULL for NULL, and for a released or foreign
 * handle (gctx_last_error() says which). */
GCTX_API gctx_partition *gctx_partition_retain(gctx_partition *partition);
/* Drops one reference; NULL is ignored; a released or foreign handle is refused (nothing is
 * freed; gctx_last_error() says why). The same holds for every *_retain and *_release. */
GCTX_API void gctx_partition_release(gctx_partition *partition);

/* One group of a split request; all zeros but num_sms is the common case.
 * num_sms: the SM count wanted; 0 asks for discovery (every SM that is still free when the
 *   group's turn comes, in whole co-scheduled units).
 * coscheduled_sm_count: SMs that must be able to run one thread-block cluster together; 0 is
 *   the partition's alignment. Below the alignment the group is made of finer units (2 SMs on
 *   Hopper) that give up large clusters.
 * preferred_coscheduled_sm_count: a larger unit the driver should try to use (13.1+ drivers
 *   only; ignored before); 0 means the same as coscheduled_sm_count.
 * backfill: nonzero lets the group take SMs outside whole co-scheduled units (the split's
 *   leftover) to reach num_sms; with num_sms 0 the group takes everything that is left and
 *   must be the last group. */
typedef struct gctx_group {
    unsigned num_sms;
    unsigned coscheduled_sm_count;
    unsigned preferred_coscheduled_sm_count;
    int backfill;
    /* Must be zero (GCTX_ERROR_INVALID_ARGUMENT naming the group otherwise). Fields added
     * before 1.0 take these slots, with zero meaning today's behaviour: initialise groups with
     * GCTX_GROUP_INIT, C designated initializers ({.num_sms = 24}) or zeroed memory and they
     * keep working. */
    unsigned reserved[4];
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
    GCTX_SPLIT_PATH_GRANULES = 2,   /* one split-by-count into equal granules, whole granules
                                       aggregated per group (drivers 12.4 to 13.0) */
    GCTX_SPLIT_PATH_FINE_GRANULES = 3 /* as GRANULES, with the driver's ignore-co-scheduling
                                         flag: 2-SM granules (a group asked for co-scheduling
                                         below the alignment, or the input is unstructured) */
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
    int nested;             /* 1 when the input is itself a split output or a remainder, so the
                               split goes through an intermediate green context */
} gctx_split_plan;
#define GCTX_SPLIT_PLAN_INIT {sizeof(gctx_split_plan), 0, 0, GCTX_SPLIT_PATH_STRUCTURED, 0, 0, 0, 0, 0}

/* Dry run: what gctx_partition_split would give for the same request, creating nothing.
 * plan and group_plans (nb_groups entries) are outputs; either may be NULL. Driver 12.4+;
 * the structured path needs 13.1 and is chosen by itself where the driver has it. Fails as
 * gctx_partition_split. Planning a split of a group or a remainder makes (and destroys) an
 * intermediate green context. */
GCTX_API gctx_status gctx_partition_plan(const gctx_partition *input, const gctx_group *groups,
                                         unsigned nb_groups, const gctx_split_options *options,
                                         gctx_split_plan *plan, gctx_group_plan *group_plans);

/* Splits input into nb_groups disjoint partitions of exactly the sizes the plan gives, and
 * the remainder. partitions: nb_groups outputs. remainder: NULL when the caller doesn't want
 * it; *remainder is set to NULL when nothing is left over. options may be NULL (strict).
 * plan and group_plans: optional outputs, as in gctx_partition_plan.
 * Works on every driver with green contexts, on any kind of partition: splitting a group or a
 * remainder goes through an intermediate green context that greenctx makes and keeps alive
 * as long as anything made from it lives.
 * Driver 12.4+. GCTX_ERROR_INVALID_ARGUMENT: groups is NULL or nb_groups 0, a count the
 * partition can't give (the message names the rule and the nearest legal counts), a
 * discovery-with-backfill group that is not last, a nonzero reserved field (naming the group);
 * GCTX_ERROR_INSUFFICIENT_SMS: the groups don't fit. */
GCTX_API gctx_status gctx_partition_split(gctx_partition *input, const gctx_group *groups,
                                          unsigned nb_groups, const gctx_split_options *options,
                                          gctx_partition **partitions, gctx_partition **remainder,
                                          gctx_split_plan *plan, gctx_group_plan *group_plans);

typedef enum gctx_relation {
    GCTX_RELATION_DISJOINT = 0,      /* guaranteed to share no SM (made by one split, or from
                                        disjoint ancestors) */
    GCTX_RELATION_MAY_OVERLAP = 1,   /* made by different splits: the driver may give both the
                                        same SMs */
    GCTX_RELATION_OVERLAP = 2        /* known to share SMs (the same SMs, or one holds the other) */
} gctx_relation;

/* What greenctx knows of two partitions' SMs, from how they were made; no driver call. */
GCTX_API gctx_status gctx_partition_relation(const gctx_partition *a, const gctx_partition *b,
                                             gctx_relation *relation);

/* ---------------------------------------------------------------------------------------- */
/* Green contexts                                                                           */

/* A green context: a CUDA context whose work runs only on one partition's SMs. It keeps the
 * partition it was made from alive. Work in the primary context (ordinary streams) still runs
 * on every SM, including this context's: isolate two workloads by giving both a context. */
typedef struct gctx_context gctx_context;

typedef enum gctx_workqueue_scope {
    GCTX_WORKQUEUE_SCOPE_DEFAULT = 0,    /* leave the driver's choice (share with the device) */
    GCTX_WORKQUEUE_SCOPE_DEVICE_CTX = 1, /* share workqueues with every context (13.1+) */
    GCTX_WORKQUEUE_SCOPE_BALANCED = 2    /* keep apart from other balanced contexts (13.1+) */
} gctx_workqueue_scope;

/* gctx_context_options.flags */
#define GCTX_CONTEXT_FRESH 0x1u /* a new driver context, never one from the context cache (it
                                   is cached on release like any other) */

typedef struct gctx_context_options {
    size_t size; /* sizeof(gctx_context_options), set by GCTX_CONTEXT_OPTIONS_INIT */
    gctx_workqueue_scope workqueue_scope;
    unsigned workqueue_concurrency_limit; /* expected concurrent stream-ordered workloads;
                                             0 leaves the driver's; 13.1+ */
    unsigned flags; /* GCTX_CONTEXT_* (0.2.0: a caller of an older layout gets 0) */
} gctx_context_options;
#define GCTX_CONTEXT_OPTIONS_INIT {sizeof(gctx_context_options), GCTX_WORKQUEUE_SCOPE_DEFAULT, 0, 0}

/* A green context on the partition's SMs. options may be NULL. Driver 12.4+; workqueue
 * options need driver 13.1 (GCTX_ERROR_UNSUPPORTED before, naming it). Several contexts may be
 * made from one partition; they share its SMs. GCTX_ERROR_INVALID_ARGUMENT for a
 * workqueue_scope that is no gctx_workqueue_scope value, or unknown flags. The driver context
 * may come from the context cache (below): one an earlier context of the same SMs and options
 * left there. (gctx_contexts_create with the partition alone in its request.) */
GCTX_API gctx_status gctx_context_create(gctx_partition *partition,
                                         const gctx_context_options *options,
                                         gctx_context **context);

/* What gctx_contexts_create makes, from which SMs. The SMs: partition's, else context's, else
 * (both NULL) every SM of device. What of them: groups (nb_groups of them, as
 * gctx_partition_split takes them): a split, one context per group; else num_sms: one context
 * of that many SMs (a one-group split); else all of them: one context. */
#define GCTX_CONTEXT_REQUEST_AT_LEAST 0x1u /* num_sms rounded up to the next group size the
                                              SMs have, or all of them when no group is that
                                              large (torch's GreenContext.create: 4 -> 8,
                                              20 -> 24, 130 -> 132 on an H200) */
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

/* Makes the green contexts a request asks for, in one call: contexts gets nb_groups of them
 * (one without groups), on disjoint SMs for a split; remainder, when not NULL, gets a context on
 * the SMs a split left over, or NULL when none are (always NULL for all the SMs, and for
 * GCTX_CONTEXT_REQUEST_AT_LEAST given all of them). On failure no context is made and no
 * output is written. Driver 12.4+. Fails as gctx_partition_split and gctx_context_create;
 * GCTX_ERROR_INVALID_ARGUMENT, naming the field, for contexts NULL, both partition and context
 * given, groups without nb_groups or the other way round, both groups and num_sms, unknown
 * flags, GCTX_CONTEXT_REQUEST_AT_LEAST without num_sms or with split_options, or num_sms above
 * the SMs' count with it; GCTX_ERROR_NO_DEVICE for a device out of range. */
GCTX_API gctx_status gctx_contexts_create(const gctx_context_request *request,
                                          gctx_context **contexts, gctx_context **remainder);

/* The Python API's shapes of gctx_contexts_create (GreenContext.create, .split), kept as they
 * are: a context of exactly num_sms SMs of a device (strict; the remainder dropped;
 * GCTX_ERROR_INVALID_ARGUMENT for num_sms 0); the same of at least num_sms
 * (GCTX_CONTEXT_REQUEST_AT_LEAST); a split of a device, one context per group. */
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
/* Takes a green context someone else created (PyTorch, cuda.core, another library) without
 * taking ownership: greenctx never destroys it; the caller keeps it alive while the handle
 * lives. Driver 12.4+. GCTX_ERROR_INVALID_ARGUMENT for NULL; GCTX_ERROR_DRIVER when the
 * driver says green is no live green context. */
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

/* Its facts (asks the driver for its SM count). Driver 12.4+; has_id needs 12.9, workqueue
 * settings 13.1. */
GCTX_API gctx_status gctx_context_get_info(const gctx_context *context, gctx_context_info *info);
/* The context's SMs as a partition (kind CONTEXT), which can be split further; it keeps the
 * context alive. Driver 12.4+. */
GCTX_API gctx_status gctx_context_partition(gctx_context *context, gctx_partition **partition);
/* The context's locality domain. Driver 13.4+; GCTX_ERROR_UNSUPPORTED before, and where the
 * context's SMs carry no domain (the device has none, or they span several). */
GCTX_API gctx_status gctx_context_locality_domain(const gctx_context *context, unsigned *domain);
/* The raw handles, for cudart, cuBLAS, NCCL or PyTorch; owned by the context: valid while
 * the context lives, never checked after (NULL, with gctx_last_error() set, for a handle that
 * is not a live context). */
GCTX_API CUgreenCtx gctx_context_green_handle(const gctx_context *context);
/* cuCtxFromGreenCtx: push it or make it current to use APIs that take the current context. */
GCTX_API CUcontext gctx_context_cu_context(const gctx_context *context);
/* What greenctx knows of two contexts' SMs (see gctx_partition_relation); no driver call. */
GCTX_API gctx_status gctx_context_relation(const gctx_context *a, const gctx_context *b,
                                           gctx_relation *relation);
/* The workqueue concurrency limit a device's contexts get by default (follows
 * CUDA_DEVICE_MAX_CONNECTIONS). Driver 13.1+, else GCTX_ERROR_UNSUPPORTED;
 * GCTX_ERROR_NO_DEVICE for an ordinal out of range. */
GCTX_API gctx_status gctx_device_get_max_workqueue_concurrency(int device, unsigned *limit);

/* ---------------------------------------------------------------------------------------- */
/* Streams and events                                                                       */

/* A stream whose work runs on a context's SMs. Green-context streams are non-blocking: they
 * never synchronise with the legacy default stream. A stream keeps its context alive; its
 * release waits for its work, then destroys it. */
typedef struct gctx_stream gctx_stream;

typedef struct gctx_stream_options {
    size_t size;  /* sizeof(gctx_stream_options), set by GCTX_STREAM_OPTIONS_INIT */
    int priority; /* lower is higher priority; clamped to the device's range */
    int blocking; /* must stay 0: the driver refuses blocking green streams */
} gctx_stream_options;
#define GCTX_STREAM_OPTIONS_INIT {sizeof(gctx_stream_options), 0, 0}

/* options may be NULL. Driver 12.4+; before 12.5 (green streams) the stream is made with the
 * context current, and the caller's current context is restored. GCTX_ERROR_INVALID_ARGUMENT
 * for blocking != 0. */
GCTX_API gctx_status gctx_stream_create(gctx_context *context, const gctx_stream_options *options,
                                        gctx_stream **stream);
/* Takes a stream someone else created, without ownership; its green context (if any) is
 * adopted too. Driver 12.4+. GCTX_ERROR_INVALID_ARGUMENT for NULL (the legacy default stream)
 * or a stream of no green context. */
GCTX_API gctx_status gctx_stream_adopt(CUstream stream, gctx_stream **out);
GCTX_API gctx_stream *gctx_stream_retain(gctx_stream *stream);
GCTX_API void gctx_stream_release(gctx_stream *stream);
/* The raw stream, for cudart, cuBLAS, NCCL, torch.cuda.ExternalStream: valid while the
 * stream lives (NULL, with gctx_last_error() set, for a handle that is not a live stream). */
GCTX_API CUstream gctx_stream_handle(const gctx_stream *stream);
/* The stream's context, retained for the caller (the same handle value while the caller
 * still holds one, else a new one). */
GCTX_API gctx_status gctx_stream_context(gctx_stream *stream, gctx_context **context);
/* cuStreamGetPriority. Driver 12.4+. */
GCTX_API gctx_status gctx_stream_priority(const gctx_stream *stream, int *priority);
/* Waits for the stream's work. Driver 12.4+; GCTX_ERROR_DRIVER carries an error of the work. */
GCTX_API gctx_status gctx_stream_synchronize(gctx_stream *stream);
/* The green context a raw stream belongs to (cuStreamGetGreenCtx), or NULL for a stream of
 * an ordinary context. Driver 12.4+; GCTX_ERROR_DRIVER for a stream the driver doesn't know. */
GCTX_API gctx_status gctx_stream_get_green_context(CUstream stream, CUgreenCtx *green);

/* An event, to order work on two partitions without a host sync. */
typedef struct gctx_event gctx_event;
/* An event of context's device (timing disabled: it only orders work). Driver 12.4+. */
GCTX_API gctx_status gctx_event_create(gctx_context *context, gctx_event **event);
GCTX_API gctx_event *gctx_event_retain(gctx_event *event);
GCTX_API void gctx_event_release(gctx_event *event);
/* The raw event, valid while the event lives (NULL for a handle that is not a live event). */
GCTX_API CUevent gctx_event_handle(const gctx_event *event);
/* Records the event after the work submitted so far to a stream, or to every stream of a
 * context (cuGreenCtxRecordEvent). Driver 12.4+. These four fail with GCTX_ERROR_DRIVER
 * where the driver refuses (e.g. an event and a stream of different devices). */
GCTX_API gctx_status gctx_event_record(gctx_event *event, gctx_stream *stream);
GCTX_API gctx_status gctx_event_record_context(gctx_event *event, gctx_context *context);
/* Makes later work of a stream, or of every stream of a context, wait for the event. */
GCTX_API gctx_status gctx_stream_wait_event(gctx_stream *stream, gctx_event *event);
GCTX_API gctx_status gctx_context_wait_event(gctx_context *context, gctx_event *event);
/* Waits for the work before the event's last record. Driver 12.4+. */
GCTX_API gctx_status gctx_event_synchronize(gctx_event *event);

/* ======================================================================================== */
/* The rest: the context cache, the current context, layouts, where work runs, releases     */
/* ======================================================================================== */

/* ---------------------------------------------------------------------------------------- */
/* The context cache                                                                        */

/* Destroying a green context leaves device memory charged to the device's primary context
 * until that is reset (no cudart or PyTorch program ever resets it), and making one costs
 * milliseconds (BENCHMARKS.md, "Re-partitioning"). So when the last reference to a
 * context greenctx made goes (its streams released, which drains them), greenctx keeps the
 * driver context, and hands it back to the next context made on the same device for the same
 * SMs with the same options: identified by the bytes of the SM resources the driver is given
 * (a split is deterministic), so a hit always runs on exactly the SMs the request would get.
 * The same SMs reached through another split is a miss. Adopted contexts, and contexts made
 * from an adopted context's SMs, are never cached.
 *
 * Per device, at most `limit` idle contexts are kept (16 unless GREENCTX_CONTEXT_CACHE says
 * otherwise); the least recently released is destroyed first. Eviction (over the limit,
 * gctx_cache_set_limit, gctx_cache_trim) is the only place a cached context is destroyed, so
 * the limit also bounds the device memory the driver holds for them.
 * Environment: GREENCTX_CONTEXT_CACHE=0 turns the cache off; a number N sets the initial
 * limit of every device; anything else (set but empty included) makes context creation fail
 * with GCTX_ERROR_INVALID_ARGUMENT naming the variable.
 *
 * What a cached context carries over: whatever was left in the driver context. Modules loaded
 * while it was current stay loaded, memory allocated in it stays allocated, its CUcontext,
 * CUgreenCtx and id (gctx_context_info.id) are the same as before, and streams made on its raw
 * handles outside greenctx live on. Its greenctx streams and events were released first (they
 * held the context); up to 4 of its streams, drained, stay with it and are handed to its next
 * streams of the same priority, so a new gctx_stream may have the CUstream value an earlier one
 * had (a raw CUstream kept after its gctx_stream was released may name a stream in use again).
 * A program that needs a context with nothing left in it asks for one with GCTX_CONTEXT_FRESH
 * in gctx_context_options.flags, or empties the cache with gctx_cache_trim. Trim before
 * cuDevicePrimaryCtxReset. At exit the driver frees what is still cached. */

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

/* The most idle contexts the device's cache keeps. */
GCTX_API gctx_status gctx_cache_get_limit(int device, unsigned *limit);
/* Sets it; cached contexts beyond it are destroyed now (oldest first). 0 turns the cache off
 * for the device. */
GCTX_API gctx_status gctx_cache_set_limit(int device, unsigned limit);
/* Destroys every context the device's cache holds; the limit stays. A destroy the driver
 * refuses is counted and retried as a release's (gctx_release_failures_get). */
GCTX_API gctx_status gctx_cache_trim(int device);
/* The device's counters since the process started. */
GCTX_API gctx_status gctx_cache_get_stats(int device, gctx_cache_stats *stats);

/* ---------------------------------------------------------------------------------------- */
/* The calling thread's current context                                                     */

/* Some libraries change the calling thread's current CUDA context and leave it so: NCCL's
 * communicator init makes each device's primary context current, as cudart's cudaSetDevice
 * does. Code that relies on its current context (a green context made current, the driver API)
 * saves it before such a call and restores it after:
 *
 *     CUcontext saved;
 *     gctx_current_context_save(&saved);
 *     ncclCommInitAll(comms, 2, devices);         (changes the current context)
 *     gctx_current_context_restore(saved, NULL);
 *
 * The current context is the top of the thread's context stack (NULL when it is empty). Both
 * work on every driver (green contexts are not needed). */
GCTX_API gctx_status gctx_current_context_save(CUcontext *saved); /* INVALID_ARGUMENT: NULL */
/* Makes saved current again, replacing the top of the stack; with saved NULL it pops until
 * nothing is current (a library that pushed contexts and left them). changed, when not NULL,
 * gets 1 when something else was current (the call in between changed it), else 0.
 * GCTX_ERROR_DRIVER when the driver refuses saved (destroyed since it was saved); the
 * current context is then left as the call in between left it. */
GCTX_API gctx_status gctx_current_context_restore(CUcontext saved, int *changed);

/* The SMs the calling thread's current context runs on, for sizing a grid as persistent
 * kernels do (one block per SM, times the blocks one SM holds: CUTLASS's
 * KernelHardwareInfo::sm_count, a Triton persistent kernel's grid, a cooperative launch): a
 * green context's partition (its gctx_context_cu_context, or the context of a greenctx stream
 * made current), else the device's count. Unlike cudaGetDeviceProperties, which says the
 * device's count whatever is current, and caches it. Under `greenctx run` the program's
 * primary context answers with its partition (the whole device's under --device-sms physical;
 * docs/run.md). GCTX_ERROR_INVALID_ARGUMENT for count NULL; GCTX_ERROR_DRIVER
 * (CUDA_ERROR_INVALID_CONTEXT) when nothing is current. */
GCTX_API gctx_status gctx_current_sm_count(unsigned *count);

/* ---------------------------------------------------------------------------------------- */
/* Layouts: re-partitioning without making driver objects                                   */

/* Alternative partitionings of one device, made up front: layout l splits the device's SMs into
 * nb_parts partitions, each with a green context, a stream and an event. Switching the work from
 * one layout to another makes no driver object: the new layout's streams wait (events) for
 * everything submitted so far to the active layout's streams, then take the work. The partitions
 * of one layout are disjoint; those of different layouts are different splits, so they may share
 * SMs (and gctx_partition_relation says GCTX_RELATION_MAY_OVERLAP). A CUDA graph captured on a
 * layout's stream replays there, ordered by the same switches; don't switch while one of the
 * layouts' streams is capturing. */
typedef struct gctx_layouts gctx_layouts;

/* sm_counts: nb_layouts rows of nb_parts SM counts; row l is layout l. A 0 as the last count
 * of a row gives that partition every SM the others leave (the split's remainder); elsewhere
 * counts follow the split rules (strict). options: for every context (NULL: defaults).
 * Layout 0 is active at first. Example, three ratios of two partitions:
 *   unsigned counts[] = {16, 0, 32, 0, 64, 0};
 *   gctx_layouts_create(0, counts, 3, 2, NULL, &layouts); */
GCTX_API gctx_status gctx_layouts_create(int device, const unsigned *sm_counts,
                                         unsigned nb_layouts, unsigned nb_parts,
                                         const gctx_context_options *options,
                                         gctx_layouts **layouts);
GCTX_API gctx_layouts *gctx_layouts_retain(gctx_layouts *layouts);
/* Synchronizes and destroys the streams, then the rest (the contexts go to the cache). */
GCTX_API void gctx_layouts_release(gctx_layouts *layouts);
/* Makes layout `index` active: its streams wait for the work submitted so far to the active
 * layout's streams (nothing is done when it is already active). streams (optional, nb_parts
 * entries) gets the layout's streams: owned by the layouts, valid while they live (retain one
 * to keep it longer). The layouts hold their objects themselves: a release too many of a handle
 * they gave retires only that value (refused from then on), never their streams, and the next
 * switch or get gives the same object under a new value. On failure the active layout stays
 * (waits already made only add order). Thread-safe; work submitted to the old streams after the
 * switch is not waited for. The old layout's streams are funnelled into its stream 0: work
 * submitted later to old stream 0 also waits for its siblings' work from before the switch. Old
 * streams are not meant to get work after a switch, and this cannot deadlock (every wait is for
 * an event recorded earlier). The same as gctx_layouts_switch_ordered with
 * GCTX_LAYOUTS_ORDER_ALL. */
GCTX_API gctx_status gctx_layouts_switch(gctx_layouts *layouts, unsigned index,
                                         gctx_stream **streams);
/* How a switch orders the new layout's streams after the active layout's. BY_PART is for
 * workloads that keep their partition index in every layout (decode part 0, prefill part 1):
 * each goes on on its new partition after its own earlier work, and may run beside another's
 * unfinished old work (sharing, while that runs, the SMs both layouts give them). */
#define GCTX_LAYOUTS_ORDER_ALL 0x0u     /* every new stream after every old one: a barrier */
#define GCTX_LAYOUTS_ORDER_BY_PART 0x1u /* new stream i after old stream i only */
/* gctx_layouts_switch with the ordering in flags (a GCTX_LAYOUTS_ORDER_* value; other bits
 * are GCTX_ERROR_INVALID_ARGUMENT). */
GCTX_API gctx_status gctx_layouts_switch_ordered(gctx_layouts *layouts, unsigned index,
                                                 unsigned flags, gctx_stream **streams);
/* Partition `part` of layout `layout`: any of its partition, context and stream (each output
 * optional; owned by the layouts, as above). */
GCTX_API gctx_status gctx_layouts_get(const gctx_layouts *layouts, unsigned layout, unsigned part,
                                      gctx_partition **partition, gctx_context **context,
                                      gctx_stream **stream);
GCTX_API gctx_status gctx_layouts_get_active(gctx_layouts *layouts, unsigned *index);

/* ---------------------------------------------------------------------------------------- */
/* Seeing where work runs                                                                   */

/* Runs a small kernel (shipped as PTX, no toolkit needed) with enough blocks to reach every
 * SM the stream may use, and reports the physical SM ids (%smid) its blocks ran on, sorted.
 * count gets how many; at most capacity are written. Driver 12.4+. The simulated driver runs
 * this one kernel too, on the SMs it gave the stream's partition. GCTX_ERROR_UNSUPPORTED where
 * the driver runs no kernels; GCTX_ERROR_INVALID_ARGUMENT for a NULL count, or NULL sm_ids
 * with a nonzero capacity. */
GCTX_API gctx_status gctx_stream_observe_sms(gctx_stream *stream, unsigned *sm_ids,
                                             unsigned capacity, unsigned *count);

/* ---------------------------------------------------------------------------------------- */
/* Failed releases                                                                          */

/* A release cannot fail, but the driver calls it makes can (cuEventDestroy, cuStreamDestroy,
 * cuGreenCtxDestroy, cuDevicePrimaryCtxRelease, cuModuleUnload / cuMemFree of the kernel
 * gctx_stream_observe_sms loads, and the cuStreamSynchronize a stream's release makes before
 * its destroy, counted with the streams). Such a failure is counted here, and the driver object
 * is kept, not lost: the library tries to destroy it again at the next release of the same
 * kind (of any kind before a context's), and at gctx_release_failures_retry(). Counts are per
 * process, since the driver loaded. */
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
/* Copies the counts (reads no driver state). GCTX_ERROR_INVALID_ARGUMENT when failures is
 * NULL or its size is below the 0.2.0 layout. */
GCTX_API gctx_status gctx_release_failures_get(gctx_release_failures *failures);
/* Tries again to destroy every kept driver object. GCTX_SUCCESS when none is left; else
 * GCTX_ERROR_DRIVER, the message naming how many are left and the last driver error. */
GCTX_API gctx_status gctx_release_failures_retry(void);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_H */

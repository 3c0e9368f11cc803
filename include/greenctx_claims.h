/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx_claims.h: tenancy, SMs of a GPU held across processes. Claims and the registry
 * that keeps them (files under a runtime directory, locks, the environment variables named
 * below), MPS as this process sees it, tenant classes and their guard. The objects claims
 * hand out are the core's (greenctx.h, included here): its conventions hold for every
 * function below. Part of libgreenctx, like greenctx_controller.h.
 */
#ifndef GREENCTX_CLAIMS_H
#define GREENCTX_CLAIMS_H

#include "greenctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================== */
/* The stable API                                                                           */
/* ======================================================================================== */

/* ---------------------------------------------------------------------------------------- */
/* Tenants: SM claims across processes                                                      */

/* A claim is a set of a device's SMs that one process (a tenant) holds, so that tenants on one
 * GPU never build green contexts on the same SMs. SMs are handed out in the device's canonical
 * granules: by default the driver's structured split of the whole device, whose granules take
 * thread-block clusters of up to 8 SMs (cuBLAS and CUTLASS launch such kernels), by the
 * minimum partition or, where that strands SMs, by the first multiple of it that does not (on
 * an H200 8 granules of 16 SMs and 4 over: counts of 16k, 64 + 64, 16 + rest = 16 + 116).
 * GREENCTX_CLAIM_GRANULES=fine (every process on the GPU must set the same; a registry of the
 * other mode is GCTX_ERROR_REGISTRY while its claims live) uses the planner's split instead (on
 * an H200 16 of 8 and 4 that go alone, to a "rest" that finds no granule free, or with "all":
 * every count greenctx plan accepts), whose granules take clusters of 2 SMs, not of 4 or 8
 * (cudaErrorInvalidClusterSize on an H200); before driver 12.5, which has no split ignoring
 * co-scheduling, fine gets the split by the minimum partition. Any set of granules makes one green
 * context, adjacent or not, so fragmentation never refuses a request that fits in the free
 * SMs.
 *
 * The registry is node-local and needs no daemon: a directory per GPU (named by its UUID)
 * under the runtime directory, one file per claim, each held by a lock (flock) that the kernel
 * drops when the last process holding it ends, however it ends (a child the holder forks
 * without exec holds only claims made with GCTX_CLAIM_INHERIT or joined). A crash never
 * strands SMs: a claim whose lock nobody holds is stale, and the next registry operation
 * removes it. The registry records the identity of the split (format, greenctx version,
 * device UUID, driver version, the granules' sizes and resource bytes); one written otherwise
 * is refused with GCTX_ERROR_REGISTRY while any of its claims is live, and rebuilt once none
 * is.
 *
 * The runtime directory: options->runtime_dir, else $GREENCTX_RUNTIME_DIR, else
 * /var/tmp/greenctx-UID (not $XDG_RUNTIME_DIR, which logind removes at the last logout while
 * tenants run on). It is created with mode 0700 and refused (GCTX_ERROR_REGISTRY) when another
 * user owns it or others may write it, unless GCTX_CLAIM_SHARED_DIR (or
 * GREENCTX_RUNTIME_SHARED=1) says that several users share it: then it must be sticky (mode
 * 1777 or 1770) and owned by root or the caller, its per-GPU registries are made by root or
 * its owner, and claims of every user in it are coordinated (docs/tenants.md, Threat model).
 * A registry call waits for the registry's lock at most $GREENCTX_REGISTRY_LOCK_TIMEOUT_MS
 * (10000), then fails naming the holder; any error reading the registry fails the call
 * (GCTX_ERROR_REGISTRY), never counts as free SMs.
 *
 * Isolation needs MPS: without it, processes are time-sliced and their green contexts never
 * run at the same time; under MPS the same split gives the same SMs in every client, so
 * tenants on different claims run side by side. Claims are cooperative, not a security
 * boundary: a process that ignores them can use any SM. They do not partition memory
 * capacity, L2 or HBM bandwidth, and under MPS a fatal fault in one client reaches every
 * client of the server (docs/tenants.md). */
typedef struct gctx_claim gctx_claim;

/* gctx_claim_options.flags */
#define GCTX_CLAIM_WAIT 0x1u       /* queue until the SMs are free, up to timeout_ms */
#define GCTX_CLAIM_INHERIT 0x2u    /* the claim's lock survives exec: greenctx run hands it to
                                      the program it starts (else close-on-exec) */
#define GCTX_CLAIM_SHARED_DIR 0x4u /* the runtime directory is shared by several users */

/* Tenant classes, for the guard against what disjoint SMs don't isolate (the power cap, HBM
 * bandwidth): while a latency tenant's steps (gctx_claim_report_step) are over its target,
 * best-effort tenants on the GPU give way (gctx_claim_guard), down to a floor, and get
 * everything back within 50 ms of the pressure's end. Unguarded claims are neither
 * protected nor held back. docs/tenants.md, "The guard". */
typedef enum gctx_tenant_class {
    GCTX_TENANT_UNGUARDED = 0,
    GCTX_TENANT_LATENCY = 1,
    GCTX_TENANT_BEST_EFFORT = 2
} gctx_tenant_class;

typedef struct gctx_claim_options {
    size_t size;             /* sizeof(gctx_claim_options), set by GCTX_CLAIM_OPTIONS_INIT */
    unsigned flags;          /* GCTX_CLAIM_* */
    int timeout_ms;          /* with GCTX_CLAIM_WAIT: how long to wait; -1: forever */
    gctx_rounding rounding;  /* a count no set of granules gives: strict (refused, with the
                                nearest counts that can be claimed), down, nearest or up */
    const char *label;       /* shown by greenctx ps (a job name, "slurm 42.0"); NULL: none;
                                at most 127 bytes, as gctx_claim_info keeps it */
    const char *command;     /* the holder's command as ps shows it; NULL: this process's */
    const char *runtime_dir; /* NULL: the default above */
    int priority;            /* GCTX_CLAIM_PRIORITY_*, 0 .. 100: a claim yields SMs (see
                                gctx_claim_pressure) only to waiters of at least its own */
    gctx_tenant_class tenant_class; /* what the guard does for it or to it (below) */
    double target_ms;        /* latency: its step target in ms; 0: as alone within factor */
    double target_factor;    /* latency without target_ms: p99 within factor x alone (1.10) */
    unsigned floor_sms;      /* best-effort: the guard never holds it under this; 0: one granule */
} gctx_claim_options;
#define GCTX_CLAIM_OPTIONS_INIT                                                                \
    {sizeof(gctx_claim_options), 0, 0, GCTX_ROUND_STRICT, NULL, NULL, NULL,                    \
     GCTX_CLAIM_PRIORITY_THROUGHPUT, GCTX_TENANT_UNGUARDED, 0, 0, 0}
#define GCTX_CLAIM_PRIORITY_THROUGHPUT 0
#define GCTX_CLAIM_PRIORITY_LATENCY 50

/* Claims SMs of a device. request is a GROUP of `greenctx plan`'s syntax without suffixes: a
 * count ("16": one a one-group split gives, see gctx_claim_count), a share of the device's
 * SMs ("25%", rounded down to a count that can be claimed), "rest" (every free granule; the
 * SMs left over from fine granules, 4 on an H200, only when no granule is free) or "all"
 * (every SM of the device). Best fit: the granules that give exactly the count, adjacent ones
 * first. GCTX_ERROR_BUSY when the free SMs can't give it now (the message names
 * the holders: pid, user, command, SMs), after timeout_ms with GCTX_CLAIM_WAIT;
 * GCTX_ERROR_INSUFFICIENT_SMS when the device could never give it (the message names the
 * nearest counts); GCTX_ERROR_UNSUPPORTED inside an MPS client whose active-thread percentage
 * is below 100 (the driver then refuses green splits); GCTX_ERROR_REGISTRY as above. options
 * may be NULL. Driver 12.4+. */
GCTX_API gctx_status gctx_claim_acquire(int device, const char *request,
                                        const gctx_claim_options *options, gctx_claim **claim);
/* What gctx_claim_acquire would make of request on the device, claiming nothing: sm_count
 * gets the count (0 for "rest") and at_once, when not NULL, how many claims of that count the
 * device holds at once (0 for "rest"). A count is claimable when it is whole claim granules
 * (above): every such count is one a one-group split gives (greenctx plan), and with fine
 * granules every count such a split gives is one; left-over SMs that are not a granule's worth
 * never count (they go with "rest" or "all"). GCTX_ERROR_INSUFFICIENT_SMS naming the nearest
 * counts for one that isn't (with GCTX_ROUND_STRICT). The one rule for claimable counts:
 * greenctx info --sizes (how many at once), ps (the largest count of the free SMs) and the
 * Python API ask it; acquire and resize (run's claims) decide by it. */
GCTX_API gctx_status gctx_claim_count(int device, const char *request, gctx_rounding rounding,
                                      unsigned *sm_count, unsigned *at_once);
GCTX_API gctx_claim *gctx_claim_retain(gctx_claim *claim);
/* Drops one reference; the last gives the SMs back to the registry once the claim's context is
 * idle: every stream of it, the caller's own included, is waited for (an event recorded on the
 * whole green context; contexts made with options are the caller's to drain), then the
 * claim's stream and contexts are released. NULL is ignored. A claim whose descriptor the
 * program closed (closefrom(3)) was no longer held from then on: its release closes nothing
 * (the number may be another file's now); gctx_claim_export and gctx_claim_resize say so
 * (GCTX_ERROR_REGISTRY). */
GCTX_API void gctx_claim_release(gctx_claim *claim);

/* The claim's SMs now, as a partition (retained for the caller), and a green context on them
 * through the context cache. After a resize these
 * describe the old SMs: ask again. options may be NULL. */
GCTX_API gctx_status gctx_claim_partition(gctx_claim *claim, gctx_partition **partition);
GCTX_API gctx_status gctx_claim_context(gctx_claim *claim, const gctx_context_options *options,
                                        gctx_context **context);
/* The claim's own stream on its current SMs (retained for the caller); made on first use. */
GCTX_API gctx_status gctx_claim_stream(gctx_claim *claim, gctx_stream **stream);

/* Grows or shrinks a live claim to `request` (the acquire syntax), keeping the granules it
 * holds where it can. Growing takes free granules first (GCTX_CLAIM_WAIT in options->flags to
 * queue for them; NULL options: no wait); then the claim's stream moves to a context on the
 * new SMs that waits (an event) for the work submitted to the old one, as layouts switch.
 * Shrinking gives granules back only once the work submitted on them has finished, so no
 * other tenant is handed SMs still in use (the work of the claim's own context: contexts made
 * with options are the caller's to drain). What the claim had before is kept until the next
 * resize, which releases it first (its stream's release waits for its work), so that a claim
 * resized back and forth gets its contexts from the cache. stream, when not NULL, gets the
 * claim's new stream (retained for the caller). On failure the claim is unchanged.
 * Only a claim's sole member resizes it: GCTX_ERROR_BUSY, naming why, while another process
 * holds it too (one that joined it, as greenctx run's program and its children do, another
 * gctx_claim_join of it in this process, or a child that inherited it), and in a child forked
 * from the process that made it; the work of other members is nothing this one can wait
 * for. While a resize runs, a join of the claim is refused (GCTX_ERROR_REGISTRY). */
GCTX_API gctx_status gctx_claim_resize(gctx_claim *claim, const char *request,
                                       const gctx_claim_options *options, gctx_stream **stream);

#define GCTX_CLAIM_MAX_GRANULES 128

/* A claim as the registry records it. */
typedef struct gctx_claim_info {
    size_t size;             /* set by the caller: sizeof(gctx_claim_info) */
    int device;              /* the ordinal in this process (-1: a GPU this process can't see) */
    char device_uuid[48];    /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    int pid;                 /* the holder */
    unsigned uid;
    char user[64];
    char command[256];
    char label[128];
    long long since_ns;      /* when it was acquired (or last resized): CLOCK_REALTIME, ns */
    int mps;                 /* 1: the holder is an MPS client */
    int self;                /* 1: held by this process */
    unsigned sm_count;
    unsigned nb_granules;
    unsigned short granules[GCTX_CLAIM_MAX_GRANULES]; /* indices into the device's granules */
    gctx_tenant_class tenant_class;
    double target_ms, target_factor; /* as acquired (gctx_claim_options) */
    /* What its holder last published (0 where it published nothing): a latency tenant its
     * steps, a best-effort one what the guard holds it to. */
    double step_ms;          /* p99 of its last window of reported steps */
    double alone_ms;         /* the lowest such p99 it reported: its step undisturbed */
    long long step_ns;       /* when: CLOCK_REALTIME, ns */
    unsigned guard_level;    /* 0 (nothing held back) .. 5 (at its floor, one launch in flight) */
    char guard_reason[16];   /* "steps", "power", "hbm": what raised it; "" at level 0 */
    unsigned guard_sms;      /* the SMs the guard allows it */
    unsigned guard_outstanding; /* launches in flight it allows (paced programs); 0: no cap */
    unsigned guard_duty_permille; /* the share of time a paced program's work may run (1000: all) */
    int guard_paced;         /* 1: a paced program (greenctx run), not a cooperative resize */
    double guard_held_ms;    /* how long its launches were held back in all (paced programs) */
} gctx_claim_info;
#define GCTX_CLAIM_INFO_INIT                                                                   \
    {sizeof(gctx_claim_info), 0, {0}, 0, 0, {0}, {0}, {0}, 0, 0, 0, 0, 0, {0},                \
     GCTX_TENANT_UNGUARDED, 0, 0, 0, 0, 0, 0, {0}, 0, 0, 0, 0, 0}

/* The granules of a device's registry and what is free. */
typedef struct gctx_claim_usage {
    size_t size;             /* set by the caller: sizeof(gctx_claim_usage) */
    unsigned sm_count;       /* every SM of the device */
    unsigned free_sms;
    unsigned nb_granules;
    unsigned granule_sms[GCTX_CLAIM_MAX_GRANULES]; /* each granule's SM count */
    unsigned char granule_free[GCTX_CLAIM_MAX_GRANULES];
    unsigned nb_claims;      /* live claims */
    int mps_active;          /* 1: an MPS control daemon answers for this process's
                                CUDA_MPS_PIPE_DIRECTORY */
    char path[512];          /* the device's registry directory */
} gctx_claim_usage;
#define GCTX_CLAIM_USAGE_INIT {sizeof(gctx_claim_usage), 0, 0, 0, {0}, {0}, 0, 0, {0}}

/* What the registry knows of one event: a claim released, a holder that died holding one, a
 * fault a holder reported (gctx_claim_report_fault). Kept for the last 64 events. */
typedef enum gctx_claim_event_kind {
    GCTX_CLAIM_EVENT_RELEASED = 0,
    GCTX_CLAIM_EVENT_DIED = 1, /* found stale: its holder ended without releasing it */
    GCTX_CLAIM_EVENT_FAULT = 2
} gctx_claim_event_kind;

typedef struct gctx_claim_event {
    size_t size;             /* set by the caller: sizeof(gctx_claim_event) */
    gctx_claim_event_kind kind;
    long long time_ns;       /* when it was seen: CLOCK_REALTIME, ns */
    int pid;
    char command[256];
    int cuda_result;         /* FAULT: the CUresult the holder saw */
    unsigned sm_count;
} gctx_claim_event;
#define GCTX_CLAIM_EVENT_INIT {sizeof(gctx_claim_event), GCTX_CLAIM_EVENT_RELEASED, 0, 0, {0}, 0, 0}

/* The facts of one claim (retained or not). */
GCTX_API gctx_status gctx_claim_get_info(const gctx_claim *claim, gctx_claim_info *info);
/* Every live claim on a device (stale ones are removed first, never shown): count gets how
 * many, at most capacity are written (claims may be NULL with capacity 0); usage, when not
 * NULL, the granules and what is free. runtime_dir: NULL for the default. A claim file that
 * can't be read or lock-tested fails the call (GCTX_ERROR_REGISTRY), never counts as free. A
 * claim whose recorded pid ended is listed under a live process that holds it, where this
 * user may see one (a child that inherited it). The array's layout
 * is claims[0].size (GCTX_CLAIM_INFO_INIT): every element is that many bytes, as is each of
 * gctx_claim_events' events (events[0].size). */
GCTX_API gctx_status gctx_claim_list(int device, const char *runtime_dir, gctx_claim_info *claims,
                                     unsigned capacity, unsigned *count, gctx_claim_usage *usage);
/* The device's last events, oldest first (count as in gctx_claim_list). */
GCTX_API gctx_status gctx_claim_events(int device, const char *runtime_dir,
                                       gctx_claim_event *events, unsigned capacity,
                                       unsigned *count);
/* The same without the driver (a login node, a machine whose driver is down): the GPU named
 * by its UUID, its granules as its registry records them; each claim's device is -1. A
 * registry written by another greenctx version is GCTX_ERROR_REGISTRY, never rebuilt. */
GCTX_API gctx_status gctx_claim_list_uuid(const char *uuid, const char *runtime_dir,
                                          gctx_claim_info *claims, unsigned capacity,
                                          unsigned *count, gctx_claim_usage *usage);
GCTX_API gctx_status gctx_claim_events_uuid(const char *uuid, const char *runtime_dir,
                                            gctx_claim_event *events, unsigned capacity,
                                            unsigned *count);
/* The UUIDs of the GPUs with a registry under the runtime directory (NULL: the default),
 * without the driver: at most capacity of them in uuids, the i-th at uuids + i *
 * GCTX_UUID_SIZE (capacity * GCTX_UUID_SIZE bytes), their number in *count. */
GCTX_API gctx_status gctx_claim_registries(const char *runtime_dir, char *uuids,
                                           unsigned capacity, unsigned *count);

/* A text that lets a process started by this one (greenctx run's program) take part in the
 * claim: "v1:<registry path>:<claim file>:<fd>". At most size bytes with the NUL. */
GCTX_API gctx_status gctx_claim_export(const gctx_claim *claim, char *token, size_t size);
/* Joins a claim exported by a parent, or by this very process: the same SMs, held as long as
 * any member lives. Each member holds the claim through a description of the claim file of its
 * own (opened again while a holder lives), so its release ends its own hold only. When the
 * token's descriptor is an inherited copy that no claim of this process owns, the member's
 * description takes its number (close-on-exec: the token stays true for a program this one
 * execs with it made inheritable again) and the copy is closed.
 * GCTX_ERROR_INVALID_ARGUMENT for a malformed token, GCTX_ERROR_REGISTRY when the claim is no
 * longer held or is for another device. */
GCTX_API gctx_status gctx_claim_join(int device, const char *token, gctx_claim **claim);
/* The descriptor of this process that a token names, as gctx_claim_join leaves it: *fd gets
 * its number when it is open on the token's claim file, so that a program this process execs
 * with the token can join the claim through it (greenctx run's preload makes it inheritable
 * for the exec); else *fd is -1. GCTX_ERROR_INVALID_ARGUMENT for a malformed token,
 * GCTX_ERROR_REGISTRY when the number is closed or another file's. */
GCTX_API gctx_status gctx_claim_token_descriptor(const char *token, int *fd);

/* ---------------------------------------------------------------------------------------- */
/* MPS                                                                                      */

/* MPS as this process sees it: green contexts of different processes run at the same time
 * only under MPS. Reads the environment and the pipe directory; no driver call. */
typedef struct gctx_mps_info {
    size_t size;                  /* set by the caller: sizeof(gctx_mps_info) */
    char pipe_dir[512];           /* $CUDA_MPS_PIPE_DIRECTORY, else /tmp/nvidia-mps */
    int daemon_running;           /* 1: a control daemon answers on that directory's pipe, so
                                     this process's CUDA will be an MPS client */
    int active_thread_percentage; /* $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 100 when unset */
    char pinned_mem_limit[128];   /* $CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, or "" */
} gctx_mps_info;
#define GCTX_MPS_INFO_INIT {sizeof(gctx_mps_info), {0}, 0, 100, {0}}
GCTX_API gctx_status gctx_mps_get_info(gctx_mps_info *info);

/* ======================================================================================== */
/* The rest: elastic claims, faults, the guard                                              */
/* ======================================================================================== */

/* ---------------------------------------------------------------------------------------- */
/* Elastic claims: who waits for SMs                                                        */

/* Elastic claims across processes. A tenant that waits for SMs (GCTX_CLAIM_WAIT in an acquire
 * or a growing resize) posts a want in the registry while it waits: how many SMs it lacks
 * beyond the free ones (at least one granule), its priority (options->priority) and since
 * when; the want is a file its lock holds, so a waiter that ends, however it ends, wants
 * nothing any more. A cooperative holder asks, once per step, how many SMs others wait for,
 * and gives them back with gctx_claim_resize (which hands granules over only once its work on
 * them has finished: never an overlap). The waiter wakes when a claim shrinks or ends (inotify
 * on the registry, its backoff as the fallback), so it gets its SMs within
 *     the holder's polling interval + the holder's running kernel + the resize's cost
 * (a context from the cache, a registry rewrite) + one registry pass.
 * Only wants of at least the claim's priority count: a throughput tenant yields to a latency
 * tenant, never the other way round (equals yield to each other). A claim's priority is its
 * acquire's, changed by each resize given options. docs/elastic.md, "Across processes".
 *
 * wanted_sms gets the SMs that live wants of other claims of at least this claim's priority
 * lack (0: nobody waits), plus the left-over SMs this claim holds when they count towards no
 * count (an H200's 4: keeping its SMs less wanted_sms gives them back too). Read-only: one
 * readdir of the GPU's registry directory, plus an open and a flock test per want; a want
 * posted or renamed during the call may be missed until the next one. GCTX_ERROR_REGISTRY when
 * this claim's own file was removed from the registry (rm, a cleaner of temporary files):
 * other tenants no longer see it; release and claim anew. */
GCTX_API gctx_status gctx_claim_pressure(const gctx_claim *claim, unsigned *wanted_sms);

/* ---------------------------------------------------------------------------------------- */
/* Faults and the guard                                                                     */

/* Records that work on the claim failed with cuda_result (a sticky fault: 700 and its kin),
 * and leaves in gctx_last_error() a line for the user: under MPS a fault in one client reaches
 * every client, so it names the other tenant whose fault or death the registry saw first
 * since this claim was taken, when there is one. Returns GCTX_SUCCESS when the event was
 * recorded. */
GCTX_API gctx_status gctx_claim_report_fault(gctx_claim *claim, int cuda_result);
/* 1 when cuda_result (a CUresult) is a sticky fault, after which every call of the process's
 * contexts fails with it (700 and its kin, the faults gctx_claim_report_fault records); else
 * 0. */
GCTX_API int gctx_cuda_result_is_sticky(int cuda_result);

/* A latency tenant's step (a decode step, a request: what its target is about), in ms: kept in
 * a window whose p99 the claim publishes for best-effort tenants' guards. A window closes at
 * 500 steps and 10 ms, at once when six of its steps are over the target (its p99 is then
 * over), and at the first step 1 s after it began when steps are slow. No driver call, no lock shared with other
 * processes, no file written on the caller's thread: the claim's state file is written at
 * most every 10 ms by a thread of the claim's own, started at the first report and joined at
 * the claim's release. A claim that is not a latency tenant: GCTX_ERROR_INVALID_ARGUMENT. */
GCTX_API gctx_status gctx_claim_report_step(gctx_claim *claim, double step_ms);

/* The device's signals for the guard; zeros for what is not known. */
#define GCTX_GUARD_THROTTLE_POWER 0x1u   /* the SM clock is held by the board's power cap */
#define GCTX_GUARD_THROTTLE_THERMAL 0x2u
typedef struct gctx_guard_signals {
    size_t size;             /* sizeof(gctx_guard_signals), set by GCTX_GUARD_SIGNALS_INIT */
    unsigned sm_clock_mhz, max_sm_clock_mhz;
    unsigned throttle;       /* GCTX_GUARD_THROTTLE_* */
    double hbm_busy;         /* memory throughput over its peak, 0 .. 1 */
} gctx_guard_signals;
#define GCTX_GUARD_SIGNALS_INIT {sizeof(gctx_guard_signals), 0, 0, 0, 0}

/* What the guard allows a best-effort tenant now. */
typedef struct gctx_guard_advice {
    size_t size;             /* set by the caller: sizeof(gctx_guard_advice) */
    unsigned level;          /* 0: nothing held back .. 5: at its floor */
    unsigned sms;            /* SMs it may use: a cooperative claim resizes to them (with
                                request, below), and back when they grow */
    unsigned max_outstanding; /* launches in flight, for a program paced instead; 0: no cap */
    char reason[16];         /* "steps", "power", "hbm"; "" at level 0 */
    unsigned latency_tenants; /* latency tenants running on the GPU now */
    unsigned duty_permille;   /* for a paced program: the share of time its work may run, the
                                 same share of its SMs a cooperative claim keeps (1000: all) */
    char request[16]; /* what a cooperative claim resizes with (GCTX_ROUND_DOWN) to have sms:
                         their count, or "rest" when they are everything it had and that
                         includes SMs left over from whole granules, which no count takes (the
                         H200's 4 beside granules of 16: "rest" gives 116 back, "116" 112) */
} gctx_guard_advice;
#define GCTX_GUARD_ADVICE_INIT {sizeof(gctx_guard_advice), 0, 0, 0, {0}, 0, 0, {0}}

/* One look of a best-effort claim's guard (every few ms, after gctx_claim_guard_wait):
 * reads the latency tenants' published steps in the registry and the device's signals
 * (NULL: NVML's, read only while a latency tenant runs: libnvidia-ml.so.1 loaded at run time,
 * nothing when it isn't there), moves the claim's guard one decision on, publishes what it
 * allows (greenctx ps shows it) and returns it. The rule is the same in every best-effort
 * tenant, so they agree without a daemon; a latency tenant that ends or stops stepping for
 * 25 ms gives everything back. GCTX_ERROR_INVALID_ARGUMENT for a claim not acquired
 * GCTX_TENANT_BEST_EFFORT. */
GCTX_API gctx_status gctx_claim_guard(gctx_claim *claim, const gctx_guard_signals *signals,
                                      gctx_guard_advice *advice);
/* Waits between two looks of a best-effort claim's guard: returns as soon as a latency tenant
 * of its GPU publishes a line (its first step after a pause is then seen within a millisecond
 * instead of at the next look) or a claim comes, goes or is resized, and after timeout_ms at
 * the latest: pass the look period (10 - 15 ms), since a latency tenant that stops publishes
 * nothing, and only a look gives the SMs back then. Other best-effort tenants' lines wake
 * nobody. The claim's first gctx_claim_guard makes its watch (inotify); before it, or without
 * inotify, this sleeps timeout_ms. GCTX_ERROR_INVALID_ARGUMENT for timeout_ms < 0 or a claim
 * that is not best-effort. */
GCTX_API gctx_status gctx_claim_guard_wait(gctx_claim *claim, int timeout_ms);
/* A best-effort program paced by its launches instead of resized (greenctx run's preload):
 * its launches were held back held_ms more since the last report. The next gctx_claim_guard
 * publishes the claim as paced, with the total (greenctx ps shows it). */
GCTX_API gctx_status gctx_claim_report_held(gctx_claim *claim, double held_ms);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_CLAIMS_H */

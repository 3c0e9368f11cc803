/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx is licensed under the Apache License, Version 2.0 (LICENSE; installed in
 * share/doc/greenctx/).
 *
 * greenctx_claims.h: tenancy, SMs of a GPU held across processes: claims and their registry,
 * MPS as this process sees it, tenant classes and their guard. The core's conventions
 * (greenctx.h, included here) hold for every function. Part of libgreenctx. The guide,
 * granules, the registry, isolation and the guard: docs/api.md, "greenctx_claims.h".
 */
#ifndef GREENCTX_CLAIMS_H
#define GREENCTX_CLAIMS_H

#include "greenctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== The stable API ==== */
/* ---- Tenants: SM claims across processes ---- */
/* A set of a device's SMs, in whole granules, that one process (a tenant) holds in the
 * node-local registry; cooperative, not a security boundary; isolation needs MPS. */
typedef struct gctx_claim gctx_claim;

/* gctx_claim_options.flags */
#define GCTX_CLAIM_WAIT 0x1u       /* queue until the SMs are free, up to timeout_ms */
#define GCTX_CLAIM_INHERIT 0x2u    /* the lock survives exec (for greenctx run's program) */
#define GCTX_CLAIM_SHARED_DIR 0x4u /* the runtime directory is shared by several users */

/* What the guard does for a claim or to it (docs/api.md, "The guard"). */
typedef enum gctx_tenant_class {
    GCTX_TENANT_UNGUARDED = 0,
    GCTX_TENANT_LATENCY = 1,
    GCTX_TENANT_BEST_EFFORT = 2
} gctx_tenant_class;

typedef struct gctx_claim_options {
    size_t size;             /* sizeof(gctx_claim_options), set by GCTX_CLAIM_OPTIONS_INIT */
    unsigned flags;          /* GCTX_CLAIM_* */
    int timeout_ms;          /* with GCTX_CLAIM_WAIT: how long to wait; -1: forever */
    gctx_rounding rounding;  /* for a count no set of granules gives (strict: refused) */
    const char *label;       /* shown by greenctx ps; NULL: none; at most 127 bytes */
    const char *command;     /* the holder's command as ps shows it; NULL: this process's */
    const char *runtime_dir; /* NULL: $GREENCTX_RUNTIME_DIR, else /var/tmp/greenctx-UID */
    int priority;            /* GCTX_CLAIM_PRIORITY_*, 0 .. 100: yields only to waiters of
                                at least its own */
    gctx_tenant_class tenant_class; /* what the guard does for it or to it */
    double target_ms;        /* latency: its step target in ms; 0: as alone within factor */
    double target_factor;    /* latency without target_ms: p99 within factor x alone (1.10) */
    unsigned floor_sms;      /* best-effort: the guard never holds it under this; 0: one granule */
} gctx_claim_options;
#define GCTX_CLAIM_OPTIONS_INIT                                                                \
    {sizeof(gctx_claim_options), 0, 0, GCTX_ROUND_STRICT, NULL, NULL, NULL,                    \
     GCTX_CLAIM_PRIORITY_THROUGHPUT, GCTX_TENANT_UNGUARDED, 0, 0, 0}
#define GCTX_CLAIM_PRIORITY_THROUGHPUT 0
#define GCTX_CLAIM_PRIORITY_LATENCY 50

/* Claims SMs: request is "16" (a count), "25%", "rest" or "all"; options may be NULL.
 * Driver 12.4+. BUSY: not free now (naming the holders); INSUFFICIENT_SMS: never (naming the
 * nearest counts); UNSUPPORTED: an MPS client below 100% active threads; REGISTRY. */
GCTX_API gctx_status gctx_claim_acquire(int device, const char *request,
                                        const gctx_claim_options *options, gctx_claim **claim);
/* What acquire would make of request, claiming nothing: sm_count (0 for "rest") and at_once
 * (optional: how many such claims fit at once). INSUFFICIENT_SMS naming the nearest counts. */
GCTX_API gctx_status gctx_claim_count(int device, const char *request, gctx_rounding rounding,
                                      unsigned *sm_count, unsigned *at_once);
GCTX_API gctx_claim *gctx_claim_retain(gctx_claim *claim);
/* Drops one reference; the last waits for the claim's context to be idle, then gives the SMs
 * back. NULL is ignored. */
GCTX_API void gctx_claim_release(gctx_claim *claim);

/* The claim's SMs now as a partition, a (cached) green context on them, and its own stream
 * (made on first use), each retained for the caller; after a resize, ask again. */
GCTX_API gctx_status gctx_claim_partition(gctx_claim *claim, gctx_partition **partition);
GCTX_API gctx_status gctx_claim_context(gctx_claim *claim, const gctx_context_options *options,
                                        gctx_context **context);
GCTX_API gctx_status gctx_claim_stream(gctx_claim *claim, gctx_stream **stream);

/* Grows or shrinks a live claim to request, its stream moving after its old work; stream
 * (optional) gets the new one. Unchanged on failure. BUSY: another member holds it too. */
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
    double step_ms;          /* published (0: nothing): p99 of its last window of steps */
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
    int mps_active;          /* 1: an MPS daemon answers on this process's pipe directory */
    char path[512];          /* the device's registry directory */
} gctx_claim_usage;
#define GCTX_CLAIM_USAGE_INIT {sizeof(gctx_claim_usage), 0, 0, 0, {0}, {0}, 0, 0, {0}}

/* An event of the registry; the last 64 are kept. */
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
/* Every live claim on a device (stale ones removed first): count gets how many, at most
 * capacity written, each element claims[0].size bytes; usage (optional) the granules.
 * runtime_dir NULL: the default. REGISTRY: a claim file that can't be read or lock-tested. */
GCTX_API gctx_status gctx_claim_list(int device, const char *runtime_dir, gctx_claim_info *claims,
                                     unsigned capacity, unsigned *count, gctx_claim_usage *usage);
/* The device's last events, oldest first (count and size as in gctx_claim_list). */
GCTX_API gctx_status gctx_claim_events(int device, const char *runtime_dir,
                                       gctx_claim_event *events, unsigned capacity,
                                       unsigned *count);
/* The same without the driver, the GPU named by its UUID (each claim's device is -1).
 * REGISTRY: written by another greenctx version (never rebuilt here). */
GCTX_API gctx_status gctx_claim_list_uuid(const char *uuid, const char *runtime_dir,
                                          gctx_claim_info *claims, unsigned capacity,
                                          unsigned *count, gctx_claim_usage *usage);
GCTX_API gctx_status gctx_claim_events_uuid(const char *uuid, const char *runtime_dir,
                                            gctx_claim_event *events, unsigned capacity,
                                            unsigned *count);
/* The UUIDs of the GPUs with a registry, without the driver: the i-th at uuids + i *
 * GCTX_UUID_SIZE (capacity of them at most), their number in *count. */
GCTX_API gctx_status gctx_claim_registries(const char *runtime_dir, char *uuids,
                                           unsigned capacity, unsigned *count);

/* A token for a child process to join the claim: "v1:<registry path>:<claim file>:<fd>", at
 * most size bytes with the NUL. */
GCTX_API gctx_status gctx_claim_export(const gctx_claim *claim, char *token, size_t size);
/* Joins an exported claim: the same SMs, held as long as any member lives. INVALID_ARGUMENT:
 * a malformed token; REGISTRY: no longer held, or another device's. */
GCTX_API gctx_status gctx_claim_join(int device, const char *token, gctx_claim **claim);
/* The descriptor a token names, open on its claim file, in *fd; else -1. INVALID_ARGUMENT: a
 * malformed token; REGISTRY: the number is closed or another file's. */
GCTX_API gctx_status gctx_claim_token_descriptor(const char *token, int *fd);

/* ---- MPS ---- */
/* MPS as this process sees it, from the environment and the pipe directory; no driver call. */
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

/* ==== The rest: elastic claims, faults, the guard ==== */
/* The SMs that waiting claims of at least this claim's priority lack (0: nobody waits), plus
 * its left-over SMs no count takes; read-only. REGISTRY: its own file was removed. */
GCTX_API gctx_status gctx_claim_pressure(const gctx_claim *claim, unsigned *wanted_sms);

/* Records a sticky fault (cuda_result) of the claim's work; gctx_last_error() names the other
 * tenant whose fault or death came first, if any. SUCCESS when recorded. */
GCTX_API gctx_status gctx_claim_report_fault(gctx_claim *claim, int cuda_result);
/* 1 when cuda_result is a sticky fault (700 and its kin), else 0. */
GCTX_API int gctx_cuda_result_is_sticky(int cuda_result);

/* A latency tenant's step, in ms, into the window whose p99 the claim publishes; no driver
 * call or file written on the caller's thread. INVALID_ARGUMENT: not a latency tenant. */
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
    unsigned sms;            /* SMs it may use: a cooperative claim resizes to them */
    unsigned max_outstanding; /* launches in flight, for a program paced instead; 0: no cap */
    char reason[16];         /* "steps", "power", "hbm"; "" at level 0 */
    unsigned latency_tenants; /* latency tenants running on the GPU now */
    unsigned duty_permille;   /* the share of time (paced) or SMs (cooperative) kept; 1000: all */
    char request[16]; /* what a cooperative claim resizes with (GCTX_ROUND_DOWN): a count, "rest" */
} gctx_guard_advice;
#define GCTX_GUARD_ADVICE_INIT {sizeof(gctx_guard_advice), 0, 0, 0, {0}, 0, 0, {0}}

/* One look of a best-effort claim's guard: reads the latency tenants' steps and the signals
 * (NULL: NVML's), moves one decision on, publishes and returns it. INVALID_ARGUMENT: not
 * GCTX_TENANT_BEST_EFFORT. */
GCTX_API gctx_status gctx_claim_guard(gctx_claim *claim, const gctx_guard_signals *signals,
                                      gctx_guard_advice *advice);
/* Waits between two looks, at most timeout_ms (the look period, 10 - 15 ms); wakes early on a
 * latency tenant's line or a claim's change. INVALID_ARGUMENT: timeout_ms < 0, not best-effort. */
GCTX_API gctx_status gctx_claim_guard_wait(gctx_claim *claim, int timeout_ms);
/* A paced best-effort program's launches were held back held_ms more since the last report. */
GCTX_API gctx_status gctx_claim_report_held(gctx_claim *claim, double held_ms);

#ifdef __cplusplus
}
#endif

#endif /* GREENCTX_CLAIMS_H */

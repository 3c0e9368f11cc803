/* Claims: what the claim files share (claim_fit.c, claim_registry.c, claim_device.c, claim.c,
 * claim_resize.c, claim_share.c, claim_list.c). Nothing here is public. */
#ifndef GREENCTX_CLAIM_H
#define GREENCTX_CLAIM_H

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"

/* ---- sets of granules (claim_fit.c: pure, no driver, no files) ---- */

#define GCTX__GRANULE_WORDS ((GCTX_CLAIM_MAX_GRANULES + 63) / 64)
typedef struct gctx__granules {
    unsigned long long w[GCTX__GRANULE_WORDS];
} gctx__granules;

int gctx__granules_has(const gctx__granules *g, unsigned i);
void gctx__granules_add(gctx__granules *g, unsigned i);
unsigned gctx__granules_count(const gctx__granules *g);
/* a | b, a & ~b, a & b */
gctx__granules gctx__granules_union(const gctx__granules *a, const gctx__granules *b);
gctx__granules gctx__granules_minus(const gctx__granules *a, const gctx__granules *b);
int gctx__granules_meet(const gctx__granules *a, const gctx__granules *b);
/* "0 1 2 15" into buf (at most size bytes with the NUL). */
const char *gctx__granules_text(const gctx__granules *g, char *buf, size_t size);

/* A device's canonical granules: the driver's split by its minimum partition size gives
 * nb_regular granules of regular_sms each (indices 0 .. nb_regular - 1) and, when SMs are
 * left over, one more granule of remainder_sms (index nb_regular). */
typedef struct gctx__granule_layout {
    unsigned nb_regular;
    unsigned regular_sms;
    unsigned remainder_sms; /* 0: no remainder granule */
} gctx__granule_layout;

unsigned gctx__layout_count(const gctx__granule_layout *l);  /* every granule */
unsigned gctx__layout_sms(const gctx__granule_layout *l, unsigned granule);
unsigned gctx__layout_total(const gctx__granule_layout *l);  /* every SM */
unsigned gctx__granules_sms(const gctx__granule_layout *l, const gctx__granules *g);
/* 1 when some set of the device's granules has exactly count SMs. */
int gctx__layout_claimable(const gctx__granule_layout *l, unsigned count);

/* A request of the acquire syntax: "16", "25%", "rest". */
typedef enum gctx__request_kind {
    GCTX__REQUEST_COUNT,
    GCTX__REQUEST_PERCENT,
    GCTX__REQUEST_REST
} gctx__request_kind;
typedef struct gctx__request {
    gctx__request_kind kind;
    unsigned value; /* SMs, or percent */
} gctx__request;
/* GCTX_ERROR_INVALID_ARGUMENT naming the syntax for anything else. */
gctx_status gctx__request_parse(const char *text, gctx__request *out);
/* The SM count a request asks of this device (0 for rest): a count is rounded as asked, a
 * percentage floored, to a count some set of granules gives. INSUFFICIENT_SMS, naming the
 * nearest claimable counts, when none fits. */
gctx_status gctx__request_count(const gctx__granule_layout *l, const gctx__request *r,
                                gctx_rounding rounding, unsigned *count);
/* Best fit: a set of the granules in avail with exactly count SMs (count 0: all of avail),
 * keeping as many of `keep` as it can, then without the remainder granule unless needed,
 * then adjacent granules, then the lowest indices. 0 when avail can't give it. */
int gctx__granules_choose(const gctx__granule_layout *l, unsigned count,
                          const gctx__granules *avail, const gctx__granules *keep,
                          gctx__granules *out);

/* ---- the registry (claim_registry.c: POSIX files and flock, no driver) ---- */

/* What the registry of one GPU is for: written to its identity file, compared on open. */
typedef struct gctx__identity {
    char uuid[48];
    int driver_version;
    gctx__granule_layout layout;
    unsigned long long hash; /* FNV-1a of the granules' resource bytes, nextResource excluded */
} gctx__identity;

/* One claim as its file records it. */
typedef struct gctx__record {
    char file[64]; /* "claim-<pid>-<n>" in the GPU's directory */
    int pid;
    unsigned uid;
    char user[64];
    char command[256];
    char label[128];
    long long since_ns;
    int mps;
    gctx__granules granules;
} gctx__record;

typedef struct gctx__event_record {
    gctx_claim_event_kind kind;
    long long time_ns;
    int pid;
    char command[256];
    int cuda_result;
    unsigned sm_count;
} gctx__event_record;

#define GCTX__EVENTS_KEPT 64

/* An open registry: the GPU's directory, its lock held (LOCK_EX) until gctx__registry_close.
 * The directory and its lock file stay open in the process between operations (kept). */
typedef struct gctx__kept_registry gctx__kept_registry;
typedef struct gctx__registry {
    char dir[512];
    int lock_fd;
    int shared; /* the runtime directory is shared by several users */
    gctx__identity identity;
    gctx__kept_registry *kept;
} gctx__registry;

/* The runtime directory (runtime_dir, else the environment's, else the default), checked and
 * created; shared when the flag or GREENCTX_RUNTIME_SHARED=1 says so. */
gctx_status gctx__runtime_dir(const char *runtime_dir, unsigned flags, char *out, size_t size,
                              int *shared);
/* The runtime directory's path alone: nothing looked at on disk. */
gctx_status gctx__runtime_path(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared);
/* The open registry's directory, rewound for a scan (the registry's lock held). */
DIR *gctx__kept_dir(gctx__registry *reg);
/* The UUIDs of the GPUs with a registry under the runtime directory (its gpu-GPU-*
 * directories), read without the driver: at most capacity, their number in *count. */
gctx_status gctx__registry_uuids(const char *runtime_dir, char (*uuids)[48], unsigned capacity,
                                 unsigned *count);
/* The identity a GPU's registry records (its granules, driver, hash), read without the
 * driver; GCTX_ERROR_REGISTRY when this greenctx would not write it so. */
gctx_status gctx__registry_identity(const char *runtime_dir, const char *uuid, gctx__identity *id);
/* <root>/gpu-<uuid>: the GPU's registry directory. */
gctx_status gctx__registry_path(const char *root, const char *uuid, char *out, size_t size);
/* Opens the GPU's registry under the runtime directory and takes its lock; checks the
 * identity (rebuilding a foreign or corrupt registry when none of its claims is live, else
 * GCTX_ERROR_REGISTRY). */
gctx_status gctx__registry_open(const char *runtime_dir, unsigned flags, const gctx__identity *id,
                                gctx__registry *reg);
/* Releases the lock; reg->dir still names the registry. */
void gctx__registry_close(gctx__registry *reg);
/* The live claims, stale ones removed first (a DIED event each): *records is malloc'ed.
 * GCTX_ERROR_REGISTRY for a live claim file that doesn't parse, or two that overlap. */
gctx_status gctx__registry_claims(gctx__registry *reg, gctx__record **records, unsigned *count);
/* A new claim file for record (its file name is set here), locked LOCK_SH: *fd holds it. */
gctx_status gctx__registry_add(gctx__registry *reg, gctx__record *record, int inherit, int *fd);
/* Writes record over its file (a resize). */
gctx_status gctx__registry_rewrite(gctx__registry *reg, const gctx__record *record);
/* Closes fd (this member's hold on the claim) and, when no process holds the claim any more,
 * removes its file, logging RELEASED when log is set (not for a claim never given out). */
void gctx__registry_drop(gctx__registry *reg, const gctx__record *record, int fd, int log);
/* Opens a claim file again for a member joining it: only while it is live. */
gctx_status gctx__registry_rejoin(gctx__registry *reg, const char *file, int inherit, int *fd,
                                  gctx__record *record);
/* Reads a claim's record (a member that inherited its descriptor). */
gctx_status gctx__registry_read(gctx__registry *reg, const char *file, gctx__record *record);
gctx_status gctx__registry_log(gctx__registry *reg, const gctx__event_record *event);
/* The kept events, oldest first: *events is malloc'ed. */
gctx_status gctx__registry_events(gctx__registry *reg, gctx__event_record **events,
                                  unsigned *count);
long long gctx__now_ns(void); /* CLOCK_REALTIME */

/* ---- the device side (claim_device.c) ---- */

/* A device's granules as this process's driver gives them: the device partition, the split's
 * resources (index as in the layout) and the registry identity. */
typedef struct gctx__device_granules {
    int device;
    gctx_partition *whole; /* every SM: a public handle, one reference of ours */
    gcu_dev_resource resources[GCTX_CLAIM_MAX_GRANULES];
    gctx__identity identity;
} gctx__device_granules;

gctx_status gctx__device_granules_get(int device, gctx__device_granules *out);
void gctx__device_granules_end(gctx__device_granules *g);
/* A partition (public handle, the caller's reference) on exactly these granules. */
gctx_status gctx__granules_partition(const gctx__device_granules *g, const gctx__granules *set,
                                     gctx_partition **out);

#endif

/* ---- the claim object (claim.c; resize in claim_resize.c, sharing in claim_share.c) ---- */

struct gctx_claim {
    gctx__object base;
    pthread_mutex_t lock; /* the fields below change under it (resize) */
    int device;
    char runtime_dir[512]; /* as the caller gave it ("" for the default) */
    unsigned dir_flags;    /* GCTX_CLAIM_SHARED_DIR */
    int inherit;
    int joined; /* a member of a claim exported by another process (gctx_claim_join) */
    gctx__device_granules granules;
    gctx__record record;
    char file[64];          /* record.file, kept apart: read without the lock (listings) */
    char registry_dir[512]; /* the GPU's registry directory (gctx_claim_pressure reads it) */
    atomic_int priority;    /* options->priority of the acquire or the last resize given one */
    int fd;                 /* this member's LOCK_SH on the claim file */
    long long acquired_ns;  /* faults of others are looked for from here */
    gctx_partition *partition; /* public handles the claim holds a reference of */
    gctx_context *context;     /* made on first use */
    gctx_stream *stream;       /* made on first use */
    /* What the last resize moved from: kept alive until the next resize or the release, so
     * that a grow never waits on the host for the old stream's work. */
    gctx_partition *old_partition;
    gctx_context *old_context;
    gctx_stream *old_stream;
    gctx_event *old_event;
};

/* Opens the claim's registry (its lock taken). */
gctx_status gctx__claim_registry(const gctx_claim *claim, gctx__registry *reg);
/* A claim object for a record whose file fd holds; takes fd (closed on failure). joined: fd
 * is a member's hold of a claim another process made (gctx_claim_join). */
gctx_status gctx__claim_new(gctx__device_granules *granules, const char *runtime_dir,
                            unsigned dir_flags, int inherit, int joined,
                            const gctx__record *record, int fd, gctx_claim **out);
/* The claim's own context, made on first use (claim->lock held). */
gctx_status gctx__claim_own_context(gctx_claim *claim);
/* A record as the public struct; self: held by this process. */
void gctx__claim_info(const gctx__record *record, const gctx__identity *identity, int device,
                      int self, gctx_claim_info *out);
/* 1 when this process holds the claim file (a claim object of its own). */
int gctx__claim_held_here(const char *dir, const char *file);
/* The granules free in reg now (every live claim's taken out); records: the live ones. */
gctx_status gctx__claim_free(gctx__registry *reg, gctx__granules *free_set,
                             gctx__record **records, unsigned *count);
/* GCTX_ERROR_BUSY naming the holders, for count SMs (0: rest) of device. */
gctx_status gctx__claim_busy(const gctx__identity *id, int device, unsigned count,
                             const gctx__granules *free_set, const gctx__record *records,
                             unsigned nb, int waited_ms);
/* Takes count SMs (0: the rest) in the registry, keeping record->granules (what the claim
 * holds) where it can: *target gets the set chosen, record->granules what the registry now
 * records (held | target) and its file is rewritten, or, with fd not NULL, created (*fd gets
 * its lock). GCTX_CLAIM_WAIT in opts->flags waits for the SMs; else BUSY naming holders. */
gctx_status gctx__claim_take(const gctx_claim *c, unsigned count, const gctx_claim_options *opts,
                             gctx__record *record, int *fd, gctx__granules *target);
/* The caller's options over the defaults, checked. */
gctx_status gctx__claim_options(const gctx_claim_options *options, gctx_claim_options *opts);

/* ---- wants (claim_want.c) ---- */

/* A waiter's want in the registry: fd (-1: none posted) holds its file LOCK_SH. */
typedef struct gctx__want {
    int fd;
    int pid;
    unsigned seq;
    int priority;
    unsigned sms;
    char path[640];
} gctx__want;
#define GCTX__WANT_NONE {-1, 0, 0, 0, 0, {0}}
/* Posts the want (reg's lock held), or renames it when its SMs changed. A want that can't be
 * written is logged, not returned: the wait still works, only holders don't see it. */
void gctx__want_post(gctx__registry *reg, gctx__want *w, unsigned sms, int priority,
                     const char *claim_file);
/* Removes a posted want (granted, or given up). */
void gctx__want_end(gctx__want *w);
/* Watches (claim_watch.c): inotify descriptors that read when a claim file of a registry is
 * rewritten or removed, kept per process with the open registry, because making one and
 * ending one each wait out an SRCU grace period (15-35 ms measured on Linux 6.x). A wait
 * borrows one of its own: waiters of one process never share a queue, where the first to
 * wake would read the others' wakes. */
#define GCTX__WATCHES_KEPT 4
typedef struct gctx__watch_pool {
    pthread_mutex_t lock;
    int fd[GCTX__WATCHES_KEPT];              /* -1: none */
    unsigned char lent[GCTX__WATCHES_KEPT];  /* 1: a wait's; 2: a wait's, the registry shut
                                                meanwhile (ended at its return) */
} gctx__watch_pool;
typedef struct gctx__watch {
    gctx__watch_pool *pool;
    int slot; /* -1: the wait's own, the pool full */
    int fd;   /* -1: none (the wait backs off) */
} gctx__watch;
#define GCTX__WATCH_NONE {NULL, -1, -1}
void gctx__watch_pool_init(gctx__watch_pool *p);
/* The registry shut: idle watches ended, lent ones at their return. */
void gctx__watch_pool_shut(gctx__watch_pool *p);
/* A fork's child: every copy closed (the parent's descriptions live on: no grace period). */
void gctx__watch_pool_forget(gctx__watch_pool *p);
/* The pool of the open registry reg (lives as long as the process's entry for it). */
gctx__watch_pool *gctx__registry_watches(gctx__registry *reg);
/* An idle watch lent to w, drained (with reg's lock held nothing changed the registry since
 * the pass that failed); 0 when none is idle (w->pool is set for gctx__watch_make). */
int gctx__watch_borrow(gctx__registry *reg, gctx__watch *w);
/* A new watch of dir lent to w, made with no lock held (it takes a grace period); 0 when
 * none can be made. */
int gctx__watch_make(gctx__watch *w, const char *dir);
/* One idle watch of dir in the pool, made now unless there is one (a latency claim's, so
 * that its first wait does not pay for it); no lock held. */
void gctx__watch_prepare(gctx__watch_pool *p, const char *dir);
void gctx__watch_drain(int fd);
void gctx__watch_return(gctx__watch *w);
/* Waits the next step of the GCTX_CLAIM_WAIT backoff (5 ms doubling to 100 ms), or less when
 * watch_fd (-1: none) reads; 0 once timeout_ms (-1: never) has passed since start_ns. */
int gctx__claim_wait_step(long long start_ns, int timeout_ms, unsigned *step_ms, int watch_fd);

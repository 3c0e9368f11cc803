/* Claims: what the claim files share. Nothing here is public. */
#ifndef GREENCTX_CLAIM_H
#define GREENCTX_CLAIM_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "clock.h" /* common/: clock_now_ns, every wait's deadline (CLOCK_MONOTONIC) */
#include "greenctx_claims.h"
#include "guard_policy.h"
#include "internal.h"

/* The first published layouts of the size-prefixed structs of greenctx_claims.h (sized.h). */
#define GCTX__MIN_CLAIM_OPTIONS GCTX__SIZE_THROUGH(gctx_claim_options, runtime_dir)
#define GCTX__MIN_CLAIM_INFO GCTX__SIZE_THROUGH(gctx_claim_info, granules)
#define GCTX__MIN_CLAIM_USAGE GCTX__SIZE_THROUGH(gctx_claim_usage, path)
#define GCTX__MIN_CLAIM_EVENT GCTX__SIZE_THROUGH(gctx_claim_event, sm_count)
#define GCTX__MIN_GUARD_SIGNALS GCTX__SIZE_THROUGH(gctx_guard_signals, hbm_busy)
#define GCTX__MIN_GUARD_ADVICE GCTX__SIZE_THROUGH(gctx_guard_advice, latency_tenants)

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

/* A device's canonical granules (docs/tenants.md): nb_regular of regular_sms, then, when SMs
 * are left over, one of remainder_sms (index nb_regular). */
typedef struct gctx__granule_layout {
    unsigned nb_regular;
    unsigned regular_sms;
    unsigned remainder_sms; /* 0: no remainder granule */
    unsigned min_sms;       /* the smallest claimable count: the minimum partition */
    unsigned split_flags;   /* the split's useFlags: 1, the granules carry no co-scheduling */
    int fine;               /* fine granules asked (recorded in the identity) */
} gctx__granule_layout;

unsigned gctx__layout_count(const gctx__granule_layout *l);  /* every granule */
unsigned gctx__layout_sms(const gctx__granule_layout *l, unsigned granule);
unsigned gctx__layout_total(const gctx__granule_layout *l);  /* every SM */
/* The remainder granule's SMs when g holds it and it counts towards no count; else 0. */
unsigned gctx__uncounted_sms(const gctx__granule_layout *l, const gctx__granules *g);
unsigned gctx__granules_sms(const gctx__granule_layout *l, const gctx__granules *g);
/* 1 when count is claimable: whole granules, at least min_sms (gctx_claim_count's rule). */
int gctx__layout_claimable(const gctx__granule_layout *l, unsigned count);
/* How many claims of a claimable count fit on the device at once. */
unsigned gctx__layout_fit(const gctx__granule_layout *l, unsigned count);

/* A request of the acquire syntax: "16", "25%", "rest", "all". */
typedef enum gctx__request_kind {
    GCTX__REQUEST_COUNT,
    GCTX__REQUEST_PERCENT,
    GCTX__REQUEST_REST,
    GCTX__REQUEST_ALL /* every SM of the device, the left-over ones too */
} gctx__request_kind;
typedef struct gctx__request {
    gctx__request_kind kind;
    unsigned value; /* SMs, or percent */
} gctx__request;
gctx_status gctx__request_parse(const char *text, gctx__request *out);
/* The SM count a request asks (0: rest); else the nearest claimable counts. */
gctx_status gctx__request_count(const gctx__granule_layout *l, const gctx__request *r,
                                gctx_rounding rounding, unsigned *count);
/* Best fit: granules of avail with exactly count SMs (0: all of avail), keeping most of
 * `keep`; 0 when avail can't give it. */
int gctx__granules_choose(const gctx__granule_layout *l, unsigned count,
                          const gctx__granules *avail, const gctx__granules *keep,
                          gctx__granules *out);

/* ---- registry files (claim_files.c): hostile input, never followed or blocked on ---- */

#define GCTX__ANY_OWNER ((uid_t)-1)
#define GCTX__ENOTREG EMEDIUMTYPE /* errno of gctx__file_open: not a regular file */
long long gctx__now_ns(void); /* CLOCK_REALTIME: when things happened, for people */
const char *gctx__file_error(int err);
/* name in dfd, O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC: -1 with errno GCTX__ENOTREG, EPERM or
 * EMLINK unless a regular file of owner (GCTX__ANY_OWNER: anyone), one link when one_link. */
int gctx__file_open(int dfd, const char *name, int flags, uid_t owner, int one_link,
                    struct stat *st);
int gctx__file_create(int dfd, const char *name, int flags, mode_t mode);
long gctx__file_read(int fd, char *buf, size_t size);
long gctx__file_read_at(int dfd, const char *name, uid_t owner, int one_link, char *buf,
                        size_t size);
/* The directory at path (openat(at, path) when at >= 0) opened, not through a link. */
int gctx__dir_open(int at, const char *path);
int gctx__file_write(int fd, const char *text);
int gctx__file_replace(int dfd, const char *name, const char *text, mode_t mode);
/* flock LOCK_SH and an OFD read lock, which /proc/locks shows to users who can't open it. */
int gctx__hold(int fd, int nonblocking);
/* How many locks /proc/locks lists on st's file (-1: unreadable); *pid: the first flock's. */
int gctx__locks_on(const struct stat *st, int want_flock_pid, int *pid);
/* Another user's claim or want: 1 unless /proc/locks shows no lock and its pid is dead. */
int gctx__foreign_live(const struct stat *st, int pid, int locks_trusted);

/* ---- the registry (claim_registry.c: POSIX files and flock, no driver) ---- */

/* What the registry of one GPU is for: written to its identity file, compared on open. */
typedef struct gctx__identity {
    char uuid[48];
    int driver_version;
    gctx__granule_layout layout;
    unsigned long long hash; /* FNV-1a of the granules' resource bytes, nextResource excluded */
} gctx__identity;

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
    gctx_tenant_class tenant_class; /* with its target: a line only guarded claims write */
    double target_ms, target_factor;
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

/* An open registry: the GPU's directory, its lock held (LOCK_EX) until gctx__registry_close. */
typedef struct gctx__kept_registry gctx__kept_registry;
typedef struct gctx__registry {
    char dir[512];
    int lock_fd;
    int dir_fd;      /* the GPU's directory: every file is opened relative to it */
    uid_t me;        /* geteuid(), once an open */
    int shared;      /* the runtime directory is shared by several users */
    gctx__identity identity;
    gctx__kept_registry *kept;
} gctx__registry;

/* The runtime directory's path, nothing looked at on disk. */
gctx_status gctx__runtime_path(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared);
DIR *gctx__kept_dir(gctx__registry *reg);
gctx_status gctx__registry_uuids(const char *runtime_dir, char (*uuids)[48], unsigned capacity,
                                 unsigned *count);
gctx_status gctx__registry_identity(const char *runtime_dir, const char *uuid, gctx__identity *id);
gctx_status gctx__registry_path(const char *root, const char *uuid, char *out, size_t size);
gctx_status gctx__registry_open(const char *runtime_dir, unsigned flags, int create,
                                const gctx__identity *id, gctx__registry *reg);
void gctx__registry_close(gctx__registry *reg);
/* The live claims (malloc'ed), stale ones removed first (a DIED event each). */
gctx_status gctx__registry_claims(gctx__registry *reg, gctx__record **records, unsigned *count);
gctx_status gctx__registry_add(gctx__registry *reg, gctx__record *record, int inherit, int *fd);
gctx_status gctx__registry_rewrite(gctx__registry *reg, const gctx__record *record);
/* Closes fd and, when nobody holds the claim any more, removes it (RELEASED logged if log). */
void gctx__registry_drop(gctx__registry *reg, const gctx__record *record, int fd, int log);
gctx_status gctx__registry_rejoin(gctx__registry *reg, const char *file, int *fd,
                                  gctx__record *record);
/* A claim's state file: one line its holder replaces whole without the registry lock. */
int gctx__state_write(const char *dir, const char *file, int shared, const char *text);
#define GCTX__STATE_PREFIX "state-" /* + the claim file's name */
#define GCTX__TEMP_PREFIX ".tmp-"   /* gctx__file_replace's file being written */
int gctx__state_read(const char *dir, const char *file, unsigned uid, char *text, size_t size);
gctx_status gctx__registry_log(gctx__registry *reg, const gctx__event_record *event);
gctx_status gctx__registry_events(gctx__registry *reg, gctx__event_record **events,
                                  unsigned *count);
/* A missing, foreign or corrupt identity file is rebuilt when no claim is live. */
gctx_status gctx__registry_check_identity(gctx__registry *reg, const char *expected);
gctx_status gctx__runtime_open(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared, int create, int *fd, uid_t *owner);
/* In a shared runtime directory, made only by root or admin (its owner). */
gctx_status gctx__gpu_dir_open(int root_fd, uid_t admin, const char *path, int shared, int create,
                               int *fd, struct stat *st);

/* Text formats (claim_format.c). Text fields are one line each: line breaks become spaces. */
void gctx__record_format(const gctx__record *r, char *out, size_t size);
int gctx__record_parse(const char *text, const gctx__identity *id, gctx__record *r, char *why,
                       size_t why_size);
void gctx__event_format(const gctx__event_record *e, char *out, size_t size);
/* out: room for GCTX__EVENTS_KEPT + 1. */
unsigned gctx__events_parse(char *text, gctx__event_record *out);
void gctx__identity_format(const gctx__identity *id, char *out, size_t size);
int gctx__identity_parse(const char *text, const char *uuid, gctx__identity *id);
void gctx__identity_difference(const char *found, const char *expected, char *why, size_t size);

/* ---- the device side (claim_device.c) ---- */

typedef struct gctx__device_granules {
    int device;
    gctx_partition *whole; /* every SM: a public handle, one reference of ours */
    gcu_dev_resource resources[GCTX_CLAIM_MAX_GRANULES];
    gctx__identity identity;
} gctx__device_granules;

gctx_status gctx__device_granules_get(int device, gctx__device_granules *out);
void gctx__device_granules_end(gctx__device_granules *g);
gctx_status gctx__granules_partition(const gctx__device_granules *g, const gctx__granules *set,
                                     gctx_partition **out);

/* ---- the claim object (claim.c; resize in claim_resize.c, sharing in claim_share.c) ---- */

/* One set of granules' handles; event: what the next set's stream waits for. */
typedef struct gctx__claim_parts {
    gctx_partition *partition;
    gctx_context *context;
    gctx_stream *stream;
    gctx_event *event;
} gctx__claim_parts;
void gctx__claim_parts_release(gctx__claim_parts *p);

typedef struct gctx__publisher gctx__publisher;

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
    int fd;                 /* this member's LOCK_SH: a description of its own */
    dev_t file_dev;         /* the claim file fd was opened on: a reused descriptor */
    ino_t file_ino;         /* (closefrom) no longer names it */
    unsigned made_in;       /* gctx__claim_forks_seen() when made: a fork's child is no member */
    int alone;              /* a resize holds fd LOCK_EX (claim_resize.c) */
    long long acquired_ns;  /* faults of others are looked for from here */
    gctx__claim_parts now; /* its context and stream made on first use; no event */
    gctx__claim_parts old; /* what the last resize moved from: a grow never waits on it */
    pthread_mutex_t guard_lock; /* the guard's fields below (claim_guard.c) */
    float steps[32];     /* the window's longest steps: its p99 while it has 3,200 or fewer */
    unsigned nb_steps;   /* of them */
    unsigned window_n;   /* steps in the window */
    unsigned window_over; /* of them over the target */
    long long window_ns; /* when the window began */
    double window_p99;           /* the last closed window's */
    long long closed_window_ns;  /* when that one began */
    long long published_ns;      /* the state line's last write */
    double alone_ms;
    gctx_tenant_class tenant_class; /* record's, fixed: read without claim->lock */
    double target_ms, target_factor;
    unsigned floor_sms, full_sms; /* full: its SMs before the guard held it back */
    int held_back;                /* the guard allowed less than full_sms, not yet regrown */
    int paced;                    /* gctx_claim_report_held was called: a paced program */
    double held_ms;               /* the total it reported */
    gctx__guard_state guard;
    gctx__publisher *publisher; /* a latency tenant's writer of its lines; NULL until one */
    int guard_watch;           /* a best-effort tenant's inotify (-1: none) */
    char (*latency_files)[64]; /* the latency tenants whose lines wake its wait */
    unsigned nb_latency_files, latency_room;
};

gctx_status gctx__claim_registry(const gctx_claim *claim, gctx__registry *reg);
/* Takes fd (closed on failure). inherited (-1: none): a joined token's descriptor number;
 * when no claim here owns that copy, fd moves to it, so a token handed on across exec stays
 * true. */
gctx_status gctx__claim_new(gctx__device_granules *granules, const char *runtime_dir,
                            unsigned dir_flags, int inherit, int joined,
                            const gctx__record *record, int fd, int inherited, gctx_claim **out);
unsigned gctx__claim_forks_seen(void);
/* GCTX_ERROR_REGISTRY when claim->fd no longer is its claim file's (closefrom(3)). */
gctx_status gctx__claim_fd_check(const gctx_claim *claim);
/* claim->lock held. */
gctx_status gctx__claim_own_stream(gctx_claim *claim, gctx_stream **stream);
void gctx__claim_info(const gctx__record *record, const gctx__identity *identity, int device,
                      int self, gctx_claim_info *out);
int gctx__claim_held_here(const char *dir, const char *file);
gctx_status gctx__claim_free(gctx__registry *reg, gctx__granules *free_set,
                             gctx__record **records, unsigned *count);
/* count: SMs (0: the rest); file: the claim file ("" before it exists). */
typedef struct gctx__take {
    int device;
    const gctx__identity *identity;
    const char *runtime_dir;
    unsigned dir_flags;
    int inherit;
    const char *file;
    unsigned count;
    const gctx_claim_options *opts;
} gctx__take;
/* Keeps record->granules where it can: *target gets the set chosen, record->granules held |
 * target, its file rewritten or (fd not NULL) created. Else BUSY naming holders. */
gctx_status gctx__claim_take(const gctx__take *take, gctx__record *record, int *fd,
                             gctx__granules *target);
gctx_status gctx__claim_options(const gctx_claim_options *options, gctx_claim_options *opts);

/* ---- the guard (claim_guard.c) ---- */

gctx_status gctx__claim_class_check(const gctx_claim_options *opts);
void gctx__claim_state_info(const char *dir, const gctx__record *record, gctx_claim_info *out);
/* Before the state file is removed, which a later write would leave behind. */
void gctx__claim_publisher_end(gctx_claim *claim);
gctx_status gctx__claim_best_effort(const gctx_claim *claim);
void gctx__guard_watch_update(gctx_claim *claim, const gctx__record *records, unsigned nb);
void gctx__guard_watch_end(gctx_claim *claim);

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
/* A want that can't be written is logged, not returned: the wait still works. */
void gctx__want_post(gctx__registry *reg, gctx__want *w, unsigned sms, int priority,
                     const char *claim_file);
void gctx__want_end(gctx__want *w);
/* Watches (claim_watch.c): inotify descriptors kept with the registry, as making or ending
 * one waits out an SRCU grace period. Each wait borrows its own: a shared queue's first waker
 * would read the others' wakes. */
#define GCTX__WATCHES_KEPT 4
typedef struct gctx__watch_pool {
    pthread_mutex_t lock;
    int fd[GCTX__WATCHES_KEPT];              /* -1: none */
    unsigned char lent[GCTX__WATCHES_KEPT];  /* 1: a wait's; 2: and the registry shut since */
} gctx__watch_pool;
typedef struct gctx__watch {
    gctx__watch_pool *pool;
    int slot; /* -1: the wait's own, the pool full */
    int fd;   /* -1: none (the wait backs off) */
} gctx__watch;
#define GCTX__WATCH_NONE {NULL, -1, -1}
int gctx__watch_open(const char *dir, unsigned mask);
void gctx__watch_pool_init(gctx__watch_pool *p);
void gctx__watch_pool_shut(gctx__watch_pool *p);
void gctx__watch_pool_forget(gctx__watch_pool *p);
gctx__watch_pool *gctx__registry_watches(gctx__registry *reg);
/* 0 when none is idle (w->pool is set for gctx__watch_make). */
int gctx__watch_borrow(gctx__registry *reg, gctx__watch *w);
/* Made with no lock held (a grace period). */
int gctx__watch_make(gctx__watch *w, const char *dir);
/* One idle watch in the pool, so that a latency claim's first wait pays for none. */
void gctx__watch_prepare(gctx__watch_pool *p, const char *dir);
void gctx__watch_drain(int fd);
void gctx__watch_return(gctx__watch *w);
/* The next step of the backoff (5 ms doubling to 100 ms), or less when watch_fd reads; 0
 * once timeout_ms (-1: never) has passed since start_ns. */
int gctx__claim_wait_step(long long start_ns, int timeout_ms, unsigned *step_ms, int watch_fd);

#endif

/* The claims registry: files in a GPU's directory, locks the kernel drops when their holders
 * end. POSIX only, no driver.
 *
 *   gpu-<UUID>/lock             flock LOCK_EX around every change and listing (claim_kept.c)
 *   gpu-<UUID>/identity         what split the granule indices refer to
 *   gpu-<UUID>/claim-<pid>-<n>  one claim, mode 0600, held (LOCK_SH) by each of its holders
 *   gpu-<UUID>/info-<pid>-<n>   shared registries: the claim's record, mode 0644, for others
 *   gpu-<UUID>/events-<uid>     the last GCTX__EVENTS_KEPT events a user logged
 *   gpu-<UUID>/state-claim-<pid>-<n> a guarded claim's line, its holder's (claim_guard.c)
 *
 * A claim file nobody holds is stale: whoever takes LOCK_EX|LOCK_NB on it (a new open file
 * description, under the registry lock) knows its holders are gone. flock locks belong to
 * open file descriptions, so a process's own holds conflict with its own checks.
 *
 * Claim files are private: a user who could open another's could hold its lock and keep its
 * SMs taken for good. So in a shared registry another user's claim is read from its info
 * file, and it is live while /proc/locks shows its holders' lock (an open-file-description
 * lock besides the flock: shown to every user, in every pid namespace) or its pid lives. What
 * can't be told is live: an unknown is never free. Any error but "gone" fails the operation.
 *
 * A name `claim-*` or `want-*` that is not a regular file (a FIFO, a directory, a device, a
 * symbolic link) is skipped unopened: greenctx makes only regular files, and a holder's file
 * can be replaced only by its owner (private or sticky directories). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "claim.h"

#define CLAIM_MODE 0600 /* whatever the registry; info and events files are shared's */
static mode_t public_mode(const gctx__registry *reg) { return reg->shared ? 0644 : 0600; }

static gctx_status file_fail(const gctx__registry *reg, const char *what, const char *name)
{
    int err = errno;
    return gctx__fail(GCTX_ERROR_REGISTRY,
                      "can't %s %s/%s: %s. greenctx won't guess which SMs are free; fix or "
                      "remove the file (or raise the descriptor limit, ulimit -n, when it says "
                      "too many open files)",
                      what, reg->dir, name, gctx__file_error(err));
}

#define ORPHAN_AGE_NS 60000000000ll /* a write takes microseconds: a minute-old one is dead */

/* A ".tmp-NAME-PID-NS" whose writer was killed before its rename: removed unless its writer
 * lives or it is fresh (a writer in another pid namespace looks dead here). */
static void drop_orphan(gctx__registry *reg, const char *name)
{
    const char *ns = strrchr(name, '-');
    const char *pid = ns && ns > name ? ns - 1 : NULL;
    while (pid && pid > name && *pid != '-')
        pid--;
    long writer = pid && *pid == '-' ? strtol(pid + 1, NULL, 10) : 0;
    struct stat st;
    if (writer > 0 && kill((pid_t)writer, 0) != 0 && errno == ESRCH &&
        fstatat(reg->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        gctx__now_ns() - ((long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec) >
            ORPHAN_AGE_NS)
        unlinkat(reg->dir_fd, name, 0);
}

static void info_name(const char *claim_file, char *out, size_t size)
{
    snprintf(out, size, "info-%s", claim_file + 6);
}

static void state_name(const char *claim_file, char *out, size_t size)
{
    snprintf(out, size, GCTX__STATE_PREFIX "%s", claim_file);
}

static int state_at(const char *dir, const char *file, char *name, size_t size)
{
    state_name(file, name, size);
    return gctx__dir_open(-1, dir);
}

static void unlink_claim(gctx__registry *reg, const char *name)
{
    char info[80], state[80];
    info_name(name, info, sizeof info);
    state_name(name, state, sizeof state);
    unlinkat(reg->dir_fd, name, 0);
    unlinkat(reg->dir_fd, info, 0);  /* shared registries only; else not there */
    unlinkat(reg->dir_fd, state, 0); /* guarded claims only */
}

/* ---- a claim's state file ---- */

int gctx__state_write(const char *dir, const char *file, int shared, const char *text)
{
    char name[80];
    int dfd = state_at(dir, file, name, sizeof name);
    if (dfd < 0)
        return -1;
    int rc = gctx__file_replace(dfd, name, text, shared ? 0644 : 0600);
    close(dfd);
    return rc;
}

int gctx__state_read(const char *dir, const char *file, unsigned uid, char *text, size_t size)
{
    char name[80];
    int dfd = state_at(dir, file, name, sizeof name);
    if (dfd < 0)
        return -1;
    /* Opened as its holder replaces it, the old file fails the one-link check: try again, or
     * a running latency tenant would look ended to its best-effort tenants. */
    long n = -1;
    for (int attempt = 0; attempt < 3 && n <= 0; attempt++)
        if ((n = gctx__file_read_at(dfd, name, (uid_t)uid, 1, text, size)) < 0 && errno == ENOENT)
            break;
    close(dfd);
    return n > 0 ? 0 : -1;
}

/* ---- events ---- */

#define EVENTS_TEXT (GCTX__EVENTS_KEPT * 320 + 1)

static int by_time(const void *a, const void *b)
{
    long long x = ((const gctx__event_record *)a)->time_ns;
    long long y = ((const gctx__event_record *)b)->time_ns;
    return (x > y) - (x < y);
}

static void read_user_events(gctx__registry *reg, const char *name, char *text,
                             gctx__event_record **out, unsigned *n, unsigned *cap)
{
    char *end;
    unsigned long uid = strtoul(name + 7, &end, 10);
    if (*end || end == name + 7)
        return;
    /* A record for people, not state: a file that can't be read is left out. */
    gctx__event_record parsed[GCTX__EVENTS_KEPT + 1];
    unsigned got = gctx__file_read_at(reg->dir_fd, name, (uid_t)uid, 1, text, EVENTS_TEXT) >= 0
                       ? gctx__events_parse(text, parsed)
                       : 0;
    if (*n + got > *cap) {
        unsigned c = (*n + got) * 2;
        gctx__event_record *grown = realloc(*out, c * sizeof *grown);
        if (!grown)
            return;
        *out = grown;
        *cap = c;
    }
    memcpy(*out + *n, parsed, got * sizeof *parsed);
    *n += got;
}

gctx_status gctx__registry_events(gctx__registry *reg, gctx__event_record **events,
                                  unsigned *count)
{
    char *text = malloc(EVENTS_TEXT);
    unsigned n = 0, cap = GCTX__EVENTS_KEPT + 1;
    gctx__event_record *out = calloc(cap, sizeof *out);
    if (!text || !out) {
        free(text);
        free(out);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory reading claim events");
    }
    DIR *d = gctx__kept_dir(reg);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "events-", 7) == 0)
            read_user_events(reg, e->d_name, text, &out, &n, &cap);
    free(text);
    qsort(out, n, sizeof *out, by_time);
    if (n > GCTX__EVENTS_KEPT) {
        memmove(out, out + n - GCTX__EVENTS_KEPT, GCTX__EVENTS_KEPT * sizeof *out);
        n = GCTX__EVENTS_KEPT;
    }
    *events = out;
    *count = n;
    return GCTX_SUCCESS;
}

gctx_status gctx__registry_log(gctx__registry *reg, const gctx__event_record *event)
{
    char name[32];
    snprintf(name, sizeof name, "events-%u", (unsigned)reg->me);
    char *text = malloc(EVENTS_TEXT), *out = malloc(EVENTS_TEXT + 320);
    gctx__event_record *events = calloc(GCTX__EVENTS_KEPT + 1, sizeof *events);
    gctx_status s = GCTX_SUCCESS;
    unsigned n = 0;
    if (!text || !out || !events) {
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory writing claim events");
        goto done;
    }
    if (gctx__file_read_at(reg->dir_fd, name, reg->me, 1, text, EVENTS_TEXT) >= 0)
        n = gctx__events_parse(text, events);
    if (n == GCTX__EVENTS_KEPT)
        memmove(events, events + 1, --n * sizeof *events);
    events[n++] = *event;
    size_t len = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        gctx__event_format(&events[i], out + len, 320), len += strlen(out + len);
    /* Replaced, never written through: the name may be another user's link. */
    if (gctx__file_replace(reg->dir_fd, name, out, public_mode(reg)) != 0)
        s = file_fail(reg, "write", name);
done:
    free(text);
    free(out);
    free(events);
    return s;
}

/* ---- claim files: live or stale ---- */

/* 1 when a process holds it, 0 when nobody does (fd then holds LOCK_EX), -1 on error. */
static int held_by_someone(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    return errno == EWOULDBLOCK ? 1 : -1;
}

static void remove_stale(gctx__registry *reg, const char *name, int fd, gctx_claim_event_kind kind,
                         int log)
{
    char text[2048], why[128];
    gctx__record r;
    const gctx__identity *id = &reg->identity;
    int parsed = log && gctx__file_read(fd, text, sizeof text) >= 0 &&
                 gctx__record_parse(text, id, &r, why, sizeof why) == 0;
    unlink_claim(reg, name);
    if (!parsed)
        return; /* nothing to name: not asked, a file never written, or not ours */
    gctx__event_record e = {.kind = kind, .time_ns = gctx__now_ns(), .pid = r.pid,
                            .sm_count = gctx__granules_sms(&id->layout, &r.granules)};
    snprintf(e.command, sizeof e.command, "%s", r.command);
    gctx__error_state kept;
    gctx__error_save(&kept);
    gctx__registry_log(reg, &e); /* a lost event must not fail what the caller asked */
    gctx__error_restore(&kept);
}

int gctx__foreign_live(const struct stat *st, int pid, int locks_trusted)
{
    int holder, n = gctx__locks_on(st, 0, &holder);
    if (n != 0 || !locks_trusted)
        return 1; /* held, or /proc/locks can't tell here */
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* /proc/locks names files as our stat does (not on some overlay or network filesystems). */
static int locks_trusted(const gctx__registry *reg)
{
    struct stat st;
    int pid;
    return fstat(reg->lock_fd, &st) == 0 && gctx__locks_on(&st, 0, &pid) > 0;
}

typedef enum entry_kind { ENTRY_NONE, ENTRY_OPEN, ENTRY_FOREIGN } entry_kind;

/* ENTRY_FOREIGN: another user's it can't open in a shared registry; ENTRY_NONE: gone, or not
 * a regular file. */
static gctx_status look(gctx__registry *reg, const char *name, int *fd, struct stat *st,
                        entry_kind *kind)
{
    *fd = -1;
    *kind = ENTRY_NONE;
    if (fstatat(reg->dir_fd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? GCTX_SUCCESS : file_fail(reg, "look at", name);
    if (!S_ISREG(st->st_mode))
        return GCTX_SUCCESS;
    *fd = gctx__file_open(reg->dir_fd, name, O_RDONLY, GCTX__ANY_OWNER, 0, st);
    if (*fd >= 0)
        *kind = ENTRY_OPEN;
    else if (errno == EACCES && reg->shared && st->st_uid != reg->me)
        *kind = ENTRY_FOREIGN;
    else if (!(errno == ENOENT || errno == ELOOP || errno == GCTX__ENOTREG))
        return file_fail(reg, "open", name); /* replaced meanwhile by its owner: ENTRY_NONE */
    return GCTX_SUCCESS;
}

typedef struct scan {
    gctx__record *records;
    unsigned count, capacity;
    unsigned live_files; /* live claim files, parsed or not */
    char first_live[64]; /* for messages */
    int locks_trusted;   /* -1: not looked at yet */
} scan;

static gctx_status add_live(gctx__registry *reg, const char *name,
                            const char *text, uid_t uid, scan *sc)
{
    char why[160];
    if (sc->count == sc->capacity) {
        unsigned cap = sc->capacity ? 2 * sc->capacity : 16;
        gctx__record *grown = realloc(sc->records, cap * sizeof *grown);
        if (!grown)
            return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory listing claims");
        sc->records = grown;
        sc->capacity = cap;
    }
    gctx__record *r = &sc->records[sc->count];
    if (!text || gctx__record_parse(text, &reg->identity, r, why, sizeof why) != 0 ||
        (r->uid != uid && (snprintf(why, sizeof why, "it says uid %u, its file is uid %u's",
                                    r->uid, (unsigned)uid), 1)))
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claim file %s/%s is corrupt (%s) and a process still holds it: "
                          "greenctx won't guess which SMs it holds. End the processes that hold "
                          "it (fuser %s/%s), then try again",
                          reg->dir, name, text ? why : "its info file can't be read", reg->dir,
                          name);
    snprintf(r->file, sizeof r->file, "%.63s", name);
    sc->count++;
    return GCTX_SUCCESS;
}

static gctx_status scan_claim(gctx__registry *reg, int parse, const char *name, scan *sc)
{
    char text[2048], info[80];
    struct stat st;
    int fd = -1, live = 0, have_text = 0;
    entry_kind kind;
    gctx_status s = look(reg, name, &fd, &st, &kind);
    if (s != GCTX_SUCCESS || kind == ENTRY_NONE)
        return s;
    if (kind == ENTRY_OPEN) {
        live = held_by_someone(fd);
        if (live < 0) {
            s = file_fail(reg, "test the lock of", name);
            goto done;
        }
        if (!live && st.st_uid != reg->me && reg->me != 0)
            goto done; /* another user's, stale: theirs (or root's) to remove and log */
        if (!live) {
            remove_stale(reg, name, fd, GCTX_CLAIM_EVENT_DIED, parse);
            goto done;
        }
    }
    /* Another user's claim is read from its info file (owned by the claim's owner). */
    info_name(name, info, sizeof info);
    have_text = kind == ENTRY_OPEN ? gctx__file_read(fd, text, sizeof text) >= 0
                                   : gctx__file_read_at(reg->dir_fd, info, st.st_uid, 1, text,
                                                        sizeof text) >= 0;
    if (kind == ENTRY_FOREIGN) {
        gctx__record r;
        char why[8];
        if (sc->locks_trusted < 0)
            sc->locks_trusted = locks_trusted(reg);
        int pid = have_text && gctx__record_parse(text, &reg->identity, &r, why, sizeof why) == 0
                      ? r.pid
                      : -1;
        /* An unreadable one counts as live: an unknown is never free. */
        if (pid > 0 && !gctx__foreign_live(&st, pid, sc->locks_trusted))
            goto done; /* stale; its owner's (or root's) next scan removes it */
    }
    if (!sc->live_files++)
        snprintf(sc->first_live, sizeof sc->first_live, "%.63s", name);
    if (parse)
        s = add_live(reg, name, have_text ? text : NULL, st.st_uid, sc);
done:
    if (fd >= 0)
        close(fd);
    return s;
}

/* Removed when its waiter ended without taking it back. */
static gctx_status scan_want(gctx__registry *reg, const char *name)
{
    struct stat st;
    int fd;
    entry_kind kind;
    gctx_status s = look(reg, name, &fd, &st, &kind);
    if (s == GCTX_SUCCESS && kind == ENTRY_OPEN && held_by_someone(fd) == 0)
        unlinkat(reg->dir_fd, name, 0);
    if (fd >= 0)
        close(fd);
    return s;
}

/* Stale claims removed, live ones counted (with parse: logged, parsed). */
static gctx_status scan_claims(gctx__registry *reg, int parse, scan *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->locks_trusted = -1;
    DIR *d = gctx__kept_dir(reg);
    gctx_status s;
    for (struct dirent *entry; (errno = 0, (entry = readdir(d)) != NULL);) {
        if (strncmp(entry->d_name, "want-", 5) == 0)
            GCTX_CHECK(scan_want(reg, entry->d_name), fail);
        else if (strncmp(entry->d_name, "claim-", 6) == 0)
            GCTX_CHECK(scan_claim(reg, parse, entry->d_name, sc), fail);
        else if (strncmp(entry->d_name, GCTX__TEMP_PREFIX, strlen(GCTX__TEMP_PREFIX)) == 0)
            drop_orphan(reg, entry->d_name);
    }
    if (errno) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims registry %s: %s", reg->dir,
                       strerror(errno));
        goto fail;
    }
    /* Two live claims on one granule: the files were edited, or written by another split. */
    for (unsigned i = 0; i < sc->count; i++)
        for (unsigned j = i + 1; j < sc->count; j++)
            if (gctx__granules_meet(&sc->records[i].granules, &sc->records[j].granules)) {
                s = gctx__fail(GCTX_ERROR_REGISTRY,
                               "the claims registry %s is corrupt: live claims %s (pid %d) and "
                               "%s (pid %d) hold the same granule. End one of them, then try "
                               "again",
                               reg->dir, sc->records[i].file, sc->records[i].pid,
                               sc->records[j].file, sc->records[j].pid);
                goto fail;
            }
    return GCTX_SUCCESS;
fail:
    free(sc->records);
    sc->records = NULL;
    return s;
}

gctx_status gctx__registry_claims(gctx__registry *reg, gctx__record **records, unsigned *count)
{
    scan sc;
    GCTX_TRY(scan_claims(reg, 1, &sc));
    *records = sc.records;
    *count = sc.count;
    return GCTX_SUCCESS;
}

/* ---- identity ---- */

gctx_status gctx__registry_check_identity(gctx__registry *reg, const char *expected)
{
    char found[4096], why[400];
    long n = gctx__file_read_at(reg->dir_fd, "identity", GCTX__ANY_OWNER, 1, found, sizeof found);
    if (n >= 0 && strcmp(found, expected) == 0)
        return GCTX_SUCCESS;
    if (n < 0 && errno == ENOENT)
        snprintf(why, sizeof why, "it has no identity file");
    else if (n < 0)
        snprintf(why, sizeof why, "its identity file can't be read: %s", gctx__file_error(errno));
    else
        gctx__identity_difference(found, expected, why, sizeof why);
    scan sc;
    GCTX_TRY(scan_claims(reg, 0, &sc));
    if (sc.live_files)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claims registry %s was written by another greenctx version, for "
                          "another split or driver, or is corrupt (%s), and %u of its claims "
                          "(%s, ...) %s still held: greenctx won't trust which SMs they hold. "
                          "End the processes holding them (fuser %s/claim-*) or use another "
                          "runtime directory (GREENCTX_RUNTIME_DIR); the registry is rebuilt once "
                          "none is held",
                          reg->dir, why, sc.live_files, sc.first_live,
                          sc.live_files == 1 ? "is" : "are", reg->dir);
    /* Nothing live: what the old events said is of no use under another identity. */
    char events[32];
    snprintf(events, sizeof events, "events-%u", (unsigned)reg->me);
    unlinkat(reg->dir_fd, events, 0);
    if (gctx__file_replace(reg->dir_fd, "identity", expected, public_mode(reg)) != 0)
        return file_fail(reg, "write", "identity");
    return GCTX_SUCCESS;
}

/* ---- the registries on disk, without the driver (greenctx ps on a login node) ---- */

/* Never made: *fd -1 (and success) when it doesn't exist. */
static gctx_status runtime_existing(const char *runtime_dir, char *root, size_t size,
                                    int *shared, int *fd, uid_t *owner)
{
    struct stat st;
    *fd = -1;
    GCTX_TRY(gctx__runtime_path(runtime_dir, 0, root, size, shared));
    if (lstat(root, &st) != 0 && errno == ENOENT)
        return GCTX_SUCCESS;
    return gctx__runtime_open(runtime_dir, 0, root, size, shared, 0, fd, owner);
}

gctx_status gctx__registry_uuids(const char *runtime_dir, char (*uuids)[48], unsigned capacity,
                                 unsigned *count)
{
    char root[512];
    int shared, fd;
    uid_t owner;
    *count = 0;
    GCTX_TRY(runtime_existing(runtime_dir, root, sizeof root, &shared, &fd, &owner));
    if (fd < 0)
        return GCTX_SUCCESS;
    DIR *d = fdopendir(fd);
    gctx_status s = GCTX_SUCCESS;
    for (struct dirent *e; d && (errno = 0, (e = readdir(d)) != NULL);) {
        struct stat st;
        /* "gpu-" and a UUID as cuDeviceGetUuid gives it: GPU- and 36 characters. */
        if (strncmp(e->d_name, "gpu-GPU-", 8) || strlen(e->d_name + 4) != 40 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (*count < capacity)
            snprintf(uuids[*count], sizeof uuids[0], "%s", e->d_name + 4);
        (*count)++;
    }
    if (!d || errno != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims runtime directory %s: %s",
                       root, strerror(errno));
    if (d)
        closedir(d);
    else
        close(fd);
    return s;
}

/* Anything gctx__identity_format wouldn't write back the same is refused, not rebuilt. */
gctx_status gctx__registry_identity(const char *runtime_dir, const char *uuid, gctx__identity *id)
{
    char root[512], dir[600], text[4096];
    int shared, root_fd = -1, dfd = -1;
    uid_t owner;
    struct stat st;
    gctx_status s;
    GCTX_CHECK(runtime_existing(runtime_dir, root, sizeof root, &shared, &root_fd, &owner), done);
    GCTX_CHECK(gctx__registry_path(root, uuid, dir, sizeof dir), done);
    if (root_fd < 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "the claims registry %s doesn't exist", dir);
        goto done;
    }
    GCTX_CHECK(gctx__gpu_dir_open(root_fd, owner, dir, shared, 0, &dfd, &st), done);
    if (gctx__file_read_at(dfd, "identity", GCTX__ANY_OWNER, 1, text, sizeof text) < 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "can't read the claims registry's identity %s/identity: %s", dir,
                       gctx__file_error(errno));
    else if (gctx__identity_parse(text, uuid, id) != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "the claims registry %s was written by another greenctx version (this "
                       "is %s), or its identity file is corrupt: list it with the greenctx "
                       "that wrote it, or on the GPU's node",
                       dir, gctx_version_string());
done:
    if (dfd >= 0)
        close(dfd);
    if (root_fd >= 0)
        close(root_fd);
    return s;
}

/* ---- one claim's file ---- */

static atomic_uint next_claim;

static int write_info(gctx__registry *reg, const gctx__record *record, const char *text)
{
    char info[80];
    if (!reg->shared)
        return 0;
    info_name(record->file, info, sizeof info);
    return gctx__file_replace(reg->dir_fd, info, text, 0644);
}

gctx_status gctx__registry_add(gctx__registry *reg, gctx__record *record, int inherit, int *fd)
{
    char text[2048];
    for (int attempt = 0; attempt < 1000; attempt++) {
        snprintf(record->file, sizeof record->file, "claim-%d-%u", record->pid,
                 atomic_fetch_add(&next_claim, 1));
        int f = gctx__file_create(reg->dir_fd, record->file, O_RDWR, CLAIM_MODE);
        if (f < 0 && errno == EEXIST)
            continue; /* a claim of an earlier process with our pid, held by its members */
        if (f < 0)
            return file_fail(reg, "create the claim file", record->file);
        /* Locked before the registry's lock is released: never seen unheld. */
        gctx__record_format(record, text, sizeof text);
        int failed = (inherit && fcntl(f, F_SETFD, 0) != 0) || gctx__hold(f, 0) != 0 ||
                     gctx__file_write(f, text) != 0;
        if (!failed && write_info(reg, record, text) == 0) {
            *fd = f;
            return GCTX_SUCCESS;
        }
        int squatted = !failed && errno == EPERM; /* another user made the info name first */
        gctx_status s =
            squatted ? GCTX_SUCCESS : file_fail(reg, "write the claim file", record->file);
        unlink_claim(reg, record->file); /* the squatter's info stays: not ours */
        close(f);
        if (!squatted)
            return s;
    }
    return gctx__fail(GCTX_ERROR_REGISTRY, "can't name a new claim file in %s", reg->dir);
}

gctx_status gctx__registry_rewrite(gctx__registry *reg, const gctx__record *record)
{
    char text[2048];
    gctx__record_format(record, text, sizeof text);
    /* In place: its inode is what its holders lock. */
    int fd = gctx__file_open(reg->dir_fd, record->file, O_WRONLY, reg->me, 1, NULL);
    int rc = fd >= 0 ? gctx__file_write(fd, text) : -1;
    if (rc == 0)
        rc = write_info(reg, record, text);
    gctx_status s = rc == 0 ? GCTX_SUCCESS : file_fail(reg, "rewrite the claim file", record->file);
    if (fd >= 0)
        close(fd);
    return s;
}

void gctx__registry_drop(gctx__registry *reg, const gctx__record *record, int fd, int log)
{
    close(fd);
    /* Another open file description: the members still holding it keep LOCK_SH on theirs. */
    int check = gctx__file_open(reg->dir_fd, record->file, O_RDONLY, reg->me, 0, NULL);
    if (check < 0)
        return;
    if (held_by_someone(check) == 0)
        remove_stale(reg, record->file, check, GCTX_CLAIM_EVENT_RELEASED, log);
    close(check);
}

gctx_status gctx__registry_rejoin(gctx__registry *reg, const char *file, int *fd,
                                  gctx__record *record)
{
    char text[2048], why[160];
    int f = gctx__file_open(reg->dir_fd, file, O_RDONLY, reg->me, 0, NULL);
    if (f < 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claim %s/%s is no longer held (%s): its holders ended; claim SMs "
                          "anew",
                          reg->dir, file, gctx__file_error(errno));
    int held = held_by_someone(f);
    gctx_status s = GCTX_SUCCESS;
    if (held != 1)
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "the claim %s/%s is no longer held: its holders ended; claim SMs anew",
                       reg->dir, file);
    else if (gctx__hold(f, 1) != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't lock the claim %s/%s: %s", reg->dir, file,
                       strerror(errno));
    else if (gctx__file_read_at(reg->dir_fd, file, reg->me, 0, text, sizeof text) < 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "the claim %s/%s is gone: %s", reg->dir, file,
                       gctx__file_error(errno));
    else if (gctx__record_parse(text, &reg->identity, record, why, sizeof why) != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "the claim file %s/%s is corrupt (%s)", reg->dir,
                       file, why);
    else
        snprintf(record->file, sizeof record->file, "%s", file);
    if (held == 0)
        remove_stale(reg, file, f, GCTX_CLAIM_EVENT_DIED, 1);
    if (s != GCTX_SUCCESS)
        close(f);
    else
        *fd = f;
    return s;
}

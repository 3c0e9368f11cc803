/* The claims registry: files under the runtime directory, locks the kernel drops when their
 * holders end. POSIX only, no driver.
 *
 *   <runtime dir>/gpu-<UUID>/lock           flock LOCK_EX around every change and listing
 *   <runtime dir>/gpu-<UUID>/identity       what split the granule indices refer to
 *   <runtime dir>/gpu-<UUID>/claim-<pid>-<n> one claim, flock LOCK_SH by each of its holders
 *   <runtime dir>/gpu-<UUID>/events         the last GCTX__EVENTS_KEPT events
 *
 * A claim file nobody holds is stale: whoever takes LOCK_EX|LOCK_NB on it (a new open file
 * description, under the registry lock) knows its holders are gone. flock locks belong to
 * open file descriptions, so a process's own holds conflict with its own checks.
 *
 * A process keeps the registries it used last open (KEPT_OPEN): the directory (read again
 * with rewinddir) and the lock file's one open file description, which its threads take in
 * turn under a mutex before its flock (threads sharing a description would not exclude each
 * other). What an
 * operation checks then is that these are still what the paths name (a registry removed or
 * rebuilt meanwhile is opened afresh) and that the identity file is the one checked before.
 * A fork's child opens its own: sharing the parent's description would share its lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "claim.h"

#define FORMAT_VERSION 1

long long gctx__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* ---- the runtime directory ---- */

/* mkdir -p: missing directories get mode (the last one's is what the checks look at). */
static int make_dirs(const char *path, mode_t mode)
{
    char buf[512];
    if (strlen(path) >= sizeof buf)
        return -1;
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, mode) == 0 || errno == EEXIST ? 0 : -1;
}

static gctx_status check_dir(const char *path, int shared)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "the claims runtime directory %s: %s", path,
                          strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claims runtime directory %s is not a directory (a symbolic link "
                          "or a file): remove it, or set GREENCTX_RUNTIME_DIR to a directory of "
                          "your own",
                          path);
    int foreign = st.st_uid != geteuid();
    int writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (shared && (st.st_mode & S_ISVTX))
        return GCTX_SUCCESS;
    if (!foreign && !writable)
        return GCTX_SUCCESS;
    if (shared)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the shared claims runtime directory %s (mode %04o) is not sticky: a "
                          "directory several users share must be mode 1777 or 1770 (chmod +t, "
                          "made by an administrator), so no user can remove another's files",
                          path, (unsigned)(st.st_mode & 07777));
    return gctx__fail(GCTX_ERROR_REGISTRY,
                      "the claims runtime directory %s is %s (uid %u, mode %04o): another user "
                      "could forge or remove claims there. Use a directory of your own "
                      "(GREENCTX_RUNTIME_DIR, mode 0700), or, for a directory several users "
                      "share on purpose, GCTX_CLAIM_SHARED_DIR or GREENCTX_RUNTIME_SHARED=1 "
                      "with a sticky directory (mode 1777)",
                      path, foreign ? "owned by another user" : "writable by other users",
                      (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
}

gctx_status gctx__runtime_path(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared)
{
    const char *env = getenv("GREENCTX_RUNTIME_SHARED");
    *shared = (flags & GCTX_CLAIM_SHARED_DIR) || (env && strcmp(env, "1") == 0);
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    const char *given = runtime_dir && *runtime_dir ? runtime_dir : getenv("GREENCTX_RUNTIME_DIR");
    int n;
    if (given && *given)
        n = snprintf(out, size, "%s", given);
    else if (xdg && *xdg)
        n = snprintf(out, size, "%s/greenctx", xdg);
    else
        n = snprintf(out, size, "/tmp/greenctx-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the claims runtime directory's path is longer than %zu bytes",
                          size - 1);
    return GCTX_SUCCESS;
}

gctx_status gctx__runtime_dir(const char *runtime_dir, unsigned flags, char *out, size_t size,
                              int *shared)
{
    gctx_status s = gctx__runtime_path(runtime_dir, flags, out, size, shared);
    if (s != GCTX_SUCCESS)
        return s;
    struct stat st;
    if (lstat(out, &st) != 0 && make_dirs(out, 0700) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "can't create the claims runtime directory %s: %s (set "
                          "GREENCTX_RUNTIME_DIR to a directory you can write)",
                          out, strerror(errno));
    return check_dir(out, *shared);
}

/* ---- small files ---- */

static int path_in(const gctx__registry *reg, const char *name, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%s", reg->dir, name);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* The whole file into buf (NUL-terminated); its length, or -1 (errno set). */
static long read_fd(int fd, char *buf, size_t size)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = pread(fd, buf + n, size - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0 || n + (size_t)r >= size - 1) {
            n += (size_t)r;
            break;
        }
        n += (size_t)r;
    }
    buf[n] = '\0';
    return (long)n;
}

static long read_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long n = read_fd(fd, buf, size);
    close(fd);
    return n;
}

static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

static mode_t file_mode(const gctx__registry *reg) { return reg->shared ? 0644 : 0600; }

/* Writes text over the file fd is open on, in place: written from the start, then cut to its
 * length. Never truncated to zero first: ext4 flushes a file truncated to zero and written
 * again when it is closed (auto_da_alloc), a millisecond per resize. Readers hold the
 * registry lock, so they never see it half-written. */
static int write_fd_in_place(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    int rc = 0;
    while (done < len && rc == 0) {
        ssize_t w = pwrite(fd, text + done, len - done, (off_t)done);
        if (w > 0)
            done += (size_t)w;
        else if (!(w < 0 && errno == EINTR))
            rc = -1;
    }
    if (rc == 0 && ftruncate(fd, (off_t)len) != 0)
        rc = -1;
    return rc;
}

static int write_in_place(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = write_fd_in_place(fd, text);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* Replaces a file as a whole (a temporary file renamed over it), so a crash never leaves a
 * half-written identity. */
static gctx_status replace_file(const gctx__registry *reg, const char *name, const char *text)
{
    char path[600], tmp[640];
    if (path_in(reg, name, path, sizeof path) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "registry path too long: %s", reg->dir);
    /* Per process: another user's leftover (a crash) must not stand in the way. */
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, file_mode(reg));
    if (fd < 0 || fchmod(fd, file_mode(reg)) != 0 || write_all(fd, text) != 0) {
        gctx_status s = gctx__fail(GCTX_ERROR_REGISTRY, "can't write %s: %s", tmp,
                                   strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return s;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        gctx_status s = gctx__fail(GCTX_ERROR_REGISTRY, "can't rename %s to %s: %s", tmp, path,
                                   strerror(errno));
        unlink(tmp);
        return s;
    }
    return GCTX_SUCCESS;
}

/* ---- claim records ---- */

/* Text fields are one line each: line breaks become spaces. */
static void one_line(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++)
        dst[i] = src[i] == '\n' || src[i] == '\r' ? ' ' : src[i];
    dst[i] = '\0';
}

static void format_record(const gctx__record *r, char *out, size_t size)
{
    char granules[GCTX_CLAIM_MAX_GRANULES * 4], user[sizeof r->user], command[sizeof r->command],
        label[sizeof r->label];
    gctx__granules_text(&r->granules, granules, sizeof granules);
    /* A command's arguments may hold line breaks (python -c 'script'). */
    one_line(user, sizeof user, r->user);
    one_line(command, sizeof command, r->command);
    one_line(label, sizeof label, r->label);
    snprintf(out, size,
             "greenctx-claim %d\npid %d\nuid %u\nuser %s\ncommand %s\nlabel %s\nsince_ns %lld\n"
             "mps %d\ngranules %s\n",
             FORMAT_VERSION, r->pid, r->uid, user, command, label, r->since_ns, r->mps,
             granules);
}

/* The value of line `key ` at *cursor, copied into value; advances the cursor. */
static int take_line(const char **cursor, const char *key, char *value, size_t size)
{
    size_t klen = strlen(key);
    const char *p = *cursor;
    if (strncmp(p, key, klen) != 0 || p[klen] != ' ')
        return -1;
    p += klen + 1;
    const char *end = strchr(p, '\n');
    if (!end)
        return -1;
    size_t len = (size_t)(end - p);
    if (len >= size)
        len = size - 1;
    memcpy(value, p, len);
    value[len] = '\0';
    *cursor = end + 1;
    return 0;
}

static int parse_long(const char *text, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(text, &end, 10);
    return errno || end == text || *end ? -1 : 0;
}

/* 0, or -1 with what is wrong in why. */
static int parse_record(const char *text, const gctx__identity *id, gctx__record *r, char *why,
                        size_t why_size)
{
    char v[300];
    long long n;
    const char *c = text;
    memset(r, 0, sizeof *r);
#define FIELD(key)                                                                             \
    (take_line(&c, key, v, sizeof v) == 0 ||                                                   \
     (snprintf(why, why_size, "no '%s' line where expected", key), 0))
    if (!FIELD("greenctx-claim"))
        return -1;
    if (parse_long(v, &n) || n != FORMAT_VERSION) {
        snprintf(why, why_size, "format %.40s, this greenctx writes %d", v, FORMAT_VERSION);
        return -1;
    }
    if (!FIELD("pid") || parse_long(v, &n))
        return -1;
    r->pid = (int)n;
    if (!FIELD("uid") || parse_long(v, &n))
        return -1;
    r->uid = (unsigned)n;
    if (!FIELD("user"))
        return -1;
    one_line(r->user, sizeof r->user, v);
    if (!FIELD("command"))
        return -1;
    one_line(r->command, sizeof r->command, v);
    if (!FIELD("label"))
        return -1;
    one_line(r->label, sizeof r->label, v);
    if (!FIELD("since_ns") || parse_long(v, &r->since_ns))
        return -1;
    if (!FIELD("mps") || parse_long(v, &n))
        return -1;
    r->mps = n != 0;
    if (!FIELD("granules"))
        return -1;
#undef FIELD
    char *save = NULL;
    for (char *tok = strtok_r(v, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (parse_long(tok, &n) || n < 0 || n >= (long long)gctx__layout_count(&id->layout) ||
            gctx__granules_has(&r->granules, (unsigned)n)) {
            snprintf(why, why_size, "granule '%s' is no granule of this device's %u, or twice",
                     tok, gctx__layout_count(&id->layout));
            return -1;
        }
        gctx__granules_add(&r->granules, (unsigned)n);
    }
    if (!gctx__granules_count(&r->granules)) {
        snprintf(why, why_size, "it holds no granule");
        return -1;
    }
    return 0;
}

/* ---- events ---- */

static void format_event(const gctx__event_record *e, char *out, size_t size)
{
    char command[256];
    one_line(command, sizeof command, e->command);
    snprintf(out, size, "%d %lld %d %d %u %s\n", (int)e->kind, e->time_ns, e->pid, e->cuda_result,
             e->sm_count, command);
}

static int parse_event(const char *line, gctx__event_record *e)
{
    int kind, used = 0;
    memset(e, 0, sizeof *e);
    if (sscanf(line, "%d %lld %d %d %u %n", &kind, &e->time_ns, &e->pid, &e->cuda_result,
               &e->sm_count, &used) < 5 ||
        kind < GCTX_CLAIM_EVENT_RELEASED || kind > GCTX_CLAIM_EVENT_FAULT)
        return -1;
    e->kind = (gctx_claim_event_kind)kind;
    one_line(e->command, sizeof e->command, line + used);
    return 0;
}

/* The events in text (cap bytes, NUL-terminated), parsed into out (GCTX__EVENTS_KEPT + 1). */
static unsigned parse_events(char *text, gctx__event_record *out)
{
    unsigned n = 0;
    char *save = NULL;
    /* A line that doesn't parse is skipped: events are a record for people, not state. */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (parse_event(line, &out[n]) == 0 && ++n == GCTX__EVENTS_KEPT + 1) {
            memmove(out, out + 1, GCTX__EVENTS_KEPT * sizeof *out);
            n = GCTX__EVENTS_KEPT;
        }
    return n;
}

#define EVENTS_TEXT (GCTX__EVENTS_KEPT * 320 + 1)

/* Reads the events from fd (-1: none) into a new array. */
static gctx_status read_events(int fd, gctx__event_record **events, unsigned *count)
{
    char *text = malloc(EVENTS_TEXT);
    gctx__event_record *out = calloc(GCTX__EVENTS_KEPT + 1, sizeof *out);
    if (!text || !out) {
        free(text);
        free(out);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory reading claim events");
    }
    *count = fd >= 0 && read_fd(fd, text, EVENTS_TEXT) >= 0 ? parse_events(text, out) : 0;
    free(text);
    *events = out;
    return GCTX_SUCCESS;
}

gctx_status gctx__registry_events(gctx__registry *reg, gctx__event_record **events,
                                  unsigned *count)
{
    char path[600];
    int fd = path_in(reg, "events", path, sizeof path) == 0 ? open(path, O_RDONLY | O_CLOEXEC)
                                                            : -1;
    gctx_status s = read_events(fd, events, count);
    if (fd >= 0)
        close(fd);
    return s;
}

gctx_status gctx__registry_log(gctx__registry *reg, const gctx__event_record *event)
{
    char path[600];
    /* One descriptor reads them and writes them back, in place: a line a crash cut short is
     * skipped when read (events are a record for people, not state). */
    int fd = path_in(reg, "events", path, sizeof path) == 0
                 ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, file_mode(reg)) : -1;
    if (fd < 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't write %s/events: %s", reg->dir,
                          strerror(errno));
    gctx__event_record *events;
    unsigned n;
    gctx_status s = read_events(fd, &events, &n);
    int read = s == GCTX_SUCCESS;
    char *text = read ? malloc((size_t)(n + 1) * 320 + 1) : NULL;
    if (s == GCTX_SUCCESS && !text)
        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory writing claim events");
    if (s == GCTX_SUCCESS) {
        if (n == GCTX__EVENTS_KEPT)
            memmove(events, events + 1, --n * sizeof *events);
        events[n++] = *event;
        size_t len = 0;
        text[0] = '\0';
        for (unsigned i = 0; i < n; i++)
            format_event(&events[i], text + len, 320), len += strlen(text + len);
        if (write_fd_in_place(fd, text) != 0)
            s = gctx__fail(GCTX_ERROR_REGISTRY, "can't write %s/events: %s", reg->dir,
                           strerror(errno));
    }
    if (read)
        free(events);
    free(text);
    close(fd);
    return s;
}

/* ---- claim files: live or stale ---- */

static int is_claim_file(const char *name) { return strncmp(name, "claim-", 6) == 0; }
static int is_want_file(const char *name) { return strncmp(name, "want-", 5) == 0; }

/* 1 when a process holds the claim file's lock, 0 when nobody does (and then fd holds
 * LOCK_EX), -1 on error. */
static int held_by_someone(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    return errno == EWOULDBLOCK ? 1 : -1;
}

/* Removes a stale claim file (its lock is held by us, LOCK_EX) and logs what it was. */
static void remove_stale(gctx__registry *reg, const char *path, int fd, const gctx__identity *id,
                         gctx_claim_event_kind kind)
{
    char text[2048], why[128];
    gctx__record r;
    int parsed = read_fd(fd, text, sizeof text) >= 0 && parse_record(text, id, &r, why,
                                                                     sizeof why) == 0;
    unlink(path);
    if (!parsed)
        return; /* nothing to name: a file never written, or not ours */
    gctx__event_record e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.time_ns = gctx__now_ns();
    e.pid = r.pid;
    snprintf(e.command, sizeof e.command, "%s", r.command);
    e.sm_count = gctx__granules_sms(&id->layout, &r.granules);
    gctx__error_state kept;
    gctx__error_save(&kept);
    gctx__registry_log(reg, &e); /* a lost event must not fail what the caller asked */
    gctx__error_restore(&kept);
}

typedef struct scan {
    gctx__record *records;
    unsigned count, capacity;
    unsigned live_files; /* live claim files, parsed or not */
    char first_live[64]; /* for messages */
} scan;

/* Every claim file: stale ones removed (with `log_kind` events when log is set), live ones
 * parsed into sc (when parse is set: a live file that doesn't parse fails). */
static gctx_status scan_claims(gctx__registry *reg, const gctx__identity *id, int parse,
                               int log, scan *sc)
{
    memset(sc, 0, sizeof *sc);
    DIR *d = gctx__kept_dir(reg);
    gctx_status s = GCTX_SUCCESS;
    struct dirent *entry;
    while (s == GCTX_SUCCESS && (entry = readdir(d)) != NULL) {
        int want = is_want_file(entry->d_name);
        if (!want && !is_claim_file(entry->d_name))
            continue;
        char path[600];
        if (path_in(reg, entry->d_name, path, sizeof path) != 0)
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* removed meanwhile, or not ours to read */
        int held = held_by_someone(fd);
        if (want) {
            if (held == 0)
                unlink(path); /* its waiter ended without taking it back */
        } else if (held == 0) {
            if (log)
                remove_stale(reg, path, fd, id, GCTX_CLAIM_EVENT_DIED);
            else
                unlink(path);
        } else if (held == 1) {
            if (!sc->live_files++)
                snprintf(sc->first_live, sizeof sc->first_live, "%.63s", entry->d_name);
            if (parse) {
                char text[2048], why[160];
                if (sc->count == sc->capacity) {
                    unsigned cap = sc->capacity ? 2 * sc->capacity : 16;
                    gctx__record *grown = realloc(sc->records, cap * sizeof *grown);
                    if (!grown) {
                        s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory listing claims");
                        close(fd);
                        break;
                    }
                    sc->records = grown;
                    sc->capacity = cap;
                }
                gctx__record *r = &sc->records[sc->count];
                if (read_fd(fd, text, sizeof text) < 0 ||
                    parse_record(text, id, r, why, sizeof why) != 0) {
                    s = gctx__fail(GCTX_ERROR_REGISTRY,
                                   "the claim file %s is corrupt (%s) and a process still holds "
                                   "it: greenctx won't guess which SMs it holds. End the "
                                   "processes that hold it (fuser %s), then try again",
                                   path, why, path);
                } else {
                    snprintf(r->file, sizeof r->file, "%.63s", entry->d_name);
                    sc->count++;
                }
            }
        }
        close(fd);
    }
    /* Two live claims on one granule: the files were edited, or written by another split. */
    for (unsigned i = 0; s == GCTX_SUCCESS && i < sc->count; i++)
        for (unsigned j = i + 1; j < sc->count; j++)
            if (gctx__granules_meet(&sc->records[i].granules, &sc->records[j].granules)) {
                s = gctx__fail(GCTX_ERROR_REGISTRY,
                               "the claims registry %s is corrupt: live claims %s (pid %d) and "
                               "%s (pid %d) hold the same granule. End one of them, then try "
                               "again",
                               reg->dir, sc->records[i].file, sc->records[i].pid,
                               sc->records[j].file, sc->records[j].pid);
                break;
            }
    if (s != GCTX_SUCCESS) {
        free(sc->records);
        sc->records = NULL;
    }
    return s;
}

gctx_status gctx__registry_claims(gctx__registry *reg, gctx__record **records, unsigned *count)
{
    scan sc;
    gctx_status s = scan_claims(reg, &reg->identity, 1, 1, &sc);
    if (s != GCTX_SUCCESS)
        return s;
    *records = sc.records;
    *count = sc.count;
    return GCTX_SUCCESS;
}

/* ---- identity ---- */

static void format_identity(const gctx__identity *id, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size,
                                "greenctx-claims %d\nversion %s\nuuid %s\ndriver %d\ngranules",
                                FORMAT_VERSION, gctx_version_string(), id->uuid,
                                id->driver_version);
    for (unsigned i = 0; i < gctx__layout_count(&id->layout) && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, " %u", gctx__layout_sms(&id->layout, i));
    if (n < size)
        snprintf(out + n, size - n, "\nhash %016llx\n", id->hash);
}

/* What differs between the identity file's text and ours: the first line that does. */
static void identity_difference(const char *found, const char *expected, char *why, size_t size)
{
    const char *f = found, *e = expected;
    while (*e) {
        const char *fe = strchr(f, '\n'), *ee = strchr(e, '\n');
        size_t fl = fe ? (size_t)(fe - f) : strlen(f), el = ee ? (size_t)(ee - e) : strlen(e);
        if (fl != el || strncmp(f, e, el) != 0) {
            snprintf(why, size, "its identity says '%.*s' where this process has '%.*s'",
                     (int)(fl > 80 ? 80 : fl), f, (int)(el > 80 ? 80 : el), e);
            return;
        }
        if (!fe || !ee)
            break;
        f = fe + 1;
        e = ee + 1;
    }
    snprintf(why, size, "its identity file is corrupt (trailing text)");
}

/* Checks the identity file; a missing, foreign or corrupt one is rebuilt when no claim is
 * live, else refused. */
static gctx_status check_identity(gctx__registry *reg)
{
    char path[600], found[4096], expected[4096], why[300];
    format_identity(&reg->identity, expected, sizeof expected);
    if (path_in(reg, "identity", path, sizeof path) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "registry path too long: %s", reg->dir);
    long n = read_file(path, found, sizeof found);
    if (n >= 0 && strcmp(found, expected) == 0)
        return GCTX_SUCCESS;
    int missing = n < 0;
    if (missing)
        snprintf(why, sizeof why, "it has no identity file");
    else
        identity_difference(found, expected, why, sizeof why);
    scan sc;
    gctx_status s = scan_claims(reg, &reg->identity, 0, 0, &sc);
    if (s != GCTX_SUCCESS)
        return s;
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
    /* Nothing live: what the old files said is of no use under another identity. */
    char events[600];
    if (!missing && path_in(reg, "events", events, sizeof events) == 0)
        unlink(events);
    return replace_file(reg, "identity", expected);
}

gctx_status gctx__registry_path(const char *root, const char *uuid, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/gpu-%s", root, uuid);
    if (n < 0 || (size_t)n >= size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the claims runtime directory's path %s is too long", root);
    return GCTX_SUCCESS;
}

/* ---- the registries on disk, without the driver (greenctx ps on a login node) ---- */

gctx_status gctx__registry_uuids(const char *runtime_dir, char (*uuids)[48], unsigned capacity,
                                 unsigned *count)
{
    char root[512];
    int shared;
    gctx_status s = gctx__runtime_path(runtime_dir, 0, root, sizeof root, &shared);
    if (s != GCTX_SUCCESS)
        return s;
    *count = 0;
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        if (errno == ENOENT)
            return GCTX_SUCCESS; /* no claim was ever taken here */
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims runtime directory %s: %s",
                          root, strerror(errno));
    }
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        /* "gpu-" and a UUID as cuDeviceGetUuid gives it: GPU- and 36 characters. */
        if (strncmp(e->d_name, "gpu-GPU-", 8) || strlen(e->d_name + 4) != 40 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (*count < capacity)
            snprintf(uuids[*count], sizeof uuids[0], "%s", e->d_name + 4);
        (*count)++;
    }
    closedir(d);
    return GCTX_SUCCESS;
}

/* The identity file parsed, and written back the same by format_identity: anything else (an
 * older greenctx's, a foreign or corrupt file) is refused here rather than rebuilt by the
 * open that follows. */
gctx_status gctx__registry_identity(const char *runtime_dir, const char *uuid, gctx__identity *id)
{
    char root[512], dir[600], text[4096], again[4096];
    int shared;
    gctx_status s = gctx__runtime_path(runtime_dir, 0, root, sizeof root, &shared);
    if (s || (s = gctx__registry_path(root, uuid, dir, sizeof dir)))
        return s;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    int fd = dfd >= 0 ? openat(dfd, "identity", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                      : -1;
    struct stat st;
    long n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read_fd(fd, text, sizeof text)
                                                                   : -1;
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    if (n < 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims registry %s/identity", dir);
    memset(id, 0, sizeof *id);
    snprintf(id->uuid, sizeof id->uuid, "%s", uuid);
    const char *granules = strstr(text, "\ngranules");
    const char *driver = strstr(text, "\ndriver ");
    const char *hash = strstr(text, "\nhash ");
    unsigned sms[GCTX_CLAIM_MAX_GRANULES], nb = 0;
    int used = 0;
    for (const char *p = granules ? granules + 9 : ""; *p == ' ' && nb < GCTX_CLAIM_MAX_GRANULES;
         p += used)
        if (sscanf(p, " %u%n", &sms[nb], &used) == 1)
            nb++;
        else
            break;
    if (driver)
        sscanf(driver, "\ndriver %d", &id->driver_version);
    if (hash)
        sscanf(hash, "\nhash %llx", &id->hash);
    gctx__granule_layout *l = &id->layout;
    l->regular_sms = nb ? sms[0] : 0;
    l->nb_regular = nb && sms[nb - 1] != sms[0] ? nb - 1 : nb;
    l->remainder_sms = l->nb_regular < nb ? sms[nb - 1] : 0;
    format_identity(id, again, sizeof again);
    if (nb == 0 || strcmp(text, again) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claims registry %s was written by another greenctx version (this "
                          "is %s), or its identity file is corrupt: list it with the greenctx "
                          "that wrote it, or on the GPU's node",
                          dir, gctx_version_string());
    return GCTX_SUCCESS;
}

/* ---- the registries a process keeps open ---- */

struct gctx__kept_registry {
    gctx__kept_registry *next;
    char dir[512];
    int shared;
    pthread_mutex_t lock; /* this process's threads, one at a time, then the flock */
    DIR *dirp;            /* the GPU's directory, read again for every scan */
    int lock_fd;
    int identity_fd; /* the identity file last found right, read again by every open */
    gctx__watch_pool watches; /* inotify on the directory, for this process's waits */
    struct stat dir_st, lock_st, identity_st;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static gctx__kept_registry *kept_list;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void close_files(gctx__kept_registry *k)
{
    if (k->dirp)
        closedir(k->dirp);
    if (k->lock_fd >= 0)
        close(k->lock_fd);
    if (k->identity_fd >= 0)
        close(k->identity_fd);
    k->dirp = NULL;
    k->lock_fd = -1;
    k->identity_fd = -1;
}

/* Closes what a kept registry holds open (its lock goes with the description). */
static void kept_shut(gctx__kept_registry *k)
{
    close_files(k);
    gctx__watch_pool_shut(&k->watches);
}

gctx__watch_pool *gctx__registry_watches(gctx__registry *reg) { return &reg->kept->watches; }

/* The child of a fork has one thread and the parent's descriptors: it forgets the parent's
 * registries (closing its copies of their descriptors drops no lock of the parent's) and
 * opens its own. */
static void forget_in_child(void)
{
    for (gctx__kept_registry *k = kept_list, *next; k; k = next) {
        next = k->next;
        close_files(k);
        gctx__watch_pool_forget(&k->watches); /* its lock may be a parent thread's: not taken */
        free(k);
    }
    kept_list = NULL;
    pthread_mutex_init(&kept_lock, NULL);
}

static void watch_forks(void) { pthread_atfork(NULL, NULL, forget_in_child); }

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

DIR *gctx__kept_dir(gctx__registry *reg)
{
    rewinddir(reg->kept->dirp);
    return reg->kept->dirp;
}

/* Registries a process keeps open at most (three descriptors each): one that claims in a
 * runtime directory per job would otherwise hold three per directory it ever used. */
#define KEPT_OPEN 16

/* Shuts the registries used least recently beyond the first KEPT_OPEN (kept_lock held); one
 * in use is left alone. Their entries stay (another thread may be about to take one), and
 * their next use opens them again. */
static void shut_beyond_kept(void)
{
    unsigned n = 0;
    for (gctx__kept_registry *k = kept_list; k; k = k->next)
        if (++n > KEPT_OPEN && k->dirp && pthread_mutex_trylock(&k->lock) == 0) {
            kept_shut(k);
            pthread_mutex_unlock(&k->lock);
        }
}

/* The process's entry for dir (made, unopened, when new), first in the list from now on;
 * NULL when out of memory. */
static gctx__kept_registry *kept_entry(const char *dir, int shared)
{
    pthread_once(&kept_once, watch_forks);
    pthread_mutex_lock(&kept_lock);
    gctx__kept_registry **at = &kept_list, *k;
    while ((k = *at) && (strcmp(k->dir, dir) != 0 || k->shared != shared))
        at = &k->next;
    if (k) {
        *at = k->next;
    } else if ((k = calloc(1, sizeof *k))) {
        snprintf(k->dir, sizeof k->dir, "%s", dir);
        k->shared = shared;
        k->lock_fd = -1;
        k->identity_fd = -1;
        gctx__watch_pool_init(&k->watches);
        pthread_mutex_init(&k->lock, NULL);
    }
    if (k) {
        k->next = kept_list;
        kept_list = k;
        shut_beyond_kept();
    }
    pthread_mutex_unlock(&kept_lock);
    return k;
}

/* Still the directory and lock file the paths name (nobody removed or replaced them), with
 * the lock held. */
static int kept_valid(const gctx__kept_registry *k)
{
    struct stat st;
    return k->dirp && lstat(k->dir, &st) == 0 && same_file(&st, &k->dir_st) &&
           st.st_mode == k->dir_st.st_mode && st.st_uid == k->dir_st.st_uid &&
           fstatat(dirfd(k->dirp), "lock", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           same_file(&st, &k->lock_st);
}

/* The first open in this process, or after the registry was removed or rebuilt: the runtime
 * directory checked, the GPU's directory made and checked, both kept open. */
static gctx_status kept_open(const char *runtime_dir, unsigned flags, gctx__registry *reg,
                             gctx__kept_registry *k)
{
    char root[512];
    int shared;
    gctx_status s = gctx__runtime_dir(runtime_dir, flags, root, sizeof root, &shared);
    if (s != GCTX_SUCCESS)
        return s;
    mode_t mode = reg->shared ? 0777 : 0700;
    if (mkdir(reg->dir, mode) == 0)
        chmod(reg->dir, mode); /* past the umask: other users must create claims here */
    else if (errno != EEXIST)
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't create the claims registry %s: %s",
                          reg->dir, strerror(errno));
    if (!reg->shared && (s = check_dir(reg->dir, 0)))
        return s;
    char lock[600];
    path_in(reg, "lock", lock, sizeof lock);
    if (!(k->dirp = opendir(reg->dir)))
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims registry %s: %s", reg->dir,
                          strerror(errno));
    k->lock_fd = openat(dirfd(k->dirp), "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                        reg->shared ? 0666 : 0600);
    if (k->lock_fd < 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't open the claims registry's lock %s: %s", lock,
                       strerror(errno));
        kept_shut(k);
        return s;
    }
    if (reg->shared)
        fchmod(k->lock_fd, 0666); /* fails for another user's file, which is already so */
    if (fstat(dirfd(k->dirp), &k->dir_st) != 0 || fstat(k->lock_fd, &k->lock_st) != 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims registry %s: %s", reg->dir,
                       strerror(errno));
        kept_shut(k);
    }
    return s;
}

/* The identity: the file found right last time, still under its name, read again and
 * compared (two calls); else the whole check (read, compared, rebuilt when no claim is live,
 * else refused), and the file kept open for the next time. */
static gctx_status kept_identity(gctx__registry *reg, gctx__kept_registry *k)
{
    char expected[4096], found[4096];
    struct stat st;
    format_identity(&reg->identity, expected, sizeof expected);
    if (k->identity_fd >= 0 &&
        fstatat(dirfd(k->dirp), "identity", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        same_file(&st, &k->identity_st)) {
        ssize_t n = pread(k->identity_fd, found, sizeof found - 1, 0);
        if (n >= 0) {
            found[n] = '\0';
            if (strcmp(found, expected) == 0)
                return GCTX_SUCCESS;
        }
    }
    if (k->identity_fd >= 0)
        close(k->identity_fd);
    k->identity_fd = -1;
    gctx_status s = check_identity(reg);
    if (s == GCTX_SUCCESS) {
        k->identity_fd = openat(dirfd(k->dirp), "identity", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (k->identity_fd >= 0 && fstat(k->identity_fd, &k->identity_st) != 0) {
            close(k->identity_fd);
            k->identity_fd = -1;
        }
    }
    return s;
}

gctx_status gctx__registry_open(const char *runtime_dir, unsigned flags, const gctx__identity *id,
                                gctx__registry *reg)
{
    char root[512];
    memset(reg, 0, sizeof *reg);
    reg->lock_fd = -1;
    reg->identity = *id;
    gctx_status s = gctx__runtime_path(runtime_dir, flags, root, sizeof root, &reg->shared);
    if (s != GCTX_SUCCESS)
        return s;
    if ((s = gctx__registry_path(root, id->uuid, reg->dir, sizeof reg->dir)))
        return s;
    gctx__kept_registry *k = kept_entry(reg->dir, reg->shared);
    if (!k)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory opening the claims registry");
    pthread_mutex_lock(&k->lock);
    /* Twice at most: a registry found removed or replaced under the lock is opened again. */
    for (int attempt = 0; attempt < 2 && s == GCTX_SUCCESS; attempt++) {
        if (!k->dirp && (s = kept_open(runtime_dir, flags, reg, k)))
            break;
        int r;
        while ((r = flock(k->lock_fd, LOCK_EX)) != 0 && errno == EINTR)
            continue;
        if (r != 0) {
            s = gctx__fail(GCTX_ERROR_REGISTRY, "can't lock %s/lock: %s", reg->dir,
                           strerror(errno));
            kept_shut(k);
            break;
        }
        if (kept_valid(k)) {
            reg->kept = k;
            reg->lock_fd = k->lock_fd;
            break;
        }
        kept_shut(k); /* drops the lock with the description */
    }
    if (s == GCTX_SUCCESS && !reg->kept)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "the claims registry %s keeps being replaced while "
                                            "it is opened", reg->dir);
    if (s == GCTX_SUCCESS && (s = kept_identity(reg, k)))
        gctx__registry_close(reg);
    else if (s != GCTX_SUCCESS)
        pthread_mutex_unlock(&k->lock);
    return s;
}

void gctx__registry_close(gctx__registry *reg)
{
    if (!reg->kept)
        return;
    flock(reg->kept->lock_fd, LOCK_UN);
    pthread_mutex_unlock(&reg->kept->lock);
    reg->kept = NULL;
    reg->lock_fd = -1;
}

/* ---- one claim's file ---- */

static atomic_uint next_claim;

gctx_status gctx__registry_add(gctx__registry *reg, gctx__record *record, int inherit, int *fd)
{
    char path[600], text[2048];
    int flags = O_RDWR | O_CREAT | O_EXCL | (inherit ? 0 : O_CLOEXEC);
    for (int attempt = 0; attempt < 1000; attempt++) {
        snprintf(record->file, sizeof record->file, "claim-%d-%u", record->pid,
                 atomic_fetch_add(&next_claim, 1));
        if (path_in(reg, record->file, path, sizeof path) != 0)
            break;
        int f = open(path, flags, file_mode(reg));
        if (f < 0 && errno == EEXIST)
            continue; /* a claim of an earlier process with our pid, held by its members */
        if (f < 0)
            return gctx__fail(GCTX_ERROR_REGISTRY, "can't create the claim file %s: %s", path,
                              strerror(errno));
        /* Locked before the registry's lock is released: never seen unheld. */
        format_record(record, text, sizeof text);
        if (fchmod(f, file_mode(reg)) != 0 || flock(f, LOCK_SH) != 0 || write_all(f, text) != 0) {
            gctx_status s = gctx__fail(GCTX_ERROR_REGISTRY, "can't write the claim file %s: %s",
                                       path, strerror(errno));
            unlink(path);
            close(f);
            return s;
        }
        *fd = f;
        return GCTX_SUCCESS;
    }
    return gctx__fail(GCTX_ERROR_REGISTRY, "can't name a new claim file in %s", reg->dir);
}

gctx_status gctx__registry_rewrite(gctx__registry *reg, const gctx__record *record)
{
    char path[600], text[2048];
    format_record(record, text, sizeof text);
    if (path_in(reg, record->file, path, sizeof path) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "registry path too long: %s", reg->dir);
    /* In place: the file's inode is what its holders lock. */
    if (write_in_place(path, text) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't rewrite the claim file %s: %s", path,
                          strerror(errno));
    return GCTX_SUCCESS;
}

void gctx__registry_drop(gctx__registry *reg, const gctx__record *record, int fd, int log)
{
    char path[600];
    close(fd);
    if (path_in(reg, record->file, path, sizeof path) != 0)
        return;
    /* Another open file description: the members that still hold the claim (an inherited
     * descriptor is the same description as ours was) keep LOCK_SH on theirs. */
    int check = open(path, O_RDONLY | O_CLOEXEC);
    if (check < 0)
        return;
    if (held_by_someone(check) == 0) {
        if (log)
            remove_stale(reg, path, check, &reg->identity, GCTX_CLAIM_EVENT_RELEASED);
        else
            unlink(path);
    }
    close(check);
}

gctx_status gctx__registry_read(gctx__registry *reg, const char *file, gctx__record *record)
{
    char path[600], text[2048], why[160];
    if (path_in(reg, file, path, sizeof path) != 0 || read_file(path, text, sizeof text) < 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "the claim %s/%s is gone: %s", reg->dir, file,
                          strerror(errno));
    if (parse_record(text, &reg->identity, record, why, sizeof why) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "the claim file %s is corrupt (%s)", path, why);
    snprintf(record->file, sizeof record->file, "%s", file);
    return GCTX_SUCCESS;
}

gctx_status gctx__registry_rejoin(gctx__registry *reg, const char *file, int inherit, int *fd,
                                  gctx__record *record)
{
    char path[600];
    if (path_in(reg, file, path, sizeof path) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY, "registry path too long: %s", reg->dir);
    int f = open(path, O_RDONLY | (inherit ? 0 : O_CLOEXEC));
    if (f < 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the claim %s is no longer held (%s): its holders ended; claim SMs "
                          "anew",
                          path, strerror(errno));
    int held = held_by_someone(f);
    gctx_status s = GCTX_SUCCESS;
    if (held != 1)
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "the claim %s is no longer held: its holders ended; claim SMs anew", path);
    else if (flock(f, LOCK_SH | LOCK_NB) != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't lock the claim %s: %s", path, strerror(errno));
    else
        s = gctx__registry_read(reg, file, record);
    if (held == 0)
        remove_stale(reg, path, f, &reg->identity, GCTX_CLAIM_EVENT_DIED);
    if (s != GCTX_SUCCESS) {
        close(f);
        return s;
    }
    *fd = f;
    return GCTX_SUCCESS;
}

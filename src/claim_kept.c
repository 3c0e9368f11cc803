/* Opening a registry, its lock taken within a bounded wait. A process keeps the registries it
 * used last open: the directory and the lock file's description, which its threads take in
 * turn under a mutex before the flock (a shared description would not exclude them). Each
 * open checks they are still what the paths name. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "claim.h"

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

static void kept_shut(gctx__kept_registry *k)
{
    close_files(k);
    gctx__watch_pool_shut(&k->watches);
}

gctx__watch_pool *gctx__registry_watches(gctx__registry *reg) { return &reg->kept->watches; }

/* A fork's child opens its own (closing its copies drops no lock of the parent's). */
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

/* Registries kept open at most (three descriptors each). */
#define KEPT_OPEN 16

/* Shuts the least recent beyond KEPT_OPEN (kept_lock held); their entries stay. */
static void shut_beyond_kept(void)
{
    unsigned n = 0;
    for (gctx__kept_registry *k = kept_list; k; k = k->next)
        if (++n > KEPT_OPEN && k->dirp && pthread_mutex_trylock(&k->lock) == 0) {
            kept_shut(k);
            pthread_mutex_unlock(&k->lock);
        }
}

/* The entry for dir (made when new), moved first in the list. */
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

static int kept_valid(const gctx__kept_registry *k)
{
    struct stat st;
    return k->dirp && lstat(k->dir, &st) == 0 && same_file(&st, &k->dir_st) &&
           st.st_mode == k->dir_st.st_mode && st.st_uid == k->dir_st.st_uid &&
           fstatat(dirfd(k->dirp), "lock", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           same_file(&st, &k->lock_st);
}

/* Shared, the lock file is the registry directory owner's: nobody else can remove it. */
static gctx_status open_lock(gctx__registry *reg, gctx__kept_registry *k)
{
    int dfd = dirfd(k->dirp);
    uid_t me = geteuid(), owner = k->dir_st.st_uid;
    mode_t mode = reg->shared ? 0666 : 0600;
    k->lock_fd = gctx__file_open(dfd, "lock", O_RDWR, owner, 1, &k->lock_st);
    if (k->lock_fd < 0 && errno == ENOENT && (me == owner || me == 0)) {
        k->lock_fd = gctx__file_create(dfd, "lock", O_RDWR, mode);
        if (k->lock_fd < 0 && errno == EEXIST) /* made meanwhile: checked as found */
            k->lock_fd = gctx__file_open(dfd, "lock", O_RDWR, owner, 1, &k->lock_st);
        else if (k->lock_fd >= 0 && fstat(k->lock_fd, &k->lock_st) != 0) {
            close(k->lock_fd);
            k->lock_fd = -1;
        }
    }
    if (k->lock_fd >= 0)
        return GCTX_SUCCESS;
    return gctx__fail(GCTX_ERROR_REGISTRY,
                      "can't open the claims registry's lock %s/lock: %s%s", reg->dir,
                      gctx__file_error(errno),
                      errno == EPERM || errno == ENOENT
                          ? " (it must be made by the registry directory's owner: remove the "
                            "registry, or ask who owns it)"
                          : "");
}

static gctx_status kept_open(const char *runtime_dir, unsigned flags, int create,
                             gctx__registry *reg, gctx__kept_registry *k)
{
    char root[512];
    int shared, root_fd = -1, dir_fd = -1;
    uid_t admin;
    gctx_status s;
    GCTX_CHECK(gctx__runtime_open(runtime_dir, flags, root, sizeof root, &shared, create,
                                  &root_fd, &admin),
               done);
    GCTX_CHECK(gctx__gpu_dir_open(root_fd, admin, reg->dir, reg->shared, create, &dir_fd,
                                  &k->dir_st),
               done);
    if (!(k->dirp = fdopendir(dir_fd))) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read the claims registry %s: %s", reg->dir,
                       strerror(errno));
        goto done;
    }
    dir_fd = -1; /* the DIR's */
    if ((s = open_lock(reg, k)) != GCTX_SUCCESS)
        kept_shut(k);
done:
    if (root_fd >= 0)
        close(root_fd);
    if (dir_fd >= 0)
        close(dir_fd);
    return s;
}

/* The identity file found right last time read again, else the whole check. */
static gctx_status kept_identity(gctx__registry *reg, gctx__kept_registry *k)
{
    char expected[4096], found[4096];
    struct stat st;
    gctx__identity_format(&reg->identity, expected, sizeof expected);
    if (k->identity_fd >= 0 &&
        fstatat(dirfd(k->dirp), "identity", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        same_file(&st, &k->identity_st) &&
        gctx__file_read(k->identity_fd, found, sizeof found) >= 0 && strcmp(found, expected) == 0)
        return GCTX_SUCCESS;
    if (k->identity_fd >= 0)
        close(k->identity_fd);
    k->identity_fd = -1;
    GCTX_TRY(gctx__registry_check_identity(reg, expected));
    k->identity_fd = gctx__file_open(dirfd(k->dirp), "identity", O_RDONLY, GCTX__ANY_OWNER, 1,
                                     &k->identity_st);
    return GCTX_SUCCESS;
}

/* Polled: a library has no signal to bound a blocking flock. Bounded: a stopped holder
 * (SIGSTOP) or another user's `flock lock sleep 1d` hangs no tenant. */
static gctx_status lock_registry(gctx__registry *reg, gctx__kept_registry *k)
{
    const char *env = getenv("GREENCTX_REGISTRY_LOCK_TIMEOUT_MS");
    char *end;
    long long ms = env && *env ? strtoll(env, &end, 10) : -1;
    long long timeout = env && *env && !*end && ms > 0 ? ms : 10000;
    long long deadline = clock_now_ns() + timeout * 1000000, pause_ns = 20000;
    for (;;) {
        if (flock(k->lock_fd, LOCK_EX | LOCK_NB) == 0)
            return GCTX_SUCCESS;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return gctx__fail(GCTX_ERROR_REGISTRY, "can't lock %s/lock: %s (a filesystem "
                              "without flock can't hold a claims registry: set "
                              "GREENCTX_RUNTIME_DIR to a local directory)",
                              reg->dir, strerror(errno));
        long long now = clock_now_ns();
        if (now >= deadline)
            break;
        clock_sleep_until(now + (pause_ns < deadline - now ? pause_ns : deadline - now));
        pause_ns = pause_ns * 2 > 2000000 ? 2000000 : pause_ns * 2;
    }
    int pid = 0;
    char holder[64] = "another process";
    if (gctx__locks_on(&k->lock_st, 1, &pid) > 0 && pid > 0)
        snprintf(holder, sizeof holder, "pid %d", pid);
    return gctx__fail(GCTX_ERROR_REGISTRY,
                      "the claims registry %s stayed locked by %s for %lld ms: a process "
                      "stopped inside a registry call (SIGSTOP, a debugger) or one holding its "
                      "lock file on purpose. Let it go on or end it (GREENCTX_REGISTRY_LOCK_"
                      "TIMEOUT_MS sets the wait)",
                      reg->dir, holder, timeout);
}

gctx_status gctx__registry_open(const char *runtime_dir, unsigned flags, int create,
                                const gctx__identity *id, gctx__registry *reg)
{
    char root[512];
    *reg = (gctx__registry){.lock_fd = -1, .dir_fd = -1, .me = geteuid(), .identity = *id};
    GCTX_TRY(gctx__runtime_path(runtime_dir, flags, root, sizeof root, &reg->shared));
    GCTX_TRY(gctx__registry_path(root, id->uuid, reg->dir, sizeof reg->dir));
    gctx_status s;
    gctx__kept_registry *k = kept_entry(reg->dir, reg->shared);
    if (!k)
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory opening the claims registry");
    pthread_mutex_lock(&k->lock);
    /* Twice at most: a registry found removed or replaced under the lock is opened again. */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!k->dirp)
            GCTX_CHECK(kept_open(runtime_dir, flags, create, reg, k), fail);
        if ((s = lock_registry(reg, k)) != GCTX_SUCCESS) {
            kept_shut(k);
            goto fail;
        }
        if (kept_valid(k)) {
            reg->kept = k;
            reg->lock_fd = k->lock_fd;
            reg->dir_fd = dirfd(k->dirp);
            break;
        }
        kept_shut(k); /* drops the lock with the description */
    }
    if (!reg->kept) {
        s = gctx__fail(GCTX_ERROR_REGISTRY, "the claims registry %s keeps being replaced while "
                                            "it is opened", reg->dir);
        goto fail;
    }
    if ((s = kept_identity(reg, k)) != GCTX_SUCCESS)
        gctx__registry_close(reg);
    return s;
fail:
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
    reg->dir_fd = -1;
}

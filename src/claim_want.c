/* Wants: a tenant waiting for SMs posts how many it lacks in the registry, so that holders
 * can give them back (gctx_claim_pressure); the waiter wakes when a claim shrinks or ends. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "claim.h"
#include "log.h"

/* ---- a want's name: what the holders read without opening it ---- */

/* "want-<pid>-<n>-p<priority>-s<sms>": the SMs change by a rename (atomic, the inode and so
 * the waiter's lock kept), so a reader without the registry lock never sees half of one. */
static void want_name(const gctx__want *w, char *out, size_t size)
{
    snprintf(out, size, "want-%d-%u-p%d-s%u", w->pid, w->seq, w->priority, w->sms);
}

static int parse_want_name(const char *name, int *pid, int *priority, unsigned *sms)
{
    unsigned seq;
    char end;
    return sscanf(name, "want-%d-%u-p%d-s%u%c", pid, &seq, priority, sms, &end) == 4;
}

/* ---- the waiter ---- */

static atomic_uint next_want;

static void post_failed(const char *what, const char *path)
{
    GCTX__INFO("claims: can't %s the want %s (%s); waiting without it: holders won't see "
                  "it", what, path, strerror(errno));
}

void gctx__want_post(gctx__registry *reg, gctx__want *w, unsigned sms, int priority,
                     const char *claim_file)
{
    if (w->fd >= 0 && w->sms == sms)
        return;
    gctx__want next = *w; /* a posted want keeps its pid, number and priority */
    if (w->fd < 0) {
        next.pid = (int)getpid();
        next.seq = atomic_fetch_add(&next_want, 1);
        next.priority = priority;
    }
    next.sms = sms;
    char name[96], text[256];
    want_name(&next, name, sizeof name);
    snprintf(next.path, sizeof next.path, "%s/%s", reg->dir, name);
    if (w->fd >= 0) {
        if (rename(w->path, next.path) == 0)
            *w = next;
        else
            post_failed("update", w->path);
        return;
    }
    /* Locked under the registry lock: never found unheld. Private: no one else can hold it. */
    int fd = gctx__file_create(reg->dir_fd, name, O_RDWR, 0600);
    if (fd < 0) {
        post_failed("post", next.path);
        return;
    }
    snprintf(text, sizeof text, "pid %d\nclaim %s\nsince %lld\n", next.pid,
             claim_file && *claim_file ? claim_file : "-", gctx__now_ns());
    size_t len = strlen(text);
    if (gctx__hold(fd, 0) != 0 || write(fd, text, len) != (ssize_t)len) {
        post_failed("write", next.path);
        unlinkat(reg->dir_fd, name, 0);
        close(fd);
        return;
    }
    next.fd = fd;
    *w = next;
}

void gctx__want_end(gctx__want *w)
{
    if (w->fd < 0)
        return;
    unlink(w->path);
    close(w->fd);
    w->fd = -1;
}

int gctx__claim_wait_step(long long start_ns, int timeout_ms, unsigned *step_ms, int watch_fd)
{
    long long elapsed_ms = (clock_now_ns() - start_ns) / 1000000;
    if (timeout_ms >= 0 && elapsed_ms >= timeout_ms)
        return 0;
    unsigned ms = *step_ms;
    if (timeout_ms >= 0 && ms > timeout_ms - elapsed_ms)
        ms = (unsigned)(timeout_ms - elapsed_ms);
    if (watch_fd >= 0) {
        struct pollfd p = {watch_fd, POLLIN, 0};
        if (poll(&p, 1, (int)ms) > 0)
            gctx__watch_drain(watch_fd);
    } else {
        clock_sleep_until(clock_now_ns() + ms * 1000000ll);
    }
    *step_ms = *step_ms * 2 > 100 ? 100 : *step_ms * 2;
    return 1;
}

/* ---- the holders ---- */

static int own_want(int fd, const char *claim_file)
{
    char text[256];
    if (gctx__file_read(fd, text, sizeof text) <= 0)
        return 0;
    const char *line = strstr(text, "\nclaim ");
    size_t len = strlen(claim_file);
    return line && strncmp(line + 7, claim_file, len) == 0 && line[7 + len] == '\n';
}

gctx_status gctx_claim_pressure(const gctx_claim *claim, unsigned *wanted_sms)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY_OUTPUT(wanted_sms);
    /* Holders poll here: where one learns that its claim file was removed (rm -rf, a cleaner
     * of /tmp), which other tenants then no longer see. */
    struct stat held;
    if (fstat(claim->fd, &held) == 0 && held.st_nlink == 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "this claim's file %s/%s was removed from the registry (rm, a cleaner "
                          "of temporary files): other tenants no longer see the claim and may be "
                          "given its SMs. Release it and claim anew; keep the runtime directory "
                          "(GREENCTX_RUNTIME_DIR) out of such cleaning",
                          claim->registry_dir, claim->file);
    int dfd = gctx__dir_open(-1, claim->registry_dir);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d && dfd >= 0)
        close(dfd);
    if (!d)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "can't read the claims registry %s: %s (the claim's registry was "
                          "removed: claim SMs anew)",
                          claim->registry_dir, strerror(errno));
    int mine = atomic_load(&((gctx_claim *)claim)->priority), self = (int)getpid();
    unsigned total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid, priority;
        unsigned sms;
        if (!parse_want_name(e->d_name, &pid, &priority, &sms) || priority < mine)
            continue;
        struct stat st;
        int fd = gctx__file_open(dirfd(d), e->d_name, O_RDONLY, GCTX__ANY_OWNER, 1, &st);
        /* Another user's, in a shared registry: told live as a foreign claim is. Gone
         * (granted meanwhile) or not a want file: none. Wants are advice, not state. */
        int live = fd >= 0 ? flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
                   : errno == EACCES && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                       ? gctx__foreign_live(&st, pid, 1)
                       : 0;
        if (live && !(pid == self && fd >= 0 && own_want(fd, claim->file)))
            total += sms;
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    /* A left-over granule that counts towards no count is in this claim's SMs but of no use
     * to a waiter: a holder that keeps its SMs less the pressure gives it back too. */
    gctx_claim *c = (gctx_claim *)claim;
    pthread_mutex_lock(&c->lock);
    if (total)
        total += gctx__uncounted_sms(&c->granules.identity.layout, &c->record.granules);
    pthread_mutex_unlock(&c->lock);
    *wanted_sms = total;
    return GCTX_SUCCESS;
}

/* A best-effort tenant's wait between two looks of its guard: woken (inotify, a hint, never
 * an input) when a latency tenant publishes a line or a claim comes, goes or is rewritten.
 * Best-effort tenants' own lines wake nobody: two would wake each other without end. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "claim.h"

void gctx__guard_watch_update(gctx_claim *c, const gctx__record *records, unsigned nb)
{
    pthread_mutex_lock(&c->guard_lock);
    if (c->guard_watch < 0)
        c->guard_watch = gctx__watch_open(c->registry_dir, IN_MOVED_TO | IN_MODIFY | IN_DELETE |
                                                               IN_ONLYDIR | IN_DONT_FOLLOW);
    unsigned k = 0;
    if (nb > c->latency_room) {
        void *more = realloc(c->latency_files, nb * sizeof c->latency_files[0]);
        if (more) {
            c->latency_files = more;
            c->latency_room = nb;
        }
    }
    for (unsigned i = 0; i < nb && k < c->latency_room; i++)
        if (records[i].tenant_class == GCTX_TENANT_LATENCY)
            memcpy(c->latency_files[k++], records[i].file, sizeof c->latency_files[0]);
    c->nb_latency_files = k;
    pthread_mutex_unlock(&c->guard_lock);
}

void gctx__guard_watch_end(gctx_claim *c)
{
    if (c->guard_watch >= 0)
        close(c->guard_watch);
    c->guard_watch = -1;
    free(c->latency_files);
    c->latency_files = NULL;
    c->latency_room = c->nb_latency_files = 0;
}

/* Whether a change of name in the directory is worth a look. */
static int wakes(gctx_claim *c, const char *name)
{
    if (strncmp(name, GCTX__TEMP_PREFIX, strlen(GCTX__TEMP_PREFIX)) == 0)
        return 0;
    if (strncmp(name, GCTX__STATE_PREFIX, strlen(GCTX__STATE_PREFIX)) != 0)
        return 1; /* a claim file, a want, the events: claims come, go or resize */
    name += strlen(GCTX__STATE_PREFIX);
    int latency = 0;
    pthread_mutex_lock(&c->guard_lock);
    for (unsigned i = 0; i < c->nb_latency_files && !latency; i++)
        latency = strcmp(c->latency_files[i], name) == 0;
    pthread_mutex_unlock(&c->guard_lock);
    return latency;
}

/* The events fd holds, read: 1 when one is worth a look (an overflowed queue is). */
static int woken(gctx_claim *c, int fd)
{
    _Alignas(struct inotify_event) char events[4096];
    int wake = 0;
    ssize_t n;
    while ((n = read(fd, events, sizeof events)) > 0)
        for (char *p = events; p < events + n;) {
            const struct inotify_event *e = (const struct inotify_event *)(void *)p;
            wake |= (e->mask & IN_Q_OVERFLOW) || (e->len && wakes(c, e->name));
            p += sizeof *e + e->len;
        }
    return wake;
}

gctx_status gctx_claim_guard_wait(gctx_claim *claim, int timeout_ms)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    if (timeout_ms < 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "timeout_ms is %d: give the longest wait in ms, the guard's look "
                          "period (a look is due then even when nothing woke it: it gives "
                          "the SMs back once the latency tenants stop)",
                          timeout_ms);
    GCTX_TRY(gctx__claim_best_effort(claim));
    pthread_mutex_lock(&claim->guard_lock);
    int fd = claim->guard_watch;
    pthread_mutex_unlock(&claim->guard_lock);
    long long end = clock_now_ns() + timeout_ms * 1000000ll;
    for (long long left; (left = end - clock_now_ns()) > 0;) {
        if (fd < 0) { /* no look yet, or no inotify: the whole timeout */
            clock_sleep_until(end);
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, (int)((left + 999999) / 1000000));
        if (n > 0 && woken(claim, fd))
            break;
        if (n < 0 && errno != EINTR)
            fd = -1;
    }
    return GCTX_SUCCESS;
}

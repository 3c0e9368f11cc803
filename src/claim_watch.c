/* The watches of a registry a process keeps (claim.h): lent to one wait at a time. */
#include <sys/inotify.h>
#include <unistd.h>

#include "claim.h"

/* A claim rewritten smaller, a claim file removed: the moments SMs come free. */
#define SMS_FREED (IN_MODIFY | IN_DELETE)

void gctx__watch_pool_init(gctx__watch_pool *p)
{
    pthread_mutex_init(&p->lock, NULL);
    for (int i = 0; i < GCTX__WATCHES_KEPT; i++) {
        p->fd[i] = -1;
        p->lent[i] = 0;
    }
}

void gctx__watch_pool_shut(gctx__watch_pool *p)
{
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < GCTX__WATCHES_KEPT; i++) {
        if (p->fd[i] >= 0 && !p->lent[i]) {
            close(p->fd[i]);
            p->fd[i] = -1;
        } else if (p->lent[i]) {
            p->lent[i] = 2; /* it watches the directory that was: no use to the next wait */
        }
    }
    pthread_mutex_unlock(&p->lock);
}

void gctx__watch_pool_forget(gctx__watch_pool *p)
{
    for (int i = 0; i < GCTX__WATCHES_KEPT; i++)
        if (p->fd[i] >= 0)
            close(p->fd[i]);
}

void gctx__watch_drain(int fd)
{
    char events[4096];
    while (read(fd, events, sizeof events) > 0)
        ;
}

int gctx__watch_borrow(gctx__registry *reg, gctx__watch *w)
{
    gctx__watch_pool *p = gctx__registry_watches(reg);
    w->pool = p;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < GCTX__WATCHES_KEPT && w->fd < 0; i++)
        if (p->fd[i] >= 0 && !p->lent[i]) {
            p->lent[i] = 1;
            w->slot = i;
            w->fd = p->fd[i];
        }
    pthread_mutex_unlock(&p->lock);
    if (w->fd >= 0)
        gctx__watch_drain(w->fd); /* what it read while idle, the pass has seen */
    return w->fd >= 0;
}

int gctx__watch_open(const char *dir, unsigned mask)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, dir, mask) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Puts fd in a free slot of p, lent (1) or idle (0); -1 when the pool is full. */
static int keep(gctx__watch_pool *p, int fd, unsigned char lent)
{
    int slot = -1;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < GCTX__WATCHES_KEPT && slot < 0; i++)
        if (p->fd[i] < 0) {
            p->fd[i] = fd;
            p->lent[i] = lent;
            slot = i;
        }
    pthread_mutex_unlock(&p->lock);
    return slot;
}

int gctx__watch_make(gctx__watch *w, const char *dir)
{
    int fd = gctx__watch_open(dir, SMS_FREED);
    if (fd < 0)
        return 0;
    w->fd = fd;
    w->slot = keep(w->pool, fd, 1);
    return 1;
}

void gctx__watch_prepare(gctx__watch_pool *p, const char *dir)
{
    int have = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < GCTX__WATCHES_KEPT; i++)
        have |= p->fd[i] >= 0;
    pthread_mutex_unlock(&p->lock);
    int fd = have ? -1 : gctx__watch_open(dir, SMS_FREED);
    if (fd >= 0 && keep(p, fd, 0) < 0)
        close(fd);
}

void gctx__watch_return(gctx__watch *w)
{
    if (w->fd < 0)
        return;
    int end = w->slot < 0;
    if (!end) {
        pthread_mutex_lock(&w->pool->lock);
        end = w->pool->lent[w->slot] == 2;
        if (end)
            w->pool->fd[w->slot] = -1;
        w->pool->lent[w->slot] = 0;
        pthread_mutex_unlock(&w->pool->lock);
    }
    if (end)
        close(w->fd);
    w->fd = -1;
    w->slot = -1;
}

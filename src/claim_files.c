/* Registry files as hostile input: opened relative to the directory, never through a link,
 * never blocking (a FIFO), close-on-exec, checked with fstat; made O_EXCL, replaced by rename. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "claim.h"

#define OPEN_FLAGS (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

long long gctx__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

const char *gctx__file_error(int err)
{
    switch (err) {
    case ELOOP:
        return "it is a symbolic link";
    case GCTX__ENOTREG:
        return "it is not a regular file";
    case EPERM:
        return "it is owned by another user";
    case EMLINK:
        return "it has other hard links";
    default:
        return strerror(err);
    }
}

/* 0 when fd is what gctx__file_open asks; -1 with errno GCTX__ENOTREG, EPERM or EMLINK. */
static int file_check(int fd, uid_t owner, int one_link, struct stat *st)
{
    struct stat own;
    struct stat *s = st ? st : &own;
    int err = 0;
    if (fstat(fd, s) != 0)
        err = errno;
    else if (!S_ISREG(s->st_mode))
        err = GCTX__ENOTREG;
    else if (owner != GCTX__ANY_OWNER && s->st_uid != owner)
        err = EPERM;
    else if (one_link && s->st_nlink != 1)
        err = EMLINK;
    errno = err;
    return err ? -1 : 0;
}

int gctx__file_open(int dfd, const char *name, int flags, uid_t owner, int one_link,
                    struct stat *st)
{
    int fd = openat(dfd, name, flags | OPEN_FLAGS);
    if (fd < 0)
        return -1;
    if (file_check(fd, owner, one_link, st) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

int gctx__file_create(int dfd, const char *name, int flags, mode_t mode)
{
    int fd = openat(dfd, name, flags | O_CREAT | O_EXCL | OPEN_FLAGS, mode);
    /* Past the umask: the mode is what other users may do (none, or read). */
    if (fd >= 0 && fchmod(fd, mode) != 0) {
        int err = errno;
        close(fd);
        unlinkat(dfd, name, 0);
        errno = err;
        return -1;
    }
    return fd;
}

long gctx__file_read(int fd, char *buf, size_t size)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = pread(fd, buf + n, size - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        n += (size_t)r;
        if (r == 0 || n >= size - 1)
            break;
    }
    buf[n] = '\0';
    return (long)n;
}

long gctx__file_read_at(int dfd, const char *name, uid_t owner, int one_link, char *buf,
                        size_t size)
{
    int fd = gctx__file_open(dfd, name, O_RDONLY, owner, one_link, NULL);
    if (fd < 0)
        return -1;
    long n = gctx__file_read(fd, buf, size);
    int err = errno;
    close(fd);
    errno = err;
    return n;
}

static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = pwrite(fd, text + done, len - done, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Never truncated to zero first: ext4 flushes a file truncated to zero and written again when
 * it is closed (auto_da_alloc), on every resize. */
int gctx__file_write(int fd, const char *text)
{
    return write_all(fd, text) == 0 && ftruncate(fd, (off_t)strlen(text)) == 0 ? 0 : -1;
}

/* renameat2 by its system call: old C libraries have no wrapper. */
static int exchange(int dfd, const char *a, const char *b)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, dfd, a, dfd, b, 1u << 1 /* RENAME_EXCHANGE */);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int gctx__file_replace(int dfd, const char *name, const char *text, mode_t mode)
{
    char tmp[128];
    int fd = -1, rc = -1;
    /* A name nobody can guess, O_EXCL: no file or link is written through. */
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, sizeof tmp, GCTX__TEMP_PREFIX "%s-%d-%lld", name, (int)getpid(),
                 clock_now_ns() + attempt);
        fd = gctx__file_create(dfd, tmp, O_WRONLY, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return -1;
    /* Swapped with the old file, which then goes: ext4 flushes a new file renamed over an
     * existing one (auto_da_alloc), not one exchanged, and a guarded tenant replaces its line
     * on its steps' path. A first write, or a filesystem without the exchange, renames. */
    if (write_all(fd, text) == 0)
        rc = exchange(dfd, tmp, name) == 0 || renameat(dfd, tmp, dfd, name) == 0 ? 0 : -1;
    int err = errno;
    close(fd);
    unlinkat(dfd, tmp, 0); /* the old file after an exchange, ours when it failed */
    errno = err;
    return rc;
}

int gctx__hold(int fd, int nonblocking)
{
    int rc;
    while ((rc = flock(fd, LOCK_SH | (nonblocking ? LOCK_NB : 0))) != 0 && errno == EINTR)
        continue;
    if (rc != 0)
        return -1;
    /* Also an open-file-description lock: /proc/locks shows it (pid -1) to other users, who
     * can't open the file to test its flock, in every pid namespace. */
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    return fcntl(fd, F_OFD_SETLK, &l);
}

int gctx__locks_on(const struct stat *st, int want_flock_pid, int *pid)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return -1;
    char line[256], target[64];
    int n = 0;
    snprintf(target, sizeof target, " %02x:%02x:%llu ", major(st->st_dev), minor(st->st_dev),
             (unsigned long long)st->st_ino);
    *pid = 0;
    while (fgets(line, sizeof line, f)) {
        /* "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; "1: -> ..." a blocked waiter */
        if (strstr(line, "->") || !strstr(line, target))
            continue;
        n++;
        int p;
        if (want_flock_pid && !*pid && strstr(line, "FLOCK") &&
            sscanf(line, "%*d: %*s %*s %*s %d", &p) == 1)
            *pid = p;
    }
    fclose(f);
    return n;
}

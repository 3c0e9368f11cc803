/* The runtime directory and a GPU's registry directory in it, and whether they can be
 * trusted: a private one is this user's alone; a shared one is sticky and owned by root or
 * this user, its GPU directories made by root or its owner (who may remove any file in it). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claim.h"

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

static const char shared_setup[] =
    "an administrator sets a shared claims directory up once, as root: install -d -m 1777 -o "
    "root DIR, then GREENCTX_RUNTIME_DIR=DIR GREENCTX_RUNTIME_SHARED=1 greenctx ps (makes a "
    "registry per GPU); see docs/tenants.md, Threat model";

/* A directory fd is open on, as the registry's `what` (runtime directory, GPU registry). */
static gctx_status check_dir(const char *path, const struct stat *st, int shared,
                             uid_t admin, const char *what)
{
    uid_t me = geteuid();
    int writable = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
    int sticky = (st->st_mode & S_ISVTX) != 0;
    if (!S_ISDIR(st->st_mode))
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the %s %s is not a directory: remove it, or set GREENCTX_RUNTIME_DIR "
                          "to a directory of your own",
                          what, path);
    if (!shared && st->st_uid == me && !writable)
        return GCTX_SUCCESS;
    if (!shared)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the %s %s is %s (uid %u, mode %04o): another user could forge or "
                          "remove claims there. Use a directory of your own "
                          "(GREENCTX_RUNTIME_DIR, mode 0700), or, for a directory several users "
                          "share on purpose, GCTX_CLAIM_SHARED_DIR or GREENCTX_RUNTIME_SHARED=1 "
                          "with a sticky directory (mode 1777)",
                          what, path,
                          st->st_uid != me ? "owned by another user" : "writable by other users",
                          (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
    if (writable && !sticky)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the shared %s %s (mode %04o) is not sticky: a directory several "
                          "users share must be mode 1777 or 1770 (chmod +t), so no user can "
                          "remove another's files; %s",
                          what, path, (unsigned)(st->st_mode & 07777), shared_setup);
    if (st->st_uid != 0 && st->st_uid != me && st->st_uid != admin)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the shared %s %s is owned by uid %u, neither root nor you nor the "
                          "runtime directory's owner: the owner of a shared directory can "
                          "remove anyone's claims in it; %s",
                          what, path, (unsigned)st->st_uid, shared_setup);
    return GCTX_SUCCESS;
}

gctx_status gctx__runtime_path(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared)
{
    const char *env = getenv("GREENCTX_RUNTIME_SHARED");
    *shared = (flags & GCTX_CLAIM_SHARED_DIR) || (env && strcmp(env, "1") == 0);
    const char *given = runtime_dir && *runtime_dir ? runtime_dir : getenv("GREENCTX_RUNTIME_DIR");
    int n;
    /* Not $XDG_RUNTIME_DIR: logind removes it at the user's last logout while nohup'd tenants
     * still run, and a registry that forgets them grants their SMs again. */
    if (given && *given)
        n = snprintf(out, size, "%s", given);
    else
        n = snprintf(out, size, "%s/greenctx-%u", access("/var/tmp", W_OK) == 0 ? "/var/tmp"
                                                                                : "/tmp",
                     (unsigned)geteuid());
    if (n < 0 || (size_t)n >= size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the claims runtime directory's path is longer than %zu bytes",
                          size - 1);
    return GCTX_SUCCESS;
}

int gctx__dir_open(int at, const char *path)
{
    return openat(at >= 0 ? at : AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static gctx_status open_failed(const char *what, const char *path)
{
    return gctx__fail(GCTX_ERROR_REGISTRY, "can't open the %s %s: %s%s", what, path,
                      errno == ELOOP || errno == ENOTDIR ? "it is not a directory (a symbolic "
                                                           "link or a file)"
                                                         : strerror(errno),
                      errno == ELOOP || errno == ENOTDIR
                          ? ": remove it, or set GREENCTX_RUNTIME_DIR to a directory of your own"
                          : "");
}

gctx_status gctx__runtime_open(const char *runtime_dir, unsigned flags, char *out, size_t size,
                               int *shared, int create, int *fd, uid_t *owner)
{
    GCTX_TRY(gctx__runtime_path(runtime_dir, flags, out, size, shared));
    gctx_status s = GCTX_SUCCESS;
    struct stat st;
    if (create && lstat(out, &st) != 0 && make_dirs(out, 0700) != 0)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "can't create the claims runtime directory %s: %s (set "
                          "GREENCTX_RUNTIME_DIR to a directory you can write)",
                          out, strerror(errno));
    *fd = gctx__dir_open(-1, out);
    if (*fd < 0)
        return open_failed("claims runtime directory", out);
    if (fstat(*fd, &st) != 0 ||
        (s = check_dir(out, &st, *shared, 0, "claims runtime directory"))) {
        if (s == GCTX_SUCCESS)
            s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read %s: %s", out, strerror(errno));
        close(*fd);
        *fd = -1;
        return s;
    }
    *owner = st.st_uid;
    return GCTX_SUCCESS;
}

gctx_status gctx__gpu_dir_open(int root_fd, uid_t admin, const char *path, int shared, int create,
                               int *fd, struct stat *st)
{
    const char *name = strrchr(path, '/') + 1;
    uid_t me = geteuid();
    /* Shared: made only by root or the admin, whom the others trust with their files. */
    int may_make = create && (!shared || me == 0 || me == admin);
    mode_t mode = shared ? 01777 : 0700;
    int made = may_make && mkdirat(root_fd, name, mode) == 0;
    if (!made && may_make && errno != EEXIST)
        return gctx__fail(GCTX_ERROR_REGISTRY, "can't create the claims registry %s: %s", path,
                          strerror(errno));
    *fd = gctx__dir_open(root_fd, name);
    if (*fd < 0 && errno == ENOENT && shared && create)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "the shared claims registry %s doesn't exist and only root or the "
                          "runtime directory's owner (uid %u) may make it; %s",
                          path, (unsigned)admin, shared_setup);
    if (*fd < 0 && errno == ENOENT)
        return gctx__fail(GCTX_ERROR_REGISTRY, "the claims registry %s doesn't exist", path);
    if (*fd < 0)
        return open_failed("claims registry", path);
    gctx_status s = GCTX_SUCCESS;
    if (made && fchmod(*fd, mode) != 0) /* past the umask */
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't set the mode of %s: %s", path,
                       strerror(errno));
    else if (fstat(*fd, st) != 0)
        s = gctx__fail(GCTX_ERROR_REGISTRY, "can't read %s: %s", path, strerror(errno));
    else
        s = check_dir(path, st, shared, admin, "claims registry");
    if (s != GCTX_SUCCESS) {
        close(*fd);
        *fd = -1;
    }
    return s;
}

gctx_status gctx__registry_path(const char *root, const char *uuid, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/gpu-%s", root, uuid);
    if (n < 0 || (size_t)n >= size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the claims runtime directory's path %s is too long", root);
    return GCTX_SUCCESS;
}

/* A claim shared with the processes a holder starts: a token naming the claim file and the
 * holder's descriptor of it. A member holds the claim as long as it lives: the file's lock
 * is held while any member's open file description holds it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claim.h"

gctx_status gctx_claim_export(const gctx_claim *claim, char *token, size_t size)
{
    gctx_status s = gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim");
    if (s != GCTX_SUCCESS)
        return s;
    if (!token)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "token (the output) is NULL");
    gctx__registry reg;
    if ((s = gctx__claim_registry(claim, &reg)))
        return s;
    gctx__registry_close(&reg);
    gctx_claim *c = (gctx_claim *)claim;
    char text[1024];
    pthread_mutex_lock(&c->lock);
    int n = snprintf(text, sizeof text, "v1:%s:%s:%d", reg.dir, c->record.file, c->fd);
    pthread_mutex_unlock(&c->lock);
    if (n < 0 || (size_t)n >= size)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the token needs %d bytes with its NUL; size is %zu", n + 1, size);
    memcpy(token, text, (size_t)n + 1);
    return GCTX_SUCCESS;
}

typedef struct token_parts {
    char dir[512];
    char file[64];
    int fd;
} token_parts;

static gctx_status parse_token(const char *token, token_parts *t)
{
    static const char syntax[] = "\"v1:<registry path>:<claim file>:<fd>\" (gctx_claim_export)";
    if (!token || strncmp(token, "v1:", 3) != 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "the claim token \"%s\" is not %s",
                          token ? token : "(null)", syntax);
    const char *body = token + 3, *fd_sep = strrchr(body, ':');
    const char *file_sep = NULL;
    for (const char *p = body; fd_sep && p < fd_sep; p++)
        if (*p == ':')
            file_sep = p;
    char *end = NULL;
    long fd = fd_sep ? strtol(fd_sep + 1, &end, 10) : -1;
    size_t dir_len = file_sep ? (size_t)(file_sep - body) : 0;
    size_t file_len = file_sep ? (size_t)(fd_sep - file_sep - 1) : 0;
    if (!file_sep || !end || *end || end == fd_sep + 1 || fd < -1 || fd > 1 << 24 ||
        dir_len == 0 || dir_len >= sizeof t->dir || body[0] != '/' || file_len >= sizeof t->file ||
        strncmp(file_sep + 1, "claim-", 6) != 0 || memchr(file_sep + 1, '/', file_len))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "the claim token \"%s\" is not %s", token,
                          syntax);
    memcpy(t->dir, body, dir_len);
    t->dir[dir_len] = '\0';
    memcpy(t->file, file_sep + 1, file_len);
    t->file[file_len] = '\0';
    t->fd = (int)fd;
    return GCTX_SUCCESS;
}

/* The inherited descriptor, when it is still the claim file's: it shares the open file
 * description, and so the lock, with the holder's. The claim takes it over, made
 * close-on-exec, so that its release is this member's last hold; it keeps its number, the
 * token's, so that a member that hands the claim on across its own exec (greenctx run's
 * preload) passes a token that is still true. -1 when the program closed it or reused the
 * number. */
static int inherited(const token_parts *t, const char *path)
{
    struct stat fd_st, file_st;
    if (t->fd < 0 || fstat(t->fd, &fd_st) != 0 || stat(path, &file_st) != 0 ||
        fd_st.st_dev != file_st.st_dev || fd_st.st_ino != file_st.st_ino)
        return -1;
    int flags = fcntl(t->fd, F_GETFD);
    return flags >= 0 && fcntl(t->fd, F_SETFD, flags | FD_CLOEXEC) == 0 ? t->fd : -1;
}

gctx_status gctx_claim_join(int device, const char *token, gctx_claim **claim)
{
    if (!claim)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "claim (the output) is NULL");
    token_parts t;
    gctx_status s = parse_token(token, &t);
    if (s != GCTX_SUCCESS)
        return s;
    gctx__device_granules g;
    if ((s = gctx__device_granules_get(device, &g)))
        return s;
    char expected[64];
    snprintf(expected, sizeof expected, "gpu-%s", g.identity.uuid);
    char *base = strrchr(t.dir, '/');
    if (!base || strcmp(base + 1, expected) != 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "the claim token names the registry %s, not device %d's (%s): join with "
                       "the device the claim is on",
                       t.dir, device, expected);
        gctx__device_granules_end(&g);
        return s;
    }
    *base = '\0'; /* t.dir is the runtime directory now */
    /* A sticky runtime directory is one several users share (the holder said so): checked
     * as such; any other must be private to this user. */
    struct stat st;
    unsigned dir_flags = stat(t.dir, &st) == 0 && (st.st_mode & S_ISVTX) ? GCTX_CLAIM_SHARED_DIR
                                                                          : 0;
    gctx__registry reg;
    gctx__record record;
    int fd = -1;
    /* Nothing made: a token names a registry its holder made, or none (issue 28, m4). */
    if ((s = gctx__registry_open_existing(t.dir, dir_flags, &g.identity, &reg))) {
        gctx__device_granules_end(&g);
        return s;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", reg.dir, t.file);
    if ((fd = inherited(&t, path)) >= 0) {
        if ((s = gctx__registry_read(&reg, t.file, &record)))
            close(fd);
    } else {
        s = gctx__registry_rejoin(&reg, t.file, 0, &fd, &record);
    }
    gctx__registry_close(&reg);
    gctx_claim *c;
    if (s == GCTX_SUCCESS)
        s = gctx__claim_new(&g, t.dir, dir_flags, 0, 1, &record, fd, &c);
    gctx__device_granules_end(&g);
    if (s != GCTX_SUCCESS)
        return s;
    *claim = gctx__handle_give(&c->base);
    return GCTX_SUCCESS;
}

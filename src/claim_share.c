/* A claim shared with the processes a holder starts: a token naming the claim file and the
 * holder's descriptor of it. Each member holds the claim through an open file description of
 * its own (at the token's number when that was an inherited copy: the token stays true across
 * the member's exec), so a resize sees whether another member holds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"

gctx_status gctx_claim_export(const gctx_claim *claim, char *token, size_t size)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY_OUTPUT(token);
    gctx__registry reg;
    GCTX_TRY(gctx__claim_registry(claim, &reg));
    gctx__registry_close(&reg);
    gctx_claim *c = (gctx_claim *)claim;
    char text[1024];
    pthread_mutex_lock(&c->lock);
    int n = snprintf(text, sizeof text, "v1:%s:%s:%d", reg.dir, c->record.file, c->fd);
    gctx_status s = gctx__claim_fd_check(c);
    pthread_mutex_unlock(&c->lock);
    if (s != GCTX_SUCCESS)
        return s;
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

gctx_status gctx_claim_token_descriptor(const char *token, int *fd)
{
    GCTX_TRY_OUTPUT(fd);
    *fd = -1;
    token_parts t;
    GCTX_TRY(parse_token(token, &t));
    char path[sizeof t.dir + sizeof t.file + 1];
    snprintf(path, sizeof path, "%s/%s", t.dir, t.file);
    struct stat held, file;
    if (t.fd < 0 || fstat(t.fd, &held) != 0 || lstat(path, &file) != 0 ||
        !S_ISREG(file.st_mode) || held.st_dev != file.st_dev || held.st_ino != file.st_ino)
        return gctx__fail(GCTX_ERROR_REGISTRY,
                          "descriptor %d of this process is not the claim file %s that the token "
                          "names: it is closed or another file's",
                          t.fd, path);
    *fd = t.fd;
    return GCTX_SUCCESS;
}

gctx_status gctx_claim_join(int device, const char *token, gctx_claim **claim)
{
    GCTX_TRY_OUTPUT(claim);
    token_parts t;
    GCTX_TRY(parse_token(token, &t));
    gctx__device_granules g;
    GCTX_TRY(gctx__device_granules_get(device, &g));
    gctx_status s;
    char expected[64];
    snprintf(expected, sizeof expected, "gpu-%s", g.identity.uuid);
    char *base = strrchr(t.dir, '/');
    if (!base || strcmp(base + 1, expected) != 0) {
        s = gctx__fail(GCTX_ERROR_REGISTRY,
                       "the claim token names the registry %s, not device %d's (%s): join with "
                       "the device the claim is on",
                       t.dir, device, expected);
        goto done;
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
    /* Nothing made: a token names a registry its holder made, or none. */
    GCTX_CHECK(gctx__registry_open(t.dir, dir_flags, 0, &g.identity, &reg), done);
    /* A description of its own: its release ends its own hold, never another member's. */
    s = gctx__registry_rejoin(&reg, t.file, &fd, &record);
    gctx__registry_close(&reg);
    gctx_claim *c;
    if (s != GCTX_SUCCESS)
        goto done;
    GCTX_CHECK(gctx__claim_new(&g, t.dir, dir_flags, 0, 1, &record, fd, t.fd, &c), done);
    *claim = gctx__handle_give(&c->base);
done:
    gctx__device_granules_end(&g);
    return s;
}

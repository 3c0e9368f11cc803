/* What the claims tests share (claims_common.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "claims_common.h"
#include "harness.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

const char *fresh_dir(const char *name)
{
    static char path[512];
    const char *base = getenv("GREENCTX_RUNTIME_DIR");
    if (!base || !*base) {
        gt_fail(__FILE__, __LINE__, "GREENCTX_RUNTIME_DIR is not set: tests/claims.cmake sets "
                                    "one per ctest entry");
        return NULL;
    }
    mkdir(base, 0700);
    snprintf(path, sizeof path, "%s/%s", base, name);
    remove_tree(path);
    return path;
}

gctx_claim_options options_in(const char *dir)
{
    gctx_claim_options o = GCTX_CLAIM_OPTIONS_INIT;
    o.runtime_dir = dir;
    return o;
}

int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

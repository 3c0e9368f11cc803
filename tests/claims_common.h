/* What the claims tests (test_claims.c, test_claims_trust.c, test_claims_gpu.c) share. */
#ifndef GREENCTX_TEST_CLAIMS_COMMON_H
#define GREENCTX_TEST_CLAIMS_COMMON_H

#include <stddef.h>

#include "greenctx.h"
#include "greenctx_claims.h"

/* rm -rf path (links removed, not followed). */
void remove_tree(const char *path);
/* <GREENCTX_RUNTIME_DIR>/<name>, emptied: this test's own runtime directory (a static buffer;
 * NULL with the test failed when the variable is unset). */
const char *fresh_dir(const char *name);
/* Default options claiming in dir. */
gctx_claim_options options_in(const char *dir);
/* path written with text (0), or -1. */
int write_text(const char *path, const char *text);

#endif

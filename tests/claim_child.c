/* A program a claim's holder starts (tests/test_claims.c, export_join_*): joins the claim
 * named by the token in argv[1], says what it holds on stdout, then, with "hold", waits for a
 * line on stdin before it releases, so the test can release its own hold meanwhile. Exit
 * status 0 when the join worked. */
#include <stdio.h>
#include <string.h>

#include "greenctx.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: claim_child TOKEN [hold]\n");
        return 2;
    }
    gctx_claim *claim;
    gctx_status s = gctx_claim_join(0, argv[1], &claim);
    if (s != GCTX_SUCCESS) {
        printf("join %s %s\n", gctx_status_name(s), gctx_last_error());
        return 1;
    }
    gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
    gctx_claim_get_info(claim, &info);
    printf("joined %u SMs of pid %d, self %d\n", info.sm_count, info.pid, info.self);
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "hold") == 0) {
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            line[0] = '\0';
    }
    gctx_claim_release(claim);
    return 0;
}

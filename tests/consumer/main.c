/* Links against an installed greenctx; needs no driver to run. The three headers of the one
 * library: a call of each resolves in libgreenctx. */
#include <greenctx.h>
#include <greenctx_claims.h>
#include <greenctx_controller.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    if (gctx_version() != GCTX_VERSION ||
        strcmp(gctx_status_name(GCTX_ERROR_NO_DRIVER), "GCTX_ERROR_NO_DRIVER") != 0) {
        printf("consumer: header %d, library %d\n", GCTX_VERSION, gctx_version());
        return 1;
    }
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    if (gctx_mps_get_info(&mps) != GCTX_SUCCESS) {
        printf("consumer: gctx_mps_get_info: %s\n", gctx_last_error());
        return 1;
    }
    gctx_controller_release(NULL);
    printf("consumer: greenctx %s\n", gctx_version_string());
    return 0;
}

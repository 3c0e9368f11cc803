/* Links against an installed greenctx; needs no driver to run. */
#include <greenctx.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    if (gctx_version() != GCTX_VERSION ||
        strcmp(gctx_status_name(GCTX_ERROR_NO_DRIVER), "GCTX_ERROR_NO_DRIVER") != 0) {
        printf("consumer: header %d, library %d\n", GCTX_VERSION, gctx_version());
        return 1;
    }
    printf("consumer: greenctx %s\n", gctx_version_string());
    return 0;
}

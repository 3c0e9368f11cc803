#include "internal.h"

#define GCTX_STR2_(x) #x
#define GCTX_STR_(x) GCTX_STR2_(x)

int gctx_version(void) { return GCTX_VERSION; }

const char *gctx_version_string(void)
{
    return GCTX_STR_(GCTX_VERSION_MAJOR) "." GCTX_STR_(GCTX_VERSION_MINOR) "." GCTX_STR_(
        GCTX_VERSION_PATCH);
}

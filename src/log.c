/* GREENCTX_LOG: the library's diagnostics on stderr (src/log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

atomic_int gctx__log_level;

void gctx__log_write(int level, const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "greenctx[%d] %s: ", (int)getpid(),
                     level >= GCTX__LOG_DEBUG ? "debug" : "info");
    va_list args;
    va_start(args, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, args);
    va_end(args);
    fprintf(stderr, "%s\n", line); /* one write, so threads' lines don't interleave */
}

gctx_status gctx__log_configure(void)
{
    static const char *const names[] = {"off", "info", "debug"};
    const char *v = getenv("GREENCTX_LOG");
    int level = -1;
    if (!v || !*v)
        level = GCTX__LOG_OFF;
    for (int i = 0; level < 0 && i < 3; i++)
        if (!strcmp(v, names[i]))
            level = i;
    if (level < 0) {
        char shown[64];
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "GREENCTX_LOG is '%s': set it to info (what greenctx decides) or "
                          "debug (and the driver calls behind it), off, or unset it",
                          gctx__shown(v, shown, sizeof shown));
    }
    atomic_store_explicit(&gctx__log_level, level, memory_order_relaxed);
    return GCTX_SUCCESS;
}

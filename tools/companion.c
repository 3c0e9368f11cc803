#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "companion.h"

static char found[PATH_MAX + 128];

/* Formats a candidate into `found`; 1 when it is a readable file. */
static int try_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int try_path(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(found, sizeof found, fmt, args);
    va_end(args);
    return n > 0 && (size_t)n < sizeof found && access(found, R_OK) == 0;
}

const char *tool_find_companion(const char *file, const char *env_var, const char *install_relpath,
                                const char *build_relpath)
{
    const char *env = getenv(env_var);
    if (env && *env)
        return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        if (try_path("%s/%s", exe, file) ||
            (install_relpath && *install_relpath && try_path("%s/%s", exe, install_relpath)) ||
            try_path("%s/../lib/greenctx/%s", exe, file) ||
            (build_relpath && *build_relpath && try_path("%s/%s", exe, build_relpath)))
            return found;
    }
    return NULL;
}

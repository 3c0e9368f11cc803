/* The preload's variables: read and checked once, before main, and taken out of the
 * environment where children must not see them. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groups.h"
#include "run_preload.h"

extern char **environ;

run_config run_cfg;

/* The first error is kept; the program is stopped with it at its first CUDA call. */
static void config_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void config_error(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    if (!run_cfg.error[0])
        vsnprintf(run_cfg.error, sizeof run_cfg.error, fmt, args);
    va_end(args);
}

/* Copies a variable's value into dst; an error when it does not fit. */
static void take(const char *name, char *dst, size_t size)
{
    const char *v = getenv(name);
    if (!v)
        return;
    if (strlen(v) >= size)
        config_error("%s is longer than the preload accepts", name);
    else
        strcpy(dst, v);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Takes this library out of LD_PRELOAD, so that programs started from here run unconfined. */
static void drop_from_ld_preload(void)
{
    Dl_info self;
    const char *list = getenv("LD_PRELOAD");
    if (!list || !dladdr((void *)drop_from_ld_preload, &self) || !self.dli_fname)
        return;
    size_t size = strlen(list) + 1;
    char *kept = calloc(1, size), *copy = strdup(list);
    if (!kept || !copy) {
        free(kept);
        free(copy);
        config_error("out of memory while reading LD_PRELOAD");
        return;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ": ", &save); item; item = strtok_r(NULL, ": ", &save)) {
        if (strcmp(item, self.dli_fname) == 0 || same_file(item, self.dli_fname))
            continue;
        if (*kept)
            strcat(kept, " ");
        strcat(kept, item);
    }
    if (*kept)
        setenv("LD_PRELOAD", kept, 1);
    else
        unsetenv("LD_PRELOAD");
    free(kept);
    free(copy);
}

/* Every GREENCTX_RUN_* name must be one of ours: a typo must not pass silently. */
static void check_names(void)
{
    static const char *const known[] = {GREENCTX_RUN_SMS, GREENCTX_RUN_ROUND, GREENCTX_RUN_REPORT,
                                        GREENCTX_RUN_INHERIT, GREENCTX_RUN_CLAIM};
    size_t prefix = strlen(GREENCTX_RUN_VAR_PREFIX);
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, GREENCTX_RUN_VAR_PREFIX, prefix) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        int ok = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok |= strlen(known[i]) == len && strncmp(*e, known[i], len) == 0;
        if (!ok) {
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)len, *e);
            config_error("unknown variable %s (the preload reads GREENCTX_RUN_SMS, _ROUND, "
                         "_REPORT, _INHERIT and _CLAIM)",
                         name);
        }
    }
}

/* Takes the preload's variables out of the environment: all of them when children must run
 * unconfined, the report's always. */
static void drop_variables(int all)
{
    static const char *const names[] = {GREENCTX_RUN_SMS, GREENCTX_RUN_ROUND,
                                        GREENCTX_RUN_INHERIT, GREENCTX_RUN_CLAIM};
    if (all)
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            unsetenv(names[i]);
    /* The report is this process's: a child writing the same file would overwrite it. */
    unsetenv(GREENCTX_RUN_REPORT);
}

__attribute__((constructor)) static void run_config_load(void)
{
    check_names();
    const char *sms = getenv(GREENCTX_RUN_SMS);
    run_cfg.present = sms != NULL;
    take(GREENCTX_RUN_SMS, run_cfg.sms, sizeof run_cfg.sms);
    take(GREENCTX_RUN_ROUND, run_cfg.round, sizeof run_cfg.round);
    take(GREENCTX_RUN_REPORT, run_cfg.report, sizeof run_cfg.report);
    take(GREENCTX_RUN_CLAIM, run_cfg.claim, sizeof run_cfg.claim);
    const char *inherit = getenv(GREENCTX_RUN_INHERIT);
    if (inherit && strcmp(inherit, "0") != 0 && strcmp(inherit, "1") != 0)
        config_error("%s='%s': use 1 (children are confined too) or 0", GREENCTX_RUN_INHERIT,
                     inherit);
    run_cfg.inherit = !inherit || strcmp(inherit, "0") != 0;
    if (run_cfg.round[0] && tool_parse_rounding(run_cfg.round) < 0)
        config_error("%s='%s': use strict, down, nearest or up", GREENCTX_RUN_ROUND,
                     run_cfg.round);
    const char *report = getenv(GREENCTX_RUN_REPORT);
    if (report && !*report)
        config_error("%s is empty: give a file name", GREENCTX_RUN_REPORT);
    if (run_cfg.present && !run_cfg.error[0]) {
        char why[256];
        if (run_request_parse(run_cfg.sms, &run_cfg.request, why, sizeof why) != 0)
            config_error("%s", why);
    }
    run_cfg.pid = (long)getpid();
    if (run_cfg.report[0] && atexit(run_report_at_exit) != 0)
        config_error("the report could not be registered to be written at exit");
    /* Before the program's own handlers, so it runs after them: after the program's last
     * work. */
    if (run_cfg.claim[0] && atexit(run_claims_at_exit) != 0)
        config_error("the claims could not be registered to be given back at exit");
    drop_variables(!run_cfg.inherit);
    if (!run_cfg.inherit)
        drop_from_ld_preload();
}

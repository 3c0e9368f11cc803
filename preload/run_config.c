/* The preload's variables, read and checked once before main and left in the environment: a
 * process that never uses CUDA (env, a shell) passes them on (run_children.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_syntax.h"
#include "run_preload.h"

extern char **environ;

run_config run_cfg;

/* What the tool looks for before it starts a program with this library. */
RUN_EXPORT const run_preload_abi greenctx_preload_abi = {GREENCTX_PRELOAD_ABI_MAGIC, GCTX_VERSION};

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

/* Every GREENCTX_RUN_* name must be one of ours: a typo must not pass silently. */
static void check_names(void)
{
    static const char *const known[] = {GREENCTX_RUN_SMS, GREENCTX_RUN_ROUND,
                                        GREENCTX_RUN_REPORT_DIR, GREENCTX_RUN_INHERIT,
                                        GREENCTX_RUN_CLAIM, GREENCTX_RUN_DEVICE_SMS};
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
                         "_REPORT_DIR, _INHERIT, _CLAIM and _DEVICE_SMS)",
                         name);
        }
    }
}

__attribute__((constructor)) static void run_config_load(void)
{
    check_names();
    run_cfg.pid = (long)getpid();
    run_cfg.present = getenv(GREENCTX_RUN_SMS) != NULL;
    take(GREENCTX_RUN_SMS, run_cfg.sms, sizeof run_cfg.sms);
    take(GREENCTX_RUN_ROUND, run_cfg.round, sizeof run_cfg.round);
    take(GREENCTX_RUN_REPORT_DIR, run_cfg.report_dir, sizeof run_cfg.report_dir);
    take(GREENCTX_RUN_CLAIM, run_cfg.claim, sizeof run_cfg.claim);
    const char *inherit = getenv(GREENCTX_RUN_INHERIT);
    if (inherit && strcmp(inherit, "0") != 0 && strcmp(inherit, "1") != 0)
        config_error("%s='%s': use 1 (children are confined too) or 0", GREENCTX_RUN_INHERIT,
                     inherit);
    run_cfg.inherit = !inherit || strcmp(inherit, "0") != 0;
    const char *device_sms = getenv(GREENCTX_RUN_DEVICE_SMS);
    run_cfg.device_sms = device_sms ? run_device_sms_parse(device_sms) : RUN_DEVICE_SMS_PARTITION;
    if (run_cfg.device_sms < 0)
        config_error("%s='%s': use %s", GREENCTX_RUN_DEVICE_SMS, device_sms,
                     RUN_DEVICE_SMS_VALUES);
    if (run_cfg.round[0] && group_syntax_rounding(run_cfg.round) < 0)
        config_error("%s='%s': use strict, down, nearest or up", GREENCTX_RUN_ROUND,
                     run_cfg.round);
    const char *dir = getenv(GREENCTX_RUN_REPORT_DIR);
    /* Absolute: the program may change directory before it uses CUDA. */
    if (dir && dir[0] != '/')
        config_error("%s='%s': give an absolute directory", GREENCTX_RUN_REPORT_DIR, dir);
    if (run_cfg.present && !run_cfg.error[0]) {
        char why[256];
        if (run_request_parse(run_cfg.sms, &run_cfg.request, why, sizeof why) != 0)
            config_error("%s", why);
    }
    /* Inherited by fork: a child that goes on to use CUDA writes its own part. */
    if (run_cfg.report_dir[0] && atexit(run_report_write_part) != 0)
        config_error("the report could not be registered to be written at exit");
    /* Before the program's own handlers, so it runs after its last work. */
    if (run_cfg.claim[0] && atexit(run_claims_at_exit) != 0)
        config_error("the claims could not be registered to be given back at exit");
}

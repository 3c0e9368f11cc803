/* The program's environment under `greenctx run`: the preload first in LD_PRELOAD (the
 * program's own after it), the preload's GREENCTX_RUN_* variables, and MPS's memory limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_tool.h"

/* --memory for every confined device, in MPS's syntax ("0=16G,1=16G"). */
static int set_memory_limit(const run_job *job, const char *text)
{
    if (!job->options.memory)
        return 0;
    run_request parsed;
    char why[256], value[1024] = "";
    int count = 0;
    if (run_request_parse(text, &parsed, why, sizeof why) != 0 ||
        gctx_device_count(&count) != GCTX_SUCCESS)
        return -1;
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        size_t used = strlen(value);
        if (run_request_for(&parsed, dev))
            snprintf(value + used, sizeof value - used, "%s%d=%s", used ? "," : "", dev,
                     job->options.memory);
    }
    return setenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", value, 1);
}

int run_set_environment(const run_job *job, const char *text, const run_claims *claims)
{
    const char *original = job->program_preload;
    size_t size = strlen(job->preload) + (original ? strlen(original) : 0) + 2;
    char *list = malloc(size);
    if (!list) {
        greenctx_tool_fail(job->opts, GCTX_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    /* First, so that its dlsym is the one the program finds. */
    snprintf(list, size, "%s%s%s", job->preload, original ? " " : "", original ? original : "");
    int bad = setenv("LD_PRELOAD", list, 1) | setenv(GREENCTX_RUN_SMS, text, 1);
    free(list);
    const run_options *o = &job->options;
    bad |= o->round ? setenv(GREENCTX_RUN_ROUND, o->round, 1) : unsetenv(GREENCTX_RUN_ROUND);
    bad |= job->report_dir[0] ? setenv(GREENCTX_RUN_REPORT_DIR, job->report_dir, 1)
                              : unsetenv(GREENCTX_RUN_REPORT_DIR);
    bad |= o->no_inherit ? setenv(GREENCTX_RUN_INHERIT, "0", 1) : unsetenv(GREENCTX_RUN_INHERIT);
    bad |= setenv(GREENCTX_RUN_DEVICE_SMS, run_device_sms_name(o->device_sms), 1);
    bad |= claims->variable[0] ? setenv(GREENCTX_RUN_CLAIM, claims->variable, 1)
                               : unsetenv(GREENCTX_RUN_CLAIM);
    bad |= set_memory_limit(job, text);
    if (bad) {
        perror("greenctx run: setting the environment");
        return -1;
    }
    return 0;
}

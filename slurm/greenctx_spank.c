/* The SPANK entry points: srun's, sbatch's and salloc's options, plugstack.conf's words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group_syntax.h"
#include "run_request.h"
#include "spank_plugin.h"

/* What Slurm looks up (greenctx_spank.map lets nothing else out). */
#pragma GCC visibility push(default)
SPANK_PLUGIN(greenctx, 1);
int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);
#pragma GCC visibility pop

static spank_config config;
/* Set by the option callbacks, in srun/sbatch/salloc and again in slurmstepd. */
static char requested[SPANK_MAX_REQUEST];
static int wait_s;
static int rounding = GCTX_ROUND_STRICT;
static int device_sms = RUN_DEVICE_SMS_PARTITION;

enum { OPT_SMS, OPT_WAIT, OPT_ROUND, OPT_DEVICE_SMS };

/* srun's, sbatch's or salloc's error for a value an option refuses. Returns -1. */
static int refuse_value(const char *name, const char *takes, const char *value)
{
    slurm_error(SPANK_PREFIX ": --%s takes %s; got '%s'", name, takes, value ? value : "");
    return -1;
}

/* Each option's value (val: OPT_*), checked where it is given and taken again in slurmstepd. */
static int take_option(int val, const char *optarg, int remote)
{
    char why[512], *end = NULL;
    long seconds;
    int mode;
    (void)remote;
    switch (val) {
    case OPT_SMS:
        if (!optarg || strlen(optarg) >= sizeof requested) {
            slurm_error(SPANK_PREFIX ": --gpu-sms takes COUNT|GROUP (16, 25%%, all)");
            return -1;
        }
        if (spank_request_check(optarg, why, sizeof why) != 0) {
            slurm_error(SPANK_PREFIX ": --gpu-sms=%s: %s", optarg, why);
            return -1;
        }
        strcpy(requested, optarg);
        return 0;
    case OPT_WAIT:
        seconds = optarg ? strtol(optarg, &end, 10) : -1;
        if (!optarg || end == optarg || *end || seconds < 1 || seconds > 86400)
            return refuse_value("gpu-sms-wait", "SECONDS (1 to 86400)", optarg);
        wait_s = (int)seconds;
        return 0;
    case OPT_ROUND:
        if ((mode = optarg ? group_syntax_rounding(optarg) : -1) < 0)
            return refuse_value("gpu-sms-round", "strict, down, nearest or up", optarg);
        rounding = mode;
        return 0;
    default:
        if ((mode = run_device_sms_parse(optarg)) < 0)
            return refuse_value("gpu-device-sms", RUN_DEVICE_SMS_VALUES, optarg);
        device_sms = mode;
        return 0;
    }
}

static struct spank_option options[] = {
    {"gpu-sms", "COUNT|GROUP",
     "SMs of each of the task's GPUs, never shared with another job's tasks: a count (16), a "
     "share (25%), all, or DEV=COUNT,DEV=COUNT (greenctx; docs/slurm.md)",
     1, OPT_SMS, take_option},
    {"gpu-sms-wait", "SECONDS",
     "with --gpu-sms: wait up to SECONDS for the SMs when other jobs hold them (default: fail "
     "at once)",
     1, OPT_WAIT, take_option},
    {"gpu-sms-round", "MODE",
     "with --gpu-sms: a count whole granules can't make is refused (strict, the default) or "
     "rounded down, to the nearest or up",
     1, OPT_ROUND, take_option},
    {"gpu-device-sms", "MODE",
     "with --gpu-sms: the SM count the task is told: partition (the default: its SMs) or "
     "physical (the whole GPU's, for programs that index per-SM buffers by %smid)",
     1, OPT_DEVICE_SMS, take_option},
    SPANK_OPTIONS_TABLE_END,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char why[1024];
    if (spank_config_parse(ac, av, &config, why, sizeof why) != 0) {
        slurm_error(SPANK_PREFIX ": %s", why);
        return -1;
    }
    /* Registered here rather than through a spank_options table, so that sbatch and salloc
     * take them too; slurmd itself and job scripts (prolog, epilog) take no options. */
    spank_context_t context = spank_context();
    if (context != S_CTX_LOCAL && context != S_CTX_REMOTE && context != S_CTX_ALLOCATOR)
        return 0;
    for (struct spank_option *o = options; o->name; o++)
        if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
            slurm_error(SPANK_PREFIX ": option --%s could not be registered", o->name);
            return -1;
        }
    return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if ((wait_s > 0 || rounding != GCTX_ROUND_STRICT || device_sms != RUN_DEVICE_SMS_PARTITION) &&
        !requested[0] && !config.default_request[0]) {
        slurm_error(SPANK_PREFIX ": --gpu-sms-wait, --gpu-sms-round and --gpu-device-sms need "
                                 "--gpu-sms (this cluster sets no default)");
        return -1;
    }
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    spank_task_request request;
    request.request = requested[0] ? requested : config.default_request;
    request.wait_s = wait_s;
    request.rounding = rounding;
    request.device_sms = device_sms;
    request.config = &config;
    if (!request.request[0])
        return 0; /* the job did not ask: it runs as it would without the plugin */
    return spank_task_confine(sp, &request) == 0 ? 0 : -1;
}

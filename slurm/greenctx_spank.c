/* The SPANK entry points: srun's, sbatch's and salloc's options, plugstack.conf's words, and
 * what srun can check of a request before the job starts. */
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
static spank_task_request task = {
    .rounding = GCTX_ROUND_STRICT, .device_sms = RUN_DEVICE_SMS_PARTITION, .config = &config};

/* What a claim takes: a count of SMs, a percent share, rest (free SMs) or all (every SM). */
static int check_group(const char *text)
{
    size_t digits = strspn(text, "0123456789");
    if (strcmp(text, "all") == 0 || strcmp(text, "rest") == 0)
        return 0;
    if (digits == 0 || digits > 6)
        return -1;
    if (text[digits] == '%' && text[digits + 1] == '\0') {
        long percent = strtol(text, NULL, 10);
        return percent >= 1 && percent <= 100 ? 0 : -1;
    }
    return text[digits] == '\0' && strtol(text, NULL, 10) > 0 ? 0 : -1;
}

/* A request's syntax, checked without a GPU as srun and sbatch can; 0, or -1 with err. */
static int check_request(const char *request, char *err, size_t size)
{
    run_request parsed;
    char why[512];
    if (!*request)
        return run_say(err, size,
                       "give a count of SMs (16), a share of the GPU (25%%), rest or all");
    if (run_request_parse(request, &parsed, why, sizeof why) != 0)
        return run_say(err, size, "%s", why);
    for (unsigned i = 0; i < parsed.nb_entries; i++)
        if (check_group(parsed.entries[i].text) != 0)
            return run_say(err, size,
                           "'%s' is not a count of SMs (16), a share of the GPU (25%%), rest "
                           "(every free SM) or all; DEV=COUNT,DEV=COUNT gives each of the "
                           "task's GPUs its own",
                           parsed.entries[i].text);
    return 0;
}

/* plugstack.conf's words into config, defaults first; 0, or -1 with err. */
static int parse_config(int argc, char **argv, char *err, size_t size)
{
    memset(&config, 0, sizeof config);
    snprintf(config.runtime_dir, sizeof config.runtime_dir, "%s", GREENCTX_SPANK_RUNTIME_DIR);
    snprintf(config.preload, sizeof config.preload, "%s", GREENCTX_SPANK_PRELOAD);
    /* The arguments that take a text, and where it goes. */
    const struct {
        const char *key;
        char *field;
        size_t size;
    } texts[] = {{"default", config.default_request, sizeof config.default_request},
                 {"runtime_dir", config.runtime_dir, sizeof config.runtime_dir},
                 {"preload", config.preload, sizeof config.preload}};
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : "";
        char key[16], why[512];
        snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - argv[i]) : (int)strlen(argv[i]),
                 argv[i]);
        int text = -1;
        for (int t = 0; t < (int)(sizeof texts / sizeof texts[0]); t++)
            if (strcmp(key, texts[t].key) == 0)
                text = t;
        if (text >= 0 && (!*value || strlen(value) >= texts[text].size))
            return run_say(err, size, "%s= needs a value (at most %zu characters)", key,
                           texts[text].size - 1);
        if (text >= 0)
            strcpy(texts[text].field, value);
        if (strcmp(key, "default") == 0 && check_request(value, why, sizeof why) != 0)
            return run_say(err, size, "default=%s: %s", value, why);
        if (strcmp(key, "runtime_dir") == 0 && value[0] != '/')
            return run_say(err, size, "runtime_dir=%s: give an absolute path", value);
        if (strcmp(key, "require_mps") == 0) {
            if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
                return run_say(err, size, "require_mps=%s: use yes or no", value);
            config.require_mps = strcmp(value, "yes") == 0;
        } else if (text < 0) {
            return run_say(err, size,
                           "unknown argument '%s' in plugstack.conf (the plugin takes "
                           "default=REQ, require_mps=yes|no, runtime_dir=DIR, preload=PATH)",
                           argv[i]);
        }
    }
    return 0;
}

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
        if (check_request(optarg, why, sizeof why) != 0) {
            slurm_error(SPANK_PREFIX ": --gpu-sms=%s: %s", optarg, why);
            return -1;
        }
        strcpy(requested, optarg);
        return 0;
    case OPT_WAIT:
        seconds = optarg ? strtol(optarg, &end, 10) : -1;
        if (!optarg || end == optarg || *end || seconds < 1 || seconds > 86400)
            return refuse_value("gpu-sms-wait", "SECONDS (1 to 86400)", optarg);
        task.wait_s = (int)seconds;
        return 0;
    case OPT_ROUND:
        if ((mode = optarg ? group_syntax_rounding(optarg) : -1) < 0)
            return refuse_value("gpu-sms-round", "strict, down, nearest or up", optarg);
        task.rounding = mode;
        return 0;
    default:
        if ((mode = run_device_sms_parse(optarg)) < 0)
            return refuse_value("gpu-device-sms", RUN_DEVICE_SMS_VALUES, optarg);
        task.device_sms = mode;
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
    if (parse_config(ac, av, why, sizeof why) != 0) {
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
    if ((task.wait_s > 0 || task.rounding != GCTX_ROUND_STRICT ||
         task.device_sms != RUN_DEVICE_SMS_PARTITION) &&
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
    task.request = requested[0] ? requested : config.default_request;
    if (!task.request[0])
        return 0; /* the job did not ask: it runs as it would without the plugin */
    return spank_task_confine(sp, &task) == 0 ? 0 : -1;
}

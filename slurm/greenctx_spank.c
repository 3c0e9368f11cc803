/* greenctx_spank.so: a SPANK plugin that gives each task of a Slurm job step SMs of its GPUs
 * (docs/slurm.md): `srun --gpu-sms=16` claims 16 SMs of each GPU the task sees and confines the
 * task to them as `greenctx run` does. srun's, sbatch's and salloc's options and plugstack.conf's
 * words are checked without a GPU where they are given; the claims are taken in the task's own
 * process just before Slurm execs it. Their lock is inherited (GCTX_CLAIM_INHERIT), so the
 * kernel drops it when the task's last process ends, however it ends (scancel, a crash,
 * SIGKILL). */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "claim_text.h"
#include "greenctx.h"
#include "greenctx_claims.h"
#include "group_syntax.h"
#include "run_request.h"
#include "run_session.h"

#define SPANK_PREFIX "greenctx"
#define MAX_REQUEST 256

/* What Slurm looks up (greenctx_spank.map lets nothing else out). */
#pragma GCC visibility push(default)
SPANK_PLUGIN(greenctx, 1);
int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);
#pragma GCC visibility pop

/* plugstack.conf's arguments. */
static struct {
    char default_request[MAX_REQUEST]; /* default=REQ: for jobs that do not ask; "" none */
    int require_mps;                   /* require_mps=yes: refuse tasks without MPS */
    char runtime_dir[PATH_MAX];        /* runtime_dir=DIR: the node's shared registry */
    char preload[PATH_MAX];            /* preload=PATH: libgreenctx_preload.so */
} config;

/* What a task asks for, set by the option callbacks, in srun/sbatch/salloc and again in
 * slurmstepd. */
static char requested[MAX_REQUEST]; /* --gpu-sms; "": the default */
static struct {
    int wait_s;     /* --gpu-sms-wait=SECONDS; 0: fail at once when the SMs are taken */
    int rounding;   /* --gpu-sms-round=MODE: a gctx_rounding */
    int device_sms; /* --gpu-device-sms=MODE: RUN_DEVICE_SMS_PARTITION (default, as greenctx
                       run) or _PHYSICAL */
} task = {.rounding = GCTX_ROUND_STRICT, .device_sms = RUN_DEVICE_SMS_PARTITION};

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

/* Why the task is not started, to slurmd's log and to the step's stderr. fmt follows
 * "greenctx: --gpu-sms". Returns -1. */
static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    char message[4096];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    slurm_error(SPANK_PREFIX ": --gpu-sms%s; the task was not started", message);
    return -1;
}

typedef struct task_facts {
    uint32_t job;
    char label[64];      /* "slurm 42.0" */
    char command[256];   /* the task's command line */
    const char *request; /* --gpu-sms, else the default */
} task_facts;

/* Before exec this process has slurmstepd's environment; the library and the driver read
 * theirs from it, so the task's is put in its place: the claims are made on what it sees. */
static int take_task_environment(spank_t sp)
{
    char **env = NULL;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
        return -1;
    if (clearenv() != 0)
        return -1;
    for (char **e = env; *e; e++) {
        char *copy = strdup(*e);
        if (!copy || putenv(copy) != 0) /* the environment keeps the copy */
            return -1;
    }
    return 0;
}

static int task_facts_get(spank_t sp, task_facts *facts)
{
    uint32_t step = 0;
    int argc = 0;
    char **argv = NULL, step_name[16];
    if (spank_get_item(sp, S_JOB_ID, &facts->job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
        return -1;
    snprintf(step_name, sizeof step_name, "%u", step);
    snprintf(facts->label, sizeof facts->label, "slurm %u.%s", facts->job,
             step == SLURM_BATCH_SCRIPT       ? "batch"
             : step == SLURM_INTERACTIVE_STEP ? "interactive"
                                              : step_name);
    text_join_words(argv, facts->command, sizeof facts->command);
    return 0;
}

/* A step of a batch job started with the job's --gpu-sms (sbatch hands it to every srun): the
 * task joins the batch script's claim (GREENCTX_RUN_CLAIM, inherited) rather than claiming as
 * many SMs again. holder gets the claims' description. 1 when it joins them, 0 otherwise. */
static int joins_batch_claim(spank_t sp, const task_facts *facts, char *holder, size_t size)
{
    char list[4096], sms[MAX_REQUEST], batch[64];
    int count = 0, found = 0;
    if (spank_getenv(sp, GREENCTX_RUN_CLAIM, list, sizeof list) != ESPANK_SUCCESS ||
        spank_getenv(sp, GREENCTX_RUN_SMS, sms, sizeof sms) != ESPANK_SUCCESS ||
        strcmp(sms, facts->request) != 0 || gctx_device_count(&count) != GCTX_SUCCESS)
        return 0;
    snprintf(batch, sizeof batch, "slurm %u.batch", facts->job);
    holder[0] = '\0';
    for (int dev = 0; dev < count && dev < RUN_MAX_DEVICES; dev++) {
        char token[1024], ranges[512];
        gctx_claim *claim = NULL;
        gctx_claim_info info = GCTX_CLAIM_INFO_INIT;
        if (run_device_list_find(list, dev, token, sizeof token) != 0)
            continue;
        /* Not released: this process becomes the task, whose preload joins the claim again. */
        if (gctx_claim_join(dev, token, &claim) != GCTX_SUCCESS ||
            gctx_claim_get_info(claim, &info) != GCTX_SUCCESS || strcmp(info.label, batch) != 0)
            return 0;
        size_t used = strlen(holder);
        snprintf(holder + used, size - used, "%sGPU %d: %u SMs (granules %s)", found ? ", " : "",
                 dev, info.sm_count,
                 text_granule_ranges(info.granules, info.nb_granules, ranges, sizeof ranges));
        found++;
    }
    return found > 0;
}

static int check_mps(void)
{
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    if (gctx_mps_get_info(&mps) != GCTX_SUCCESS)
        return refuse(": %s", gctx_last_error());
    if (config.require_mps && !mps.daemon_running)
        return refuse(": this cluster requires MPS (plugstack.conf: require_mps=yes) and no MPS "
                      "control daemon answers on %s for this task, so its green contexts would "
                      "be time-sliced with other jobs' instead of running beside them; start "
                      "the node's MPS daemon (or set CUDA_MPS_PIPE_DIRECTORY to its pipe "
                      "directory)",
                      mps.pipe_dir);
    return 0; /* an active-thread percentage below 100: the claim refuses it */
}

/* The session of the task, as greenctx run's: planned and claimed on every GPU it sees. */
static int claim(const task_facts *facts, run_session_request *req, run_session *session)
{
    char why[1024];
    *req = (run_session_request){.sms = facts->request,
                                 .device_word = "GPU",
                                 .rest_option = "--gpu-sms=rest",
                                 .round_option = "--gpu-sms-round=up",
                                 .preload = config.preload,
                                 .device_sms = task.device_sms};
    gctx_claim_options *options = &req->claim;
    *options = (gctx_claim_options)GCTX_CLAIM_OPTIONS_INIT;
    options->flags =
        GCTX_CLAIM_INHERIT | GCTX_CLAIM_SHARED_DIR | (task.wait_s > 0 ? GCTX_CLAIM_WAIT : 0u);
    options->timeout_ms = task.wait_s > 0 ? task.wait_s * 1000 : 0;
    options->rounding = (gctx_rounding)task.rounding;
    options->label = facts->label;
    options->command = facts->command;
    options->runtime_dir = config.runtime_dir;
    gctx_status s = run_session_plan(req, session, why, sizeof why);
    if (s != GCTX_SUCCESS)
        return refuse("=%s: %s%s", facts->request, why,
                      s == GCTX_ERROR_NO_DEVICE && session->device_count == 0
                          ? ": ask Slurm for one (--gres=gpu:1 or --gres=shard:N)"
                          : "");
    s = run_session_claim(req, session, why, sizeof why);
    int device = session->plans[session->failed].device;
    if (s == GCTX_ERROR_BUSY)
        return refuse("=%s: GPU %d: %s; %s", facts->request, device, why,
                      task.wait_s > 0 ? "waited in vain (--gpu-sms-wait)"
                                      : "--gpu-sms-wait=SECONDS queues for the SMs");
    if (s != GCTX_SUCCESS)
        return refuse("=%s: GPU %d: %s%s", facts->request, device,
                      s == GCTX_ERROR_REGISTRY ? "plugstack.conf's runtime_dir=: " : "", why);
    return 0;
}

/* A variable of the task's environment; one without a value is left as the job set it. */
static int set_variable(void *sp, const char *name, const char *value)
{
    return value && spank_setenv(sp, name, value, 1) != ESPANK_SUCCESS ? -1 : 0;
}

/* In the task's process, before Slurm execs it: claims the SMs of every GPU the task sees and
 * sets the preload's variables; 0, or -1 after saying why (the task is then not started). */
static int confine_task(spank_t sp, const char *request)
{
    task_facts facts = {.request = request};
    /* The node's registry is shared by every user's jobs, here (listings) as in the task. */
    if (take_task_environment(sp) != 0 || task_facts_get(sp, &facts) != 0 ||
        setenv("GREENCTX_RUNTIME_DIR", config.runtime_dir, 1) != 0 ||
        setenv("GREENCTX_RUNTIME_SHARED", "1", 1) != 0)
        return refuse(": the task's environment, id or command line could not be read");
    char holder[1024];
    if (joins_batch_claim(sp, &facts, holder, sizeof holder)) {
        fprintf(stderr, SPANK_PREFIX ": %s: in the SMs of slurm %u.batch, %s\n", facts.label,
                facts.job, holder);
        /* The step's own --gpu-device-sms, not the batch script's. */
        return spank_setenv(sp, GREENCTX_RUN_DEVICE_SMS, run_device_sms_name(task.device_sms),
                            1) == ESPANK_SUCCESS
                   ? 0
                   : refuse(": the task's environment could not be set");
    }
    /* The claims are never released here: this process becomes the task, and the claims' locks
     * with it. On a failure the process ends without starting the task. */
    run_session_request req;
    static run_session session; /* too big for slurmstepd's stack */
    if (check_mps() != 0 || claim(&facts, &req, &session) != 0)
        return -1;
    for (const run_device_plan *p = session.plans; p < session.plans + session.nb_plans; p++)
        fprintf(stderr, SPANK_PREFIX ": %s: GPU %d: %u of %u SMs (claimed granules %s)\n",
                facts.label, p->device, p->sm_count, p->device_sms, p->granules);
    char old[4096] = "";
    if (spank_getenv(sp, "LD_PRELOAD", old, sizeof old) == ESPANK_SUCCESS)
        req.program_preload = old;
    return run_session_environment(&req, &session, set_variable, sp) != 0
               ? refuse(": the task's environment could not be set")
               : 0;
}

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
    const char *request = requested[0] ? requested : config.default_request;
    if (!request[0])
        return 0; /* the job did not ask: it runs as it would without the plugin */
    return confine_task(sp, request);
}

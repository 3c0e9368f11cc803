/* The claims of one task, taken in the task's own process just before Slurm execs it: the
 * claim's lock is inherited (GCTX_CLAIM_INHERIT), so the kernel drops it when the last process
 * of the task ends (scancel, a crash, SIGKILL). The task is then confined as `greenctx run`
 * confines its program. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "claim_text.h"
#include "greenctx.h"
#include "greenctx_claims.h"
#include "run_session.h"
#include "spank_plugin.h"

#define ERROR_PREFIX SPANK_PREFIX ": --gpu-sms"

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
    slurm_error(ERROR_PREFIX "%s; the task was not started", message);
    return -1;
}

typedef struct task_facts {
    uint32_t job;
    char label[64];    /* "slurm 42.0" */
    char command[256]; /* the task's command line */
    char request[SPANK_MAX_REQUEST];
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

static int task_facts_get(spank_t sp, const spank_task_request *request, task_facts *facts)
{
    uint32_t job = 0, step = 0;
    int argc = 0;
    char **argv = NULL, step_name[16];
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
        return -1;
    snprintf(step_name, sizeof step_name, "%u", step);
    facts->job = job;
    snprintf(facts->label, sizeof facts->label, "slurm %u.%s", job,
             step == SLURM_BATCH_SCRIPT       ? "batch"
             : step == SLURM_INTERACTIVE_STEP ? "interactive"
                                              : step_name);
    text_join_words(argv, facts->command, sizeof facts->command);
    snprintf(facts->request, sizeof facts->request, "%s", request->request);
    return 0;
}

/* A step of a batch job started with the job's --gpu-sms (sbatch hands it to every srun): the
 * task joins the batch script's claim (GREENCTX_RUN_CLAIM, inherited) rather than claiming as
 * many SMs again. holder gets the claims' description. 1 when it joins them, 0 otherwise. */
static int joins_batch_claim(spank_t sp, const task_facts *facts, char *holder, size_t size)
{
    char list[4096], sms[SPANK_MAX_REQUEST], batch[64];
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

static int check_mps(const spank_task_request *request)
{
    gctx_mps_info mps = GCTX_MPS_INFO_INIT;
    if (gctx_mps_get_info(&mps) != GCTX_SUCCESS)
        return refuse(": %s", gctx_last_error());
    if (request->config->require_mps && !mps.daemon_running)
        return refuse(": this cluster requires MPS (plugstack.conf: require_mps=yes) and no MPS "
                      "control daemon answers on %s for this task, so its green contexts would "
                      "be time-sliced with other jobs' instead of running beside them; start "
                      "the node's MPS daemon (or set CUDA_MPS_PIPE_DIRECTORY to its pipe "
                      "directory)",
                      mps.pipe_dir);
    return 0; /* an active-thread percentage below 100: the claim refuses it */
}

/* The session of the task, as greenctx run's: planned and claimed on every GPU it sees. */
static int claim(const spank_task_request *request, const task_facts *facts,
                 run_session_request *req, run_session *session)
{
    char why[1024];
    *req = (run_session_request){.sms = facts->request,
                                 .device_word = "GPU",
                                 .rest_option = "--gpu-sms=rest",
                                 .round_option = "--gpu-sms-round=up",
                                 .preload = request->config->preload,
                                 .device_sms = request->device_sms};
    gctx_claim_options *options = &req->claim;
    *options = (gctx_claim_options)GCTX_CLAIM_OPTIONS_INIT;
    options->flags = GCTX_CLAIM_INHERIT | GCTX_CLAIM_SHARED_DIR |
                     (request->wait_s > 0 ? GCTX_CLAIM_WAIT : 0u);
    options->timeout_ms = request->wait_s > 0 ? request->wait_s * 1000 : 0;
    options->rounding = (gctx_rounding)request->rounding;
    options->label = facts->label;
    options->command = facts->command;
    options->runtime_dir = request->config->runtime_dir;
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
                      request->wait_s > 0 ? "waited in vain (--gpu-sms-wait)"
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

int spank_task_confine(spank_t sp, const spank_task_request *request)
{
    task_facts facts;
    /* The node's registry is shared by every user's jobs, here (listings) as in the task. */
    if (take_task_environment(sp) != 0 || task_facts_get(sp, request, &facts) != 0 ||
        setenv("GREENCTX_RUNTIME_DIR", request->config->runtime_dir, 1) != 0 ||
        setenv("GREENCTX_RUNTIME_SHARED", "1", 1) != 0)
        return refuse(": the task's environment, id or command line could not be read");
    char holder[1024];
    if (joins_batch_claim(sp, &facts, holder, sizeof holder)) {
        fprintf(stderr, SPANK_PREFIX ": %s: in the SMs of slurm %u.batch, %s\n", facts.label,
                facts.job, holder);
        /* The step's own --gpu-device-sms, not the batch script's. */
        return spank_setenv(sp, GREENCTX_RUN_DEVICE_SMS, run_device_sms_name(request->device_sms),
                            1) == ESPANK_SUCCESS
                   ? 0
                   : refuse(": the task's environment could not be set");
    }
    /* The claims are never released here: this process becomes the task, and the claims' locks
     * with it. On a failure the process ends without starting the task. */
    run_session_request req;
    static run_session session; /* too big for slurmstepd's stack */
    if (check_mps(request) != 0 || claim(request, &facts, &req, &session) != 0)
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

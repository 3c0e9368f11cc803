/* The guard's two sides: a latency tenant publishes its steps, a best-effort tenant reads
 * them, decides (guard_policy.c) and publishes what it allows itself, each in its claim's
 * state file: no registry lock on the latency tenant's path, no driver call on either side. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claim.h"
#include "nvml.h" /* common/: the one NVML loader, the tool's too */

#define PUBLISH_NS 10000000ll /* a latency tenant publishes at most every 10 ms */
/* A window's p99 is of 500 steps or more (of fewer, chance sets it). More than 1 % of
 * WINDOW_STEPS over the target close it at once, so the guard hears of interference within a
 * few steps; slow steps close one at 1 s. */
#define WINDOW_STEPS 500u
#define WINDOW_MAX_NS 1000000000ll
#define STATE_BYTES 256

gctx_status gctx__claim_class_check(const gctx_claim_options *o)
{
    if ((unsigned)o->tenant_class > GCTX_TENANT_BEST_EFFORT)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->tenant_class is %d: use GCTX_TENANT_UNGUARDED, "
                          "GCTX_TENANT_LATENCY or GCTX_TENANT_BEST_EFFORT",
                          (int)o->tenant_class);
    if (!isfinite(o->target_ms) || o->target_ms < 0 || !isfinite(o->target_factor) ||
        (o->target_factor != 0 && o->target_factor < 1))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->target_ms %g / target_factor %g: give a step time in ms, "
                          "or a factor of at least 1 over the tenant's step alone",
                          o->target_ms, o->target_factor);
    if (o->tenant_class != GCTX_TENANT_LATENCY && (o->target_ms || o->target_factor))
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "options->target_ms / target_factor are for a GCTX_TENANT_LATENCY "
                          "claim: a best-effort or unguarded one has no target");
    return GCTX_SUCCESS;
}

/* ---- the state line ---- */

typedef struct state_line {
    double step_ms, alone_ms;
    long long window_ns, step_ns;
    unsigned level, sms, outstanding, duty;
    char reason[16];
    int paced;
    double held_ms;
} state_line;

#define STATE_FORMAT(real, text)                                                                \
    "step_ms %" real " alone_ms %" real " window_ns %lld step_ns %lld level %u "                \
    "reason %" text " sms %u outstanding %u duty %u paced %d held_ms %" real "\n"

/* Replaces the claim's line (by its publisher, or under guard_lock); a line that can't be
 * written is skipped: the guard is advice, never a reason for the tenant's work to fail. */
static void publish(const gctx_claim *c, const state_line *l)
{
    char text[STATE_BYTES];
    int n = snprintf(text, sizeof text, STATE_FORMAT(".4f", "s"), l->step_ms, l->alone_ms,
                     l->window_ns, l->step_ns, l->level, l->reason[0] ? l->reason : "-", l->sms,
                     l->outstanding, l->duty, l->paced, l->held_ms);
    if (n > 0 && n < STATE_BYTES)
        gctx__state_write(c->registry_dir, c->file, (c->dir_flags & GCTX_CLAIM_SHARED_DIR) != 0,
                          text);
}

#define STEP_MS_MAX 1e9 /* 11 days: past it no step, and 2e6 x it still fits a long long */

/* Another user's file: values no step has are no line, never a pressure or arithmetic out
 * of range in the guard. A window begun after its line was written would pass for one begun
 * after every change of level. */
static int plausible(const state_line *l)
{
    return isfinite(l->step_ms) && l->step_ms >= 0 && l->step_ms <= STEP_MS_MAX &&
           isfinite(l->alone_ms) && l->alone_ms >= 0 && l->alone_ms <= STEP_MS_MAX &&
           l->window_ns >= 0 && l->window_ns <= l->step_ns && isfinite(l->held_ms) &&
           l->held_ms >= 0;
}

static int read_line(const char *dir, const gctx__record *r, state_line *l)
{
    char text[STATE_BYTES];
    memset(l, 0, sizeof *l);
    if (gctx__state_read(dir, r->file, r->uid, text, sizeof text) != 0)
        return -1;
    if (sscanf(text, STATE_FORMAT("lf", "15s"), &l->step_ms, &l->alone_ms, &l->window_ns,
               &l->step_ns, &l->level, l->reason, &l->sms, &l->outstanding, &l->duty, &l->paced,
               &l->held_ms) != 11 ||
        !plausible(l)) {
        memset(l, 0, sizeof *l);
        return -1;
    }
    if (strcmp(l->reason, "-") == 0)
        l->reason[0] = '\0';
    return 0;
}

void gctx__claim_state_info(const char *dir, const gctx__record *r, gctx_claim_info *out)
{
    out->tenant_class = r->tenant_class;
    out->target_ms = r->target_ms;
    out->target_factor = r->target_factor;
    state_line l;
    if (r->tenant_class == GCTX_TENANT_UNGUARDED || read_line(dir, r, &l) != 0)
        return;
    out->step_ms = l.step_ms;
    out->alone_ms = l.alone_ms;
    out->step_ns = l.step_ns;
    out->guard_level = l.level;
    snprintf(out->guard_reason, sizeof out->guard_reason, "%s", l.reason);
    out->guard_sms = l.sms;
    out->guard_outstanding = l.outstanding;
    out->guard_duty_permille = l.duty;
    out->guard_paced = l.paced;
    out->guard_held_ms = l.held_ms;
}

/* ---- a latency tenant's publisher ---- */

/* Writes a latency tenant's latest line off its steps' thread (a replace costs hundreds of
 * microseconds); joined before the state file goes. pid: a fork's child has no such thread. */
struct gctx__publisher {
    const gctx_claim *claim;
    pthread_mutex_t lock;
    pthread_cond_t due;
    state_line line; /* the latest line, written once `pending` */
    int pending, stop;
    pid_t pid;
    pthread_t thread;
};

static void *publishing(void *arg)
{
    gctx__publisher *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->pending && !p->stop)
            pthread_cond_wait(&p->due, &p->lock);
        if (p->stop)
            break;
        state_line l = p->line;
        p->pending = 0;
        pthread_mutex_unlock(&p->lock);
        publish(p->claim, &l);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Started when it has none (guard_lock held); its signals blocked: the program's. */
static gctx__publisher *publisher_here(gctx_claim *c)
{
    gctx__publisher *p = c->publisher;
    if (p && p->pid == getpid())
        return p;
    free(p); /* a parent's, whose thread this child doesn't have: its lock is never taken */
    c->publisher = p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->claim = c;
    p->pid = getpid();
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->due, NULL);
    sigset_t all, kept;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &kept);
    int rc = pthread_create(&p->thread, NULL, publishing, p);
    pthread_sigmask(SIG_SETMASK, &kept, NULL);
    if (rc == 0)
        return p;
    pthread_cond_destroy(&p->due);
    pthread_mutex_destroy(&p->lock);
    free(p);
    c->publisher = NULL;
    return NULL;
}

/* The line to the claim's publisher (guard_lock held), replacing one it has not written yet;
 * written here when no thread can be made, as the guard's own lines are. */
static void hand_over(gctx_claim *c, const state_line *l)
{
    gctx__publisher *p = publisher_here(c);
    if (!p) {
        publish(c, l);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->line = *l;
    p->pending = 1;
    pthread_cond_signal(&p->due);
    pthread_mutex_unlock(&p->lock);
}

void gctx__claim_publisher_end(gctx_claim *c)
{
    gctx__publisher *p = c->publisher;
    if (p && p->pid == getpid()) {
        pthread_mutex_lock(&p->lock);
        p->stop = 1;
        pthread_cond_signal(&p->due);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
        pthread_cond_destroy(&p->due);
        pthread_mutex_destroy(&p->lock);
    }
    free(p);
    c->publisher = NULL;
}

/* ---- a latency tenant's steps ---- */

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

gctx_status gctx_claim_report_step(gctx_claim *claim, double step_ms)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    if (!isfinite(step_ms) || step_ms <= 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "step_ms is %g: give the step's time in milliseconds (> 0)", step_ms);
    /* A best-effort claim's line is its guard's: steps would write over it. */
    if (claim->tenant_class != GCTX_TENANT_LATENCY)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the claim %s is not a latency tenant: only a claim acquired with "
                          "tenant_class GCTX_TENANT_LATENCY reports its steps",
                          claim->file);
    long long now = gctx__now_ns();
    pthread_mutex_lock(&claim->guard_lock);
    double target = claim->target_ms ? claim->target_ms : claim->target_factor * claim->alone_ms;
    if (!claim->window_n++)
        claim->window_ns = now;
    claim->window_over += target > 0 && step_ms > target;
    /* The longest steps kept: a full window's shortest kept one gives way to a longer one. */
    unsigned cap = sizeof claim->steps / sizeof claim->steps[0], low = 0;
    if (claim->nb_steps < cap)
        claim->steps[claim->nb_steps++] = (float)step_ms;
    else {
        for (unsigned i = 1; i < cap; i++)
            if (claim->steps[i] < claim->steps[low])
                low = i;
        if ((float)step_ms > claim->steps[low])
            claim->steps[low] = (float)step_ms;
    }
    long long span = now - claim->window_ns;
    if ((claim->window_n >= WINDOW_STEPS && span >= PUBLISH_NS) || span >= WINDOW_MAX_NS ||
        claim->window_over > WINDOW_STEPS / 100) {
        float sorted[sizeof claim->steps / sizeof claim->steps[0]];
        unsigned n = claim->window_n, kept = claim->nb_steps;
        memcpy(sorted, claim->steps, kept * sizeof sorted[0]);
        qsort(sorted, kept, sizeof sorted[0], by_value);
        /* The p99's place counted from the longest step, within those kept. */
        unsigned from_top = n - (n * 99 + 99) / 100;
        from_top = from_top < kept ? from_top : kept - 1;
        claim->window_p99 = sorted[kept - 1 - from_top];
        claim->closed_window_ns = claim->window_ns;
        /* A window of a few steps says little of its tail: alone is learnt from fuller ones. */
        if (n >= 8 && (!claim->alone_ms || claim->window_p99 < claim->alone_ms))
            claim->alone_ms = claim->window_p99;
        claim->nb_steps = claim->window_n = claim->window_over = 0;
    }
    /* Every 10 ms: a tenant without a recent line reads as ended. */
    if (now - claim->published_ns >= PUBLISH_NS) {
        state_line l = {claim->window_p99, claim->alone_ms, claim->closed_window_ns, now, 0, 0,
                        0, 1000, {0}, 0, 0};
        hand_over(claim, &l);
        claim->published_ns = now;
    }
    pthread_mutex_unlock(&claim->guard_lock);
    return GCTX_SUCCESS;
}

/* ---- a best-effort tenant's guard ---- */

/* NVML for the guard: opened at the first look that needs it, kept for the process. */
static nvml_lib *guard_nvml;
static pthread_once_t guard_nvml_once = PTHREAD_ONCE_INIT;

static void guard_nvml_open(void)
{
    char why[512];
    guard_nvml = nvml_lib_open(0, why, sizeof why); /* NULL: the steps alone */
}

static void nvml_signals(const char *uuid, gctx__guard_device *out)
{
    nvml_clocks c;
    pthread_once(&guard_nvml_once, guard_nvml_open);
    if (!guard_nvml || nvml_lib_clocks(guard_nvml, uuid, &c) != 0)
        return;
    out->sm_clock_mhz = c.sm_mhz;
    out->max_sm_clock_mhz = c.max_sm_mhz;
    out->throttle = (c.reasons & NVML_LIB_REASON_SW_POWER_CAP ? GCTX__GUARD_THROTTLE_POWER : 0u) |
                    (c.reasons & (NVML_LIB_REASON_HW_SLOWDOWN | NVML_LIB_REASON_SW_THERMAL |
                                  NVML_LIB_REASON_HW_THERMAL)
                         ? GCTX__GUARD_THROTTLE_THERMAL
                         : 0u);
    /* HBM busy share: NVML's nearest figure to throughput over peak. */
    out->hbm_busy = c.memory_busy / 100.0;
}

static unsigned latency_inputs(const char *dir, const gctx__record *records, unsigned nb,
                               gctx__guard_latency *out)
{
    unsigned k = 0;
    for (unsigned i = 0; i < nb; i++) {
        state_line l;
        if (records[i].tenant_class != GCTX_TENANT_LATENCY ||
            read_line(dir, &records[i], &l) != 0)
            continue;
        gctx__guard_latency g = {records[i].target_ms, l.alone_ms, records[i].target_factor,
                                 l.step_ms, l.step_ns, l.window_ns};
        out[k++] = g;
    }
    return k;
}

gctx_status gctx__claim_best_effort(const gctx_claim *claim)
{
    if (claim->tenant_class == GCTX_TENANT_BEST_EFFORT)
        return GCTX_SUCCESS;
    return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                      "the claim %s is not best-effort: only a claim acquired with "
                      "tenant_class GCTX_TENANT_BEST_EFFORT gives way to latency tenants",
                      claim->file);
}

gctx_status gctx_claim_guard(gctx_claim *claim, const gctx_guard_signals *signals,
                             gctx_guard_advice *advice)
{
    gctx_guard_signals sig = GCTX_GUARD_SIGNALS_INIT;
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    GCTX_TRY(gctx__sized_check(advice, GCTX__MIN_GUARD_ADVICE, "advice", "GCTX_GUARD_ADVICE_INIT"));
    if (signals)
        GCTX_TRY(gctx__sized_in(&sig, sizeof sig, signals, GCTX__MIN_GUARD_SIGNALS, "signals",
                                "GCTX_GUARD_SIGNALS_INIT"));
    GCTX_TRY(gctx__claim_best_effort(claim));
    pthread_mutex_lock(&claim->lock);
    unsigned sms = gctx__granules_sms(&claim->granules.identity.layout, &claim->record.granules);
    pthread_mutex_unlock(&claim->lock);
    gctx__registry reg;
    gctx__record *records = NULL;
    unsigned nb = 0;
    GCTX_TRY(gctx__claim_registry(claim, &reg));
    gctx_status s = gctx__registry_claims(&reg, &records, &nb);
    gctx__registry_close(&reg);
    if (s != GCTX_SUCCESS)
        return s;
    gctx__guard_latency *lat = nb ? calloc(nb, sizeof *lat) : NULL;
    if (nb && !lat) {
        free(records);
        return gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory reading the guard's inputs");
    }
    unsigned nb_lat = latency_inputs(reg.dir, records, nb, lat);
    /* The lines' age as read: NVML's reads below took tens of ms on an H200 at its power cap,
     * which would age every line past idle_ns and read the latency tenants as ended. */
    long long now = gctx__now_ns();
    gctx__guard_watch_update(claim, records, nb);
    free(records);
    gctx__guard_device dev = {sig.sm_clock_mhz, sig.max_sm_clock_mhz, sig.throttle,
                              sig.hbm_busy};
    if (!signals && nb_lat)
        nvml_signals(claim->granules.identity.uuid, &dev);
    static const gctx__guard_config config = GCTX__GUARD_CONFIG_INIT;
    pthread_mutex_lock(&claim->guard_lock);
    /* What it gets back: its SMs before the guard held it back, until it has them again (a
     * shrink of its own meanwhile is its new size). */
    if (sms >= claim->full_sms || !claim->held_back) {
        claim->full_sms = sms;
        claim->held_back = 0;
    }
    gctx__guard_decide(&config, &claim->guard, lat, nb_lat, &dev, now);
    gctx__guard_allowance a = gctx__guard_allow(&claim->guard, claim->full_sms, claim->floor_sms);
    if (a.sms < claim->full_sms)
        claim->held_back = 1;
    /* Everything back, with SMs no count takes: only "rest" gives them. */
    int rest = a.sms == claim->full_sms &&
               !gctx__layout_claimable(&claim->granules.identity.layout, a.sms);
    unsigned level = claim->guard.running ? claim->guard.level : 0;
    state_line l = {0, 0, 0, now, level, a.sms, a.max_outstanding, a.duty_permille, {0},
                    claim->paced, claim->held_ms};
    if (level)
        snprintf(l.reason, sizeof l.reason, "%s", gctx__guard_reason_name(claim->guard.reason));
    publish(claim, &l);
    pthread_mutex_unlock(&claim->guard_lock);
    free(lat);
    gctx_guard_advice out = {.size = sizeof out, .level = level, .sms = a.sms,
                             .max_outstanding = a.max_outstanding,
                             .duty_permille = a.duty_permille, .latency_tenants = nb_lat};
    snprintf(out.reason, sizeof out.reason, "%s", l.reason);
    if (rest)
        snprintf(out.request, sizeof out.request, "rest");
    else
        snprintf(out.request, sizeof out.request, "%u", a.sms);
    gctx__sized_out(advice, &out, sizeof out);
    return GCTX_SUCCESS;
}

gctx_status gctx_claim_report_held(gctx_claim *claim, double held_ms)
{
    GCTX_TRY(gctx__handle_resolve(&claim, GCTX__TYPE_CLAIM, "claim"));
    if (!isfinite(held_ms) || held_ms < 0)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "held_ms is %g: give how long the launches were held back, in "
                          "milliseconds (>= 0)",
                          held_ms);
    pthread_mutex_lock(&claim->guard_lock);
    claim->paced = 1;
    claim->held_ms += held_ms;
    pthread_mutex_unlock(&claim->guard_lock);
    return GCTX_SUCCESS;
}

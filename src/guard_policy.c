/* The guard's rule (guard_policy.h). The levels are data: what each step of the trade curve
 * measured on the H200 through claims (docs/tenants.md, "The guard") buys: a GEMM hog on
 * 64 / 48 / 32 of 116 SMs left its 16-SM GEMM victim's p99 at 1.08 - 1.18 / 1.00 - 1.14 /
 * 0.97 - 0.99x of alone; a copy hog on 24 - 32 SMs left a memory victim 1.0 - 1.14x. */
#include "guard_policy.h"

/* Per level: the share of its SMs a best-effort tenant keeps (per mille; 0: its floor) and
 * its launches in flight when it is paced instead (0: no cap). */
/* 560, 420 and 280 of the H200's 116 round down to whole granules of 16 at 64, 48 and 32: the
 * GEMM hog's static caps between which the victim's p99 crossed 1.10x (BENCHMARKS.md). */
static const unsigned keep_permille[GCTX__GUARD_LEVELS] = {1000, 750, 560, 420, 280, 0};
static const unsigned outstanding[GCTX__GUARD_LEVELS] = {0, 32, 8, 2, 2, 1};

const char *gctx__guard_reason_name(gctx__guard_reason reason)
{
    static const char *const names[] = {"none", "steps", "power", "hbm"};
    return reason <= GCTX__GUARD_REASON_HBM ? names[reason] : "?";
}

/* What the device says of interference: POWER, HBM or NONE. */
static gctx__guard_reason device_reason(const gctx__guard_config *c, const gctx__guard_device *d)
{
    if (d && (d->throttle & GCTX__GUARD_THROTTLE_POWER) && d->max_sm_clock_mhz &&
        d->sm_clock_mhz < c->clock_drop * d->max_sm_clock_mhz)
        return GCTX__GUARD_REASON_POWER;
    if (d && d->hbm_busy > c->hbm_high)
        return GCTX__GUARD_REASON_HBM;
    return GCTX__GUARD_REASON_NONE;
}

/* Every change starts the judging afresh: calm counts from the new level. */
static void change(gctx__guard_state *s, unsigned level, int lowered, long long now_ns)
{
    s->level = level;
    s->lowered = lowered;
    s->changed_ns = now_ns;
    s->calm_since_ns = 0;
}

void gctx__guard_decide(const gctx__guard_config *c, gctx__guard_state *s,
                        const gctx__guard_latency *latency, unsigned nb_latency,
                        const gctx__guard_device *device, long long now_ns)
{
    gctx__guard_reason dev = device_reason(c, device), why = GCTX__GUARD_REASON_NONE;
    int running = 0, calm = 1;
    for (unsigned i = 0; i < nb_latency; i++) {
        const gctx__guard_latency *l = &latency[i];
        /* Steps longer than idle_ns leave gaps as long: twice its step is not idle either. */
        long long twice = (long long)(2e6 * l->step_ms);
        long long idle = twice > c->idle_ns ? twice : c->idle_ns;
        if (!l->last_step_ns || now_ns - l->last_step_ns > idle)
            continue;
        running = 1;
        double target = l->target_ms > 0 ? l->target_ms : l->alone_ms * l->factor;
        if (l->step_ms > 0 && target > 0) {
            /* Steps taken before the last change say nothing of the level it set. */
            if (l->window_ns < s->changed_ns) {
                calm = 0;
                continue;
            }
            if (l->step_ms > target)
                why = dev != GCTX__GUARD_REASON_NONE ? dev : GCTX__GUARD_REASON_STEPS;
            if (l->step_ms > c->calm * target)
                calm = 0;
        } else if (dev != GCTX__GUARD_REASON_NONE) {
            /* No steps to go by (an unmodified program not sampled yet): the device's word. */
            why = dev;
            calm = 0;
        }
    }
    if (!running) {
        /* A burst's end or a latency tenant's death: everything back now, and the level
         * kept for the next burst, whose first steps would otherwise pay for the climb. */
        if (s->running) {
            s->burst_level = s->level;
            change(s, 0, 0, now_ns);
        }
        s->running = 0;
        return;
    }
    if (!s->running) {
        s->running = 1;
        change(s, s->burst_level, 0, now_ns);
        return;
    }
    if (now_ns - s->changed_ns < c->hold_ns)
        return;
    if (!calm)
        s->calm_since_ns = 0;
    else if (!s->calm_since_ns)
        s->calm_since_ns = now_ns;
    long long probe = s->probe_ns ? s->probe_ns : c->probe_ns;
    if (why != GCTX__GUARD_REASON_NONE && s->level + 1 < GCTX__GUARD_LEVELS) {
        /* Over target soon after a step down (the board's power takes a second to follow):
         * that level was too low a price for the latency tenant, tried again only after twice
         * the calm. */
        if (s->lowered && now_ns - s->changed_ns < 4 * probe)
            s->probe_ns = 2 * probe < c->probe_max_ns ? 2 * probe : c->probe_max_ns;
        s->reason = why;
        change(s, s->level + 1, 0, now_ns);
    } else if (why == GCTX__GUARD_REASON_NONE && s->level > 0 && s->calm_since_ns &&
               now_ns - s->calm_since_ns >= probe) {
        change(s, s->level - 1, 1, now_ns);
    }
}

gctx__guard_allowance gctx__guard_allow(const gctx__guard_state *s, unsigned sms,
                                        unsigned floor_sms)
{
    unsigned level = s->running && s->level < GCTX__GUARD_LEVELS ? s->level : 0;
    unsigned keep = (unsigned)((unsigned long long)sms * keep_permille[level] / 1000);
    gctx__guard_allowance a = {keep > floor_sms ? keep : floor_sms, outstanding[level], 1000};
    if (a.sms > sms)
        a.sms = sms; /* a tenant under its floor already keeps what it has */
    if (sms)
        a.duty_permille = (unsigned)((unsigned long long)a.sms * 1000 / sms);
    return a;
}

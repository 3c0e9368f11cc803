/* The guard's decisions: how much a best-effort tenant may use while a latency tenant's target
 * is at risk from interference disjoint SMs don't stop. Pure: every best-effort tenant runs the
 * same rule on the same inputs, so they agree without a daemon (docs/tenants.md). */
#ifndef GREENCTX_GUARD_POLICY_H
#define GREENCTX_GUARD_POLICY_H

/* gctx__guard_device.throttle: NVML's clocks-event reasons the guard acts on */
#define GCTX__GUARD_THROTTLE_POWER 0x1u   /* software power cap (nvmlClocksEventReasonSwPowerCap) */
#define GCTX__GUARD_THROTTLE_THERMAL 0x2u /* hardware or software thermal slowdown */

/* Why the level last rose: what ps shows. */
typedef enum gctx__guard_reason {
    GCTX__GUARD_REASON_NONE = 0,
    GCTX__GUARD_REASON_STEPS, /* a latency tenant's steps are over its target */
    GCTX__GUARD_REASON_POWER, /* the board is at its power cap and the SM clock dropped */
    GCTX__GUARD_REASON_HBM    /* memory throughput is near the device's peak */
} gctx__guard_reason;

/* A latency tenant as the registry shows it. */
typedef struct gctx__guard_latency {
    double target_ms;       /* its step target; 0: alone_ms * factor */
    double alone_ms;        /* its step alone (0: not known) */
    double factor;          /* "as alone within factor" (1.10) */
    double step_ms;         /* its recent step time (the window's p99); 0: none reported */
    long long last_step_ns; /* when it last reported a step (or was seen running) */
    long long window_ns;    /* when the window of step_ms began: a level is judged on its own */
} gctx__guard_latency;

/* The device as NVML reads it; zeros where NVML gives nothing (the guard then goes by steps). */
typedef struct gctx__guard_device {
    unsigned sm_clock_mhz, max_sm_clock_mhz;
    unsigned throttle; /* GCTX__GUARD_THROTTLE_* */
    double hbm_busy;   /* memory throughput over its peak, 0 .. 1 */
} gctx__guard_device;

typedef struct gctx__guard_config {
    long long hold_ns; /* between two changes of level: the last one's effect is seen first */
    long long idle_ns; /* a latency tenant with no step this long (or twice its step, when
                          longer) is not running: all back */
    double calm;       /* steps under calm x target lower the level, after probe_ns of them */
    long long probe_ns, probe_max_ns; /* calm needed to step down: doubled, up to the max, each
                                         time a step down put steps over target again */
    double clock_drop; /* a power-capped clock under clock_drop x its max is interference */
    double hbm_high;   /* hbm_busy above this is interference */
} gctx__guard_config;
/* hold 20 ms: longer than a resize (docs/elastic.md); idle 25 ms: with a look (every 10 ms
 * paced, 15 ms in the bench's cooperative hog) and a resize, SMs are back within 50 ms of a
 * burst's end. A p99 target is missed by 1 % of the steps: a step down that fails
 * costs a window over target, so they are tried rarely (docs/tenants.md, "The guard"). */
#define GCTX__GUARD_CONFIG_INIT                                                                    \
    {                                                                                              \
        20000000ll, 25000000ll, 0.95, 250000000ll, 4000000000ll, 0.95, 0.90                        \
    }

typedef struct gctx__guard_state {
    unsigned level; /* 0: no guard; GCTX__GUARD_LEVELS - 1: every best-effort tenant at its floor */
    unsigned burst_level; /* the level the last burst ended at: where the next one starts */
    gctx__guard_reason reason;
    int running; /* a latency tenant was running at the last decision */
    int lowered; /* the last change was a step down */
    long long changed_ns;
    long long calm_since_ns; /* 0: the steps since the last change were not all calm */
    long long probe_ns;      /* calm needed for the next step down; 0: the config's */
} gctx__guard_state;
#define GCTX__GUARD_STATE_INIT                                                                     \
    {                                                                                              \
        0, 0, GCTX__GUARD_REASON_NONE, 0, 0, 0, 0, 0                                               \
    }
#define GCTX__GUARD_LEVELS 6

/* What a best-effort tenant may use: SMs, or, paced under greenctx run, outstanding launches
 * (0: no cap) and the same share of time (per mille). */
typedef struct gctx__guard_allowance {
    unsigned sms;
    unsigned max_outstanding;
    unsigned duty_permille;
} gctx__guard_allowance;

/* At most one level per hold_ns: up while a latency tenant is over its target (or power or HBM
 * say so), down once all were calm for the probe time, to 0 when none is running. */
void gctx__guard_decide(const gctx__guard_config *config, gctx__guard_state *state,
                        const gctx__guard_latency *latency, unsigned nb_latency,
                        const gctx__guard_device *device, long long now_ns);
/* What a best-effort tenant holding sms (its floor floor_sms) may use at state's level. */
gctx__guard_allowance gctx__guard_allow(const gctx__guard_state *state, unsigned sms,
                                        unsigned floor_sms);
const char *gctx__guard_reason_name(gctx__guard_reason reason);

#endif

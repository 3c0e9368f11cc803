/* The guard's rule (src/guard_policy.c) on synthetic inputs: a latency tenant's steps, the
 * power cap's clock and throttle flag, HBM throughput, bursts, deaths, and the floors that
 * keep best-effort tenants running. Pure: no driver, no clock but the one given. */
#include "guard_policy.h"
#include "harness.h"

#define MS 1000000ll

static const gctx__guard_config config = GCTX__GUARD_CONFIG_INIT;

/* A GEMM victim of 1.40 ms alone, held to 1.10x, its window of steps just closed. */
static gctx__guard_latency victim(double step_ms, long long last_ns)
{
    gctx__guard_latency l = {0, 1.40, 1.10, step_ms, last_ns, last_ns};
    return l;
}

/* Runs decisions every 5 ms from t over dur with a victim stepping step_ms. */
static long long run(gctx__guard_state *s, long long t, long long dur, double step_ms,
                     const gctx__guard_device *d)
{
    for (long long end = t + dur; t <= end; t += 5 * MS) {
        gctx__guard_latency l = victim(step_ms, t);
        gctx__guard_decide(&config, s, &l, 1, d, t);
    }
    return t;
}

GT_TEST(nothing_to_guard_leaves_everything)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    gctx__guard_device hot = {1450, 1980, GCTX__GUARD_THROTTLE_POWER, 0.99};
    gctx__guard_decide(&config, &s, NULL, 0, &hot, 1000 * MS);
    gctx__guard_allowance a = gctx__guard_allow(&s, 116, 8);
    GT_ASSERT_EQ_INT(s.level, 0);
    GT_ASSERT_EQ_INT(a.sms, 116);
    GT_ASSERT_EQ_INT(a.max_outstanding, 0);
}

GT_TEST(steps_over_target_climb_one_level_per_hold)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    gctx__guard_device none = {0, 0, 0, 0};
    long long t = run(&s, 1000 * MS, 0, 1.94, &none); /* starts running */
    GT_ASSERT_EQ_INT(s.level, 0);
    t = run(&s, t, config.hold_ns, 1.94, &none);
    GT_ASSERT_EQ_INT(s.level, 1);
    GT_ASSERT_EQ_INT(s.reason, GCTX__GUARD_REASON_STEPS);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).sms, 87);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).max_outstanding, 32);
    /* Every level on the way, each the H200's static cap it is made of (a 116-SM hog on 64,
     * 48, then 32 SMs), the floor last. */
    unsigned sms[GCTX__GUARD_LEVELS] = {0};
    for (; s.level < GCTX__GUARD_LEVELS - 1; t += 5 * MS) {
        gctx__guard_latency l = victim(1.94, t);
        gctx__guard_decide(&config, &s, &l, 1, &none, t);
        sms[s.level] = gctx__guard_allow(&s, 116, 16).sms;
    }
    static const unsigned caps[GCTX__GUARD_LEVELS] = {0, 87, 64, 48, 32, 16};
    for (unsigned i = 1; i < GCTX__GUARD_LEVELS; i++)
        GT_ASSERT_EQ_INT(sms[i], caps[i]);
    t = run(&s, t, 10 * config.hold_ns, 1.94, &none);
    GT_ASSERT_EQ_INT(s.level, GCTX__GUARD_LEVELS - 1);
    /* Never starved: the floor and one launch in flight. */
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).sms, 8);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).max_outstanding, 1);
    /* A tenant already under its floor keeps what it has. */
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 4, 8).sms, 4);
}

GT_TEST(steps_between_calm_and_target_hold_the_level)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = run(&s, 1000 * MS, 3 * config.hold_ns, 1.94, NULL);
    unsigned level = s.level;
    GT_ASSERT_GT_INT(level, 0);
    t = run(&s, t, 100 * config.hold_ns, 1.40 * 1.08, NULL); /* over calm (0.95 x 1.54), under */
    GT_ASSERT_EQ_INT(s.level, level);
    /* Calm: a level down once the steps have been calm for the probe's time, not before. */
    t = run(&s, t, config.probe_ns - 10 * MS, 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, level);
    t = run(&s, t, 10 * MS, 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, level - 1);
    run(&s, t, GCTX__GUARD_LEVELS * (config.hold_ns + config.probe_ns), 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, 0);
}

GT_TEST(steps_from_before_a_change_do_not_move_the_level)
{
    /* One long window over target, published again and again: one level for it, not five. */
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = run(&s, 1000 * MS, 0, 1.94, NULL), began = t + MS;
    for (long long end = t + 20 * config.hold_ns; t <= end; t += 5 * MS) {
        gctx__guard_latency l = {0, 1.40, 1.10, 1.94, t, began};
        gctx__guard_decide(&config, &s, &l, 1, NULL, t);
    }
    GT_ASSERT_EQ_INT(s.level, 1);
    /* The next window, begun after that change, moves it again. */
    run(&s, t, 0, 1.94, NULL);
    GT_ASSERT_EQ_INT(s.level, 2);
}

GT_TEST(a_step_down_that_fails_is_tried_again_after_twice_the_calm)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = run(&s, 1000 * MS, 2 * config.hold_ns, 1.94, NULL);
    GT_ASSERT_EQ_INT(s.level, 2);
    /* Calm at level 2 steps down to 1, where the steps are over target again. */
    t = run(&s, t, config.hold_ns + config.probe_ns, 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, 1);
    t = run(&s, t, config.hold_ns, 1.94, NULL);
    GT_ASSERT_EQ_INT(s.level, 2);
    GT_ASSERT(s.probe_ns == 2 * config.probe_ns);
    /* Calm again: the probe's time no longer does, twice it does. */
    t = run(&s, t, config.hold_ns + config.probe_ns, 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, 2);
    run(&s, t, config.probe_ns, 1.20, NULL);
    GT_ASSERT_EQ_INT(s.level, 1);
    /* Never past the most. */
    for (int i = 0; i < 20; i++) {
        gctx__guard_state f = s;
        f.lowered = 1;
        f.probe_ns = s.probe_ns;
        long long at = f.changed_ns + config.hold_ns;
        gctx__guard_latency l = victim(1.94, at);
        gctx__guard_decide(&config, &f, &l, 1, NULL, at);
        s.probe_ns = f.probe_ns;
    }
    GT_ASSERT(s.probe_ns == config.probe_max_ns);
}

GT_TEST(power_cap_names_the_reason_and_acts_without_steps)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    gctx__guard_device capped = {1450, 1980, GCTX__GUARD_THROTTLE_POWER, 0.3};
    run(&s, 1000 * MS, 2 * config.hold_ns, 1.94, &capped);
    GT_ASSERT_GT_INT(s.level, 0);
    GT_ASSERT_EQ_INT(s.reason, GCTX__GUARD_REASON_POWER);
    GT_ASSERT_STR_EQ(gctx__guard_reason_name(s.reason), "power");
    /* An unmodified latency program seen running with no step sampled yet: the clock acts. */
    gctx__guard_state u = GCTX__GUARD_STATE_INIT;
    for (long long t = 1000 * MS; t < 1000 * MS + 3 * config.hold_ns; t += 5 * MS) {
        gctx__guard_latency l = victim(0, t);
        gctx__guard_decide(&config, &u, &l, 1, &capped, t);
    }
    GT_ASSERT_GT_INT(u.level, 0);
    /* The same clock without the power-cap flag (a boost that ended) is no reason. */
    gctx__guard_state v = GCTX__GUARD_STATE_INIT;
    gctx__guard_device slow = {1450, 1980, 0, 0.3};
    for (long long t = 1000 * MS; t < 1000 * MS + 3 * config.hold_ns; t += 5 * MS) {
        gctx__guard_latency l = victim(0, t);
        gctx__guard_decide(&config, &v, &l, 1, &slow, t);
    }
    GT_ASSERT_EQ_INT(v.level, 0);
}

GT_TEST(hbm_names_the_reason_and_acts_without_steps)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    gctx__guard_device busy = {1980, 1980, 0, 0.97};
    run(&s, 1000 * MS, 2 * config.hold_ns, 4.2, &busy);
    GT_ASSERT_GT_INT(s.level, 0);
    GT_ASSERT_EQ_INT(s.reason, GCTX__GUARD_REASON_HBM);
    /* No steps: the device's word both ways, up while HBM is busy, down once it is quiet. */
    gctx__guard_state u = GCTX__GUARD_STATE_INIT;
    gctx__guard_device quiet = {1980, 1980, 0, 0.5};
    long long t = 1000 * MS;
    for (; t < 1000 * MS + 3 * config.hold_ns; t += 5 * MS) {
        gctx__guard_latency l = victim(0, t);
        gctx__guard_decide(&config, &u, &l, 1, &busy, t);
    }
    GT_ASSERT_GT_INT(u.level, 0);
    for (long long end = t + GCTX__GUARD_LEVELS * (config.hold_ns + config.probe_ns); t < end;
         t += 5 * MS) {
        gctx__guard_latency l = victim(0, t);
        gctx__guard_decide(&config, &u, &l, 1, &quiet, t);
    }
    GT_ASSERT_EQ_INT(u.level, 0);
}

GT_TEST(burst_end_gives_everything_back_within_idle_and_the_next_starts_guarded)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = run(&s, 1000 * MS, 2 * GCTX__GUARD_LEVELS * config.hold_ns, 1.94, NULL);
    unsigned level = s.level;
    GT_ASSERT_EQ_INT(level, GCTX__GUARD_LEVELS - 1);
    long long last = t - 5 * MS; /* the burst's last step */
    gctx__guard_latency l = victim(1.94, last);
    gctx__guard_decide(&config, &s, &l, 1, NULL, last + config.idle_ns);
    GT_ASSERT_EQ_INT(s.level, level); /* still within idle */
    gctx__guard_decide(&config, &s, &l, 1, NULL, last + config.idle_ns + 1);
    GT_ASSERT_EQ_INT(s.level, 0);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).sms, 116);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).max_outstanding, 0);
    /* Four seconds later the next burst's first step finds the hog held where it was. */
    long long next = last + 4000 * MS;
    l = victim(1.94, next);
    gctx__guard_decide(&config, &s, &l, 1, NULL, next);
    GT_ASSERT_EQ_INT(s.level, level);
}

GT_TEST(dead_latency_tenant_releases_at_once)
{
    /* Its record is gone from the registry: the next decision has no latency tenant. */
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = run(&s, 1000 * MS, 4 * config.hold_ns, 1.94, NULL);
    GT_ASSERT_GT_INT(s.level, 0);
    gctx__guard_decide(&config, &s, NULL, 0, NULL, t);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).sms, 116);
    GT_ASSERT_EQ_INT(gctx__guard_allow(&s, 116, 8).max_outstanding, 0);
}

GT_TEST(step_target_in_ms_and_several_latency_tenants)
{
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    for (long long t = 1000 * MS; t < 1000 * MS + 3 * config.hold_ns; t += 5 * MS) {
        gctx__guard_latency l[2] = {{2.0, 0, 0, 1.9, t, t}, {5.0, 0, 0, 5.5, t, t}}; /* the second over */
        gctx__guard_decide(&config, &s, l, 2, NULL, t);
    }
    GT_ASSERT_GT_INT(s.level, 0);
    /* Same inputs, same decisions: two best-effort tenants agree without talking. */
    gctx__guard_state a = GCTX__GUARD_STATE_INIT, b = GCTX__GUARD_STATE_INIT;
    run(&a, 1000 * MS, 7 * config.hold_ns, 1.94, NULL);
    run(&b, 1000 * MS, 7 * config.hold_ns, 1.94, NULL);
    GT_ASSERT_EQ_INT(a.level, b.level);
    GT_ASSERT_EQ_INT(a.changed_ns, b.changed_ns);
}

GT_TEST(steps_longer_than_idle_are_not_a_burst_end)
{
    /* A 120 ms step: its gaps are longer than idle_ns but it is running all along. */
    gctx__guard_state s = GCTX__GUARD_STATE_INIT;
    long long t = 1000 * MS;
    for (int i = 0; i < 6; i++, t += 120 * MS) {
        gctx__guard_latency l = {100.0, 0, 0, 120.0, t, t};
        gctx__guard_decide(&config, &s, &l, 1, NULL, t);
        gctx__guard_decide(&config, &s, &l, 1, NULL, t + 119 * MS);
    }
    GT_ASSERT_GT_INT(s.level, 2);
    GT_ASSERT_EQ_INT(s.running, 1);
}

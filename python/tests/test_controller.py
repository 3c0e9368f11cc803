"""greenctx.Controller: the C controller from Python (no driver needed)."""
import pytest

import greenctx
from greenctx import Controller, Workload

DECODE = {16: 0.0557, 32: 0.0279, 64: 0.0144, 96: 0.0116, 132: 0.00976}
PREFILL = {36: 2048 / 38604, 68: 2048 / 72776, 116: 2048 / 111919, 132: 2048 / 162391}
SPLITS = [(16, 116), (64, 68)]


def make(target_s=0.020):
    return Controller([Workload.latency(target_s, DECODE, demand_weight=0.8),
                       Workload.throughput(PREFILL)], SPLITS, device_sms=132)


def test_a_burst_moves_at_once_and_the_quiet_phase_after_the_dwell():
    ctl = make()
    assert ctl.nb_candidates == 3  # the two splits and "no split"
    d = ctl.decide()
    assert (d.candidate, d.sm_counts, d.unmet) == (1, (64, 68), ())
    ctl.set_demand(0, 0.1)
    moves = [ctl.decide().candidate for _ in range(3)]
    assert moves == [1, 1, 0]  # 16 | 116 once it has won three decisions in a row
    ctl.set_demand(0, 1.0)
    d = ctl.decide()
    assert d.candidate == 1 and d.changed and "meets the targets" in d.reason


def test_observed_steps_correct_the_prior():
    ctl = make()
    d = ctl.decide()
    before = ctl.predict(d.candidate, 0)
    ctl.observe(0, before * 1.5)
    assert ctl.predict(d.candidate, 0) == pytest.approx(before * 1.5)


def test_an_impossible_target_is_named():
    d = make(target_s=0.005).decide()
    assert d.unmet == (0,) and "misses its target" in d.reason


def test_bad_arguments_carry_the_library_message():
    with pytest.raises(greenctx.InvalidArgumentError, match="target_s > 0"):
        make(target_s=0.0)
    ctl = make()
    with pytest.raises(greenctx.InvalidArgumentError, match="before the first"):
        ctl.observe(0, 0.01)
    with pytest.raises(greenctx.InvalidArgumentError, match="the controller has 2"):
        ctl.set_demand(5, 1.0)
    with pytest.raises(ValueError, match="one SM count per workload"):
        Controller([Workload.throughput(PREFILL)], [(16, 116)])
    ctl.close()
    with pytest.raises(RuntimeError, match="destroyed"):
        ctl.decide()


def test_disjoint_workloads_keep_to_their_rows():
    ctl = Controller([Workload.latency(0.020, DECODE, demand_weight=0.8),
                      Workload.throughput(PREFILL)], SPLITS, device_sms=132, disjoint=True)
    assert ctl.nb_candidates == 2  # no "no split": claims never overlap
    ctl.set_demand(1, 0.0)
    d = ctl.decide()
    assert not d.no_split and sum(d.sm_counts) == 132
    with pytest.raises(greenctx.InvalidArgumentError, match="all zeros"):
        Controller([Workload.latency(0.020, DECODE), Workload.throughput(PREFILL)],
                   [(0, 0), (64, 68)], device_sms=132, disjoint=True)


def test_an_absurd_observation_is_refused_and_the_target_still_met():
    """issue 28 m5: observe(0, 1e307) with learning_rate=1 made the latency prediction NaN,
    and the workload was then judged idle and moved to 16 SMs."""
    ctl = Controller([Workload.latency(0.020, {16: 0.060, 64: 0.015, 132: 0.010}),
                      Workload.throughput({16: 0.1, 132: 0.0125})],
                     [(16, 116), (64, 68)], device_sms=132, learning_rate=1.0, disjoint=True)
    assert ctl.decide().sm_counts == (64, 68)
    with pytest.raises(greenctx.InvalidArgumentError, match="more than 1000 times"):
        ctl.observe(0, 1e307)
    ctl.observe(0, 0.015)
    for _ in range(4):
        d = ctl.decide()
    assert d.sm_counts == (64, 68) and d.unmet == ()
    assert 0 < d.predicted_step_s[0] < 1


def test_numbers_are_numbers():
    ctl = make()
    ctl.decide()
    with pytest.raises(TypeError, match="demand must be a real number, got str '1'"):
        ctl.set_demand(0, "1")
    with pytest.raises(TypeError, match="step_s must be a real number, got str"):
        ctl.observe(0, "0.01")
    with pytest.raises(TypeError, match="prior step times must be a real number, got str"):
        Controller([Workload.latency(0.02, {16: "x"})], [(16,)])
    with pytest.raises(TypeError, match="hysteresis must be a real number, got bool"):
        Controller([Workload.latency(0.02, {16: 0.05})], [(16,)], hysteresis=True)

"""GreenContext on the simulated H200: every constructor form and its errors, create, split,
the properties, workqueues by driver version, relations, the deprecated context stack."""
import warnings

import pytest

import greenctx
from greenctx import GreenContext, Relation, SMPartition
from greenctx import _driver
import pytorch_examples
from conftest import DRIVER, SIM, before_driver, needs_driver

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


def test_num_sms(sim):
    ctx = GreenContext(num_sms=16, device_id=0)
    assert (ctx.sm_count, ctx.device_id, ctx.adopted) == (16, 0, False)
    assert len(sim.context_sms(ctx)) == 16
    assert (ctx.id is None) == (DRIVER < 12090) and "16 SMs" in repr(ctx)
    assert ctx.green_handle and ctx.cu_context


def test_create_is_the_constructor():
    ctx = GreenContext.create(num_sms=24)
    assert isinstance(ctx, GreenContext) and ctx.sm_count == 24


def test_sm_partition(sim):
    (a, b), _ = SMPartition.from_device(0).split(num_sms=[16, 32])
    ca, cb = GreenContext(sm_partition=a), GreenContext(sm_partition=b, device_id=0)
    assert (ca.sm_count, cb.sm_count) == (16, 32)
    assert not sim.context_sms(ca) & sim.context_sms(cb)
    assert ca.relation(cb) == Relation.DISJOINT
    # Two contexts on one partition share its SMs.
    again = GreenContext(sm_partition=a)
    assert sim.context_sms(again) == sim.context_sms(ca)
    assert again.relation(ca) == Relation.OVERLAP


def test_separate_contexts_may_overlap():
    assert GreenContext(num_sms=16).relation(GreenContext(num_sms=16)) == Relation.MAY_OVERLAP
    with pytest.raises(TypeError):
        GreenContext(num_sms=16).relation(None)


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, RuntimeError, "^At least one of num_sms, workqueue_scope, or sm_partition must be "
                       "specified$"),
    ({"num_sms": 16, "sm_partition": "x"}, TypeError, "sm_partition must be an SMPartition"),
    ({"workqueue_scope": "nearby"}, ValueError, "workqueue_scope must be 'device_ctx' or"),
    ({"num_sms": 16, "workqueue_concurrency_limit": 4}, RuntimeError,
     "workqueue_concurrency_limit requires workqueue_scope"),
    # PyTorch's range check, its type and its words...
    ({"num_sms": -16}, RuntimeError,
     "^Invalid number of SMs requested for green context: -16 \\(device has 132 SMs\\)$"),
    ({"num_sms": 0}, RuntimeError, "^Invalid number of SMs requested for green context: 0 "),
    ({"num_sms": 133}, RuntimeError, "requested for green context: 133 \\(device has 132"),
    ({"num_sms": "16"}, TypeError, "^num_sms must be an int, got '16'$"),
    ({"num_sms": True}, TypeError, "^num_sms must be an int, got True$"),
    # ...and greenctx's strictness when asked for, naming no group (there is one context).
    ({"num_sms": 12, "rounding": "strict"}, greenctx.InvalidArgumentError,
     "^12 SMs: on this device groups are multiples of 8 \\(min 8\\); nearest: 8 or 16$"),
    ({"num_sms": 0, "rounding": "strict"}, ValueError, "num_sms is 0"),
    ({"num_sms": 500, "rounding": "strict"}, ValueError, "asks for 500 SMs; this device has 132"),
    ({"num_sms": -1, "rounding": "strict"}, ValueError,
     "^num_sms must be a nonnegative integer, got -1$"),
    ({"num_sms": 12, "rounding": "sideways"}, ValueError, "rounding must be one of"),
    ({"sm_partition": None, "workqueue_scope": "balanced", "rounding": "up"}, ValueError,
     "rounding applies to num_sms only"),
    ({"num_sms": 16, "device_id": 7}, greenctx.NoDeviceError, "device 7 does not exist"),
])
def test_constructor_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        GreenContext(**kwargs)


@pytest.mark.parametrize("num_sms, rounding, sm_count", [
    (1, None, 8), (4, None, 8), (20, None, 24), (128, None, 128), (129, None, 132),
    (132, None, 132),  # PyTorch's: the driver's rounding up, the whole device past 128
    (12, "down", 8), (12, "nearest", 16), (12, "up", 16), (16, "strict", 16),
])
def test_num_sms_rounding(sim, num_sms, rounding, sm_count):
    with GreenContext(num_sms=num_sms, rounding=rounding) as ctx:
        assert ctx.sm_count == sm_count == len(sim.context_sms(ctx))


def test_rounding_messages_name_no_group(sim):
    with pytest.raises(greenctx.InvalidArgumentError,
                       match="^the context asks for 1000 SMs; this device has 132"):
        GreenContext(num_sms=1000, rounding="up")


def test_num_sms_and_partition_are_exclusive():
    with SMPartition.from_device(0) as whole:
        with pytest.raises(RuntimeError,
                           match="^num_sms and sm_partition cannot be specified together$"):
            GreenContext(num_sms=16, sm_partition=whole)
        with pytest.raises(ValueError, match="device_id must match"):
            GreenContext(sm_partition=whole, device_id=1)


def test_constructor_is_keyword_only():
    with pytest.raises(TypeError):
        GreenContext(16)


def test_split_gives_disjoint_contexts(sim):
    a, b = GreenContext.split(num_sms=(24, 40), coscheduled_sm_count=8, device_id=0)
    assert (a.sm_count, b.sm_count) == (24, 40)
    assert not sim.context_sms(a) & sim.context_sms(b)
    assert a.relation(b) == Relation.DISJOINT
    (c,) = GreenContext.split(num_sms=12, rounding="up")
    assert c.sm_count == 16


def test_split_failure_leaves_nothing(sim):
    before = sim.settled()
    sim.fail_after("cuGreenCtxCreate", 2)  # the second context fails
    with pytest.raises(greenctx.DriverError, match="cuGreenCtxCreate") as e:
        GreenContext.split(num_sms=(16, 16, 16))
    assert e.value.cuda_result == 2
    del e  # its traceback holds the frames' objects
    assert sim.settled() == before


def test_sm_partition_keeps_its_context_alive(sim):
    ctx = GreenContext(num_sms=32)
    part = ctx.sm_partition
    assert (part.kind, part.sm_count, part.device_id) == ("context", 32, 0)
    assert part.relation(ctx.sm_partition) == Relation.OVERLAP
    ctx.close()
    assert sim.live("green_ctx") == 1  # held by the partition
    (half,), rest = part.split(num_sms=16)
    assert half.sm_count == 16
    del part, half, rest
    assert sim.settled()["green_ctx"] == 0


def test_pytorch_docs_first_example(sim):
    if DRIVER < 12050:
        pytest.skip("2-SM co-scheduled units need driver 12.5")
    first, second = pytorch_examples.split_a_remainder_through_a_context()
    assert (first.sm_count, second.sm_count) == (4, 4)
    c1, c2 = GreenContext(sm_partition=first), GreenContext(sm_partition=second)
    assert not sim.context_sms(c1) & sim.context_sms(c2)
    assert first.relation(second) == Relation.DISJOINT


def test_pytorch_docs_second_example(sim):
    a, b = pytorch_examples.split_contexts()
    assert (a.sm_count, b.sm_count) == (24, 40)
    assert not sim.context_sms(a) & sim.context_sms(b)


def test_locality_domain_is_none_on_the_h200():
    assert GreenContext(num_sms=16).locality_domain_id is None


@needs_driver(13010)
def test_workqueues(sim):
    assert GreenContext.max_workqueue_concurrency() == 32
    assert GreenContext.max_workqueue_concurrency(device_id=0) == 32
    ctx = GreenContext(workqueue_scope="balanced", workqueue_concurrency_limit=4)
    assert (ctx.sm_count, ctx.workqueue_scope, ctx.workqueue_concurrency_limit) == (
        132, "balanced", 4)
    ctx = GreenContext(num_sms=16, workqueue_scope="device_ctx")
    assert ctx.workqueue_scope == "device_ctx"
    a, b = GreenContext.split(num_sms=(16, 16), workqueue_scope="balanced")
    assert a.workqueue_scope == b.workqueue_scope == "balanced"


def test_no_workqueue_options_by_default():
    # What the library reports: the driver's default scope on 13.1+, nothing before.
    ctx = GreenContext(num_sms=16)
    assert ctx.workqueue_scope == ("device_ctx" if DRIVER >= 13010 else None)


@before_driver(13010)
def test_workqueues_need_13_1():
    with pytest.raises(greenctx.UnsupportedError, match="need driver 13.1") as e:
        GreenContext(num_sms=16, workqueue_scope="balanced")
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(RuntimeError, match="needs driver 13.1"):
        GreenContext.max_workqueue_concurrency()


def test_set_and_pop_context_are_deprecated_and_restore_the_stack(no_torch):
    ctx = GreenContext(num_sms=16)
    before = _driver.current_context()
    with pytest.warns(FutureWarning, match="deprecated"):
        ctx.set_context()
    assert _driver.current_context() == ctx.cu_context
    with pytest.raises(RuntimeError, match="twice"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx.set_context()
    with pytest.warns(FutureWarning):
        ctx.pop_context()
    assert _driver.current_context() == before
    with pytest.raises(RuntimeError, match="without matching set_context"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx.pop_context()


def test_adopt_does_not_take_ownership(sim):
    ctx = GreenContext(num_sms=16)
    adopted = GreenContext.adopt(ctx.green_handle)
    assert adopted.adopted and adopted.sm_count == 16
    adopted.close()
    assert sim.live("green_ctx") >= 1 and ctx.sm_count == 16


def test_destroyed_context_says_so():
    ctx = GreenContext(num_sms=16)
    ctx.close()
    with pytest.raises(RuntimeError, match="GreenContext has been destroyed"):
        ctx.Stream()
    assert "destroyed" in repr(ctx)


def test_current_sm_count_follows_the_current_context(no_torch):
    ctx = GreenContext(num_sms=16)
    before = _driver.current_context()
    _driver.push_context(ctx.cu_context)
    try:
        assert greenctx.current_sm_count() == 16
    finally:
        _driver.pop_context()
    assert _driver.current_context() == before
    if before is None:
        with pytest.raises(greenctx.DriverError, match="no context is current"):
            greenctx.current_sm_count()
    else:
        assert greenctx.current_sm_count() == greenctx.device_info(0).sm_count

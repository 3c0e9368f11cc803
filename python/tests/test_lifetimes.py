"""What keeps what alive, releasing in any order, and failures that leave nothing behind
(the simulated driver's fault injection and live-object counters)."""
import gc
import itertools

import pytest

import greenctx
from greenctx import GreenContext, SMPartition
from conftest import NONE_LIVE, SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


def make_chain():
    """A device partition, a group of it, a context on the group, a stream, an event, and
    the context's own partition."""
    whole = SMPartition.from_device(0)
    (group,), rest = whole.split(num_sms=16)
    ctx = GreenContext(sm_partition=group)
    stream = ctx.stream()
    event = ctx.Event()
    return [whole, group, rest, ctx, stream, event, ctx.sm_partition]


@pytest.mark.parametrize("order", list(itertools.permutations(range(7)))[::97])
def test_release_in_any_order(sim, order):
    objects = make_chain()
    for i in order:
        objects[i].close()
        # Everything not yet released still works.
        for j, o in enumerate(objects):
            if o._h is not None and isinstance(o, (SMPartition, GreenContext)):
                assert o.sm_count in (16, 116, 132)
    assert sim.settled() == NONE_LIVE


def test_garbage_collection_releases(sim):
    objects = make_chain()
    assert sim.live("green_ctx") == 1 and sim.live("stream") == 1 and sim.live("event") == 1
    del objects
    assert sim.settled() == NONE_LIVE


def test_a_stream_keeps_its_context_and_partition_alive(sim, no_torch):
    (group,), rest = SMPartition.from_device(0).split(num_sms=24)
    ctx = GreenContext(sm_partition=group)
    stream = ctx.Stream()
    del group, rest, ctx
    gc.collect()
    assert sim.live("green_ctx") == 1
    with stream.context as c:
        assert c.sm_count == 24
    stream.synchronize()
    del stream
    assert sim.settled() == NONE_LIVE


def _group():
    (a, b), _ = SMPartition.from_device(0).split(num_sms=[16, 16])
    return b


# (entry point to fail, which call of it from now on, what to make, the call that fails)
FAULTS = [
    ("cuGreenCtxCreate", 1, lambda: 0, lambda _: GreenContext(num_sms=16)),
    ("cuDevResourceGenerateDesc", 1, lambda: 0, lambda _: GreenContext(num_sms=16)),
    ("cuGreenCtxCreate", 1, lambda: SMPartition.from_device(0), lambda p: GreenContext.split(
        num_sms=(16, 16))),
    ("cuGreenCtxCreate", 1, _group, lambda group: group.split(num_sms=8)),  # nested split
    ("cuGreenCtxStreamCreate", 1, lambda: GreenContext(num_sms=16), lambda c: c.stream()),
    ("cuEventCreate", 1, lambda: GreenContext(num_sms=16), lambda c: c.Event()),
    ("split", 1, lambda: SMPartition.from_device(0), lambda p: p.split(num_sms=[16, 8])),
]


@pytest.mark.parametrize("symbol, n, prepare, call", FAULTS)
def test_driver_failures_raise_and_leave_nothing(sim, symbol, n, prepare, call):
    driver = greenctx.driver_version()
    if symbol == "cuGreenCtxStreamCreate" and driver < 12050:
        symbol = "cuStreamCreateWithPriority"  # before 12.5 streams are made in the context
    if symbol == "split":  # the driver's split of this driver version
        symbol = "cuDevSmResourceSplit" if driver >= 13010 else "cuDevSmResourceSplitByCount"
    made = prepare()
    live = sim.settled()
    sim.fail_after(symbol, n)
    with pytest.raises(greenctx.DriverError) as e:
        call(made)
    assert e.value.cuda_result == 2 and e.value.status == "GCTX_ERROR_DRIVER"
    assert symbol in str(e.value) and "CUDA_ERROR_OUT_OF_MEMORY (2)" in str(e.value)
    del e  # its traceback holds the frames' objects
    assert sim.settled() == live
    del made
    assert sim.settled() == NONE_LIVE


def test_exceptions_are_both_greenctx_and_builtin_kinds():
    assert issubclass(greenctx.InvalidArgumentError, ValueError)
    assert issubclass(greenctx.InsufficientSMsError, ValueError)
    assert issubclass(greenctx.OutOfMemoryError, MemoryError)
    for cls in (greenctx.InvalidArgumentError, greenctx.UnsupportedError,
                greenctx.DriverError, greenctx.NoDeviceError, greenctx.NoDriverError,
                greenctx.InvalidHandleError):
        assert issubclass(cls, greenctx.Error) and issubclass(cls, RuntimeError)


def test_failed_destroys_are_counted_and_retried(sim):
    before = greenctx.release_failures()
    ctx = GreenContext(num_sms=16)
    event = ctx.Event()
    sim.fail_after("cuEventDestroy", 1)
    event.close()  # a release never raises: the failure is counted, the event kept
    failures = greenctx.release_failures()
    assert failures.events == before.events + 1 and failures.pending >= 1
    assert "cuEventDestroy" in failures.last_message and failures.last_cuda_result == 2
    greenctx.retry_release_failures()
    assert greenctx.release_failures().pending == 0
    ctx.close()
    assert sim.settled() == NONE_LIVE


def test_threads_split_make_and_release_at_once(sim):
    """ctypes drops the GIL around each C call: eight threads really call the library at
    once, on one shared partition."""
    import threading
    whole = SMPartition.from_device(0)
    errors = []

    def work():
        try:
            for _ in range(20):
                (a, b), rest = whole.split(num_sms=[16, 8])
                with GreenContext(sm_partition=a) as ctx, ctx.stream() as s:
                    s.synchronize()
                    assert a.relation(b) == "disjoint" and ctx.sm_count == 16
                for p in (a, b, rest):
                    p.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    whole.close()
    assert errors == []
    assert sim.settled() == NONE_LIVE

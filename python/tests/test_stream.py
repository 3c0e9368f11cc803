"""Streams and events on the simulated H200: Stream() with and without PyTorch, the
__cuda_stream__ protocol, lifetimes, events ordering work across partitions."""
import pytest

import greenctx
from greenctx import GreenContext, SMPartition
from conftest import SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


@pytest.fixture
def two(sim):
    (a, b), _ = SMPartition.from_device(0).split(num_sms=[16, 32])
    contexts = GreenContext(sm_partition=a), GreenContext(sm_partition=b)
    yield contexts
    for c in contexts:
        c.close()


def test_stream_without_torch_is_a_greenctx_stream(sim, no_torch, two):
    ctx = two[0]
    s = ctx.Stream()
    assert isinstance(s, greenctx.Stream)
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.handle == s.cuda_stream != 0
    assert sim.stream_sms(handle) == sim.context_sms(ctx)
    assert s.device_id == 0 and s.priority == 0
    with s.context as c:
        assert c.sm_count == 16


def test_stream_with_torch_is_an_external_stream_holding_the_green_stream(sim, fake_torch, two):
    ctx = two[1]
    s = ctx.Stream()
    assert isinstance(s, fake_torch.cuda.ExternalStream)
    assert isinstance(s.greenctx_stream, greenctx.Stream)
    assert s.device == 0 and s.cuda_stream == s.greenctx_stream.handle
    assert s.__cuda_stream__() == (0, s.cuda_stream)
    assert sim.stream_sms(s.cuda_stream) == sim.context_sms(ctx)
    # The torch object keeps the green stream (and so the context) alive...
    streams = sim.live("stream")
    ctx.close()
    assert sim.stream_sms(s.cuda_stream)
    # ...and dropping it releases both (the context's driver context to the cache).
    del s
    assert sim.settled()["stream"] == streams - 1


def test_a_torch_stream_closes_as_the_peers_streams_do(sim, fake_torch, two):
    """cuda.core's streams and greenctx's own have close(); PyTorch's have none, so the torch
    stream Stream() gives has greenctx's: it drops its reference to the green stream now (the
    object itself may live on), once however often it is called; the pool's reference stays
    with the context."""
    ctx = two[1]
    streams = sim.live("stream")
    s = ctx.Stream()
    handle = s.cuda_stream
    s.close()
    s.close()
    with pytest.raises(RuntimeError, match="released"):
        s.greenctx_stream.handle
    assert sim.live("stream") == streams + 1 and sim.stream_sms(handle)  # the pool's
    ctx.close()  # the context's end takes the pool's stream with it: s holds nothing
    assert sim.settled()["stream"] == streams
    assert s.cuda_stream == handle  # PyTorch's object, as it was


def test_stream_with_a_torch_that_sees_no_gpu_is_a_greenctx_stream(fake_torch, two):
    fake_torch.cuda.is_available = lambda: False
    assert isinstance(two[0].Stream(), greenctx.Stream)


def test_each_stream_call_gives_a_new_stream(sim, no_torch, two):
    s1, s2 = two[0].Stream(), two[0].Stream()
    assert s1.handle != s2.handle


def test_priority(no_torch, two):
    assert two[0].stream(priority=-1).priority == -1
    assert two[0].stream(priority=5).priority == 0  # clamped to the device's range


def test_events_order_work_across_partitions(sim, no_torch, two):
    a, b = (c.Stream() for c in two)
    event = a.record_event()
    assert isinstance(event, greenctx.Event) and event.handle
    b.wait_event(event)
    event.synchronize()
    b.wait_stream(a)
    e2 = two[1].Event()
    e2.record(b)
    e2.wait(a)
    two[0].wait_event(e2)
    two[1].record_event(e2)
    a.record_event(e2)
    for s in (a, b):
        s.synchronize()
    assert sim.calls("cuStreamWaitEvent") >= 3


def test_events_take_torch_streams_from_greenctx(fake_torch, two):
    s = two[0].Stream()
    event = two[0].Event()
    event.record(s)
    event.wait(s)
    with pytest.raises(TypeError, match="expected a greenctx stream"):
        event.record(fake_torch.cuda.ExternalStream(1))


def test_adopt_a_stream_by_handle_or_protocol(sim, no_torch, two):
    s = two[0].Stream()
    for given in (s.handle, s):
        adopted = greenctx.Stream.adopt(given)
        assert adopted.handle == s.handle
        adopted.close()
    assert s.handle  # still alive: adoption never destroys


def test_observe_sms_sees_each_partitions_own_sms(no_torch, two):
    """The simulator runs the %smid kernel on the SMs of the stream's partition."""
    seen_a, seen_b = two[0].Stream().observe_sms(), two[1].observe_sms()
    assert (len(seen_a), len(seen_b)) == (16, 32)
    assert seen_a == sorted(seen_a) and seen_b == sorted(seen_b)
    assert not set(seen_a) & set(seen_b)


def test_released_stream_says_so(no_torch, two):
    s = two[0].Stream()
    with s:
        pass
    with pytest.raises(RuntimeError, match="Stream has been released"):
        s.synchronize()

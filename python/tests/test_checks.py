"""Every integer is range-checked and every handle type-checked before it reaches a C
parameter (issue 18 item 7): ctypes would wrap 2**32 to 0 and 2**31 to -2**31, and hand a
pointer to a Python string's memory to the driver. Each case names its argument, the rule
and the value, and no driver object is left behind."""
import pytest

import greenctx
from greenctx import Event, GreenContext, Layouts, SMPartition, Stream
from conftest import SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


@pytest.fixture
def ctx(sim):
    c = GreenContext(num_sms=16)
    yield c
    c.close()


@pytest.fixture
def layouts(sim):
    lay = Layouts([(16, 0), (32, 0)])
    yield lay
    lay.close()


def test_device_ids_out_of_range_are_refused_not_wrapped(sim):
    # 2**32 would be device 0 through ctypes.
    for call in (SMPartition.from_device, greenctx.device_info, greenctx.cache_stats,
                 GreenContext.max_workqueue_concurrency):
        with pytest.raises(ValueError,
                           match=r"^device_id must be between 0 and 2147483647, got 4294967296$"):
            call(2**32)
    with pytest.raises(ValueError, match=r"^device_id must be between 0 and 2147483647, got -1$"):
        SMPartition.from_device(-1)
    with pytest.raises(ValueError, match="device_id must be between"):
        GreenContext(num_sms=16, device_id=2**32)
    with pytest.raises(ValueError, match="device_id must be between"):
        Layouts([(16, 0)], device_id=2**31)


@pytest.mark.parametrize("value", ["0", 0.0, None.__class__, b"0", True])
def test_device_ids_of_other_types_are_type_errors(sim, value):
    with pytest.raises(TypeError, match=r"^device_id must be an int, got "):
        greenctx.device_info(value)
    with pytest.raises(TypeError, match=r"^device_id must be an int, got "):
        SMPartition.from_device(value)


def test_a_device_id_accepts_what_indexes(sim):
    class Index:
        def __index__(self):
            return 0
    assert greenctx.device_info(Index()).sm_count == 132


def test_stream_priority_out_of_range_is_refused(ctx):
    # 2**31 would be -2**31 through ctypes: the highest priority.
    with pytest.raises(ValueError,
                       match=r"^priority must be between -2147483648 and 2147483647, got 2147483648$"):
        ctx.stream(priority=2**31)
    with pytest.raises(TypeError, match=r"^priority must be an int, got '1'$"):
        ctx.stream(priority="1")
    assert ctx.stream(priority=-1).priority == -1  # in range: as before


def test_layout_indexes_out_of_range_are_refused(layouts):
    # 2**32 + 1 would be layout 1 through ctypes.
    with pytest.raises(ValueError, match=r"^index must be below 2\*\*32, got 4294967297$"):
        layouts.switch(2**32 + 1)
    assert layouts.active == 0
    with pytest.raises(ValueError, match=r"^layout must be below 2\*\*32, got 4294967297$"):
        layouts.stream(2**32 + 1, 0)
    with pytest.raises(ValueError, match=r"^part must be below 2\*\*32, got 4294967296$"):
        layouts.partition(0, 2**32)
    with pytest.raises(ValueError, match=r"^index must be a nonnegative integer, got '1'$"):
        layouts.switch("1")
    layouts.switch(1)
    assert layouts.active == 1


def test_counts_out_of_range_are_refused(sim):
    with SMPartition.from_device(0) as whole:
        with pytest.raises(ValueError, match=r"^num_sms entries must be below 2\*\*32, got 4294967304$"):
            whole.split(num_sms=2**32 + 8)
    with pytest.raises(ValueError, match=r"^limit must be below 2\*\*32, got 4294967296$"):
        greenctx.set_cache_limit(2**32)
    with pytest.raises(ValueError, match=r"^num_sms must be below 2\*\*32"):
        GreenContext(num_sms=2**32 + 16, rounding="strict")
    # PyTorch's own range check comes first where PyTorch has one.
    with pytest.raises(RuntimeError, match=r"requested for green context: 4294967312 \(device"):
        GreenContext(num_sms=2**32 + 16)


@pytest.mark.parametrize("handle, error, message", [
    ("x", TypeError, r"^green_handle must be an int or a CUDA handle object, got 'x'$"),
    (b"x", TypeError, r"^green_handle must be an int or a CUDA handle object, got b'x'$"),
    (1.5, TypeError, r"^green_handle must be an int or a CUDA handle object, got 1.5$"),
    (True, TypeError, r"^green_handle must be an int or a CUDA handle object, got True$"),
    (object(), TypeError, r"^green_handle must be an int or a CUDA handle object, got object$"),
    (0, ValueError, r"^green_handle must be a nonzero handle below 2\*\*64, got 0$"),
    (-1, ValueError, r"^green_handle must be a nonzero handle below 2\*\*64, got -1$"),
    (2**64, ValueError, r"^green_handle must be a nonzero handle below 2\*\*64, got 18446744073709551616$"),
])
def test_adopt_takes_only_handles(sim, handle, error, message):
    calls = sim.calls("cuCtxFromGreenCtx")
    with pytest.raises(error, match=message):
        GreenContext.adopt(handle)
    assert sim.calls("cuCtxFromGreenCtx") == calls  # nothing reached the driver


def test_adopt_takes_a_handle_object_as_cuda_bindings_has_them(ctx):
    class CUgreenCtx:  # cuda.bindings' handle types convert with int()
        def __init__(self, value):
            self.value = value

        def __int__(self):
            return self.value
    with GreenContext.adopt(CUgreenCtx(ctx.green_handle)) as adopted:
        assert adopted.adopted and adopted.sm_count == 16


def test_stream_adopt_takes_only_handles(ctx):
    with pytest.raises(TypeError, match=r"^stream must be an int or a CUDA handle object, got 'x'$"):
        Stream.adopt("x")
    with pytest.raises(ValueError, match=r"^stream must be a nonzero handle below 2\*\*64, got 0$"):
        Stream.adopt(0)
    with ctx.stream() as s, Stream.adopt(s) as adopted:  # __cuda_stream__
        assert adopted.handle == s.handle


@pytest.mark.parametrize("context", [42, "ctx", None])
def test_an_event_needs_a_context(sim, context):
    with pytest.raises(TypeError, match=r"^context must be a greenctx.GreenContext, got "):
        Event(context)


def test_events_are_type_checked(ctx):
    with ctx.stream() as s:
        for call in (s.wait_event, s.record_event, ctx.wait_event, ctx.record_event):
            with pytest.raises(TypeError, match=r"^event must be a greenctx.Event, got int$"):
                call(42)


def test_event_repr(ctx):
    with ctx.Event() as e:
        assert repr(e) == f"<greenctx.Event 0x{e.handle:x}>"
    assert repr(e) == "<greenctx.Event released>"

"""What every greenctx handle type shares (issue 30): it is made by the package only, two
Python objects of one C object are equal and hash alike, and repr() says what a user needs,
'released' once closed. On the simulated H200."""
import pytest

import greenctx
from greenctx import (Claim, Controller, Event, GreenContext, Layouts, SMPartition, Stream,
                      Workload, _capi)
from greenctx.claim import _ranges
from conftest import SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


@pytest.mark.parametrize("cls, how", [
    (SMPartition, "SMPartition.from_device(), SMPartition.split() or GreenContext.sm_partition"),
    (Stream, "GreenContext.stream(), GreenContext.Stream() or Stream.adopt()")])
@pytest.mark.parametrize("args", [(0x1234,), (), (None,)])
def test_a_handle_is_not_made_from_an_int(sim, cls, how, args):
    before = sim.live_counts()
    with pytest.raises(TypeError) as e:
        cls(*args)
    assert str(e.value) == f"greenctx.{cls.__name__} is not made from a handle: get one from {how}"
    assert sim.live_counts() == before


def test_the_package_still_makes_them(sim):
    with SMPartition.from_device() as whole, GreenContext(sm_partition=whole) as ctx, \
            ctx.stream() as s:
        assert isinstance(ctx.sm_partition, SMPartition) and isinstance(s, Stream)
        assert isinstance(Stream.adopt(s.handle), Stream)


def test_two_objects_of_one_c_object_are_equal_and_hash_alike(sim):
    with GreenContext(num_sms=16) as ctx, ctx.stream() as s:
        of_stream = s.context  # a second Python object for the C context
        assert of_stream is not ctx and of_stream == ctx and hash(of_stream) == hash(ctx)
        assert len({ctx, of_stream}) == 1 and {ctx: 1}[of_stream] == 1
        adopted = Stream.adopt(s.handle)  # another C stream on the same CUstream
        assert adopted != s and s == s and s != ctx
        with GreenContext(num_sms=16) as other:
            assert other != ctx and ctx != 16
        adopted.close()
        of_stream.close()


def test_equality_and_hash_outlive_close(sim):
    ctx = GreenContext(num_sms=8)
    twin = ctx.stream().context
    h = hash(ctx)
    ctx.close()
    assert hash(ctx) == h and ctx == twin and ctx == ctx  # a dict or set keyed by it holds
    twin.close()


def test_two_objects_of_one_claim_are_equal_and_hash_alike(sim, tmp_path):
    rt = str(tmp_path / "runtime")
    c = greenctx.claim(num_sms=16, runtime_dir=rt)
    twin = Claim._wrap(_capi.lib.gctx_claim_retain(c._handle))  # as the package wraps one
    h = hash(c)
    assert twin is not c and twin == c and hash(twin) == h and len({c, twin}) == 1
    with c.partition() as p:
        assert c != p
    other = greenctx.claim(num_sms=16, runtime_dir=rt)
    assert other != c and hash(other) != h
    c.resize(32)
    c.close()
    assert hash(c) == h and c == twin  # a resize and a close keep it the same key
    twin.close()
    other.close()


def test_a_controller_is_equal_to_itself_only_and_its_hash_stays(sim):
    workloads = [Workload.latency(0.02, {16: 0.05, 132: 0.01}),
                 Workload.throughput({36: 0.05, 132: 0.01})]
    a, b = Controller(workloads, [(16, 116)]), Controller(workloads, [(16, 116)])
    h = hash(a)
    assert a == a and a != b and hash(a) != hash(b) and {a: 1}[a] == 1
    a.close()
    assert hash(a) == h and a == a and a != b
    b.close()


@pytest.mark.parametrize("make, message", [
    (lambda: Event(0x1234), "context must be a greenctx.GreenContext, got int"),
    (lambda: GreenContext(0x1234), "takes 1 positional argument but 2 were given"),
    (lambda: GreenContext(sm_partition=0x1234), "sm_partition must be an SMPartition")])
def test_no_handle_type_takes_a_c_handle(sim, make, message):
    before = sim.live_counts()
    with pytest.raises(TypeError, match=message):
        make()
    assert sim.live_counts() == before


def test_layouts_hand_out_the_same_objects_as_equal(sim):
    with Layouts([(16, 0)]) as layouts:
        p, q = layouts.partition(0, 0), layouts.partition(0, 0)
        assert p is not q and p == q and hash(p) == hash(q) and p != layouts.partition(0, 1)
        assert layouts.stream(0, 1) == layouts.stream(0, 1)
        assert layouts.context(0, 0) == layouts.context(0, 0)


@pytest.mark.parametrize("make, shows", [
    (lambda: SMPartition.from_device(), "<greenctx.SMPartition device of device 0: 132 SMs>"),
    (lambda: GreenContext(num_sms=16), "<greenctx.GreenContext on device 0: 16 SMs>"),
    (lambda: Layouts([(16, 0), (32, 0)]), "<greenctx.Layouts 2 layouts of 2 partitions>"),
    (lambda: Controller([Workload.latency(0.02, {16: 0.05, 132: 0.01}),
                         Workload.throughput({36: 0.05, 132: 0.01})], [(16, 116)]),
     "<greenctx.Controller 2 workloads, 2 candidates>"),
])
def test_repr_says_what_it_is_and_released_once_closed(sim, make, shows):
    obj = make()
    assert repr(obj) == shows
    obj.close()
    assert repr(obj) == f"<greenctx.{type(obj).__name__} released>"


def test_repr_of_a_stream_and_an_event_names_the_cuda_handle(sim):
    with GreenContext(num_sms=16) as ctx:
        s, e = ctx.stream(), ctx.Event()
        assert repr(s) == f"<greenctx.Stream 0x{s.handle:x}>"
        assert repr(e) == f"<greenctx.Event 0x{e.handle:x}>"
        s.close()
        e.close()
        assert (repr(s), repr(e)) == ("<greenctx.Stream released>", "<greenctx.Event released>")


def test_repr_of_a_claim_says_its_sms_granules_and_label(sim, tmp_path):
    rt = str(tmp_path / "runtime")
    c = greenctx.claim(num_sms=16, runtime_dir=rt, label="x")
    assert repr(c) == "<greenctx.Claim 16 SMs on GPU 0, granules 0-1, label 'x'>"
    c.resize(32)
    assert repr(c) == "<greenctx.Claim 32 SMs on GPU 0, granules 0-3, label 'x'>"
    joined = greenctx.Claim.join(c.export())  # another Python object of the claim
    assert repr(joined).startswith("<greenctx.Claim 32 SMs on GPU 0, granules 0-3")
    joined.close()
    c.close()
    assert repr(c) == "<greenctx.Claim released>"


def test_granule_runs():
    assert _ranges((0, 1, 2, 3, 8, 9, 11)) == "0-3,8-9,11"
    assert _ranges(()) == "none"

"""One C call per user call on the hot paths (issue 20): a split, a context (from a partition,
from a count, from a split of the device), a stream, PyTorch's pooled Stream(), a layout
switch. Every declared function of the loaded library is wrapped to count the calls the
package makes; what an object describes is asked of the C library only when first read."""
import collections
import contextlib

import pytest

import greenctx
from greenctx import GreenContext, Layouts, SMPartition, _capi
from conftest import DRIVER, SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


@contextlib.contextmanager
def c_calls():
    """{C function: calls} made while the block runs. The package calls _capi.lib.<name>
    each time, so replacing the library's attributes catches every call."""
    counts = collections.Counter()
    lib = _capi.lib
    originals = {name: getattr(lib, name) for name in _capi.SIGNATURES}

    def counting(name, fn):
        def call(*args):
            counts[name] += 1
            return fn(*args)
        return call

    for name, fn in originals.items():
        setattr(lib, name, counting(name, fn))
    try:
        yield counts
    finally:
        for name, fn in originals.items():
            setattr(lib, name, fn)


@contextlib.contextmanager
def driver_calls(sim):
    """{driver entry point: calls} made while the block runs (the simulator counts them)."""
    made = {}
    before = sim.driver_calls()
    try:
        yield made
    finally:
        after = sim.driver_calls()
        made.update({k: after[k] - before[k] for k in after if after[k] != before[k]})


def _close(o):
    if isinstance(o, tuple):
        for x in reversed(o):
            _close(x)
    elif o is not None:
        o.close()


def _in_threads(work, n=8):
    """work(i) in n threads at once; the exceptions they raised (the main thread asserts)."""
    import threading
    errors = []

    def run(i):
        try:
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.fixture
def made(sim):
    """Closes what a test made (objects, and the tuples splits return), whatever happened."""
    objects = []
    yield objects
    _close(tuple(objects))


@pytest.fixture
def whole(sim):
    p = SMPartition.from_device(0)
    yield p
    p.close()


def test_the_counter_sees_each_call(sim):
    with c_calls() as n:
        greenctx.device_count()
        greenctx.device_count()
    assert n == {"gctx_device_count": 2}


def test_split_is_one_call(whole, made):
    with c_calls() as n:
        groups, rest = whole.split(num_sms=16)
    made.extend([groups, rest])
    assert n == {"gctx_partition_split": 1}
    with c_calls() as n:
        made.append(whole.split(num_sms=(16, 0), backfill=(False, True)))
        made.append(whole.split(num_sms=[8, 8, 8], coscheduled_sm_count=8, rounding="up"))
    assert n == {"gctx_partition_split": 2}


@pytest.mark.parametrize("request_", [dict(num_sms=16), dict(num_sms=(16, 32)),
                                      dict(num_sms=(16, 0), backfill=(False, True))],
                         ids=["16", "16_32", "16_rest"])
def test_a_split_is_one_driver_call(sim, whole, made, request_):
    """What cuda.core's split makes: one driver split of the resource greenctx fetched once
    (no device query, no context, no check of the plan through the driver), every time; its
    outputs go with no driver call while the device's partition lives."""
    split_call = "cuDevSmResourceSplit" if DRIVER >= 13010 else "cuDevSmResourceSplitByCount"
    for _ in range(3):
        with driver_calls(sim) as d, c_calls() as c:
            out = whole.split(**request_)
        assert (c, d) == ({"gctx_partition_split": 1}, {split_call: 1})
        with driver_calls(sim) as d:
            _close(out)
        assert d == {}


@pytest.mark.parametrize("request_, sizes", [
    (dict(num_sms=16), ([16], 116)), (dict(num_sms=0, backfill=True), ([132], None)),
    (dict(num_sms=(16, 32)), ([16, 32], 84)),
    (dict(num_sms=(16, 0), backfill=(False, True)), ([16, 116], None))],
    ids=["16", "all", "16_32", "16_rest"])
def test_an_untraced_split_is_one_driver_call_and_gives_what_was_asked(sim, whole, made,
                                                                      request_, sizes):
    """With lib.gctx_partition_split as loaded, split calls it without ctypes' conversions
    (partition._BARE_SPLIT): still one driver split, the partitions asked for, of the class
    split was called on, each owning its handle (closing them releases what was made)."""
    class Mine(SMPartition):
        __slots__ = ()
    split_call = "cuDevSmResourceSplit" if DRIVER >= 13010 else "cuDevSmResourceSplitByCount"
    mine = Mine._wrap(_capi.lib.gctx_partition_retain(whole._handle))
    made.append(mine)
    for source in (whole, mine):
        with driver_calls(sim) as d:
            groups, rest = source.split(**request_)
        made.extend([groups, rest])
        assert d == {split_call: 1}
        assert ([g.sm_count for g in groups], rest and rest.sm_count) == sizes
        assert {type(p) for p in (*groups, rest) if p is not None} == {type(source)}
        assert [g.kind for g in groups] == ["group"] * len(groups)
        assert rest is None or rest.kind == "remainder"
        handles = [p._h for p in (*groups, rest) if p is not None]
        assert len(set(handles)) == len(handles) and whole._h not in handles
    live = sim.live_counts()
    _close(tuple(made[1:]))
    del made[1:]
    assert sim.live_counts() == live  # partitions hold no driver object of their own


def test_threads_splitting_at_once_get_their_own_partitions(sim, whole):
    """Every thread's split passes the same cached groups and options (the C library only
    reads them) with its own outputs: threads splitting one partition at once, with
    different requests and roundings, each get the sizes they asked for and partitions of
    their own, and the shared arguments are as they were."""
    from greenctx import partition
    requests = [(dict(num_sms=8 * (1 + i % 4), rounding="up" if i % 2 else "strict"),
                 [8 * (1 + i % 4)]) for i in range(4)]
    requests += [(dict(num_sms=(8, 16)), [8, 16]),
                 (dict(num_sms=(16, 0), backfill=(False, True)), [16, 116])]
    partition._PREPARED.clear()
    for request_, _ in requests:
        _close(whole.split(**request_))  # the requests are prepared once, then shared
    shared = {k: bytes(v[0]) + bytes(v[2]) for k, v in partition._PREPARED.items()}
    assert len(shared) == len(requests)
    held = []

    def work(i):
        request_, sizes = requests[i % len(requests)]
        for _ in range(50):
            groups, rest = whole.split(**request_)
            assert [g.sm_count for g in groups] == sizes
            assert (rest is None) == (sum(sizes) == 132)
            held.append((groups, rest))  # kept alive: no handle can be reused

    errors = _in_threads(work)
    try:
        assert not errors, errors
        handles = [p._h for groups, rest in held for p in (*groups, rest) if p is not None]
        assert len(held) == 8 * 50 and len(handles) == len(set(handles))
        assert {k: bytes(v[0]) + bytes(v[2]) for k, v in partition._PREPARED.items()} == shared
    finally:
        _close(tuple(held))


def test_what_a_partition_describes_is_asked_once_when_read(whole, made):
    (group,), rest = whole.split(num_sms=16)
    made.extend([group, rest])
    with c_calls() as n:
        assert (group.sm_count, group.device_id, group.kind, group.structured) == \
            (16, 0, "group", True)
        assert group.sm_count == 16
    assert n == {"gctx_partition_get_info": 1}


@pytest.mark.parametrize("make, call", [
    (lambda p: GreenContext(sm_partition=p), "gctx_context_create"),
    (lambda p: GreenContext(num_sms=16), "gctx_context_create_at_least"),
    (lambda p: GreenContext(num_sms=130), "gctx_context_create_at_least"),  # the whole device
    (lambda p: GreenContext.create(16, 0), "gctx_context_create_at_least"),
    (lambda p: GreenContext(num_sms=16, rounding="strict"), "gctx_context_create_with_sms"),
    (lambda p: GreenContext(num_sms=20, rounding="down"), "gctx_context_split_device"),
    (lambda p: GreenContext.split(num_sms=(16, 0), backfill=(False, True)),
     "gctx_context_split_device"),
], ids=["sm_partition", "num_sms", "num_sms_whole_device", "create", "strict", "rounded",
        "split"])
def test_a_context_is_one_call(whole, made, make, call):
    with c_calls() as n:
        made.append(make(whole))
    assert n == {call: 1}


def test_a_stream_is_one_call(whole, made):
    ctx = GreenContext(sm_partition=whole)
    made.append(ctx)
    with c_calls() as n:
        made.append(ctx.stream())
        made.append(ctx.stream(priority=-1))
    assert n == {"gctx_stream_create": 2}


def test_a_pooled_stream_is_one_call(whole, made):
    """PyTorch's Stream(): once the pool of 32 is made, each call retains a pooled stream
    (the context's device, for a torch stream, is read once)."""
    ctx = GreenContext(sm_partition=whole)
    made.append(ctx)
    assert ctx.device_id == 0
    with c_calls() as n:
        made.extend(ctx.Stream() for _ in range(32))
    assert n == {"gctx_stream_create": 32, "gctx_stream_retain": 32}
    with c_calls() as n:
        made.append(ctx.Stream())
    assert n == {"gctx_stream_retain": 1}


def test_a_pooled_torch_stream_is_one_call(whole, made, fake_torch):
    """With PyTorch, the torch stream's CUstream and device come from what the pool and the
    context already know."""
    ctx = GreenContext(sm_partition=whole)
    made.append(ctx)
    for _ in range(32):
        s = ctx.Stream()
        made.append(s.greenctx_stream)
    with c_calls() as n:
        s = ctx.Stream()
    made.append(s.greenctx_stream)
    assert isinstance(s, fake_torch.cuda.ExternalStream)
    assert n == {"gctx_stream_retain": 1}
    assert s.cuda_stream == s.greenctx_stream.handle == made[1].handle and s.device == 0


def test_a_layout_switch_is_one_call(sim):
    with Layouts([(16, 0), (32, 0)]) as layouts:
        layouts.switch(1)
        layouts.switch(0)
        with c_calls() as n:
            for i in (1, 0, 1):
                layouts.switch(i)
            layouts.switch(0, order="by_part")
        assert n == {"gctx_layouts_switch_ordered": 4}
        assert layouts.active == 0


def test_closing_is_one_call(whole, made):
    (group,), rest = whole.split(num_sms=16)
    made.append(rest)
    with c_calls() as n:
        group.close()
        group.close()
    assert n == {"gctx_partition_release": 1}


def test_prototypes_are_declared_once_at_load(whole, made):
    """No hot path touches a function's argtypes or restype (ctypes' per-call setup)."""
    lib = _capi.lib
    before = {name: (getattr(lib, name).argtypes, getattr(lib, name).restype)
              for name in _capi.SIGNATURES}
    ctx = GreenContext(num_sms=16)
    made.extend([ctx, ctx.stream(), ctx.Stream(), whole.split(num_sms=16),
                 GreenContext.split(num_sms=(16, 16))])
    after = {name: (getattr(lib, name).argtypes, getattr(lib, name).restype)
             for name in _capi.SIGNATURES}
    assert all(after[k][0] is before[k][0] and after[k][1] is before[k][1] for k in before)


def test_threads_share_the_read_only_structs_and_get_their_own_results():
    """The package passes one options struct per policy, and cached group arrays, to every
    call (the C library only reads them): threads asking at once for different counts,
    roundings and workqueue limits each get what they asked for, and the shared structs are
    as they were."""
    from greenctx import context, partition
    workqueues = greenctx.driver_version() >= 13010
    shared = (bytes(context._PLAIN_OPTIONS[False]), bytes(context._PLAIN_OPTIONS[True]),
              bytes(context._DEFAULT_STREAM_OPTIONS),
              {k: bytes(v) for k, v in partition._SPLIT_OPTIONS.items()})

    def work(i):
        n, limit = 8 * (1 + i % 4), 1 + i % 8
        for _ in range(20):
            with GreenContext(num_sms=n) as c, c.stream() as s:
                assert (c.sm_count, s.handle != 0) == (n, True)
            a, b = GreenContext.split(num_sms=(n, 8), rounding="up" if i % 2 else "strict")
            assert (a.sm_count, b.sm_count) == (n, 8)
            a.close()
            b.close()
            if workqueues:
                with GreenContext(num_sms=n, workqueue_scope="balanced",
                                  workqueue_concurrency_limit=limit) as w:
                    assert w.workqueue_concurrency_limit == limit

    errors = _in_threads(work)
    assert not errors, errors
    assert shared == (bytes(context._PLAIN_OPTIONS[False]), bytes(context._PLAIN_OPTIONS[True]),
                      bytes(context._DEFAULT_STREAM_OPTIONS),
                      {k: bytes(v) for k, v in partition._SPLIT_OPTIONS.items()})

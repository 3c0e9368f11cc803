"""The context cache and layouts from Python, on the simulated H200."""
import pytest

import greenctx
from greenctx import GreenContext, Layouts, Relation
from conftest import SIM

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


def test_a_released_context_is_reused_for_the_same_request(sim):
    sim.settled()
    before = greenctx.cache_stats()
    assert before.limit == greenctx.cache_limit() == 16 and before.cached == 0
    ctx = GreenContext(num_sms=16)
    handle = ctx.green_handle
    ctx.close()
    assert greenctx.cache_stats().cached == 1
    again = GreenContext(num_sms=16)
    stats = greenctx.cache_stats()
    assert again.green_handle == handle and stats.hits == before.hits + 1
    assert (stats.cached, stats.live) == (0, 1)
    again.close()


def test_fresh_never_takes_a_cached_context(sim):
    sim.settled()
    GreenContext(num_sms=24).close()
    hits = greenctx.cache_stats().hits
    fresh = GreenContext(num_sms=24, fresh=True)
    assert greenctx.cache_stats().hits == hits and greenctx.cache_stats().cached == 1
    (a,) = GreenContext.split(num_sms=24, fresh=True)
    assert greenctx.cache_stats().hits == hits
    fresh.close()
    a.close()


def test_limit_and_trim(sim):
    sim.settled()  # an empty cache
    for n in (8, 16, 24):
        GreenContext(num_sms=n).close()
    stats = greenctx.cache_stats(device_id=0)
    assert stats.cached == 3
    greenctx.set_cache_limit(1)
    assert greenctx.cache_limit() == 1 and greenctx.cache_stats().cached == 1
    assert greenctx.cache_stats().evictions == stats.evictions + 2
    greenctx.set_cache_limit(16, device_id=0)
    greenctx.trim_cache()
    assert greenctx.cache_stats().cached == 0 and greenctx.cache_limit() == 16
    with pytest.raises(ValueError, match="limit must be a nonnegative integer"):
        greenctx.set_cache_limit(-1)
    with pytest.raises(greenctx.NoDeviceError):
        greenctx.cache_stats(device_id=4)


@pytest.fixture
def layouts(sim):
    with Layouts([(16, 0), (32, 0), (64, 0)], device_id=0) as made:
        yield made


def test_layouts_shape_and_sizes(layouts, sim):
    assert (len(layouts), layouts.nb_parts, layouts.active) == (3, 2, 0)
    sizes = [[layouts.partition(l, p).sm_count for p in range(2)] for l in range(3)]
    assert sizes == [[16, 116], [32, 100], [64, 68]]
    assert layouts.context(1, 0).sm_count == 32
    assert "3 layouts of 2 partitions" in repr(layouts)


def test_partitions_of_one_layout_are_disjoint(layouts, sim):
    for l in range(3):
        a, b = layouts.context(l, 0), layouts.context(l, 1)
        assert not sim.context_sms(a) & sim.context_sms(b)
        assert layouts.partition(l, 0).relation(layouts.partition(l, 1)) == Relation.DISJOINT
    assert layouts.partition(0, 0).relation(layouts.partition(1, 0)) == Relation.MAY_OVERLAP


def test_switch_returns_the_layouts_streams(layouts, sim, no_torch):
    streams = layouts.switch(2)
    assert layouts.active == 2 and len(streams) == 2
    assert all(isinstance(s, greenctx.Stream) for s in streams)
    for p, s in enumerate(streams):
        assert sim.stream_sms(s.handle) == sim.context_sms(layouts.context(2, p))
    assert layouts.switch(2) is streams  # made once
    assert layouts.streams(0)[0].handle == layouts.stream(0, 0).handle
    calls = sim.calls("cuStreamWaitEvent")
    layouts.switch(0)
    assert sim.calls("cuStreamWaitEvent") > calls  # the new streams wait for the old


@pytest.mark.parametrize("order, waits", [("all", 3), ("by_part", 2)])
def test_switch_orders_all_or_by_part(layouts, sim, order, waits):
    """Two partitions: the barrier funnels the old streams into old stream 0 (2 records, 3
    waits); by part each new stream waits for its old one only (2 records, 2 waits)."""
    for to in (1, 2, 0):
        before = sim.calls("cuEventRecord"), sim.calls("cuStreamWaitEvent")
        layouts.switch(to, order=order)
        assert layouts.active == to
        assert (sim.calls("cuEventRecord") - before[0],
                sim.calls("cuStreamWaitEvent") - before[1]) == (2, waits)


@pytest.mark.parametrize("order", ["barrier", "ALL", None, 1])
def test_an_unknown_order_is_refused(layouts, sim, order):
    calls = sim.calls("cuStreamWaitEvent")
    with pytest.raises(ValueError, match=r"order is .*: give one of 'all', 'by_part'"):
        layouts.switch(1, order=order)
    assert layouts.active == 0 and sim.calls("cuStreamWaitEvent") == calls


def test_switch_to_a_layout_that_does_not_exist(layouts):
    with pytest.raises(greenctx.InvalidArgumentError):
        layouts.switch(3)
    assert layouts.active == 0


def test_switch_gives_torch_streams_when_torch_is_there(layouts, fake_torch):
    a, b = layouts.switch(1)
    assert isinstance(a, fake_torch.cuda.ExternalStream)
    assert a.greenctx_stream.handle == a.cuda_stream


def test_what_layouts_hand_out_outlives_them(sim):
    layouts = Layouts([(16, 0)])
    ctx, stream = layouts.context(0, 0), layouts.stream(0, 0)
    layouts.close()
    assert ctx.sm_count == 16
    stream.synchronize()


@pytest.mark.parametrize("rows, error, message", [
    ([], ValueError, "nonempty list of rows"),
    ([(16, 0), (16,)], ValueError, "rows of one nonzero length"),
    ([(16, -1)], ValueError, "sm_counts entries must be nonnegative integers, got -1"),
    ([(12, 0)], greenctx.InvalidArgumentError, "nearest: 8 or 16"),
])
def test_bad_layouts(sim, rows, error, message):
    with pytest.raises(error, match=message):
        Layouts(rows)

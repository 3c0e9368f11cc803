"""SMPartition on the simulated H200: from_device, every argument form of split and plan,
PyTorch's broadcasting rules and their errors, rounding, relations, nested splits."""
import pytest

import greenctx
from greenctx import Relation, SMPartition
from conftest import DRIVER, SIM, before_driver, needs_driver

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


@pytest.fixture
def sms():
    with SMPartition.from_device(device_id=0) as whole:
        yield whole


def counts(result):
    groups, rest = result
    return [g.sm_count for g in groups], (rest.sm_count if rest is not None else None)


def test_from_device_properties(sms):
    assert (sms.device_id, sms.sm_count, sms.coscheduled_sm_count) == (0, 132, 8)
    assert (sms.kind, sms.min_partition_sms, sms.structured) == ("device", 8, True)
    assert sms.locality_domain_id is None
    assert "132 SMs" in repr(sms)


def test_from_device_default_is_device_0_without_torch(no_torch):
    with SMPartition.from_device() as p:
        assert p.device_id == 0


def test_from_device_bad_ordinal():
    with pytest.raises(greenctx.NoDeviceError, match="device 3 does not exist"):
        SMPartition.from_device(3)
    with pytest.raises(TypeError, match="device_id must be an int"):
        SMPartition.from_device("0")


def test_scalars_make_one_group(sms):
    groups, rest = sms.split(num_sms=16)
    assert isinstance(groups, tuple) and len(groups) == 1
    assert (groups[0].sm_count, groups[0].kind) == (16, "group")
    assert (rest.sm_count, rest.kind, rest.structured) == (116, "remainder", False)


def test_sequences_give_one_group_each_with_per_group_counts(sms):
    # On 12.4 to 13.0 the driver splits only into equal groups: greenctx still gives these.
    assert counts(sms.split(num_sms=(24, 40), coscheduled_sm_count=8)) == ([24, 40], 68)
    assert counts(sms.split(num_sms=[16, 32, 8])) == ([16, 32, 8], 76)


def test_scalars_broadcast_to_the_sequences_length(sms):
    groups, _ = sms.split(num_sms=8, coscheduled_sm_count=[8, 8, 8])
    assert [g.sm_count for g in groups] == [8, 8, 8]
    groups, rest = sms.split(num_sms=[16, 0], backfill=[False, True])
    assert [g.sm_count for g in groups] == [16, 116] and rest is None


def test_default_is_one_discovery_group(sms):
    (group,), rest = sms.split()
    # Discovery: every SM in whole co-scheduled units (16-SM units reach 128 on the H200
    # granule path; the 13.1 structured split stops at 120).
    assert group.sm_count == (120 if DRIVER >= 13010 else 128)
    assert rest.sm_count == 132 - group.sm_count


def test_discovery_with_backfill_takes_everything(sms):
    assert counts(sms.split(num_sms=[24, 40, 0], backfill=[False, False, True])) == (
        [24, 40, 68], None)


def test_sequences_of_different_lengths_are_refused(sms):
    with pytest.raises(ValueError, match="All sequence options must have the same length"):
        sms.split(num_sms=[8, 8], coscheduled_sm_count=[8, 8, 8])


def test_empty_sequence_is_refused(sms):
    with pytest.raises(ValueError, match="at least one group"):
        sms.split(num_sms=[])


@pytest.mark.parametrize("kwargs, message", [
    ({"num_sms": -8}, "num_sms entries must be nonnegative integers, got -8"),
    ({"num_sms": [8, 2.5]}, "num_sms entries must be nonnegative integers, got 2.5"),
    ({"num_sms": True}, "num_sms entries must be nonnegative integers, got True"),
    ({"coscheduled_sm_count": "8"}, "coscheduled_sm_count entries must be"),
    ({"preferred_coscheduled_sm_count": -1}, "preferred_coscheduled_sm_count entries must be"),
    ({"num_sms": 2 ** 32}, "below 2\\*\\*32"),
    ({"backfill": 1}, "backfill entries must be bool values"),
    ({"backfill": [True, None]}, "backfill entries must be bool values"),
    ({"num_sms": 16, "rounding": "sideways"}, "rounding must be one of"),
])
def test_bad_argument_types_raise_value_error(sms, kwargs, message):
    with pytest.raises(ValueError, match=message):
        sms.split(**kwargs)


def test_repeated_requests_are_checked_like_new_ones(sms):
    """Validated requests are reused: True == 1 and 16 == 16.0 must not mix them up."""
    for _ in range(2):
        assert counts(sms.split(num_sms=(16, 0), backfill=(False, True))) == ([16, 116], None)
        with pytest.raises(ValueError, match="backfill entries must be bool values"):
            sms.split(num_sms=(16, 0), backfill=(0, 1))
        with pytest.raises(ValueError, match="num_sms entries must be"):
            sms.split(num_sms=16.0)
        with pytest.raises(ValueError, match="num_sms entries must be"):
            sms.split(num_sms=(True, 8))


def test_prepared_requests_are_reused_bounded_and_never_stale(sms):
    """A split reuses the C arguments of an exact request it saw before (partition._PREPARED):
    each request, its rounding included, still gets what it asks for, the cache stays within
    its bound, and what was emptied out is made again, alike."""
    from greenctx import partition
    partition._PREPARED.clear()
    first = partition.prepare(16, 0, 0, False, None, "strict")
    assert partition.prepare(16, 0, 0, False, None, greenctx.Rounding.STRICT) is first
    for _ in range(2):  # the rounding is part of the request
        assert counts(sms.split(num_sms=12, rounding="down")) == ([8], 124)
        assert counts(sms.split(num_sms=12, rounding="up")) == ([16], 116)
        with pytest.raises(ValueError, match="nearest: 8 or 16"):
            sms.split(num_sms=12)

    class Count(int):
        pass
    cached = len(partition._PREPARED)
    assert counts(sms.split(num_sms=Count(24))) == ([24], 108)
    assert counts(sms.split(num_sms=(24,), rounding="up")) == ([24], 108)
    assert len(partition._PREPARED) == cached + 1  # the tuple, not the int subclass
    sizes = set()
    for rounding in ("strict", "down", "nearest", "up"):  # pairs of whole 8-SM granules
        for a in range(8, 120, 8):
            for b in range(8, 128 - a, 8):
                assert sms.plan(num_sms=(a, b), rounding=rounding).sm_counts == (a, b)
                sizes.add(len(partition._PREPARED))
    assert max(sizes) == partition._PREPARED_MAX and min(sizes) < partition._PREPARED_MAX
    assert counts(sms.split(num_sms=16)) == ([16], 116)
    assert counts(sms.split(num_sms=(16, 0), backfill=(False, True))) == ([16, 116], None)


def test_an_unhashable_rounding_is_refused_after_the_counts(sms):
    with pytest.raises(ValueError, match="num_sms entries must be nonnegative integers"):
        sms.split(num_sms=-8, rounding=["strict"])
    with pytest.raises(TypeError, match="unhashable"):
        sms.split(num_sms=16, rounding=["strict"])


def test_split_is_keyword_only(sms):
    with pytest.raises(TypeError):
        sms.split(16)


def test_illegal_count_names_rule_and_nearest(sms):
    with pytest.raises(ValueError) as e:
        sms.split(num_sms=12)
    assert isinstance(e.value, greenctx.InvalidArgumentError)
    assert e.value.status == "GCTX_ERROR_INVALID_ARGUMENT" and e.value.cuda_result == 0
    assert str(e.value) == ("group 0: 12 SMs: on this device groups are multiples of 8 "
                            "(min 8); nearest: 8 or 16")


def test_groups_that_do_not_fit(sms):
    with pytest.raises(greenctx.InsufficientSMsError,
                       match="the groups ask for 136 SMs in all; this device has 132"):
        sms.split(num_sms=[128, 8])
    with pytest.raises(ValueError, match="asks for 200 SMs; this device has 132"):
        sms.split(num_sms=200)


def test_discovery_backfill_group_must_be_last(sms):
    with pytest.raises(ValueError, match="must be the last group"):
        sms.split(num_sms=[0, 16], backfill=[True, False])


@pytest.mark.parametrize("rounding, want", [("down", 8), ("nearest", 16), ("up", 16),
                                            (greenctx.Rounding.DOWN, 8)])
def test_rounding_policies(sms, rounding, want):
    (g,), _ = sms.split(num_sms=12, rounding=rounding)
    assert g.sm_count == want
    plan = sms.plan(num_sms=12, rounding=rounding)
    assert plan.rounded and plan.groups[0].rounded and plan.groups[0].requested_sms == 12


def test_plan_is_what_split_gives_and_makes_nothing(sms, sim):
    before = sim.live_counts()
    plan = sms.plan(num_sms=[24, 40, 0], backfill=[False, False, True])
    assert sim.live_counts() == before
    assert plan.sm_counts == (24, 40, 68) and plan.remainder_sms == 0
    assert (plan.device_id, plan.driver_version, plan.nested) == (0, DRIVER, False)
    assert plan.path == ("structured" if DRIVER >= 13010 else "granules")
    assert plan.groups[2].backfilled and not plan.groups[0].backfilled
    assert [g.coscheduled_sm_count for g in plan.groups] == [8, 8, 8]
    assert counts(sms.split(num_sms=[24, 40, 0], backfill=[False, False, True]))[0] == [24, 40, 68]


def test_plan_errors_as_split(sms):
    with pytest.raises(ValueError, match="nearest: 8 or 16"):
        sms.plan(num_sms=12)


def test_siblings_are_disjoint_and_separate_splits_may_overlap(sms, sim):
    (a, b), rest = sms.split(num_sms=[16, 16])
    (c,), _ = sms.split(num_sms=16)
    assert a.relation(b) == Relation.DISJOINT == "disjoint"
    assert a.relation(rest) == Relation.DISJOINT
    assert a.relation(c) == Relation.MAY_OVERLAP
    assert a.relation(sms) == Relation.OVERLAP and sms.relation(sms) == Relation.OVERLAP
    with pytest.raises(TypeError):
        a.relation(16)


def test_groups_and_remainders_split_again(sms):
    """PyTorch needs a context in between (the driver refuses split outputs); greenctx makes
    one itself."""
    (a,), rest = sms.split(num_sms=16)
    assert counts(a.split(num_sms=8)) == ([8], 8)
    plan = a.plan(num_sms=8)
    assert plan.nested


@needs_driver(12050)
def test_remainder_splits_again_with_fine_units(sms):
    (a,), rest = sms.split(num_sms=32)
    assert counts(rest.split(num_sms=8)) == ([8], 92)
    assert rest.plan(num_sms=8).groups[0].coscheduled_sm_count == 2


@before_driver(12050)
def test_fine_units_need_driver_12_5(sms):
    with pytest.raises(greenctx.UnsupportedError, match="driver 12.5 or later"):
        sms.split(num_sms=4, coscheduled_sm_count=2)


def test_released_partition_says_so(sms):
    (a,), _ = sms.split(num_sms=16)
    a.close()
    a.close()  # idempotent
    with pytest.raises(RuntimeError, match="SMPartition has been released"):
        a.split(num_sms=8)
    assert "released" in repr(a)

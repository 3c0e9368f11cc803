"""SMPartition: a set of SMs of one device, as PyTorch's torch.cuda.green_contexts has it,
made and split by the C library on every driver with green contexts (12.4+).
"""
from __future__ import annotations

import ctypes
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import _capi, _interop
from ._capi import lib
from ._errors import UnsupportedError, check, error_from_status, out_int
from ._object import Handle, count, device_ordinal, driver_version, from_struct, info_field


class Rounding(str, enum.Enum):
    """What a split does with a count the hardware can't give (gctx_rounding)."""
    STRICT = "strict"    # refuse it, naming the rule and the nearest legal counts (default)
    DOWN = "down"        # the nearest legal count below (never below the minimum)
    NEAREST = "nearest"  # the nearest legal count; ties go up
    UP = "up"            # the nearest legal count above


class Relation(str, enum.Enum):
    """What greenctx knows of two partitions' SMs, from how they were made (gctx_relation)."""
    DISJOINT = "disjoint"        # share no SM (siblings of one split, or of disjoint parents)
    MAY_OVERLAP = "may_overlap"  # made by different splits: the driver may give both one SM
    OVERLAP = "overlap"          # share SMs (the same SMs, or one holds the other)


RELATIONS = {_capi.GCTX_RELATION_DISJOINT: Relation.DISJOINT,
             _capi.GCTX_RELATION_MAY_OVERLAP: Relation.MAY_OVERLAP,
             _capi.GCTX_RELATION_OVERLAP: Relation.OVERLAP}
_KINDS = {_capi.GCTX_PARTITION_DEVICE: "device", _capi.GCTX_PARTITION_GROUP: "group",
          _capi.GCTX_PARTITION_REMAINDER: "remainder", _capi.GCTX_PARTITION_CONTEXT: "context"}
_PATHS = {_capi.GCTX_SPLIT_PATH_STRUCTURED: "structured",
          _capi.GCTX_SPLIT_PATH_GRANULES: "granules",
          _capi.GCTX_SPLIT_PATH_FINE_GRANULES: "fine_granules"}


@dataclass(frozen=True)
class GroupPlan:
    """What one group of a split gets, or would get."""
    requested_sms: int         # num_sms as asked (0: discovery)
    sm_count: int              # what the group gets
    coscheduled_sm_count: int  # the co-scheduled unit it is made of
    rounded: bool              # sm_count differs from a nonzero request by rounding
    backfilled: bool           # the group includes SMs outside whole units


@dataclass(frozen=True)
class SplitPlan:
    """What a split gives, or would give (SMPartition.plan: a dry run that makes nothing)."""
    device_id: int
    driver_version: int
    path: str          # "structured" (13.1+), "granules" or "fine_granules" (12.4 to 13.0)
    granule_sms: int   # the granule of the granule paths, else 0
    groups: tuple[GroupPlan, ...]  # one GroupPlan per group
    remainder_sms: int  # SMs in no group
    rounded: bool
    nested: bool       # the input is a split's output: the split goes through a context

    @property
    def sm_counts(self) -> tuple[int, ...]:
        return tuple(g.sm_count for g in self.groups)


# Split options by rounding (the C library only reads them): one struct per policy, made once,
# passed as they are (ctypes passes a struct by reference to a pointer parameter).
_SPLIT_OPTIONS: dict[Rounding | str, _capi.Struct] = {
    policy: _capi.SplitOptions(rounding=value) for policy, value in (
        (Rounding.STRICT, _capi.GCTX_ROUND_STRICT), (Rounding.DOWN, _capi.GCTX_ROUND_DOWN),
        (Rounding.NEAREST, _capi.GCTX_ROUND_NEAREST), (Rounding.UP, _capi.GCTX_ROUND_UP))}


def split_options(rounding: Rounding | str) -> _capi.Struct:
    options = _SPLIT_OPTIONS.get(rounding)  # a Rounding or its string (they hash alike)
    if options is None:
        raise ValueError(f"rounding must be one of {[r.value for r in Rounding]}, "
                         f"got {rounding!r}")
    return options


def _is_sequence(value: Any) -> bool:
    t = type(value)
    if t is list or t is tuple:
        return True
    return t is not int and t is not bool and isinstance(value, Sequence) and \
        not isinstance(value, (str, bytes))


def _count(name: str, value: Any) -> int:
    if type(value) is int and 0 <= value <= 0xFFFFFFFF:  # the common case, quickly
        return value
    return count(f"{name} entries", value)


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise ValueError("backfill entries must be bool values")
    return value


_OPTIONS: tuple[tuple[str, Callable[[str, Any], Any]], ...] = (
    ("num_sms", _count), ("coscheduled_sm_count", _count),
    ("preferred_coscheduled_sm_count", _count), ("backfill", lambda name, v: _flag(v)))


def _exact(value: Any, kind: type) -> bool:
    """value is of exactly this type, or a tuple of values of exactly this type."""
    t = type(value)
    if t is tuple:
        return all(type(v) is kind for v in value)
    return t is kind


def _groups_array(num_sms: Any, coscheduled_sm_count: Any,
                  preferred_coscheduled_sm_count: Any, backfill: Any) -> Any:
    """PyTorch's broadcasting: every option is a scalar or a sequence; sequences share one
    nonzero length and scalars repeat to it; all scalars make one group."""
    values = (num_sms, coscheduled_sm_count, preferred_coscheduled_sm_count, backfill)
    sequences = [_is_sequence(v) for v in values]
    n = 1
    if any(sequences):
        lengths = {len(v) for v, is_seq in zip(values, sequences) if is_seq}
        if len(lengths) > 1:
            raise ValueError("All sequence options must have the same length")
        n = lengths.pop()
        if n == 0:
            raise ValueError("A split must contain at least one group")
    array = (_capi.Group * n)()
    for (name, convert), value, is_seq in zip(_OPTIONS, values, sequences):
        if is_seq:
            for group, v in zip(array, value):
                setattr(group, name, convert(name, v))
        else:
            v = convert(name, value)
            if v:  # the array starts zeroed
                for group in array:
                    setattr(group, name, v)
    return array


_LOCALITY_DRIVER = 13040


def _check_locality_domains(locality_domain_ids: Any, nb_groups: int) -> None:
    """PyTorch's checks of locality_domain_ids, in its order; then UnsupportedError for any
    domain: gctx_group has no domain field yet."""
    domains = (tuple(locality_domain_ids) if _is_sequence(locality_domain_ids)
               else (locality_domain_ids,) * nb_groups)
    if len(domains) != nb_groups:
        raise ValueError("All sequence options must have the same length")
    if all(d is None for d in domains):
        return
    if driver_version() < _LOCALITY_DRIVER:
        raise RuntimeError("Green Context localization requires user mode driver and "
                           "cuda.bindings package 13.4+")
    for d in domains:
        if d is not None and (type(d) is bool or not isinstance(d, int) or d < 0):
            raise ValueError("locality_domain_ids entries must be nonnegative integers or None")
    raise UnsupportedError("greenctx cannot place a group in a locality domain yet (the C "
                           "library's gctx_group has no domain field): pass "
                           "locality_domain_ids=None and read each partition's "
                           "locality_domain_id")


# Prepared splits: the C arguments (which the library only reads) of each distinct request of
# exact ints and bools (True == 1 can't mix two up), as a program's loop repeats them; each call
# makes its own outputs. Bounded: emptied when full.
_PREPARED: dict[Any, Any] = {}
_PREPARED_MAX = 256
_ONE_HANDLE = ctypes.c_void_p * 1  # a remainder's output: an array passes with no byref()
# split's C call without ctypes' conversion of each argument (_capi.bare: it passes the
# prepared pointer to the options, not the struct), while lib.gctx_partition_split is the
# declared function: one replaced (a tracer, the tests' call counter) sees every call.
_DECLARED_SPLIT = lib.gctx_partition_split
_BARE_SPLIT = _capi.bare("gctx_partition_split")
_new = object.__new__


def prepare(num_sms: Any, coscheduled_sm_count: Any, preferred_coscheduled_sm_count: Any,
            backfill: Any, locality_domain_ids: Any, rounding: Rounding | str) -> Any:
    """A split's C arguments, checked in PyTorch's order, made once per distinct request: (groups,
    their count, options, the type of the outputs array, a pointer to the options)."""
    if locality_domain_ids is not None:
        cacheable = False
    elif (type(num_sms) is int and type(coscheduled_sm_count) is int  # one group, quickly
            and type(preferred_coscheduled_sm_count) is int and type(backfill) is bool):
        cacheable = True
    else:
        cacheable = (_exact(num_sms, int) and _exact(coscheduled_sm_count, int)
                     and _exact(preferred_coscheduled_sm_count, int) and _exact(backfill, bool))
    key = (num_sms, coscheduled_sm_count, preferred_coscheduled_sm_count, backfill, rounding)
    if cacheable:
        try:
            prepared = _PREPARED.get(key)
        except TypeError:  # an unhashable rounding: refused below, after the groups' checks
            prepared, cacheable = None, False
        if prepared is not None:
            return prepared
    groups = _groups_array(num_sms, coscheduled_sm_count, preferred_coscheduled_sm_count,
                           backfill)
    n = len(groups)
    if locality_domain_ids is not None:
        _check_locality_domains(locality_domain_ids, n)
    options = split_options(rounding)
    prepared = (groups, n, options, ctypes.c_void_p * n, ctypes.byref(options))
    if cacheable:
        if len(_PREPARED) >= _PREPARED_MAX:
            _PREPARED.clear()
        _PREPARED[key] = prepared
    return prepared


def relation(name: str, a: Handle, b: Handle) -> Relation:
    """What lib.<name> knows of two objects' SMs (partitions, or contexts)."""
    if not isinstance(b, type(a)):
        raise TypeError(f"relation() needs a {type(a).__name__}, got {type(b).__name__}")
    return RELATIONS[out_int(name, a._handle, b._handle)]


class SMPartition(Handle):
    """A set of SMs of one device (torch.cuda.green_contexts.SMPartition; docs/python.md)."""

    __slots__ = ()
    _release = "gctx_partition_release"
    _how = ("get one from SMPartition.from_device(), SMPartition.split() or "
            "GreenContext.sm_partition")
    _info_call = "gctx_partition_get_info"

    @classmethod
    def from_device(cls, device_id: int | None = None) -> SMPartition:
        """Every SM of a device (None: PyTorch's current device, else 0)."""
        return cls._made_by("gctx_partition_from_device", device_ordinal(device_id))

    device_id = info_field("device", "The device index of these SMs.")
    sm_count = info_field("sm_count", "The number of SMs in this partition.")
    coscheduled_sm_count = info_field(
        "coscheduled_alignment",
        "The co-scheduled SM alignment: group sizes of a split of it are multiples of it.")
    min_partition_sms = info_field("min_partition_sms",
                                   "The smallest group a split of this partition can give.")

    @property
    def kind(self) -> str:
        """"device", "group", "remainder" or "context"."""
        return _KINDS[self._get_info().kind]

    @property
    def structured(self) -> bool:
        """False for remainders and what is made from them: no co-scheduling guarantee."""
        return bool(self._get_info().structured)

    @property
    def locality_domain_id(self) -> int | None:
        """The locality domain the driver reports (13.4+), or None."""
        info = self._get_info()
        return info.locality_domain_id if info.has_locality_domain else None

    def split(self, *, num_sms: int | Sequence[int] = 0,
              coscheduled_sm_count: int | Sequence[int] = 0,
              preferred_coscheduled_sm_count: int | Sequence[int] = 0,
              backfill: bool | Sequence[bool] = False,
              locality_domain_ids: int | None | Sequence[int | None] = None,
              rounding: Rounding | str = "strict",
              ) -> tuple[tuple[SMPartition, ...], SMPartition | None]:
        """Splits these SMs into disjoint groups and a remainder: ((groups...), remainder),
        remainder None when no SM is left over (docs/python.md has the options)."""
        groups, n, options, outputs_type, options_ref = prepare(
            num_sms, coscheduled_sm_count, preferred_coscheduled_sm_count, backfill,
            locality_domain_ids, rounding)
        h = self._h  # the _handle property's check, without its call
        if h is None:
            h = self._handle  # raises: destroyed
        outputs, remainder = outputs_type(), _ONE_HANDLE()
        call = lib.gctx_partition_split
        if call is _DECLARED_SPLIT:
            code = _BARE_SPLIT(h, groups, n, options_ref, outputs, remainder, None, None)
        else:
            code = call(h, groups, n, options, outputs, remainder, None, None)
        if code:
            raise error_from_status(code)
        rest = remainder[0]
        if n == 1:
            # The one group of the common split, and the remainder, made as Handle._wrap
            # makes them, without its Python calls for each (on every split); SMPartition
            # and its subclasses keep Handle's _wrap and _own (none overrides them).
            cls = type(self)
            group = _new(cls)
            group._h = group._key = outputs[0]
            group._info = None
            if rest is None:
                return (group,), None
            rest_part = _new(cls)
            rest_part._h = rest_part._key = rest
            rest_part._info = None
            return (group,), rest_part
        wrap = self._wrap
        # A slice reads a ctypes array in one step (iterating it ends on an IndexError).
        return tuple(map(wrap, outputs[:])), wrap(rest) if rest else None

    def plan(self, *, num_sms: int | Sequence[int] = 0,
             coscheduled_sm_count: int | Sequence[int] = 0,
             preferred_coscheduled_sm_count: int | Sequence[int] = 0,
             backfill: bool | Sequence[bool] = False,
             locality_domain_ids: int | None | Sequence[int | None] = None,
             rounding: Rounding | str = "strict") -> SplitPlan:
        """What split() would give for the same arguments, making nothing: a SplitPlan."""
        groups, n, options, _, _ = prepare(num_sms, coscheduled_sm_count,
                                        preferred_coscheduled_sm_count, backfill,
                                        locality_domain_ids, rounding)
        plan = _capi.SplitPlan()
        group_plans = (_capi.GroupPlan * n)()
        check(lib.gctx_partition_plan(self._handle, groups, n, options,
                                      ctypes.byref(plan), group_plans))
        return from_struct(SplitPlan, plan, device_id=plan.device,
                           path=_PATHS.get(plan.path, str(plan.path)),
                           groups=tuple(from_struct(GroupPlan, g) for g in group_plans))

    def relation(self, other: SMPartition) -> Relation:
        """Relation.DISJOINT, MAY_OVERLAP or OVERLAP: what is known of the two SM sets."""
        return relation("gctx_partition_relation", self, other)

    def to_sm_resource(self) -> Any:
        """These SMs as a cuda.core SMResource (through a green context)."""
        return _interop.to_sm_resource(self._handle)

    @classmethod
    def from_sm_resource(cls, resource: Any, device_id: int | None = None) -> SMPartition:
        """A cuda.core SMResource's SMs as an SMPartition (through a green context)."""
        return cls._wrap(_interop.from_sm_resource(resource, device_id))

    def _describe(self) -> str:
        return f"{self.kind} of device {self.device_id}: {self.sm_count} SMs"

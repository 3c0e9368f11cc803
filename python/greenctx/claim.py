"""Claims: SMs of a GPU held across processes (the C library's gctx_claim_*; docs/python.md,
"Claims"), so that tenants of one GPU never build green contexts on the same SMs."""
from __future__ import annotations

import ctypes
import math
import numbers
from dataclasses import dataclass
from typing import Any

from . import _capi
from ._capi import lib
from ._errors import BusyError, check, out, out_int
from ._object import INT_MAX, Handle, count, device_ordinal, from_struct, path, text
from .context import GreenContext
from .partition import Rounding, SMPartition, split_options

_EVENT_KINDS = {_capi.GCTX_CLAIM_EVENT_RELEASED: "released", _capi.GCTX_CLAIM_EVENT_DIED: "died",
                _capi.GCTX_CLAIM_EVENT_FAULT: "fault"}


def _request(num_sms: int | None, request: str | None) -> bytes:
    if (num_sms is None) == (request is None):
        raise ValueError("give num_sms (a count) or request (\"16\", \"25%\" or \"rest\"), "
                         "not both")
    return str(count("num_sms", num_sms)).encode() if request is None else text("request", request)


def _timeout_ms(timeout: Any) -> int:
    """Seconds (None: forever) as the C field's milliseconds, refused where the conversion
    would change their meaning (the range is the C library's to check)."""
    if timeout is None:
        return -1
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds or None, got "
                        f"{type(timeout).__name__} {timeout!r:.60}")
    seconds = float(timeout)
    if math.isnan(seconds) or seconds < 0:
        raise ValueError(f"timeout must be seconds >= 0 (None: wait forever), got {timeout!r}")
    if seconds * 1000 > INT_MAX:  # gctx_claim_options.timeout_ms is a C int
        raise ValueError(f"timeout={timeout!r} s is beyond the C field: at most "
                         f"{INT_MAX / 1000} s (None: wait forever)")
    ms = round(seconds * 1000)
    if seconds > 0 and ms == 0:
        raise ValueError(f"timeout={timeout!r} s is below the 1 ms the C library counts in: "
                         f"give 0 (no wait) or at least 0.0005")
    return ms


_PRIORITIES = {"throughput": _capi.GCTX_CLAIM_PRIORITY_THROUGHPUT,
               "latency": _capi.GCTX_CLAIM_PRIORITY_LATENCY}


def _priority(priority: str | int) -> int:
    if isinstance(priority, str) and priority in _PRIORITIES:
        return _PRIORITIES[priority]
    if isinstance(priority, int) and not isinstance(priority, bool) and 0 <= priority <= 100:
        return priority
    raise ValueError(f"priority must be \"throughput\", \"latency\" or an int 0 .. 100, "
                     f"got {priority!r}")


_CLASSES = {None: _capi.GCTX_TENANT_UNGUARDED, "latency": _capi.GCTX_TENANT_LATENCY,
            "best-effort": _capi.GCTX_TENANT_BEST_EFFORT}
_CLASS_NAMES = {v: k for k, v in _CLASSES.items()}


def _options(wait: bool, timeout: float | None, rounding: Rounding | str = "strict",
             label: str | None = None, runtime_dir: str | None = None,
             priority: int = 0) -> _capi.Struct:
    o = _capi.ClaimOptions()
    o.priority = priority
    if wait:
        o.flags |= _capi.GCTX_CLAIM_WAIT
        o.timeout_ms = _timeout_ms(timeout)
    elif timeout is not None:
        raise ValueError("timeout needs wait=True")
    o.rounding = split_options(rounding).rounding
    o.label = None if label is None else text("label", label) or None
    o.runtime_dir = None if runtime_dir is None else path("runtime_dir", runtime_dir) or None
    return o


@dataclass(frozen=True)
class ClaimInfo:
    """A claim as the registry records it."""
    device_id: int
    device_uuid: str
    pid: int
    user: str
    command: str
    label: str
    since_ns: int   # acquired or last resized (CLOCK_REALTIME)
    mps: bool       # the holder is an MPS client
    self: bool      # held by this process
    sm_count: int
    granules: tuple[int, ...]
    tenant: str | None  # "latency", "best-effort" or None (unguarded)
    target_ms: float    # a latency tenant's target (0: target_factor x its step alone)
    target_factor: float
    step_ms: float      # a latency tenant's last published p99 step (0: none)
    guard_level: int    # a best-effort tenant: 0 (nothing held back) .. 5 (at its floor)
    guard_reason: str   # "steps", "power", "hbm"; "" at level 0
    guard_sms: int      # the SMs the guard allows it


def _claim_info(c: Any) -> ClaimInfo:
    return from_struct(ClaimInfo, c, device_id=c.device, granules=tuple(c.granules[:c.nb_granules]),
                       tenant=_CLASS_NAMES.get(c.tenant_class))


@dataclass(frozen=True)
class GuardAdvice:
    """What the guard allows a best-effort tenant now (Claim.guard)."""
    level: int            # 0: nothing held back .. 5: at its floor
    sms: int              # resize to these (rounding="down"), and back when they grow
    max_outstanding: int  # launches in flight for a paced program; 0: no cap
    reason: str           # "steps", "power", "hbm"; "" at level 0
    latency_tenants: int
    duty_permille: int    # a paced program's share of time (1000: all); cooperate with sms
    request: str          # what cooperate() resizes with to have sms: their count, or "rest"
                          # for everything back with the SMs no count takes (the H200's 4)


@dataclass(frozen=True)
class ClaimEvent:
    kind: str       # "released", "died" (its holder ended holding it) or "fault"
    time_ns: int
    pid: int
    command: str
    cuda_result: int
    sm_count: int


class Claim(Handle):
    """SMs of a device held by this process; `with` gives a GreenContext on them."""

    __slots__ = ("_context", "_priority")
    _context: GreenContext | None  # the one `with` gives
    _priority: int
    _release = "gctx_claim_release"
    _info_call = "gctx_claim_get_info"

    def __init__(self, num_sms: int | None = None, *, request: str | None = None,
                 wait: bool = False, timeout: float | None = None, device_id: int | None = None,
                 rounding: Rounding | str = "strict", label: str | None = None,
                 runtime_dir: str | None = None, priority: str | int = "throughput",
                 tenant: str | None = None, target_ms: float | None = None,
                 target_factor: float | None = None, floor_sms: int | None = None) -> None:
        level = _priority(priority)
        options = _options(wait, timeout, rounding, label, runtime_dir, level)
        if tenant not in _CLASSES:
            raise ValueError(f"tenant must be \"latency\", \"best-effort\" or None, got {tenant!r}")
        options.tenant_class = _CLASSES[tenant]
        options.target_ms, options.target_factor = target_ms or 0.0, target_factor or 0.0
        options.floor_sms = floor_sms or 0
        self._own(out_int("gctx_claim_acquire", device_ordinal(device_id),
                          _request(num_sms, request), options))
        self._priority = level

    def _own(self, h: int | None) -> None:
        super()._own(h)
        self._context, self._priority = None, _capi.GCTX_CLAIM_PRIORITY_THROUGHPUT

    @property
    def info(self) -> ClaimInfo:
        """What the registry records now (asked each time: a resize changes it)."""
        self._info = None
        return _claim_info(self._get_info())

    @property
    def sm_count(self) -> int:
        return self.info.sm_count

    @property
    def granules(self) -> tuple[int, ...]:
        return self.info.granules

    def context(self) -> GreenContext:
        """A GreenContext on the claim's SMs now (the claim's own, through the cache)."""
        return GreenContext._made_by("gctx_claim_context", self._handle, None)

    def partition(self) -> SMPartition:
        return SMPartition._made_by("gctx_claim_partition", self._handle)

    def resize(self, num_sms: int | None = None, *, request: str | None = None,
               wait: bool = False, timeout: float | None = None,
               rounding: Rounding | str = "strict", priority: str | int | None = None) -> None:
        """Grows or shrinks the claim; a wait posts its want at priority (None: the claim's)."""
        if priority is not None:
            self._priority = _priority(priority)
        options = _options(wait, timeout, rounding, priority=self._priority)
        check(lib.gctx_claim_resize(self._handle, _request(num_sms, request),
                                    ctypes.byref(options), None))

    def pressure(self) -> int:
        """The SMs other tenants of at least this claim's priority wait for (0: nobody)."""
        return out_int("gctx_claim_pressure", self._handle)

    def cooperate(self, allowed: int | GuardAdvice | None = None, *,
                  minimum_sms: int = 8) -> int:
        """One step of a cooperative tenant (docs/python.md): gives back what is wanted,
        shrinks to what is allowed, grows toward it when nobody waits; returns its SMs."""
        have, wanted = self.sm_count, self.pressure()
        advice = allowed if isinstance(allowed, GuardAdvice) else None
        allowed_sms = advice.sms if advice else allowed
        target = have if allowed_sms is None else count("allowed", allowed_sms)
        if wanted:
            target = min(target, have - wanted)
        target = max(target, minimum_sms)
        if target < have or (target > have and not wanted):
            # the library's request for the advice's SMs ("rest": the ones no count takes)
            request = advice.request if advice and target == advice.sms else str(target)
            try:
                self.resize(request=request, rounding="down")  # never above what is allowed
            except BusyError:
                pass  # another tenant took the free SMs first: stay, ask again next step
        return self.sm_count

    def report_step(self, step_ms: float) -> None:
        """Publishes a latency tenant's step, in ms, for the guards."""
        check(lib.gctx_claim_report_step(self._handle, float(step_ms)))

    def guard(self, sm_clock_mhz: int = 0, max_sm_clock_mhz: int = 0, throttle: int = 0,
              hbm_busy: float = 0.0) -> GuardAdvice:
        """One look of a best-effort tenant's guard: what it may use now (signals none given:
        NVML's); follow it with cooperate(advice)."""
        signals = _capi.GuardSignals(sm_clock_mhz=sm_clock_mhz,
                                     max_sm_clock_mhz=max_sm_clock_mhz, throttle=throttle,
                                     hbm_busy=hbm_busy)
        given = sm_clock_mhz or max_sm_clock_mhz or throttle or hbm_busy
        return from_struct(GuardAdvice, out("gctx_claim_guard", self._handle,
                                            ctypes.byref(signals) if given else None))

    def guard_wait(self, timeout: float = 0.015) -> None:
        """Waits until the guard's next look is due (a latency tenant's step, a claim's
        change), at the latest after timeout seconds."""
        check(lib.gctx_claim_guard_wait(self._handle, int(timeout * 1000)))

    def export(self) -> str:
        """The token a process started by this one joins with (Claim.join)."""
        buf = ctypes.create_string_buffer(1024)
        check(lib.gctx_claim_export(self._handle, buf, len(buf)))
        return buf.value.decode()

    @classmethod
    def join(cls, token: str, device_id: int | None = None) -> Claim:
        return cls._made_by("gctx_claim_join", device_ordinal(device_id), text("token", token))

    def __enter__(self) -> GreenContext:  # type: ignore[override]  # the context, not self
        self._context = self.context()
        return self._context

    def __exit__(self, *exc: object) -> None:
        if self._context is not None:
            self._context.close()
            self._context = None
        self.close()

    def _describe(self) -> str:
        info = self.info
        label = f", label {info.label!r}" if info.label else ""
        return (f"{info.sm_count} SMs on GPU {info.device_id}, "
                f"granules {_ranges(info.granules)}{label}")


def _ranges(numbers: tuple[int, ...]) -> str:
    """Sorted numbers as runs: (0, 1, 2, 3, 8, 9) -> "0-3,8-9"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs) or "none"


def claim(num_sms: int | None = None, *, request: str | None = None, wait: bool = False,
          timeout: float | None = None, device_id: int | None = None,
          rounding: Rounding | str = "strict", label: str | None = None,
          runtime_dir: str | None = None, priority: str | int = "throughput",
          tenant: str | None = None, target_ms: float | None = None,
          target_factor: float | None = None, floor_sms: int | None = None) -> Claim:
    """Claims SMs of a device: `with greenctx.claim(num_sms=16) as ctx:` gives a GreenContext
    on them (docs/python.md, "Claims")."""
    return Claim(**locals())  # the arguments, as they came


def claim_count(num_sms: int | None = None, *, request: str | None = None,
                device_id: int | None = None,
                rounding: Rounding | str = "strict") -> tuple[int, int]:
    """What claim() would make of a request, claiming nothing: (SMs, how many such claims the
    device holds at once); (0, 0) for "rest"."""
    sms, at_once = ctypes.c_uint(), ctypes.c_uint()
    rounding_value = split_options(rounding).rounding
    check(lib.gctx_claim_count(device_ordinal(device_id), _request(num_sms, request),
                               rounding_value, ctypes.byref(sms), ctypes.byref(at_once)))
    return sms.value, at_once.value


def claims(device_id: int | None = None, runtime_dir: str | None = None) -> list[ClaimInfo]:
    """Every live claim of a device (stale ones are removed first, never shown)."""
    device = device_ordinal(device_id)
    where = None if runtime_dir is None else path("runtime_dir", runtime_dir) or None
    n = ctypes.c_uint()
    check(lib.gctx_claim_list(device, where, None, 0, ctypes.byref(n), None))
    capacity = n.value + 8  # room for claims made meanwhile
    out = (_capi.ClaimInfo * capacity)()
    out[0].size = ctypes.sizeof(_capi.ClaimInfo)  # the array's layout: its first element's
    check(lib.gctx_claim_list(device, where, out, capacity, ctypes.byref(n), None))
    return [_claim_info(c) for c in out[:min(n.value, capacity)]]


def claim_events(device_id: int | None = None,
                 runtime_dir: str | None = None) -> list[ClaimEvent]:
    """The device's last events (claims released, holders that died, faults), oldest first."""
    capacity = 64
    events = (_capi.ClaimEvent * capacity)()
    events[0].size = ctypes.sizeof(_capi.ClaimEvent)
    where = None if runtime_dir is None else path("runtime_dir", runtime_dir) or None
    n = out_int("gctx_claim_events", device_ordinal(device_id), where, events, capacity)
    return [from_struct(ClaimEvent, e, kind=_EVENT_KINDS[e.kind])
            for e in events[:min(n, capacity)]]


@dataclass(frozen=True)
class MpsInfo:
    pipe_dir: str
    daemon_running: bool           # this process's CUDA will be an MPS client
    active_thread_percentage: int  # below 100, claims are refused
    pinned_mem_limit: str


def mps_info() -> MpsInfo:
    """MPS as this process sees it (no driver call)."""
    return from_struct(MpsInfo, out("gctx_mps_get_info"))

"""greenctx: carve a CUDA GPU's SMs into disjoint partitions with green contexts: PyTorch's
torch.cuda.green_contexts API (SMPartition, GreenContext) on every driver with green contexts
(12.4+), made by greenctx's C library, and more. docs/python.md has the whole API.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._capi import lib
from ._object import device_ordinal, driver_version, from_struct
from ._errors import (BusyError, DriverError, Error, InsufficientSMsError,
                      InvalidArgumentError, InvalidHandleError, NoDeviceError, NoDriverError,
                      OutOfMemoryError, RegistryError, UnsupportedError, check, out,
                      out_int)
from .cache import CacheStats, cache_limit, cache_stats, set_cache_limit, trim_cache
from .claim import (Claim, ClaimEvent, ClaimInfo, MpsInfo, claim, claim_count, claim_events, claims,
                    mps_info)
from .controller import Controller, Decision, Workload
from .layouts import Layouts
from .partition import GroupPlan, Relation, Rounding, SMPartition, SplitPlan
from .simulation import simulate
from .context import Event, GreenContext, Stream

__version__ = lib.gctx_version_string().decode()

__all__ = [
    "SMPartition", "GreenContext", "Stream", "Event", "SplitPlan", "GroupPlan", "Relation",
    "Rounding", "DeviceInfo", "Error", "InvalidArgumentError", "InsufficientSMsError",
    "UnsupportedError", "NoDriverError", "NoDeviceError", "InvalidHandleError", "DriverError",
    "OutOfMemoryError", "driver_version", "driver_path", "device_count", "device_info",
    "current_sm_count", "features", "library_path", "ReleaseFailures", "release_failures",
    "retry_release_failures", "Layouts", "CacheStats", "cache_stats", "cache_limit",
    "set_cache_limit", "trim_cache", "Controller", "Workload", "Decision", "BusyError",
    "RegistryError", "Claim", "ClaimInfo", "ClaimEvent", "MpsInfo", "claim", "claim_count",
    "claims", "claim_events", "mps_info", "simulate"]


def library_path() -> str:
    """The libgreenctx.so this package uses ($GREENCTX_LIBRARY, else its own copy)."""
    return str(lib.path)


def driver_path() -> str:
    """The file the CUDA driver was loaded from."""
    check(lib.gctx_init())
    return str(lib.gctx_driver_path().decode())


def device_count() -> int:
    return out_int("gctx_device_count")


def current_sm_count() -> int:
    """The SMs the calling thread's current CUDA context runs on (docs/python.md)."""
    return out_int("gctx_current_sm_count")


@dataclass(frozen=True)
class DeviceInfo:
    """A device and its SM rules (as `greenctx info` shows them)."""
    device_id: int
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    min_partition_sms: int      # smallest SM count one partition can have
    coscheduled_alignment: int  # partition sizes are multiples of this
    sm_rules_derived: bool      # the two above come from the architecture (drivers < 13.0)
    locality_domain_count: int


def device_info(device_id: int | None = 0) -> DeviceInfo:
    info = out("gctx_device_get_info", device_ordinal(device_id))
    return from_struct(DeviceInfo, info, device_id=info.ordinal,
                       compute_capability=(info.cc_major, info.cc_minor))


def features() -> dict[str, tuple[bool, str]]:
    """{name: (available, reason)} for every feature the library knows, in its order."""
    found: dict[str, tuple[bool, str]] = {}
    value = 0
    while (name := lib.gctx_feature_name(value)) is not None:
        found[name.decode()] = (bool(lib.gctx_feature_available(value)),
                                lib.gctx_feature_reason(value).decode())
        value += 1
    return found


@dataclass(frozen=True)
class ReleaseFailures:
    """Driver destroy calls that failed during releases (the objects are kept and retried)."""
    events: int
    streams: int
    green_contexts: int
    primary_contexts: int
    kernels: int
    total: int
    pending: int           # driver objects kept, not yet destroyed
    last_cuda_result: int
    last_message: str


def release_failures() -> ReleaseFailures:
    """The process's counts of failed driver destroys behind releases."""
    return from_struct(ReleaseFailures, out("gctx_release_failures_get"))


def retry_release_failures() -> None:
    """Tries again to destroy every kept driver object; raises DriverError if some are left."""
    check(lib.gctx_release_failures_retry())

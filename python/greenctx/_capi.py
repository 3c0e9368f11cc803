"""The C library, loaded with ctypes: its structs and the signature of every function used.

Nothing here knows a rule of green contexts: the library decides counts, rounding and
legality, and says why in gctx_last_error(). This module only declares the C ABI of the
public headers (include/greenctx.h, greenctx_claims.h, greenctx_controller.h; test_abi.py
checks every declaration against them) and loads the shared library: $GREENCTX_LIBRARY when
set, else the copy built into this package (greenctx/_native/lib, beside the tool, the
simulated driver and the preload: setup.py).

Handles (partitions, contexts, streams, events, and the CUDA handles) are opaque values:
c_void_p, passed back as they came, never dereferenced.
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = os.path.join(_HERE, "_native")
# The one library the package holds, under its SONAME (libgreenctx.so.0.MINOR before 1.0).
PACKAGED_LIBRARY = (sorted(glob.glob(os.path.join(NATIVE, "lib", "libgreenctx.so.*"))) or
                    [os.path.join(NATIVE, "lib", "libgreenctx.so.0")])[0]
PACKAGED_TOOL = os.path.join(NATIVE, "bin", "greenctx")
PACKAGED_SIM = os.path.join(NATIVE, "lib", "greenctx", "libgreenctx_sim.so")

c_int, c_uint, c_ull, c_size_t = ctypes.c_int, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_size_t
handle = ctypes.c_void_p
handle_out = ctypes.POINTER(ctypes.c_void_p)
status = ctypes.c_int  # gctx_status, and every other enum, is an int-sized enum


# The enum values the binding passes or reads, under their C names.
GCTX_PARTITION_DEVICE, GCTX_PARTITION_GROUP = 0, 1
GCTX_PARTITION_REMAINDER, GCTX_PARTITION_CONTEXT = 2, 3
GCTX_ROUND_STRICT, GCTX_ROUND_DOWN, GCTX_ROUND_NEAREST, GCTX_ROUND_UP = 0, 1, 2, 3
GCTX_SPLIT_PATH_STRUCTURED, GCTX_SPLIT_PATH_GRANULES, GCTX_SPLIT_PATH_FINE_GRANULES = 1, 2, 3
GCTX_RELATION_DISJOINT, GCTX_RELATION_MAY_OVERLAP, GCTX_RELATION_OVERLAP = 0, 1, 2
GCTX_WORKQUEUE_SCOPE_DEFAULT, GCTX_WORKQUEUE_SCOPE_DEVICE_CTX = 0, 1
GCTX_WORKQUEUE_SCOPE_BALANCED = 2
GCTX_CONTEXT_FRESH = 0x1  # gctx_context_options.flags
GCTX_LAYOUTS_ORDER_ALL, GCTX_LAYOUTS_ORDER_BY_PART = 0x0, 0x1  # gctx_layouts_switch_ordered
GCTX_WORKLOAD_LATENCY, GCTX_WORKLOAD_THROUGHPUT = 0, 1
GCTX_CLAIM_WAIT, GCTX_CLAIM_INHERIT, GCTX_CLAIM_SHARED_DIR = 0x1, 0x2, 0x4  # claim options
GCTX_CLAIM_MAX_GRANULES = 128
GCTX_CLAIM_PRIORITY_THROUGHPUT, GCTX_CLAIM_PRIORITY_LATENCY = 0, 50
GCTX_TENANT_UNGUARDED, GCTX_TENANT_LATENCY, GCTX_TENANT_BEST_EFFORT = 0, 1, 2
GCTX_GUARD_THROTTLE_POWER, GCTX_GUARD_THROTTLE_THERMAL = 0x1, 0x2
GCTX_CLAIM_EVENT_RELEASED, GCTX_CLAIM_EVENT_DIED, GCTX_CLAIM_EVENT_FAULT = 0, 1, 2


class _Struct(ctypes.Structure):
    """A C struct; size-prefixed ones get their size field set on construction."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._fields_[0][0] == "size":
            self.size = ctypes.sizeof(self)


class DeviceInfo(_Struct):
    _fields_ = [("size", c_size_t), ("ordinal", c_int), ("name", ctypes.c_char * 256),
                ("cc_major", c_int), ("cc_minor", c_int), ("sm_count", c_uint),
                ("min_partition_sms", c_uint), ("coscheduled_alignment", c_uint),
                ("sm_rules_derived", c_int), ("locality_domain_count", c_uint)]


class PartitionInfo(_Struct):
    _fields_ = [("size", c_size_t), ("device", c_int), ("kind", c_int), ("sm_count", c_uint),
                ("min_partition_sms", c_uint), ("coscheduled_alignment", c_uint),
                ("structured", c_int), ("flags", c_uint), ("has_locality_domain", c_int),
                ("locality_domain_id", c_uint)]


class Group(_Struct):
    _fields_ = [("num_sms", c_uint), ("coscheduled_sm_count", c_uint),
                ("preferred_coscheduled_sm_count", c_uint), ("backfill", c_int),
                ("reserved", c_uint * 4)]  # must stay zero


class SplitOptions(_Struct):
    _fields_ = [("size", c_size_t), ("rounding", c_int)]


class GroupPlan(_Struct):
    _fields_ = [("requested_sms", c_uint), ("sm_count", c_uint),
                ("coscheduled_sm_count", c_uint), ("rounded", c_int), ("backfilled", c_int),
                ("reserved", c_uint * 4)]


class SplitPlan(_Struct):
    _fields_ = [("size", c_size_t), ("device", c_int), ("driver_version", c_int),
                ("path", c_int), ("granule_sms", c_uint), ("nb_groups", c_uint),
                ("remainder_sms", c_uint), ("rounded", c_int), ("nested", c_int)]


class ContextOptions(_Struct):
    _fields_ = [("size", c_size_t), ("workqueue_scope", c_int),
                ("workqueue_concurrency_limit", c_uint), ("flags", c_uint)]


class ContextInfo(_Struct):
    _fields_ = [("size", c_size_t), ("device", c_int), ("sm_count", c_uint), ("has_id", c_int),
                ("id", c_ull), ("adopted", c_int), ("workqueue_scope", c_int),
                ("workqueue_concurrency_limit", c_uint)]


class StreamOptions(_Struct):
    _fields_ = [("size", c_size_t), ("priority", c_int), ("blocking", c_int)]


class ReleaseFailures(_Struct):
    _fields_ = [("size", c_size_t), ("events", c_ull), ("streams", c_ull),
                ("green_contexts", c_ull), ("primary_contexts", c_ull), ("kernels", c_ull),
                ("total", c_ull), ("pending", c_uint), ("last_cuda_result", c_int),
                ("last_message", ctypes.c_char * 256)]


class CacheStats(_Struct):
    _fields_ = [("size", c_size_t), ("hits", c_ull), ("misses", c_ull), ("evictions", c_ull),
                ("cached", c_uint), ("live", c_uint), ("limit", c_uint)]


class Workload(_Struct):
    _fields_ = [("size", c_size_t), ("kind", c_int), ("target_s", ctypes.c_double),
                ("floor_per_s", ctypes.c_double), ("nb_points", c_uint),
                ("prior_sms", ctypes.POINTER(c_uint)),
                ("prior_step_s", ctypes.POINTER(ctypes.c_double)),
                ("ref_demand", ctypes.c_double), ("demand_weight", ctypes.c_double),
                ("bytes_per_step", ctypes.c_double)]


class ControllerOptions(_Struct):
    _fields_ = [("size", c_size_t), ("device_sms", c_uint), ("hbm_bytes_per_s", ctypes.c_double),
                ("hysteresis", ctypes.c_double), ("dwell", c_uint),
                ("learning_rate", ctypes.c_double), ("latency_margin", ctypes.c_double),
                ("shared_slowdown", ctypes.c_double), ("disjoint", c_int)]


CONTROLLER_MAX_WORKLOADS = 8


class ControllerDecision(_Struct):
    _fields_ = [("size", c_size_t), ("candidate", c_uint), ("no_split", c_int),
                ("changed", c_int), ("unmet", c_uint),
                ("sm_counts", c_uint * CONTROLLER_MAX_WORKLOADS),
                ("predicted_step_s", ctypes.c_double * CONTROLLER_MAX_WORKLOADS),
                ("reason", ctypes.c_char * 256)]
class ClaimOptions(_Struct):
    _fields_ = [("size", c_size_t), ("flags", c_uint), ("timeout_ms", c_int),
                ("rounding", c_int), ("label", ctypes.c_char_p), ("command", ctypes.c_char_p),
                ("runtime_dir", ctypes.c_char_p), ("priority", c_int),
                ("tenant_class", c_int), ("target_ms", ctypes.c_double),
                ("target_factor", ctypes.c_double), ("floor_sms", c_uint)]


class ClaimInfo(_Struct):
    _fields_ = [("size", c_size_t), ("device", c_int), ("device_uuid", ctypes.c_char * 48),
                ("pid", c_int), ("uid", c_uint), ("user", ctypes.c_char * 64),
                ("command", ctypes.c_char * 256), ("label", ctypes.c_char * 128),
                ("since_ns", ctypes.c_longlong), ("mps", c_int), ("self", c_int),
                ("sm_count", c_uint), ("nb_granules", c_uint),
                ("granules", ctypes.c_ushort * GCTX_CLAIM_MAX_GRANULES),
                ("tenant_class", c_int), ("target_ms", ctypes.c_double),
                ("target_factor", ctypes.c_double), ("step_ms", ctypes.c_double),
                ("alone_ms", ctypes.c_double), ("step_ns", ctypes.c_longlong),
                ("guard_level", c_uint), ("guard_reason", ctypes.c_char * 16),
                ("guard_sms", c_uint), ("guard_outstanding", c_uint),
                ("guard_duty_permille", c_uint), ("guard_paced", c_int),
                ("guard_held_ms", ctypes.c_double)]


class ClaimUsage(_Struct):
    _fields_ = [("size", c_size_t), ("sm_count", c_uint), ("free_sms", c_uint),
                ("nb_granules", c_uint), ("granule_sms", c_uint * GCTX_CLAIM_MAX_GRANULES),
                ("granule_free", ctypes.c_ubyte * GCTX_CLAIM_MAX_GRANULES),
                ("nb_claims", c_uint), ("mps_active", c_int), ("path", ctypes.c_char * 512)]


class ClaimEvent(_Struct):
    _fields_ = [("size", c_size_t), ("kind", c_int), ("time_ns", ctypes.c_longlong),
                ("pid", c_int), ("command", ctypes.c_char * 256), ("cuda_result", c_int),
                ("sm_count", c_uint)]


class GuardSignals(_Struct):
    _fields_ = [("size", c_size_t), ("sm_clock_mhz", c_uint), ("max_sm_clock_mhz", c_uint),
                ("throttle", c_uint), ("hbm_busy", ctypes.c_double)]


class GuardAdvice(_Struct):
    _fields_ = [("size", c_size_t), ("level", c_uint), ("sms", c_uint),
                ("max_outstanding", c_uint), ("reason", ctypes.c_char * 16),
                ("latency_tenants", c_uint), ("duty_permille", c_uint),
                ("request", ctypes.c_char * 16)]


class MpsInfo(_Struct):
    _fields_ = [("size", c_size_t), ("pipe_dir", ctypes.c_char * 512),
                ("daemon_running", c_int), ("active_thread_percentage", c_int),
                ("pinned_mem_limit", ctypes.c_char * 128)]


# The structs above, by their C names (for the layout test).
STRUCTS = {"gctx_device_info": DeviceInfo, "gctx_partition_info": PartitionInfo,
           "gctx_group": Group, "gctx_split_options": SplitOptions,
           "gctx_group_plan": GroupPlan, "gctx_split_plan": SplitPlan,
           "gctx_context_options": ContextOptions, "gctx_context_info": ContextInfo,
           "gctx_stream_options": StreamOptions, "gctx_release_failures": ReleaseFailures,
           "gctx_cache_stats": CacheStats, "gctx_workload": Workload,
           "gctx_controller_options": ControllerOptions,
           "gctx_controller_decision": ControllerDecision, "gctx_claim_options": ClaimOptions,
           "gctx_claim_info": ClaimInfo, "gctx_claim_usage": ClaimUsage,
           "gctx_claim_event": ClaimEvent, "gctx_mps_info": MpsInfo,
           "gctx_guard_signals": GuardSignals, "gctx_guard_advice": GuardAdvice}


def _p(t: Any) -> Any:
    return ctypes.POINTER(t)


# name -> (restype, argtypes), exactly as the public headers (include/) declare them.
SIGNATURES = {
    "gctx_version": (c_int, []),
    "gctx_version_string": (ctypes.c_char_p, []),
    "gctx_status_name": (ctypes.c_char_p, [status]),
    "gctx_last_error": (ctypes.c_char_p, []),
    "gctx_last_cuda_result": (c_int, []),
    "gctx_init": (status, []),
    "gctx_driver_version": (status, [_p(c_int)]),
    "gctx_driver_path": (ctypes.c_char_p, []),
    "gctx_feature_available": (c_int, [c_int]),
    "gctx_feature_reason": (ctypes.c_char_p, [c_int]),
    "gctx_feature_name": (ctypes.c_char_p, [c_int]),
    "gctx_device_count": (status, [_p(c_int)]),
    "gctx_current_sm_count": (status, [_p(c_uint)]),
    "gctx_device_get_info": (status, [c_int, _p(DeviceInfo)]),
    "gctx_partition_from_device": (status, [c_int, handle_out]),
    "gctx_partition_get_info": (status, [handle, _p(PartitionInfo)]),
    "gctx_partition_release": (None, [handle]),
    "gctx_partition_plan": (status, [handle, _p(Group), c_uint, _p(SplitOptions),
                                     _p(SplitPlan), _p(GroupPlan)]),
    "gctx_partition_split": (status, [handle, _p(Group), c_uint, _p(SplitOptions), handle_out,
                                      handle_out, _p(SplitPlan), _p(GroupPlan)]),
    "gctx_partition_relation": (status, [handle, handle, _p(c_int)]),
    "gctx_context_create": (status, [handle, _p(ContextOptions), handle_out]),
    "gctx_context_create_with_sms": (status, [c_int, c_uint, _p(ContextOptions), handle_out]),
    "gctx_context_split_device": (status, [c_int, _p(Group), c_uint, _p(SplitOptions),
                                           _p(ContextOptions), handle_out, handle_out]),
    "gctx_context_create_at_least": (status, [c_int, c_uint, _p(ContextOptions), handle_out]),
    "gctx_context_adopt": (status, [handle, handle_out]),
    "gctx_context_release": (None, [handle]),
    "gctx_context_get_info": (status, [handle, _p(ContextInfo)]),
    "gctx_context_partition": (status, [handle, handle_out]),
    "gctx_context_locality_domain": (status, [handle, _p(c_uint)]),
    "gctx_context_green_handle": (handle, [handle]),
    "gctx_context_cu_context": (handle, [handle]),
    "gctx_context_relation": (status, [handle, handle, _p(c_int)]),
    "gctx_device_get_max_workqueue_concurrency": (status, [c_int, _p(c_uint)]),
    "gctx_stream_create": (status, [handle, _p(StreamOptions), handle_out]),
    "gctx_stream_adopt": (status, [handle, handle_out]),
    "gctx_stream_release": (None, [handle]),
    "gctx_stream_handle": (handle, [handle]),
    "gctx_stream_context": (status, [handle, handle_out]),
    "gctx_stream_priority": (status, [handle, _p(c_int)]),
    "gctx_stream_synchronize": (status, [handle]),
    "gctx_stream_get_green_context": (status, [handle, handle_out]),
    "gctx_event_create": (status, [handle, handle_out]),
    "gctx_event_release": (None, [handle]),
    "gctx_event_handle": (handle, [handle]),
    "gctx_event_record": (status, [handle, handle]),
    "gctx_event_record_context": (status, [handle, handle]),
    "gctx_stream_wait_event": (status, [handle, handle]),
    "gctx_context_wait_event": (status, [handle, handle]),
    "gctx_event_synchronize": (status, [handle]),
    "gctx_stream_observe_sms": (status, [handle, _p(c_uint), c_uint, _p(c_uint)]),
    "gctx_release_failures_get": (status, [_p(ReleaseFailures)]),
    "gctx_release_failures_retry": (status, []),
    "gctx_partition_retain": (handle, [handle]),
    "gctx_context_retain": (handle, [handle]),
    "gctx_stream_retain": (handle, [handle]),
    "gctx_cache_get_limit": (status, [c_int, _p(c_uint)]),
    "gctx_cache_set_limit": (status, [c_int, c_uint]),
    "gctx_cache_trim": (status, [c_int]),
    "gctx_cache_get_stats": (status, [c_int, _p(CacheStats)]),
    "gctx_layouts_create": (status, [c_int, _p(c_uint), c_uint, c_uint, _p(ContextOptions),
                                     handle_out]),
    "gctx_layouts_release": (None, [handle]),
    "gctx_layouts_switch": (status, [handle, c_uint, handle_out]),
    "gctx_layouts_switch_ordered": (status, [handle, c_uint, c_uint, handle_out]),
    "gctx_layouts_get": (status, [handle, c_uint, c_uint, handle_out, handle_out, handle_out]),
    "gctx_layouts_get_active": (status, [handle, _p(c_uint)]),
    "gctx_controller_create": (status, [_p(Workload), c_uint, _p(c_uint), c_uint,
                                        _p(ControllerOptions), handle_out]),
    "gctx_controller_release": (None, [handle]),
    "gctx_controller_candidates": (status, [handle, _p(c_uint)]),
    "gctx_controller_set_demand": (status, [handle, c_uint, ctypes.c_double]),
    "gctx_controller_observe": (status, [handle, c_uint, ctypes.c_double]),
    "gctx_controller_decide": (status, [handle, _p(ControllerDecision)]),
    "gctx_controller_predict": (status, [handle, c_uint, c_uint, _p(ctypes.c_double)]),
    "gctx_claim_acquire": (status, [c_int, ctypes.c_char_p, _p(ClaimOptions), handle_out]),
    "gctx_claim_retain": (handle, [handle]),
    "gctx_claim_count": (status, [c_int, ctypes.c_char_p, c_int, _p(c_uint), _p(c_uint)]),
    "gctx_claim_release": (None, [handle]),
    "gctx_claim_partition": (status, [handle, handle_out]),
    "gctx_claim_context": (status, [handle, _p(ContextOptions), handle_out]),
    "gctx_claim_stream": (status, [handle, handle_out]),
    "gctx_claim_resize": (status, [handle, ctypes.c_char_p, _p(ClaimOptions), handle_out]),
    "gctx_claim_pressure": (status, [handle, _p(c_uint)]),
    "gctx_claim_get_info": (status, [handle, _p(ClaimInfo)]),
    "gctx_claim_list": (status, [c_int, ctypes.c_char_p, _p(ClaimInfo), c_uint, _p(c_uint),
                                 _p(ClaimUsage)]),
    "gctx_claim_events": (status, [c_int, ctypes.c_char_p, _p(ClaimEvent), c_uint,
                                   _p(c_uint)]),
    "gctx_claim_list_uuid": (status, [ctypes.c_char_p, ctypes.c_char_p, _p(ClaimInfo), c_uint,
                                      _p(c_uint), _p(ClaimUsage)]),
    "gctx_claim_events_uuid": (status, [ctypes.c_char_p, ctypes.c_char_p, _p(ClaimEvent), c_uint,
                                        _p(c_uint)]),
    "gctx_claim_registries": (status, [ctypes.c_char_p, ctypes.c_char_p, c_uint, _p(c_uint)]),
    "gctx_claim_report_fault": (status, [handle, c_int]),
    "gctx_claim_report_step": (status, [handle, ctypes.c_double]),
    "gctx_claim_guard": (status, [handle, _p(GuardSignals), _p(GuardAdvice)]),
    "gctx_claim_report_held": (status, [handle, ctypes.c_double]),
    "gctx_claim_export": (status, [handle, ctypes.c_char_p, c_size_t]),
    "gctx_claim_join": (status, [c_int, ctypes.c_char_p, handle_out]),
    "gctx_claim_token_descriptor": (status, [ctypes.c_char_p, _p(c_int)]),
    "gctx_mps_get_info": (status, [_p(MpsInfo)]),
}


def library_path() -> str:
    return os.environ.get("GREENCTX_LIBRARY") or PACKAGED_LIBRARY


def load(path: str | None = None) -> Any:
    """The C library with every function of SIGNATURES declared."""
    path = path or library_path()
    try:
        lib: Any = ctypes.CDLL(path)
    except OSError as e:
        hint = ("" if os.environ.get("GREENCTX_LIBRARY") else
                " (the package's own build of the C library is missing: install greenctx's"
                " wheel (scripts/build_wheel.sh builds it; greenctx is not on PyPI) or"
                " `pip install /path/to/checkout` (-e for an editable one), or set"
                " GREENCTX_LIBRARY to a libgreenctx.so)")
        raise ImportError(f"greenctx: cannot load the C library {path}: {e}{hint}") from e
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    lib.path = path
    return lib


lib = load()


def bare(name: str) -> Any:
    """lib.<name> for a hot call: ctypes converts its first argument (a handle, passed as an
    int) as the declared function does, and passes the others as they are (a C function may
    take more arguments than its argtypes), where the declared function runs each through its
    argtype's from_param, a cost every split would pay per argument. Those
    others must be C objects already: arrays or byref() for pointers, None for NULL, ints for
    int parameters (a Python int for a pointer, or a struct, would be passed wrong), so it is
    only for the package's callers that make every argument themselves. ctypes then makes a
    variadic call, which passes these arguments as the plain one does on the Linux ABIs the
    library is built for (x86-64, aarch64)."""
    fn = lib[name]  # a new function object: lib.<name> keeps its prototype
    restype, argtypes = SIGNATURES[name]
    fn.restype, fn.argtypes = restype, argtypes[:1]
    return fn

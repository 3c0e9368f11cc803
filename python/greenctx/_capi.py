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
import re
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


# C types by the names the struct declarations below use; a pointer's star goes with its type.
_C_TYPES: dict[str, Any] = {
    "int": c_int, "unsigned": c_uint, "size_t": c_size_t, "double": ctypes.c_double,
    "long long": ctypes.c_longlong, "unsigned long long": c_ull, "char": ctypes.c_char,
    "unsigned short": ctypes.c_ushort, "unsigned char": ctypes.c_ubyte,
    "char*": ctypes.c_char_p, "unsigned*": ctypes.POINTER(c_uint),
    "double*": ctypes.POINTER(ctypes.c_double)}


def c_fields(declarations: str) -> list[tuple[str, Any]]:
    """ctypes' _fields_ of a struct body written as in C ("int a, b; char name[16]"; enums
    as int): the fields in the header's order, for a reader to hold the two side by side."""
    fields = []
    for declaration in filter(str.strip, declarations.split(";")):
        first, *more = declaration.split(",")
        c_type, _, name = first.strip().rpartition(" ")
        for declarator in (name, *more):
            field, _, length = declarator.strip().rstrip("]").partition("[")
            ctype = _C_TYPES[c_type]
            if length:
                ctype = ctype * (int(length) if length.isdigit() else globals()[length])
            fields.append((field, ctype))
    return fields


class _Struct(ctypes.Structure):
    """A C struct; size-prefixed ones get their size field set on construction."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._fields_[0][0] == "size":
            self.size = ctypes.sizeof(self)


class DeviceInfo(_Struct):
    _fields_ = c_fields("""size_t size; int ordinal; char name[256]; int cc_major, cc_minor;
        unsigned sm_count, min_partition_sms, coscheduled_alignment; int sm_rules_derived;
        unsigned locality_domain_count""")


class PartitionInfo(_Struct):
    _fields_ = c_fields("""size_t size; int device, kind;
        unsigned sm_count, min_partition_sms, coscheduled_alignment; int structured;
        unsigned flags; int has_locality_domain; unsigned locality_domain_id""")


class Group(_Struct):
    _fields_ = c_fields("""unsigned num_sms, coscheduled_sm_count, preferred_coscheduled_sm_count;
        int backfill; unsigned reserved[4]""")  # reserved: must stay zero


class SplitOptions(_Struct):
    _fields_ = c_fields("size_t size; int rounding")


class GroupPlan(_Struct):
    _fields_ = c_fields("""unsigned requested_sms, sm_count, coscheduled_sm_count;
        int rounded, backfilled; unsigned reserved[4]""")


class SplitPlan(_Struct):
    _fields_ = c_fields("""size_t size; int device, driver_version, path;
        unsigned granule_sms, nb_groups, remainder_sms; int rounded, nested""")


class ContextOptions(_Struct):
    _fields_ = c_fields("""size_t size; int workqueue_scope; unsigned workqueue_concurrency_limit,
        flags""")


class ContextInfo(_Struct):
    _fields_ = c_fields("""size_t size; int device; unsigned sm_count; int has_id;
        unsigned long long id; int adopted, workqueue_scope;
        unsigned workqueue_concurrency_limit""")


class StreamOptions(_Struct):
    _fields_ = c_fields("size_t size; int priority, blocking")


class ReleaseFailures(_Struct):
    _fields_ = c_fields("""size_t size;
        unsigned long long events, streams, green_contexts, primary_contexts, kernels, total;
        unsigned pending; int last_cuda_result; char last_message[256]""")


class CacheStats(_Struct):
    _fields_ = c_fields("""size_t size; unsigned long long hits, misses, evictions;
        unsigned cached, live, limit""")


class Workload(_Struct):
    _fields_ = c_fields("""size_t size; int kind; double target_s, floor_per_s;
        unsigned nb_points; unsigned* prior_sms; double* prior_step_s;
        double ref_demand, demand_weight, bytes_per_step""")


class ControllerOptions(_Struct):
    _fields_ = c_fields("""size_t size; unsigned device_sms; double hbm_bytes_per_s, hysteresis;
        unsigned dwell; double learning_rate, latency_margin, shared_slowdown; int disjoint""")


CONTROLLER_MAX_WORKLOADS = 8


class ControllerDecision(_Struct):
    _fields_ = c_fields("""size_t size; unsigned candidate; int no_split, changed;
        unsigned unmet, sm_counts[CONTROLLER_MAX_WORKLOADS];
        double predicted_step_s[CONTROLLER_MAX_WORKLOADS]; char reason[256]""")


class ClaimOptions(_Struct):
    _fields_ = c_fields("""size_t size; unsigned flags; int timeout_ms, rounding;
        char* label; char* command; char* runtime_dir; int priority, tenant_class;
        double target_ms, target_factor; unsigned floor_sms""")


class ClaimInfo(_Struct):
    _fields_ = c_fields("""size_t size; int device; char device_uuid[48]; int pid; unsigned uid;
        char user[64], command[256], label[128]; long long since_ns; int mps, self;
        unsigned sm_count, nb_granules; unsigned short granules[GCTX_CLAIM_MAX_GRANULES];
        int tenant_class; double target_ms, target_factor, step_ms, alone_ms;
        long long step_ns; unsigned guard_level; char guard_reason[16];
        unsigned guard_sms, guard_outstanding, guard_duty_permille; int guard_paced;
        double guard_held_ms""")


class ClaimUsage(_Struct):
    _fields_ = c_fields("""size_t size; unsigned sm_count, free_sms, nb_granules,
        granule_sms[GCTX_CLAIM_MAX_GRANULES]; unsigned char granule_free[GCTX_CLAIM_MAX_GRANULES];
        unsigned nb_claims; int mps_active; char path[512]""")


class ClaimEvent(_Struct):
    _fields_ = c_fields("""size_t size; int kind; long long time_ns; int pid; char command[256];
        int cuda_result; unsigned sm_count""")


class GuardSignals(_Struct):
    _fields_ = c_fields("""size_t size; unsigned sm_clock_mhz, max_sm_clock_mhz, throttle;
        double hbm_busy""")


class GuardAdvice(_Struct):
    _fields_ = c_fields("""size_t size; unsigned level, sms, max_outstanding; char reason[16];
        unsigned latency_tenants, duty_permille; char request[16]""")


class MpsInfo(_Struct):
    _fields_ = c_fields("""size_t size; char pipe_dir[512]; int daemon_running,
        active_thread_percentage; char pinned_mem_limit[128]""")


# The structs above, by their C names (DeviceInfo: gctx_device_info), for the layout test.
STRUCTS = {"gctx" + re.sub(r"([A-Z])", r"_\1", cls.__name__).lower(): cls
           for cls in _Struct.__subclasses__()}


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

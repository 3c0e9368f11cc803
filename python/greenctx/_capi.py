"""The C library, loaded with ctypes: the structs and signatures of the public headers
(include/; test_abi.py checks them), and nothing of green contexts' rules: the library decides
and says why in gctx_last_error(). Handles are opaque c_void_p values, never dereferenced.
"""
from __future__ import annotations

import ctypes
import glob
import os
import re
from typing import Any

NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")
# The one library the package holds, under its SONAME (libgreenctx.so.0.MINOR before 1.0).
PACKAGED_LIBRARY = (sorted(glob.glob(os.path.join(NATIVE, "lib", "libgreenctx.so.*"))) or
                    [os.path.join(NATIVE, "lib", "libgreenctx.so.0")])[0]
PACKAGED_TOOL = os.path.join(NATIVE, "bin", "greenctx")
PACKAGED_SIM = os.path.join(NATIVE, "lib", "greenctx", "libgreenctx_sim.so")

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
GCTX_CLAIM_WAIT = 0x1  # gctx_claim_options.flags
GCTX_CLAIM_MAX_GRANULES = 128
GCTX_CLAIM_PRIORITY_THROUGHPUT, GCTX_CLAIM_PRIORITY_LATENCY = 0, 50
GCTX_TENANT_UNGUARDED, GCTX_TENANT_LATENCY, GCTX_TENANT_BEST_EFFORT = 0, 1, 2
GCTX_CLAIM_EVENT_RELEASED, GCTX_CLAIM_EVENT_DIED, GCTX_CLAIM_EVENT_FAULT = 0, 1, 2


# C types by the names the declarations below use; a pointer's star goes with its type.
# gctx_status, and every other enum, is an int-sized enum.
_C_TYPES: dict[str, Any] = {
    "void": None, "int": ctypes.c_int, "status": ctypes.c_int, "unsigned": ctypes.c_uint,
    "size_t": ctypes.c_size_t, "double": ctypes.c_double, "long long": ctypes.c_longlong,
    "unsigned long long": ctypes.c_ulonglong, "char": ctypes.c_char,
    "unsigned short": ctypes.c_ushort, "unsigned char": ctypes.c_ubyte, "char*": ctypes.c_char_p,
    "int*": ctypes.POINTER(ctypes.c_int), "unsigned*": ctypes.POINTER(ctypes.c_uint),
    "double*": ctypes.POINTER(ctypes.c_double), "handle": ctypes.c_void_p,
    "handle*": ctypes.POINTER(ctypes.c_void_p)}


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


class Struct(ctypes.Structure):
    """A C struct; size-prefixed ones get their size field set on construction."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._fields_[0][0] == "size":
            self.size = ctypes.sizeof(self)


STRUCTS: dict[str, type[Struct]] = {}  # by their C names, for the layout test


def _struct(c_name: str, body: str) -> type[Struct]:
    """The Struct of a C struct's body (c_fields), registered in STRUCTS."""
    cls = STRUCTS[c_name] = type(c_name, (Struct,), {"_fields_": c_fields(body)})
    return cls


DeviceInfo = _struct("gctx_device_info", """size_t size; int ordinal; char name[256]; int cc_major,
    cc_minor; unsigned sm_count, min_partition_sms, coscheduled_alignment; int sm_rules_derived;
    unsigned locality_domain_count""")
PartitionInfo = _struct("gctx_partition_info", """size_t size; int device, kind; unsigned sm_count,
    min_partition_sms, coscheduled_alignment; int structured; unsigned flags;
    int has_locality_domain; unsigned locality_domain_id""")
Group = _struct("gctx_group", """unsigned num_sms, coscheduled_sm_count,
    preferred_coscheduled_sm_count; int backfill; unsigned reserved[4]""")  # reserved: zero
SplitOptions = _struct("gctx_split_options", "size_t size; int rounding")
GroupPlan = _struct("gctx_group_plan", """unsigned requested_sms, sm_count, coscheduled_sm_count;
    int rounded, backfilled; unsigned reserved[4]""")
SplitPlan = _struct("gctx_split_plan", """size_t size; int device, driver_version, path;
    unsigned granule_sms, nb_groups, remainder_sms; int rounded, nested""")
ContextOptions = _struct("gctx_context_options", """size_t size; int workqueue_scope;
    unsigned workqueue_concurrency_limit, flags""")
ContextInfo = _struct("gctx_context_info", """size_t size; int device; unsigned sm_count;
    int has_id; unsigned long long id; int adopted, workqueue_scope;
    unsigned workqueue_concurrency_limit""")
StreamOptions = _struct("gctx_stream_options", "size_t size; int priority, blocking")
ReleaseFailures = _struct("gctx_release_failures", """size_t size; unsigned long long events,
    streams, green_contexts, primary_contexts, kernels, total; unsigned pending;
    int last_cuda_result; char last_message[256]""")
CacheStats = _struct("gctx_cache_stats", """size_t size; unsigned long long hits, misses, evictions;
    unsigned cached, live, limit""")
Workload = _struct("gctx_workload", """size_t size; int kind; double target_s, floor_per_s;
    unsigned nb_points; unsigned* prior_sms; double* prior_step_s; double ref_demand, demand_weight,
    bytes_per_step""")
ControllerOptions = _struct("gctx_controller_options", """size_t size; unsigned device_sms;
    double hbm_bytes_per_s, hysteresis; unsigned dwell; double learning_rate, latency_margin,
    shared_slowdown; int disjoint""")
CONTROLLER_MAX_WORKLOADS = 8
ControllerDecision = _struct("gctx_controller_decision", """size_t size; unsigned candidate;
    int no_split, changed; unsigned unmet, sm_counts[CONTROLLER_MAX_WORKLOADS];
    double predicted_step_s[CONTROLLER_MAX_WORKLOADS]; char reason[256]""")
ClaimOptions = _struct("gctx_claim_options", """size_t size; unsigned flags; int timeout_ms,
    rounding; char* label; char* command; char* runtime_dir; int priority, tenant_class;
    double target_ms, target_factor; unsigned floor_sms""")
ClaimInfo = _struct("gctx_claim_info", """size_t size; int device; char device_uuid[48]; int pid;
    unsigned uid; char user[64], command[256], label[128]; long long since_ns; int mps, self;
    unsigned sm_count, nb_granules; unsigned short granules[GCTX_CLAIM_MAX_GRANULES];
    int tenant_class; double target_ms, target_factor, step_ms, alone_ms; long long step_ns;
    unsigned guard_level; char guard_reason[16]; unsigned guard_sms, guard_outstanding,
    guard_duty_permille; int guard_paced; double guard_held_ms""")
ClaimUsage = _struct("gctx_claim_usage", """size_t size; unsigned sm_count, free_sms, nb_granules,
    granule_sms[GCTX_CLAIM_MAX_GRANULES]; unsigned char granule_free[GCTX_CLAIM_MAX_GRANULES];
    unsigned nb_claims; int mps_active; char path[512]""")
ClaimEvent = _struct("gctx_claim_event", """size_t size; int kind; long long time_ns; int pid;
    char command[256]; int cuda_result; unsigned sm_count""")
GuardSignals = _struct("gctx_guard_signals", """size_t size; unsigned sm_clock_mhz,
    max_sm_clock_mhz, throttle; double hbm_busy""")
GuardAdvice = _struct("gctx_guard_advice", """size_t size; unsigned level, sms, max_outstanding;
    char reason[16]; unsigned latency_tenants, duty_permille; char request[16]""")
MpsInfo = _struct("gctx_mps_info", """size_t size; char pipe_dir[512]; int daemon_running,
    active_thread_percentage; char pinned_mem_limit[128]""")


def prototypes(declarations: str) -> dict[str, tuple[Any, list[Any]]]:
    """name -> (restype, argtypes) of C prototypes without parameter names
    ("status gctx_f(handle, Struct*);"; handle: any opaque or CUDA handle)."""
    def c_type(name: str) -> Any:
        return _C_TYPES[name] if name in _C_TYPES else ctypes.POINTER(globals()[name[:-1]])
    return {name: (c_type(restype), [c_type(a.strip()) for a in args.split(",") if a.strip()])
            for restype, name, args in re.findall(r"([\w*]+) (\w+)\(([^)]*)\);", declarations)}


# Every function the package binds, exactly as the public headers (include/) declare them.
SIGNATURES = prototypes("""
    int gctx_version(); char* gctx_version_string(); char* gctx_status_name(status);
    char* gctx_last_error(); int gctx_last_cuda_result(); status gctx_init();
    status gctx_driver_version(int*); char* gctx_driver_path(); int gctx_feature_available(int);
    char* gctx_feature_reason(int); char* gctx_feature_name(int); status gctx_device_count(int*);
    status gctx_current_sm_count(unsigned*); status gctx_device_get_info(int, DeviceInfo*);
    status gctx_device_get_max_workqueue_concurrency(int, unsigned*);

    status gctx_partition_from_device(int, handle*); handle gctx_partition_retain(handle);
    status gctx_partition_get_info(handle, PartitionInfo*); void gctx_partition_release(handle);
    status gctx_partition_plan(handle, Group*, unsigned, SplitOptions*, SplitPlan*, GroupPlan*);
    status gctx_partition_split(handle, Group*, unsigned, SplitOptions*, handle*, handle*,
                                SplitPlan*, GroupPlan*);
    status gctx_partition_relation(handle, handle, int*);

    status gctx_context_create(handle, ContextOptions*, handle*);
    status gctx_context_create_with_sms(int, unsigned, ContextOptions*, handle*);
    status gctx_context_split_device(int, Group*, unsigned, SplitOptions*, ContextOptions*,
                                     handle*, handle*);
    status gctx_context_create_at_least(int, unsigned, ContextOptions*, handle*);
    status gctx_context_adopt(handle, handle*); handle gctx_context_retain(handle);
    void gctx_context_release(handle); status gctx_context_get_info(handle, ContextInfo*);
    status gctx_context_partition(handle, handle*);
    status gctx_context_locality_domain(handle, unsigned*);
    handle gctx_context_green_handle(handle); handle gctx_context_cu_context(handle);
    status gctx_context_relation(handle, handle, int*);
    status gctx_context_wait_event(handle, handle);

    status gctx_stream_create(handle, StreamOptions*, handle*);
    status gctx_stream_adopt(handle, handle*); handle gctx_stream_retain(handle);
    void gctx_stream_release(handle); handle gctx_stream_handle(handle);
    status gctx_stream_context(handle, handle*); status gctx_stream_priority(handle, int*);
    status gctx_stream_synchronize(handle); status gctx_stream_get_green_context(handle, handle*);
    status gctx_stream_wait_event(handle, handle);
    status gctx_stream_observe_sms(handle, unsigned*, unsigned, unsigned*);

    status gctx_event_create(handle, handle*); void gctx_event_release(handle);
    handle gctx_event_handle(handle); status gctx_event_record(handle, handle);
    status gctx_event_record_context(handle, handle); status gctx_event_synchronize(handle);

    status gctx_release_failures_get(ReleaseFailures*); status gctx_release_failures_retry();
    status gctx_cache_get_limit(int, unsigned*); status gctx_cache_set_limit(int, unsigned);
    status gctx_cache_trim(int); status gctx_cache_get_stats(int, CacheStats*);

    status gctx_layouts_create(int, unsigned*, unsigned, unsigned, ContextOptions*, handle*);
    void gctx_layouts_release(handle); status gctx_layouts_switch(handle, unsigned, handle*);
    status gctx_layouts_switch_ordered(handle, unsigned, unsigned, handle*);
    status gctx_layouts_get(handle, unsigned, unsigned, handle*, handle*, handle*);
    status gctx_layouts_get_active(handle, unsigned*);

    status gctx_controller_create(Workload*, unsigned, unsigned*, unsigned, ControllerOptions*,
                                  handle*);
    void gctx_controller_release(handle); status gctx_controller_candidates(handle, unsigned*);
    status gctx_controller_set_demand(handle, unsigned, double);
    status gctx_controller_observe(handle, unsigned, double);
    status gctx_controller_decide(handle, ControllerDecision*);
    status gctx_controller_predict(handle, unsigned, unsigned, double*);

    status gctx_claim_acquire(int, char*, ClaimOptions*, handle*); handle gctx_claim_retain(handle);
    status gctx_claim_count(int, char*, int, unsigned*, unsigned*);
    void gctx_claim_release(handle); status gctx_claim_partition(handle, handle*);
    status gctx_claim_context(handle, ContextOptions*, handle*);
    status gctx_claim_stream(handle, handle*);
    status gctx_claim_resize(handle, char*, ClaimOptions*, handle*);
    status gctx_claim_pressure(handle, unsigned*); status gctx_claim_get_info(handle, ClaimInfo*);
    status gctx_claim_list(int, char*, ClaimInfo*, unsigned, unsigned*, ClaimUsage*);
    status gctx_claim_events(int, char*, ClaimEvent*, unsigned, unsigned*);
    status gctx_claim_list_uuid(char*, char*, ClaimInfo*, unsigned, unsigned*, ClaimUsage*);
    status gctx_claim_events_uuid(char*, char*, ClaimEvent*, unsigned, unsigned*);
    status gctx_claim_registries(char*, char*, unsigned, unsigned*);
    status gctx_claim_report_fault(handle, int); status gctx_claim_report_step(handle, double);
    status gctx_claim_guard(handle, GuardSignals*, GuardAdvice*);
    status gctx_claim_guard_wait(handle, int);
    status gctx_claim_report_held(handle, double); status gctx_claim_export(handle, char*, size_t);
    status gctx_claim_join(int, char*, handle*); status gctx_claim_token_descriptor(char*, int*);
    status gctx_mps_get_info(MpsInfo*);
""")


def load() -> Any:
    """The C library ($GREENCTX_LIBRARY, else the package's) with SIGNATURES declared."""
    path = os.environ.get("GREENCTX_LIBRARY") or PACKAGED_LIBRARY
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
        fn.restype, fn.argtypes = restype, argtypes
    lib.path = path
    return lib


lib = load()


def bare(name: str) -> Any:
    """lib.<name> for a hot call: only its first argument (the handle) goes through ctypes'
    from_param; the caller passes the others as C objects already (arrays, byref(), None,
    ints), as a variadic call passes them on x86-64 and aarch64."""
    fn = lib[name]  # a new function object: lib.<name> keeps its prototype
    restype, argtypes = SIGNATURES[name]
    fn.restype, fn.argtypes = restype, argtypes[:1]
    return fn

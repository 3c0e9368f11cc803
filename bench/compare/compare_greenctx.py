"""greenctx through ctypes: the public C API only (GREENCTX_LIBRARY names libgreenctx.so,
default build/src/libgreenctx.so)."""
import ctypes
import os
import time

from common import capabilities, emit, fail, made_by, time_entries, time_op

LIB = "greenctx"
path = os.environ.get("GREENCTX_LIBRARY", "build/src/libgreenctx.so")
try:
    g = ctypes.CDLL(path)
except OSError as e:
    fail(LIB, f"cannot load {path}: {e}")


class Group(ctypes.Structure):
    _fields_ = [("num_sms", ctypes.c_uint), ("coscheduled_sm_count", ctypes.c_uint),
                ("preferred_coscheduled_sm_count", ctypes.c_uint), ("backfill", ctypes.c_int),
                ("reserved", ctypes.c_uint * 4)]  # must stay zero (0.2.0)


P = ctypes.c_void_p
for name, args in [("gctx_partition_from_device", [ctypes.c_int, ctypes.POINTER(P)]),
                   ("gctx_partition_split", [P, ctypes.POINTER(Group), ctypes.c_uint, P,
                                             ctypes.POINTER(P), ctypes.POINTER(P), P, P]),
                   ("gctx_context_create", [P, P, ctypes.POINTER(P)]),
                   ("gctx_stream_create", [P, P, ctypes.POINTER(P)]),
                   ("gctx_partition_release", [P]), ("gctx_context_release", [P]),
                   ("gctx_stream_release", [P])]:
    getattr(g, name).argtypes = args
for name in ("gctx_last_error", "gctx_version_string", "gctx_driver_path"):
    getattr(g, name).restype = ctypes.c_char_p


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {g.gctx_last_error().decode()}")


def groups(*specs):  # (num_sms, coscheduled, backfill) a group
    return (Group * len(specs))(*[Group(n, c, 0, b) for n, c, b in specs])


whole = P()
check(g.gctx_partition_from_device(0, ctypes.byref(whole)), "gctx_partition_from_device")
emit(lib=LIB, version=g.gctx_version_string().decode())


def split(specs):
    gs = groups(*specs)
    parts = (P * len(specs))()
    check(g.gctx_partition_split(whole, gs, len(specs), None, parts, None, None, None),
          "gctx_partition_split")
    return list(parts)


def context_and_stream(part):
    ctx, stream = P(), P()
    check(g.gctx_context_create(part, None, ctypes.byref(ctx)), "gctx_context_create")
    check(g.gctx_stream_create(ctx, None, ctypes.byref(stream)), "gctx_stream_create")
    return ctx, stream


def release(parts, pairs=()):
    """What split and context_and_stream made: the streams and contexts, then the parts."""
    for ctx, stream in pairs:
        g.gctx_stream_release(stream)
        g.gctx_context_release(ctx)
    for p in parts:
        g.gctx_partition_release(p)


def one_context():
    parts = split([(16, 0, 0)])
    return parts, [context_and_stream(parts[0])]


def two_disjoint():
    parts = split([(16, 0, 0), (0, 0, 1)])
    return parts, [context_and_stream(p) for p in parts]


def driver_entry(cuda, name, *argtypes):
    """A driver entry point through cuGetProcAddress (the simulated driver exports no other)."""
    get = cuda.cuGetProcAddress_v2
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(P), ctypes.c_int, ctypes.c_uint64,
                    ctypes.POINTER(ctypes.c_int)]
    pfn, found = P(), ctypes.c_int()
    if get(name.encode(), ctypes.byref(pfn), 12040, 0, ctypes.byref(found)) or not pfn.value:
        raise OSError(f"the driver gives no {name}")
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pfn.value)


def c_split(request, with_remainder):
    """One gctx_partition_split, its arguments made once, as a C caller passes them."""
    n = len(request)
    parts, rest = (P * n)(), P()
    rest_out = ctypes.byref(rest) if with_remainder else None
    call, clock = g.gctx_partition_split, time.perf_counter_ns

    def release_made():
        release(list(parts) + [rest.value])
        rest.value = None

    def once():
        t0 = clock()
        status = call(whole, request, n, None, parts, rest_out, None, None)
        ns = clock() - t0
        check(status, "gctx_partition_split")
        return ns, release_made
    return once


SIXTEEN, SIXTEEN_REST = groups((16, 0, 0)), groups((16, 0, 0), (0, 0, 1))
try:  # the driver the library loaded (the simulated one under GREENCTX_CUDA_LIBRARY)
    cuda = ctypes.CDLL(g.gctx_driver_path().decode())
except OSError:
    cuda = None
# "split 16": the package's call (cuda.core's request); "split {16, rest}": `greenctx bench
# overhead`'s.
time_entries([(LIB, "split 16", c_split(SIXTEEN, True)),
              (LIB, "split {16, rest}", c_split(SIXTEEN_REST, False))])
# With no primary context active every create pays its initialisation; cuda.core and torch
# keep it active, greenctx does not: measured both ways.
time_op(LIB, "16 SMs: context + stream (no primary context active)",
        made_by(one_context, lambda made: release(*made)), reps=10)
try:
    primary, device = P(), ctypes.c_int()
    ok = (cuda is not None and cuda.cuInit(0) == 0 and
          driver_entry(cuda, "cuDeviceGet", ctypes.POINTER(ctypes.c_int),
                       ctypes.c_int)(ctypes.byref(device), 0) == 0 and
          driver_entry(cuda, "cuDevicePrimaryCtxRetain", ctypes.POINTER(P),
                       ctypes.c_int)(ctypes.byref(primary), device) == 0)
except (OSError, AttributeError):
    ok = False
if ok:
    time_op(LIB, "16 SMs: context + stream", made_by(one_context, lambda made: release(*made)))
    time_op(LIB, "{16, rest}: 2 disjoint contexts + streams",
            made_by(two_disjoint, lambda made: release(*made)))
else:
    emit(lib=LIB, op="16 SMs: context + stream", error="could not retain the primary context")


def probe(specs):
    parts = split(specs)
    try:
        for p in parts:
            release((), [context_and_stream(p)])
        return f"{len(parts)} groups, each with a context and a stream"
    finally:
        release(parts)


capabilities(LIB, probe, [(16, 0, 0), (32, 0, 0)], [(8, 8, 0)] * 3, [(16, 0, 0), (0, 0, 1)])
g.gctx_partition_release(whole)

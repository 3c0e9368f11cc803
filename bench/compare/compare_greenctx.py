"""greenctx through ctypes: the public C API only (GREENCTX_LIBRARY names libgreenctx.so,
default build/src/libgreenctx.so)."""
import ctypes
import os

from common import capability, emit, fail, time_op, timed

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
g.gctx_last_error.restype = ctypes.c_char_p
g.gctx_version_string.restype = ctypes.c_char_p


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {g.gctx_last_error().decode()}")


def groups(*specs):
    """specs: (num_sms, coscheduled, backfill) per group."""
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


def release_parts(parts):
    for p in parts:
        g.gctx_partition_release(p)


def context_and_stream(part):
    ctx, stream = P(), P()
    check(g.gctx_context_create(part, None, ctypes.byref(ctx)), "gctx_context_create")
    check(g.gctx_stream_create(ctx, None, ctypes.byref(stream)), "gctx_stream_create")
    return ctx, stream


def release_all(parts, made):
    for ctx, stream in made:
        g.gctx_stream_release(stream)
        g.gctx_context_release(ctx)
    release_parts(parts)


def split_only():
    ns, parts = timed(lambda: split([(16, 0, 0)]))
    return ns, lambda: release_parts(parts)


def one_context():
    def make():
        parts = split([(16, 0, 0)])
        return parts, [context_and_stream(parts[0])]
    ns, (parts, made) = timed(make)
    return ns, lambda: release_all(parts, made)


def two_disjoint():
    def make():
        parts = split([(16, 0, 0), (0, 0, 1)])
        return parts, [context_and_stream(p) for p in parts]
    ns, (parts, made) = timed(make)
    return ns, lambda: release_all(parts, made)


# cuGreenCtxCreate retains the device's primary context and the last destroy releases it: with
# no primary context active, every create pays its initialisation (the driver's documentation
# advises keeping it active). cuda.core (Device.set_current) and torch keep it active; greenctx
# does not, so it is measured both ways.
time_op(LIB, "split 16", split_only)
time_op(LIB, "16 SMs: context + stream (no primary context active)", one_context, reps=10)
g.gctx_driver_path.restype = ctypes.c_char_p


def driver_entry(cuda, name, *argtypes):
    """A driver entry point through cuGetProcAddress (the simulated driver exports no other)."""
    get = cuda.cuGetProcAddress_v2
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(P), ctypes.c_int, ctypes.c_uint64,
                    ctypes.POINTER(ctypes.c_int)]
    pfn, found = P(), ctypes.c_int()
    if get(name.encode(), ctypes.byref(pfn), 12040, 0, ctypes.byref(found)) or not pfn.value:
        raise OSError(f"the driver gives no {name}")
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pfn.value)


try:  # the driver the library loaded (the simulated one under GREENCTX_CUDA_LIBRARY)
    cuda = ctypes.CDLL(g.gctx_driver_path().decode())
    primary, device = P(), ctypes.c_int()
    ok = (cuda.cuInit(0) == 0 and
          driver_entry(cuda, "cuDeviceGet", ctypes.POINTER(ctypes.c_int),
                       ctypes.c_int)(ctypes.byref(device), 0) == 0 and
          driver_entry(cuda, "cuDevicePrimaryCtxRetain", ctypes.POINTER(P),
                       ctypes.c_int)(ctypes.byref(primary), device) == 0)
except (OSError, AttributeError):
    ok = False
if ok:
    time_op(LIB, "16 SMs: context + stream", one_context)
    time_op(LIB, "{16, rest}: 2 disjoint contexts + streams", two_disjoint)
else:
    emit(lib=LIB, op="16 SMs: context + stream", error="could not retain the primary context")


def probe(specs):
    parts = split(specs)
    try:
        for p in parts:
            ctx, stream = context_and_stream(p)
            g.gctx_stream_release(stream)
            g.gctx_context_release(ctx)
        return f"{len(parts)} groups, each with a context and a stream"
    finally:
        release_parts(parts)


capability(LIB, "per-group counts (16, 32)", lambda: probe([(16, 0, 0), (32, 0, 0)]))
capability(LIB, "coscheduled count 8, three groups of 8",
           lambda: probe([(8, 8, 0), (8, 8, 0), (8, 8, 0)]))
capability(LIB, "{16, rest} disjoint by construction", lambda: probe([(16, 0, 0), (0, 0, 1)]))
g.gctx_partition_release(whole)

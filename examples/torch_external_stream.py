#!/usr/bin/env python3
"""Run PyTorch matmuls on two disjoint SM partitions made by greenctx.

    python3 examples/torch_external_stream.py [path/to/libgreenctx.so]

The library path comes from argv[1], else $GREENCTX_LIBRARY, else build/src/libgreenctx.so.
greenctx splits device 0 into partitions of 24 and 40 SMs, makes a green context and a stream
on each, and hands back the raw CUstream, which torch.cuda.ExternalStream wraps as it is.
Prints "OK" and exits 0 when both results match a CPU reference and the partitions share no
SM; otherwise prints "MISMATCH" (a wrong result) or "FAILED" (a call failed) and exits 1.
"""
import ctypes
import os
import sys

# torch first, and a CUDA tensor, so the device's primary context exists and is current
# before greenctx makes green contexts: torch's allocations and cuBLAS handles live there.
import torch

torch.cuda.init()
torch.zeros(1, device="cuda")

GCTX_SUCCESS = 0
SMS = (24, 40)
MAX_SMS = 1024
N = 2048  # the matmuls are N x N x N


class GctxGroup(ctypes.Structure):
    """gctx_group from greenctx.h."""
    _fields_ = [
        ("num_sms", ctypes.c_uint),
        ("coscheduled_sm_count", ctypes.c_uint),
        ("preferred_coscheduled_sm_count", ctypes.c_uint),
        ("backfill", ctypes.c_int),
        ("reserved", ctypes.c_uint * 4),  # must stay zero (0.2.0)
    ]


class GctxPartitionInfo(ctypes.Structure):
    """gctx_partition_info from greenctx.h (size must be set to sizeof before the call)."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("device", ctypes.c_int),
        ("kind", ctypes.c_int),
        ("sm_count", ctypes.c_uint),
        ("min_partition_sms", ctypes.c_uint),
        ("coscheduled_alignment", ctypes.c_uint),
        ("structured", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("has_locality_domain", ctypes.c_int),
        ("locality_domain_id", ctypes.c_uint),
    ]


def load(path):
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p  # every greenctx handle is an opaque pointer-sized value
    pp = ctypes.POINTER(ctypes.c_void_p)
    status = ctypes.c_int  # gctx_status is an enum
    sigs = {
        "gctx_version_string": (ctypes.c_char_p, []),
        "gctx_last_error": (ctypes.c_char_p, []),
        "gctx_status_name": (ctypes.c_char_p, [status]),
        "gctx_partition_from_device": (status, [ctypes.c_int, pp]),
        "gctx_partition_split": (status, [p, ctypes.POINTER(GctxGroup), ctypes.c_uint,
                                          p, pp, pp, p, p]),
        "gctx_partition_get_info": (status, [p, ctypes.POINTER(GctxPartitionInfo)]),
        "gctx_partition_release": (None, [p]),
        "gctx_context_create": (status, [p, p, pp]),
        "gctx_context_release": (None, [p]),
        "gctx_stream_create": (status, [p, p, pp]),
        "gctx_stream_handle": (ctypes.c_void_p, [p]),
        "gctx_stream_observe_sms": (status, [p, ctypes.POINTER(ctypes.c_uint), ctypes.c_uint,
                                             ctypes.POINTER(ctypes.c_uint)]),
        "gctx_stream_release": (None, [p]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def check(lib, status, what):
    """Every greenctx call is checked; its message says what was asked and what would work."""
    if status != GCTX_SUCCESS:
        name = lib.gctx_status_name(status).decode()
        raise RuntimeError(f"{what} failed: {name}: {lib.gctx_last_error().decode()}")


def ranges(ids):
    """[0, 1, 2, 5] -> '0-2 5'."""
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(out)


def main():
    path = (sys.argv[1] if len(sys.argv) > 1
            else os.environ.get("GREENCTX_LIBRARY", "build/src/libgreenctx.so"))
    try:
        lib = load(path)
    except (OSError, AttributeError) as e:
        print(f"cannot use {path} as libgreenctx: {e}", file=sys.stderr)
        return 1
    print(f"greenctx {lib.gctx_version_string().decode()} ({path}), torch {torch.__version__}, "
          f"device 0: {torch.cuda.get_device_name(0)}")

    device = ctypes.c_void_p()
    parts = (ctypes.c_void_p * 2)()
    ctxs = [ctypes.c_void_p() for _ in SMS]
    streams = [ctypes.c_void_p() for _ in SMS]
    failed = False  # a result is wrong, or the partitions share SMs
    error = False  # a call failed
    try:
        check(lib, lib.gctx_partition_from_device(0, ctypes.byref(device)),
              "gctx_partition_from_device")
        groups = (GctxGroup * 2)(*(GctxGroup(n, 0, 0, 0) for n in SMS))
        # One split: its outputs are disjoint. The SMs it leaves over are dropped (remainder NULL).
        check(lib, lib.gctx_partition_split(device, groups, 2, None, parts, None, None, None),
              "gctx_partition_split")

        observed = []
        for i in range(2):
            check(lib, lib.gctx_context_create(parts[i], None, ctypes.byref(ctxs[i])),
                  "gctx_context_create")
            check(lib, lib.gctx_stream_create(ctxs[i], None, ctypes.byref(streams[i])),
                  "gctx_stream_create")
            info = GctxPartitionInfo()
            info.size = ctypes.sizeof(GctxPartitionInfo)
            check(lib, lib.gctx_partition_get_info(parts[i], ctypes.byref(info)),
                  "gctx_partition_get_info")
            ids = (ctypes.c_uint * MAX_SMS)()
            count = ctypes.c_uint()
            check(lib, lib.gctx_stream_observe_sms(streams[i], ids, MAX_SMS, ctypes.byref(count)),
                  "gctx_stream_observe_sms")
            seen = sorted(ids[k] for k in range(min(count.value, MAX_SMS)))
            observed.append(set(seen))
            print(f"partition {'AB'[i]}: {info.sm_count} SMs; its stream runs on {len(seen)} SMs: "
                  f"{ranges(seen)}")
        shared = observed[0] & observed[1]
        print(f"partitions share {len(shared)} SMs: {'MISMATCH' if shared else 'disjoint'}")
        failed |= bool(shared)

        # The raw CUstream is exactly what ExternalStream takes; torch does not own it, so it
        # must outlive every use here (greenctx releases it at the end).
        ext = [torch.cuda.ExternalStream(lib.gctx_stream_handle(s), device=0) for s in streams]

        # Inputs made on the CPU, copied on the default stream. Plain FP32 (no TF32), so the
        # tolerance below can stay tight.
        torch.set_float32_matmul_precision("highest")
        gen = torch.Generator().manual_seed(0)
        a_cpu = [torch.randn(N, N, generator=gen) for _ in SMS]
        b_cpu = [torch.randn(N, N, generator=gen) for _ in SMS]
        a = [t.to("cuda") for t in a_cpu]
        b = [t.to("cuda") for t in b_cpu]
        # Green streams never synchronise with the legacy default stream: make each wait for
        # the copies explicitly (a cross-context wait, which the driver allows).
        for s in ext:
            s.wait_stream(torch.cuda.current_stream())

        # Both at once: enqueue on both partitions, then wait for both.
        out = [None, None]
        for i, s in enumerate(ext):
            with torch.cuda.stream(s):
                out[i] = a[i] @ b[i]
        for s in ext:
            s.synchronize()

        for i in range(2):
            ref = (a_cpu[i].double() @ b_cpu[i].double()).float()
            got = out[i].cpu()
            err = (got - ref).abs().max().item()
            ok = torch.allclose(got, ref, rtol=1e-4, atol=1e-3)
            print(f"{'AB'[i]}: matmul {N}x{N}x{N} on partition {'AB'[i]}: max |error| {err:.2e}: "
                  f"{'OK' if ok else 'MISMATCH'}")
            failed |= not ok
        # torch's caching allocator keeps freed blocks filed under the stream that used them:
        # hand them back while greenctx's streams still exist, so no block outlives its stream.
        del out, a, b, ext
        torch.cuda.empty_cache()
    except RuntimeError as e:  # greenctx's, and torch's CUDA errors
        print(e, file=sys.stderr)
        error = True
    finally:
        # A stream's release waits for its work; each object keeps what it was made from
        # alive, so the order is free. NULL (None) is accepted.
        for i in range(2):
            lib.gctx_stream_release(streams[i])
            lib.gctx_context_release(ctxs[i])
            lib.gctx_partition_release(parts[i])
        lib.gctx_partition_release(device)

    print("FAILED" if error else "MISMATCH" if failed else "OK")
    return 1 if error or failed else 0


if __name__ == "__main__":
    sys.exit(main())

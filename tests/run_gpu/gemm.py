#!/usr/bin/env python3
"""bf16 8192^3 GEMM timing, and the launch cost of small kernels, for `greenctx run`:
    gemm.py plain [ITERS]          on torch's default stream (under greenctx run: confined)
    gemm.py inprocess N [ITERS]    on a greenctx green context of N SMs made in-process
    gemm.py launch-plain | launch-inprocess N    microseconds per small kernel launch
    gemm.py create N               ms to load the driver and make a context of N SMs (torch
                                   imported first, as in the programs greenctx run starts)
Prints one JSON line. $GREENCTX_LIBRARY names libgreenctx.so for the in-process modes."""
import ctypes
import json
import os
import sys
import time


def greenctx_stream(n):
    lib = ctypes.CDLL(os.environ["GREENCTX_LIBRARY"])
    lib.gctx_last_error.restype = ctypes.c_char_p
    lib.gctx_stream_handle.restype = ctypes.c_void_p
    ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
    t0 = time.perf_counter()
    failed = lib.gctx_init()
    t1 = time.perf_counter()
    if failed or lib.gctx_context_create_with_sms(0, n, None, ctypes.byref(ctx)):
        sys.exit("greenctx: " + lib.gctx_last_error().decode())
    t2 = time.perf_counter()
    if lib.gctx_stream_create(ctx, None, ctypes.byref(stream)):
        sys.exit("greenctx: " + lib.gctx_last_error().decode())
    return lib.gctx_stream_handle(stream), ((t1 - t0) * 1e3, (t2 - t0) * 1e3)


mode = sys.argv[1]
args = sys.argv[2:]
sms = int(args.pop(0)) if mode in ("inprocess", "launch-inprocess", "create") else None
iters = int(args[0]) if args else 20
if mode == "create":
    # The same cold start as the preload's in a PyTorch program: torch imported, CUDA not
    # started; then the driver (cuInit), the primary context, the split and the context.
    import torch  # noqa: F401
    _, (init_ms, create_ms) = greenctx_stream(sms)
    print(json.dumps({"mode": mode, "sms": sms, "driver_ms": init_ms, "create_ms": create_ms}))
    sys.exit(0)

import torch  # noqa: E402

torch.zeros(1, device="cuda")
stream = torch.cuda.current_stream()
if sms is not None:
    handle, _ = greenctx_stream(sms)
    stream = torch.cuda.ExternalStream(handle)
elif mode == "launch-plain":
    stream = torch.cuda.Stream()  # non-blocking, as the in-process context's stream is

with torch.cuda.stream(stream):
    if mode.startswith("launch"):
        x = torch.zeros(1, device="cuda")
        best = 1e9
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20000):
                x.add_(1)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            best = min(best, (t1 - t0) / 20000 * 1e6)
        print(json.dumps({"mode": mode, "us_per_launch": best}))
        sys.exit(0)
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        a @ b
    times = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(stream)
        a @ b
        e1.record(stream)
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    times.sort()
    print(json.dumps({"mode": mode, "median_ms": times[len(times) // 2], "min_ms": times[0]}))

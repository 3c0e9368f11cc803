#!/usr/bin/env python3
"""tenant_gemm.py START SECONDS: one tenant of scripts/gpu_tenants.sh. Waits until the wall
clock reaches START (seconds since the epoch), so that every tenant's loop begins together,
then runs bf16 8192^3 GEMMs on torch's default stream for SECONDS (under greenctx run: on its
claimed SMs) and prints one JSON line: the median and minimum ms per GEMM and how many ran."""
import json
import sys
import time

import torch

start, seconds = float(sys.argv[1]), float(sys.argv[2])
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
for _ in range(3):
    a @ b
torch.cuda.synchronize()
late = time.time() - start
while time.time() < start:
    time.sleep(0.001)
times = []
end = time.time() + seconds
while time.time() < end:
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    a @ b
    e1.record()
    e1.synchronize()
    times.append(e0.elapsed_time(e1))
times.sort()
print(json.dumps({"median_ms": times[len(times) // 2], "min_ms": times[0], "gemms": len(times),
                  "late_s": max(late, 0.0)}))

#!/usr/bin/env python3
"""A PyTorch copy hog for `greenctx run --class` on a GPU: dst.copy_(src) of 256 MiB device
tensors (cudaMemcpyAsync device to device: a copy for the driver, not a kernel launch).

copy_hog.py SECONDS [STEP_MS]: copies for SECONDS, back to back with a synchronize every 100
(a best-effort hog), or (STEP_MS > 0) one copy, STEP_MS of host work and a synchronize per
step (a latency program). Prints `copies_per_s N`."""
import sys
import time

import torch

seconds = float(sys.argv[1])
step_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
src = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
dst = torch.empty_like(src)
dst.copy_(src)
torch.cuda.synchronize()
copies = 0
start = time.monotonic()
while time.monotonic() < start + seconds:
    dst.copy_(src)
    copies += 1
    if step_ms > 0:
        time.sleep(step_ms / 1e3)
    if step_ms > 0 or copies % 100 == 0:
        torch.cuda.synchronize()
torch.cuda.synchronize()
print(f"copies_per_s {copies / (time.monotonic() - start):.1f}")

"""A persistent Triton matmul sized as Triton's persistent-matmul tutorial sizes it: one program
per SM that the device reports (the grid is the reported SM count), each looping over output
tiles. Under `greenctx run --sms N` the count reported is the partition's, so the grid is N
programs and the time scales with N (scripts/gpu_call.sh triton runs it for 16 and 64).

Prints one JSON line: the counts reported, the grid, the median time of a 8192^3 fp16 matmul
and its rate; exits 1 when the result differs from torch.matmul's.
"""
import json
import statistics
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def persistent_matmul(a, b, c, M, N, K, PROGRAMS: tl.constexpr, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    # Each program takes every PROGRAMS-th tile: with one program per SM, every SM is busy
    # until the tiles run out.
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS):
        rows = (tile // tiles_n) * BM + tl.arange(0, BM)
        cols = (tile % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ks = k0 + tl.arange(0, BK)
            x = tl.load(a + rows[:, None] * K + ks[None, :],
                        mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            y = tl.load(b + ks[:, None] * N + cols[None, :],
                        mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, programs):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    persistent_matmul[(programs,)](a, b, c, M, N, K, PROGRAMS=programs, BM=128, BN=128, BK=64,
                                   num_warps=8, num_stages=3)
    return c


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    torch.zeros(1, device="cuda")  # the primary context, which greenctx run confines
    told = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]
    torch_told = torch.cuda.get_device_properties(0).multi_processor_count
    small = [torch.randn(512, 512, device="cuda", dtype=torch.float16) for _ in range(2)]
    ok = torch.allclose(matmul(*small, told), small[0] @ small[1], atol=0.5, rtol=0.02)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    matmul(a, b, told)  # compiles
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        matmul(a, b, told)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    print(json.dumps({"triton_multiprocessor_count": told, "torch_multi_processor_count": torch_told,
                      "grid": told, "size": size, "median_ms": round(ms, 3),
                      "tflops": round(2 * size**3 / ms / 1e9, 1), "correct": bool(ok)}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

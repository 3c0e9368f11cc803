"""The guard's arms (docs/tenants.md, "The guard") on a GPU, over PyTorch and greenctx's
Python package: realistic pairs, each alone / claims / claims + guard / plain MPS / MPS
active-thread percentage.

  gemm    a bf16 tensor-core GEMM victim on 16 SMs beside a GEMM hog on the rest (power)
  decode  a memory-bound decode-like victim (a GEMV over 128 MiB of weights) beside a copy
          hog (HBM)
  bursty  each hog beside a victim that runs 1 s in every 5 (the hog's rate over the whole
          run says whether it got its SMs back after each burst)

Victim p50/p99 and hog rate are over the same arm's alone figures; with nvidia-ml-py
installed, the SM clock, power and throttle reasons are sampled during each arm and fed to
the hog's guard. Every arm runs fresh processes; the claims and guard arms run under an MPS
daemon of the script's own (greenctx mps start, in its own runtime directory), as do the MPS
arms. One JSON line per arm on stdout, a table on stderr.

  python3 bench/compare/tenants_guard.py [--quick] [--pairs gemm,decode,bursty]

--quick: 3 s per arm (bursty: 10 s), else 20 s (bursty 30 s). Needs greenctx (PYTHONPATH
reaching python/, and the library), torch with CUDA, and the greenctx tool on PATH or in
GREENCTX_TOOL.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

VICTIM_SMS = 16
# What each arm runs: (victim placement, hog placement, MPS, guard). A placement is "claim",
# "primary" (no claim: the whole GPU) or "pct:N" (the active-thread percentage N, no claim).
ARMS = {
    "victim_alone": ("claim", None, True, False),
    "hog_alone": (None, "claim", True, False),
    "claims": ("claim", "claim", True, False),
    "claims_guard": ("claim", "claim", True, True),
    "mps_plain": ("primary", "primary", True, False),
    "mps_percentage": (f"pct:{round(100 * VICTIM_SMS / 132)}",
                       f"pct:{100 - round(100 * VICTIM_SMS / 132)}", True, False),
}
PAIRS = {"gemm": ("gemm", "gemm", False), "decode": ("decode", "copy", False),
         "bursty": ("gemm", "gemm", True), "bursty_decode": ("decode", "copy", True)}


# ---- one tenant (a process of its own: --role) ----

def work(kind, torch):
    """One step of kind on the current stream, as a closure (tensors made once)."""
    dev = "cuda"
    if kind == "gemm":  # victim: ~1.4 ms on 16 SMs; hog: seconds of GEMMs per launch batch
        a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
        b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
        return lambda: torch.matmul(a, b)
    if kind == "decode":  # a decode step: every weight read once (128 MiB)
        w = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        x = torch.randn(8192, 1, device=dev, dtype=torch.bfloat16)
        return lambda: torch.matmul(w, x)
    if kind == "copy":  # 1 GiB copies: HBM at its peak with 48-64 SMs
        src = torch.empty(1 << 29, device=dev, dtype=torch.float16)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)
    raise ValueError(kind)


def tenant(args):
    import greenctx
    import torch
    tenant_class = {"victim": "latency", "hog": "best-effort"}[args.role] if args.guard else None
    claim = ctx = None
    if args.place == "claim":
        request = str(VICTIM_SMS) if args.role == "victim" else "rest"
        # The target: 1.10x its p99 alone, measured by the alone arm (a factor target would
        # learn "alone" beside the hog, which starts with it).
        kw = {"target_ms": args.target_ms} if tenant_class == "latency" else {}
        claim = greenctx.Claim(request=request, wait=True, timeout=60, tenant=tenant_class,
                               runtime_dir=args.runtime, **kw)
        ctx = claim.context()
    stream = ctx.Stream() if ctx else torch.cuda.Stream()
    with torch.cuda.stream(stream):
        step = work(args.kind, torch)
        step()
        torch.cuda.synchronize()
    steps, done, actions, advised = [], 0, [], claim.sm_count if claim else None
    next_look = 0.0
    start = time.perf_counter()
    end = start + args.seconds
    print("ready", flush=True)
    while time.perf_counter() < end:
        now = time.perf_counter()
        if args.bursty and (now - start) % 5.0 >= 1.0:
            time.sleep(0.005)
            continue
        with torch.cuda.stream(stream):
            t0 = time.perf_counter()
            step()
            if args.role == "victim":
                stream.synchronize()
                ms = (time.perf_counter() - t0) * 1e3
                steps.append(ms)
                if claim is not None and tenant_class:
                    claim.report_step(ms)
            elif done % 4 == 3:
                stream.synchronize()
        done += 1
        if args.role == "hog" and tenant_class and time.perf_counter() >= next_look:
            next_look = time.perf_counter() + 0.005  # a look every 5 ms
            advice = claim.guard(**signals())
            if advice.sms != advised:  # the guard moved: resize, and a stream on the new SMs
                advised = advice.sms
                stream.synchronize()
                sms = claim.cooperate(advice.sms, minimum_sms=8)
                ctx = claim.context()
                stream = ctx.Stream()
                with torch.cuda.stream(stream):
                    step = work(args.kind, torch)
                actions.append((round(time.perf_counter() - start, 3), advice.level, sms,
                                advice.reason))
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    steps.sort()
    out = {"role": args.role, "kind": args.kind, "steps": len(steps), "rate": done / elapsed}
    if steps:
        out["p50_ms"] = steps[len(steps) // 2]
        out["p99_ms"] = steps[min(len(steps) - 1, int(len(steps) * 0.99))]
    out["guard_actions"] = actions
    print(json.dumps(out), flush=True)


_nvml = None


def signals():
    """The SM clock, its max and the power-cap throttle flag (nvidia-ml-py, when installed)."""
    global _nvml
    try:
        if _nvml is None:
            import pynvml
            pynvml.nvmlInit()
            _nvml = (pynvml, pynvml.nvmlDeviceGetHandleByIndex(0))
        nv, h = _nvml
        reasons = nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return {"sm_clock_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                "max_sm_clock_mhz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
                "throttle": 1 if reasons & nv.nvmlClocksThrottleReasonSwPowerCap else 0,
                "hbm_busy": nv.nvmlDeviceGetUtilizationRates(h).memory / 100.0}
    except Exception:  # noqa: BLE001 - no NVML: the guard goes by steps alone
        _nvml = False if _nvml is None else _nvml
        return {}


# ---- the arms ----

def run_arm(name, pair, seconds, env, runtime, target_ms):
    v_place, h_place, _, guard = ARMS[name]
    v_kind, h_kind, bursty = PAIRS[pair]
    procs = []
    for role, place, kind in (("victim", v_place, v_kind), ("hog", h_place, h_kind)):
        if place is None:
            continue
        e = dict(env)
        if place.startswith("pct:"):
            e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = place[4:]
        cmd = [sys.executable, __file__, "--role", role, "--kind", kind, "--place",
               "claim" if place == "claim" else "primary", "--seconds", str(seconds),
               "--runtime", runtime]
        if guard:
            cmd += ["--guard", "--target-ms", f"{target_ms:.4f}"]
        if bursty and role == "victim":
            cmd.append("--bursty")
        procs.append(subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, text=True))
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{name}: a tenant did not start")
    clocks = []
    while any(p.poll() is None for p in procs):
        sample = signals()
        if sample:
            clocks.append(sample)
        time.sleep(0.1)
    results = [json.loads(p.stdout.read().strip().splitlines()[-1]) for p in procs]
    row = {"pair": pair, "arm": name}
    for r in results:
        row[r["role"]] = r
    if clocks:
        row["sm_clock_mhz_mean"] = sum(c["sm_clock_mhz"] for c in clocks) / len(clocks)
        row["power_capped_share"] = sum(c["throttle"] for c in clocks) / len(clocks)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pairs", default="gemm,decode,bursty")
    ap.add_argument("--role")
    ap.add_argument("--kind")
    ap.add_argument("--place")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--runtime")
    ap.add_argument("--guard", action="store_true")
    ap.add_argument("--target-ms", type=float)
    ap.add_argument("--bursty", action="store_true")
    args = ap.parse_args()
    if args.role:
        return tenant(args)
    tool = os.environ.get("GREENCTX_TOOL") or shutil.which("greenctx")
    if not tool:
        sys.exit("the greenctx tool is needed (PATH or GREENCTX_TOOL): its MPS daemon")
    runtime = tempfile.mkdtemp(prefix="greenctx-guard-")
    env = dict(os.environ, GREENCTX_RUNTIME_DIR=runtime, NCCL_NVLS_ENABLE="0")
    start = subprocess.run([tool, "mps", "start", "--print-env"], env=env, text=True,
                           capture_output=True, check=True).stdout
    for line in start.splitlines():  # export CUDA_MPS_PIPE_DIRECTORY=... lines
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'\"")
    try:
        for pair in args.pairs.split(","):
            bursty = PAIRS[pair][2]
            seconds = (10 if bursty else 3) if args.quick else (30 if bursty else 20)
            rows = {}
            for a in ARMS:  # victim_alone first: its p99 sets the guarded victim's target
                target = rows["victim_alone"]["victim"]["p99_ms"] * 1.10 if rows else 0.0
                rows[a] = run_arm(a, pair, seconds, env, runtime, target)
            alone_v, alone_h = rows["victim_alone"]["victim"], rows["hog_alone"]["hog"]
            for a, row in rows.items():
                if "victim" in row and "p99_ms" in row["victim"]:
                    row["victim_p50_ratio"] = row["victim"]["p50_ms"] / alone_v["p50_ms"]
                    row["victim_p99_ratio"] = row["victim"]["p99_ms"] / alone_v["p99_ms"]
                if "hog" in row:
                    row["hog_rate_ratio"] = row["hog"]["rate"] / alone_h["rate"]
                print(json.dumps(row), flush=True)
                print(f"{pair:8} {a:15} victim p50 {row.get('victim_p50_ratio', 0):5.2f}x "
                      f"p99 {row.get('victim_p99_ratio', 0):5.2f}x  hog "
                      f"{row.get('hog_rate_ratio', 0):5.2f}x  clock "
                      f"{row.get('sm_clock_mhz_mean', 0):6.0f} MHz  guard actions "
                      f"{len(row.get('hog', {}).get('guard_actions', []))}", file=sys.stderr)
    finally:
        subprocess.run([tool, "mps", "stop"], env=env, check=False)
        shutil.rmtree(runtime, ignore_errors=True)


if __name__ == "__main__":
    main()

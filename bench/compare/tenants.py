"""Two tenants on one GPU over PyTorch and greenctx: a latency victim beside a hog in each arm
of ARMS and PAIRS, then the fault arms (FAULTS), under an MPS daemon of its own; one JSON line
an arm on stdout, a table on stderr (docs/tenants.md; BENCHMARKS.md, "Tenants", "The guard").

  python3 bench/compare/tenants.py [--quick | --length S] [--pairs gemm,decode,bursty,...]
                                   [--arms claims,claims_guard,...,fault,fault_mps] [--dry]

--dry: the simulated driver, a stand-in MPS control (GREENCTX_MPS_CONTROL) and sleeps for steps."""
import argparse
import contextlib
import ctypes
import json
import os
import subprocess
import sys
import threading
import time
import types

import scenario
from scenario import cu_check

VICTIM_SMS = 16
# (victim, hog, guard): "claim" ("claim:N": of N SMs), "run" (under greenctx run), "primary"
# or "pct:N" (MPS's active-thread percentage N); under MPS but the arms in NO_MPS.
ARMS = {
    "victim_alone": ("claim", None, False),
    "victim_guarded": ("claim", None, True), "victim_run": ("run", None, False),
    "victim_run_guarded": ("run", None, True), "hog_alone": (None, "claim", False),
    "hog_alone_primary": (None, "primary", False), "claims": ("claim", "claim", False),
    "claims_guard": ("claim", "claim", True), "claims_paced": ("run", "run", True),
    "mps_plain": ("primary", "primary", False),
    "mps_percentage": (f"pct:{round(100 * VICTIM_SMS / 132)}",
                       f"pct:{100 - round(100 * VICTIM_SMS / 132)}", False),
    **{f"claims_cap{n}": ("claim", f"claim:{n}", False) for n in (32, 48, 64)},
    "sliced_primary": ("primary", "primary", False), "sliced_claims": ("claim", "claim", False),
}
NO_MPS = {"sliced_primary", "sliced_claims"}
INTERLEAVED = {"victim_guarded"}  # the cooperative guard's cost: reported and not, in turn
# The ratios' references other than victim_alone and hog_alone
BASELINE = {"victim_run_guarded": "victim_run"}
HOG_BASELINE = {"mps_plain": "hog_alone_primary", "sliced_primary": "hog_alone_primary"}
FAULTS = {"fault": False, "fault_mps": True}
# (victim, hog, bursty victim, the guard's target: the victim's p99 alone times this)
PAIRS = {"gemm": ("gemm", "gemm", False, 1.10), "decode": ("decode", "copy", False, 1.5),
         "bursty": ("gemm", "gemm", True, 1.10), "bursty_decode": ("decode", "copy", True, 1.5),
         "fma": ("fma", "fma", False, 1.10), "read": ("read", "copy", False, 1.5)}
# --dry: each step a sleep as long as the step on an H200's 16 SMs
DRY_STEP_S = {"gemm": 0.0014, "decode": 0.0005, "copy": 0.005, "fma": 0.0007, "read": 0.00004,
              "small": 0.00001}
PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "bench_kernels.ptx")
FMA_BLOCKS_SM, FMA_VICTIM_ITERS, FMA_HOG_ITERS, FMA_HOG_CHUNKS = 8, 20000, 480, 64
VICTIM_GAP_S = {"fma": 0.0005, "read": 0.0005}
# A bursty victim runs BURST_S of every BURST_PERIOD_S; settled: BURST_SETTLED_S in
BURST_S, BURST_PERIOD_S, BURST_SETTLED_S = 1.0, 5.0, 0.1
INTERLEAVE_STEPS = 200
FAULT_SECONDS = 3.0
PROBE_DEADLINE_S = 15.0
DRY_STREAM = types.SimpleNamespace(synchronize=lambda: None)  # --dry: no GPU, no torch


def work(kind, torch, role="victim", sms=VICTIM_SMS):
    """One step of kind on the current stream, as a closure (tensors made once)."""
    if torch is None:  # --dry, or the probe (no torch): nothing on a GPU
        return lambda: time.sleep(DRY_STEP_S[kind])
    dev = "cuda"
    if kind == "fma":  # the C bench's FMA chain
        grid = sms * FMA_BLOCKS_SM
        out = torch.empty(grid * 256, device=dev, dtype=torch.float32)
        chunks, iters = (grid, FMA_VICTIM_ITERS) if role == "victim" else (
            grid * FMA_HOG_CHUNKS, FMA_HOG_ITERS)
        args = (ctypes.c_uint64(out.data_ptr()), ctypes.c_uint(chunks), ctypes.c_uint(iters),
                ctypes.c_uint64(0))
        return lambda _out=out: cu_check(launch(torch.cuda.current_stream().cuda_stream,
                                                b"gc_fma", grid, args, sync=False), "gc_fma")
    if kind == "gemm":  # ~1.4 ms on 16 SMs
        a, b = (torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) for _ in "ab")
        return lambda: torch.matmul(a, b)
    if kind == "decode":  # a decode step: every weight read once (128 MiB)
        w = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        x = torch.randn(8192, 1, device=dev, dtype=torch.bfloat16)
        return lambda: torch.matmul(w, x)
    if kind == "copy":  # 1 GiB copies
        src = torch.empty(1 << 29, device=dev, dtype=torch.float16)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)
    if kind == "read":  # 64 MiB read once
        x = torch.ones(1 << 24, device=dev, dtype=torch.float32)
        return lambda: x.sum()
    if kind == "small":  # the fault arm's
        x = torch.zeros(32, device=dev)
        return lambda: x.add_(1)
    raise ValueError(kind)


def tenant(args):
    claimed = args.place.startswith("claim")
    greenctx = __import__("greenctx") if claimed else None
    torch = None if args.dry or args.role == "probe" else __import__("torch")
    cooperative = args.guard and claimed
    tenant_class = {"victim": "latency", "hog": "best-effort"}[args.role] if cooperative else None
    claim = ctx = None
    if claimed:
        # The hog alone holds the victim's SMs aside: its rate over the SMs it has beside it
        aside = greenctx.Claim(request=str(VICTIM_SMS), wait=True, timeout=60,
                               runtime_dir=args.runtime) if args.aside else None
        request = (str(VICTIM_SMS) if args.role in ("victim", "faulter", "probe")
                   else args.place.partition(":")[2] or "rest")
        kw = {"target_ms": args.target_ms} if tenant_class == "latency" else {}
        claim = greenctx.Claim(request=request, wait=True, timeout=60, tenant=tenant_class,
                               runtime_dir=args.runtime, **kw)
        ctx = claim.context()
        if aside:
            aside.close()
    on = (lambda s: contextlib.nullcontext()) if torch is None else torch.cuda.stream
    stream = DRY_STREAM if args.dry else ctx.Stream() if ctx else torch.cuda.Stream()
    sms = claim.sm_count if claim is not None else VICTIM_SMS if torch is None else \
        torch.cuda.get_device_properties(0).multi_processor_count  # the kernels' sizes
    with on(stream):
        step = work(args.kind, torch, args.role, sms)
        step()
        stream.synchronize()
    if args.role in FAULT_ROLES:
        return FAULT_ROLES[args.role](args, claim, stream, step, on, torch)
    steps, done, actions, advised = [], 0, [], claim.sm_count if claim else None
    # --interleave: every other block of steps unreported
    unreported, reports, settled, tenths = [], [], [], [[] for _ in range(10)]
    advice = Advice(claim) if args.role == "hog" and tenant_class else None
    scenario.ready()
    began, start = time.time(), time.perf_counter()
    end = start + args.seconds
    while time.perf_counter() < end:
        now = time.perf_counter()
        if args.bursty and (now - start) % BURST_PERIOD_S >= BURST_S:
            time.sleep(0.005)
            continue
        with on(stream):
            t0 = time.perf_counter()
            step()
            if args.role == "victim":
                stream.synchronize()
                ms = (time.perf_counter() - t0) * 1e3
                quiet = args.interleave and (len(steps) + len(unreported)) // INTERLEAVE_STEPS % 2
                (unreported if quiet else steps).append(ms)
                if args.bursty:
                    into = (t0 - start) % BURST_PERIOD_S
                    if into >= BURST_SETTLED_S:
                        settled.append(ms)
                    tenths[tenth(into)].append(ms)
                if claim is not None and tenant_class and not quiet:
                    r0 = time.perf_counter()
                    claim.report_step(ms)
                    reports.append((time.perf_counter() - r0) * 1e6)
                time.sleep(VICTIM_GAP_S.get(args.kind, 0))
            elif done % 4 == 3:
                stream.synchronize()
        done += 1
        now = advice.latest() if advice else None
        if now and now.sms != advised:  # the guard moved: resize, and a stream on the new SMs
            advised = now.sms
            stream.synchronize()
            with advice.lock:
                sms = claim.cooperate(now, minimum_sms=8)
            ctx = claim.context()
            stream = DRY_STREAM if torch is None else ctx.Stream()
            if args.kind == "fma":  # its grid is sized by the SMs; the others' tensors stay
                with on(stream):
                    step = work(args.kind, torch, args.role, sms)
            actions.append((round(time.perf_counter() - start, 3), now.level, sms, now.reason))
    if advice:
        advice.end()
    stream.synchronize()
    elapsed = time.perf_counter() - start
    out = {"role": args.role, "kind": args.kind, "steps": len(steps), "rate": done / elapsed,
           "began": began}
    if steps:
        out["p50_ms"], out["p99_ms"] = pct(steps, 0.50), pct(steps, 0.99)
    if unreported:
        out["unreported_p50_ms"], out["unreported_p99_ms"] = (pct(unreported, q) for q in (.5, .99))
        out["report_p50_us"] = pct(reports, 0.50)
        out["report_mean_us"] = sum(reports) / len(reports)  # with the state line's writes
    if args.bursty and settled:  # a burst's first steps apart: what the hog's shrink costs
        out["settled_p99_ms"] = pct(settled, 0.99)
        out["tenths_p99_ms"] = [pct(t, 0.99) if t else None for t in tenths]
    out["guard_actions"] = actions
    print(json.dumps(out), flush=True)


def pct(values, q):
    """The nearest-rank quantile (not common.percentile's interpolation)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def tenth(into):  # which tenth of a burst a time into it (s) falls in
    return min(9, int(into / BURST_S * 10))


def burst_delays(victim, hog):
    """The cooperative hog's medians (ms) from a burst's start to its first shrink, and from its
    end to having everything back."""
    shrunk, back = {}, {}  # by burst: the first of each
    offset = hog["began"] - victim["began"]
    for t, level, _, _ in hog.get("guard_actions", []):
        burst, into = divmod(t + offset, BURST_PERIOD_S)
        if level and into < BURST_S:
            shrunk.setdefault(burst, into * 1e3)
        elif not level and into >= BURST_S:
            back.setdefault(burst, (into - BURST_S) * 1e3)
    return {"hog_shrunk_after_ms": pct(shrunk.values(), 0.5) if shrunk else None,
            "hog_back_after_ms": pct(back.values(), 0.5) if back else None}


_cu = {}


def launch(stream, name, grid=1, args=(), sync=True):
    """PTX's kernel name launched on the stream handle (and synchronized): its CUresult."""
    if not _cu:
        cu, lib = ctypes.CDLL("libcuda.so.1"), ctypes.c_void_p()
        with open(PTX, "rb") as f:
            _cu.update(lib=cu, library=lib, load=cu.cuLibraryLoadData(
                ctypes.byref(lib), f.read(), None, None, 0, None, None, 0))
    cu, handle = _cu["lib"], ctypes.c_void_p(stream)
    if name not in _cu:
        kernel = ctypes.c_void_p()
        result = _cu["load"] or cu.cuLibraryGetKernel(ctypes.byref(kernel), _cu["library"], name)
        if result:
            return result
        _cu[name] = kernel
    with scenario.stream_current(cu, handle):
        params = (ctypes.c_void_p * max(1, len(args)))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        return (cu.cuLaunchKernel(_cu[name], grid, 1, 1, 1 if name == b"gc_fault" else 256, 1,
                                  1, 0, handle, params if args else None, None)
                or (sync and cu.cuStreamSynchronize(handle)))


def faulter(args, claim, stream, step, on, torch):
    """The fault arm's culprit: a store to 0x10 on its claim's stream, a third into the run."""
    scenario.ready()
    time.sleep(args.seconds / 3)
    at = time.time()
    result = 700 if args.dry else launch(stream.cuda_stream, b"gc_fault", 1,
                                         (ctypes.c_uint64(0x10),))
    if result and claim is not None:
        told(claim, result)
    print(json.dumps({"role": "faulter", "fault_at": at, "fault_result": result}), flush=True)
    os._exit(0)  # no teardown of a context the fault broke (torch's may hang or abort)


def launcher(args, claim, stream, step, on, torch):
    """The fault arm's bystander: small kernels, those that fail counted; its fault report."""
    scenario.ready()
    ok = failed = 0
    first_at, first = None, ""
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        try:
            with on(stream):
                step()
                stream.synchronize()
            ok += 1
        except Exception as e:  # noqa: BLE001 - torch's or greenctx's CUDA error: the fault
            failed += 1
            if first_at is None:
                first_at, first = time.time(), str(e).splitlines()[0]
    out = {"role": "launcher", "ok": ok, "failed": failed, "first_failure_at": first_at,
           "first_failure": first}
    if failed and claim is not None:  # torch gives no number: 700 is the illegal address's
        out["told"] = told(claim, 700 if "illegal" in first.lower() else 999)
    print(json.dumps(out), flush=True)
    os._exit(0)  # as the faulter: its context may be broken too


def probe(args, claim, stream, step, on, torch):
    """A new tenant after the fault: when its first kernel had run (exit 1 if it failed)."""
    result = 0 if args.dry else launch(stream.cuda_stream, b"gc_empty")
    print(json.dumps({"role": "probe", "done_at": time.time(), "result": result}), flush=True)
    sys.exit(1 if result else 0)


FAULT_ROLES = {"faulter": faulter, "launcher": launcher, "probe": probe}


def told(claim, result):
    """gctx_claim_report_fault's line on a fault the claim's work met."""
    from greenctx._capi import lib
    lib.gctx_claim_report_fault(claim._handle, result)
    return (lib.gctx_last_error() or b"").decode(errors="replace")


class Advice:
    """A cooperative hog's guard on a thread of its own (its NVML reads take ms): every 15 ms or
    when the victim publishes its steps."""
    def __init__(self, claim):
        self.claim, self.now, self.error = claim, None, None
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.stop.is_set():
                self.claim.guard_wait(0.015)
                with self.lock:  # not while the launching thread resizes the claim
                    self.now = self.claim.guard()
        except Exception as e:  # noqa: BLE001 - handed to the launching thread
            self.error = e

    def latest(self):
        if self.error:
            raise self.error
        return self.now

    def end(self):  # no guard call left running when the claim goes back
        self.stop.set()
        self.thread.join()


_nvml = None


def device_sample():
    """The SM clock, power-cap throttling and power (W) from nvidia-ml-py, or {} without it."""
    global _nvml
    try:
        if _nvml is None:
            import pynvml
            pynvml.nvmlInit()
            _nvml = (pynvml, pynvml.nvmlDeviceGetHandleByIndex(0))
        nv, h = _nvml
        reasons = nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return {"sm_clock_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                "throttle": 1 if reasons & nv.nvmlClocksThrottleReasonSwPowerCap else 0,
                "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0}
    except Exception:  # noqa: BLE001 - no NVML: no clocks in the rows
        _nvml = False if _nvml is None else _nvml
        return {}


def paced_actions(tool, env, hog_pid, seen):
    """The paced hog's guard as ps shows it now: appended to seen when it moved."""
    out = subprocess.run([*tool, "ps", "--json"], env=env, text=True, capture_output=True)
    try:
        claims = json.loads(out.stdout)["devices"][0]["claims"]
    except (ValueError, KeyError, IndexError):
        return
    for c in claims:
        t = c.get("tenant") or {}
        if c["pid"] != hog_pid or t.get("class") != "best-effort":
            continue
        now = (t["guard_level"], t["max_outstanding"], t["duty_permille"], t["guard_reason"])
        if not seen or seen[-1][1:5] != now:
            seen.append((round(time.perf_counter(), 3), *now, t["held_ms"]))
        elif seen:
            seen[-1] = (*seen[-1][:5], t["held_ms"])


def run_arm(name, pair, seconds, env, runtime, target_ms, tool, dry):
    v_place, h_place, guard = ARMS[name]
    v_kind, h_kind, bursty, _ = PAIRS[pair]
    specs = []  # the victim's claim first: with the hog's "rest" first it would wait
    for role, place, kind in (("victim", v_place, v_kind), ("hog", h_place, h_kind)):
        if place is None:
            continue
        e = scenario.no_mps(env) if name in NO_MPS else dict(env)
        if place.startswith("pct:"):
            e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = place[4:]
        cmd = tenant_cmd(role, kind, seconds, runtime, dry,
                         "primary" if place.startswith("pct:") else place)
        cmd += ["--guard", "--target-ms", f"{target_ms:.4f}"] if guard else []
        flags = {"--bursty": bursty and role == "victim", "--interleave": name in INTERLEAVED,
                 "--aside": role == "hog" and place == "claim" and v_place is None}
        cmd += [flag for flag, wanted in flags.items() if wanted]
        if place == "run":  # unmodified: the tool claims, the preload guards
            request = str(VICTIM_SMS) if role == "victim" else "rest"
            klass = f"latency:{target_ms:.3f}ms" if role == "victim" else "best-effort"
            cmd = [*tool, "run", "--sms", request, "--wait=60",
                   *(["--class", klass] if guard else []), "--", *cmd]
        specs.append((role, cmd, e))
    clocks, paced = [], []
    with scenario.tenants(name, specs) as procs:
        while any(p.poll() is None for p in procs):
            sample = device_sample()
            if sample:
                clocks.append({**sample, "t": time.time()})
            if h_place == "run":
                paced_actions(tool, env, procs[-1].pid, paced)
            time.sleep(0.1)
    results = [scenario.result(p) for p in procs]
    row = {"pair": pair, "arm": name}
    for r in results:
        row[r["role"]] = r
    if paced:  # (time, level, launches in flight, duty per mille, reason, held ms)
        row["hog"]["guard_actions"] = paced
        row["hog"]["held_ms"] = paced[-1][5]
    if clocks:
        row["sm_clock_mhz_mean"] = sum(c["sm_clock_mhz"] for c in clocks) / len(clocks)
        row["power_capped_share"] = sum(c["throttle"] for c in clocks) / len(clocks)
        row["power_w_mean"] = sum(c.get("power_w", 0) for c in clocks) / len(clocks)
        if bursty and "victim" in row:  # the clock's climb back as a burst goes on
            tenths = [[] for _ in range(10)]
            for c in clocks:
                ran = c["t"] - row["victim"]["began"]
                into = ran % BURST_PERIOD_S
                if 0 <= ran < seconds and into < BURST_S:
                    tenths[tenth(into)].append(c["sm_clock_mhz"])
            row["sm_clock_tenths_mhz"] = [round(sum(t) / len(t)) if t else None for t in tenths]
    return row


def tenant_cmd(role, kind, seconds, runtime, dry, place="claim"):
    return [sys.executable, __file__, "--role", role, "--kind", kind, "--place", place,
            "--seconds", str(seconds), "--runtime", runtime, *(["--dry"] if dry else [])]


def run_fault(name, mps, seconds, env, runtime, tool, dry):
    """The faulter on the victim's SMs, the launcher on the rest, new tenants until one runs."""
    e = env if mps else scenario.no_mps(env)
    with scenario.tenants(name, [(role, tenant_cmd(role, "small", seconds, runtime, dry), e)
                                 for role in ("faulter", "launcher")]) as procs:
        return fault_row(name, mps, procs, runtime, e, dry)


def fault_row(name, mps, procs, runtime, e, dry):
    faulter = scenario.result(procs[0])
    tries, ran = 0, None
    print(f"{name}: new tenants until one runs (their failures, if any, are expected)",
          file=sys.stderr)
    while ran is None and time.time() < faulter["fault_at"] + PROBE_DEADLINE_S:
        tries += 1
        try:  # a server taken down by the fault may hang a new client: never past the deadline
            out = subprocess.run(tenant_cmd("probe", "small", 0, runtime, dry), env=e,
                                 text=True, capture_output=True, timeout=max(
                                     1.0, faulter["fault_at"] + PROBE_DEADLINE_S - time.time()))
            ran = json.loads(out.stdout.splitlines()[-1])["done_at"] if out.returncode == 0 \
                else None
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            pass
        time.sleep(0 if ran else 0.1)
    launcher = scenario.result(procs[1])
    row = {"arm": name, "mps": mps, "faulter": faulter, "launcher": launcher}
    if launcher["first_failure_at"]:
        row["other_first_failure_s"] = round(launcher["first_failure_at"] - faulter["fault_at"], 3)
    row["new_tenant_runs_after_s"] = round(ran - faulter["fault_at"], 3) if ran else None
    row["new_tenant_attempts"] = tries
    return row


def extras(row):  # the table's tail
    out = ""
    if "cost_p50_ratio" in row:
        out += (f"  interleaved: p50 {row['cost_p50_ratio']:.3f}x, a report "
                f"{row['victim']['report_p50_us']:.1f} us (mean "
                f"{row['victim']['report_mean_us']:.1f} us)")
    if "victim_settled_p99_ratio" in row:
        out += f"  settled p99 {row['victim_settled_p99_ratio']:.2f}x"
        out += " (by tenth of a burst " + " ".join(
            f"{x:.2f}" if x else "-" for x in row["victim_tenths_p99_ratio"]) + ")"
    if row.get("sm_clock_tenths_mhz"):
        out += " (SM clock, MHz " + " ".join(str(x or "-") for x in row["sm_clock_tenths_mhz"]) + ")"
    for key, what in (("hog_shrunk_after_ms", "shrunk"), ("hog_back_after_ms", "back")):
        if row.get(key) is not None:
            out += f"  {what} after {row[key]:.0f} ms"
    return out


def main():
    ap = argparse.ArgumentParser()
    length = ap.add_mutually_exclusive_group()
    length.add_argument("--quick", action="store_true")
    length.add_argument("--length", type=float, help="seconds an arm (bursty pairs: twice that)")
    ap.add_argument("--pairs", default="gemm,decode,bursty")
    ap.add_argument("--arms", default=",".join([*ARMS, *FAULTS]),
                    help="a subset of the arms (victim_alone always runs, hog_alone with any "
                         "arm that has a hog, victim_run with victim_run_guarded, "
                         "hog_alone_primary with mps_plain and sliced_primary: the ratios "
                         "are over them)")
    for tenant_option in ("--role", "--kind", "--place", "--runtime"):  # run_arm's
        ap.add_argument(tenant_option)
    for number in ("--seconds", "--target-ms"):
        ap.add_argument(number, type=float)
    for flag in ("--guard", "--bursty", "--interleave", "--aside", "--dry"):
        ap.add_argument(flag, action="store_true")
    args = ap.parse_args()
    if args.role:
        return tenant(args)
    arms = set(args.arms.split(",")) | {"victim_alone"}
    if arms - set(ARMS) - set(FAULTS):
        sys.exit(f"no arm {', '.join(sorted(arms - set(ARMS) - set(FAULTS)))}: the arms are "
                 f"{', '.join([*ARMS, *FAULTS])}")
    arms |= {BASELINE[a] for a in arms if a in BASELINE}
    arms |= {HOG_BASELINE[a] for a in arms if a in HOG_BASELINE}
    if any(ARMS[a][1] for a in arms if a in ARMS):
        arms.add("hog_alone")
    if any(p not in PAIRS for p in args.pairs.split(",")):
        sys.exit(f"no pair {args.pairs}: the pairs are {', '.join(PAIRS)}")
    with scenario.runtime("tenants", args.dry) as (tool, runtime, env):
        if args.dry:  # the guard by the steps alone, whatever GPU the machine has
            env["GREENCTX_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
        with scenario.mps(tool, env) as (env, why):
            if why:
                sys.exit(f"greenctx mps start: {why}")
            for pair in args.pairs.split(","):
                run_pair(pair, arms, args, env, runtime, tool)
            for a, mps in FAULTS.items():  # under MPS last: the fault takes the server down
                if a in arms:
                    row = run_fault(a, mps, 1.0 if args.dry else FAULT_SECONDS, env, runtime,
                                    tool, args.dry)
                    print(json.dumps(row), flush=True)
                    print(f"{a:9} the other tenant: {row['launcher']['ok']} ok, "
                          f"{row['launcher']['failed']} failed (first after "
                          f"{row.get('other_first_failure_s')} s); a new tenant runs after "
                          f"{row['new_tenant_runs_after_s']} s ({row['new_tenant_attempts']} "
                          f"tries); told: {row['launcher'].get('told')}", file=sys.stderr)


def run_pair(pair, arms, args, env, runtime, tool):
    """The pair's arms in ARMS' order (victim_alone's p99 sets the guard's target)."""
    bursty, factor = PAIRS[pair][2:]
    seconds = (10 if bursty else 3) if args.quick else (30 if bursty else 20)
    seconds = (2 if bursty else 0.5) if args.dry else seconds
    seconds = args.length * (2 if bursty else 1) if args.length else seconds
    rows = {}
    for a in (a for a in ARMS if a in arms):
        target = rows["victim_alone"]["victim"]["p99_ms"] * factor if rows else 0.0
        rows[a] = run_arm(a, pair, seconds, env, runtime, target, tool, args.dry)
    for a, row in rows.items():
        victim, alone_v = row.get("victim", {}), rows[BASELINE.get(a, "victim_alone")]["victim"]
        if "p99_ms" in victim:
            row["victim_p50_ratio"] = victim["p50_ms"] / alone_v["p50_ms"]
            row["victim_p99_ratio"] = victim["p99_ms"] / alone_v["p99_ms"]
        if "unreported_p50_ms" in victim:
            row["cost_p50_ratio"] = victim["p50_ms"] / victim["unreported_p50_ms"]
        if "settled_p99_ms" in victim:  # over the victim alone's same steps
            row["victim_settled_p99_ratio"] = (victim["settled_p99_ms"] /
                                               alone_v["settled_p99_ms"])
            row["victim_tenths_p99_ratio"] = [x and y and x / y for x, y in zip(
                victim["tenths_p99_ms"], alone_v["tenths_p99_ms"])]
        hog = row.get("hog", {})
        if hog:
            alone_h = rows[HOG_BASELINE.get(a, "hog_alone")]["hog"]
            row["hog_rate_ratio"] = hog["rate"] / alone_h["rate"]
            if bursty and ARMS[a][1] == "claim" and ARMS[a][2]:  # cooperative
                row.update(burst_delays(victim, hog))
        print(json.dumps(row), flush=True)
        print(f"{pair:8} {a:18} victim p50 {row.get('victim_p50_ratio', 0):5.2f}x "
              f"p99 {row.get('victim_p99_ratio', 0):5.2f}x  hog "
              f"{row.get('hog_rate_ratio', 0):5.2f}x  clock "
              f"{row.get('sm_clock_mhz_mean', 0):6.0f} MHz  power "
              f"{row.get('power_w_mean', 0):4.0f} W  guard actions "
              f"{len(hog.get('guard_actions', []))}  held "
              f"{hog.get('held_ms', 0) / 1000:5.2f} s{extras(row)}", file=sys.stderr)

if __name__ == "__main__":
    main()

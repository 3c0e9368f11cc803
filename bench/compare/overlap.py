"""NCCL all-reduces (one process a GPU) beside cuBLAS GEMMs (torch.matmul) on the same GPUs, on
ordinary streams, with NCCL's maxCTAs = C, and on green partitions {C, rest}, with and without
maxCTAs = C and cublasSetSmCountTarget(rest); then the picks, as lines to copy into a program.

  python3 bench/compare/overlap.py [--world N] [--device D] [--sizes S ...] [--sms C ...]
                                   [--gemm MxNxK] [--mix G:R] [--reps N] [--quick] [--json]
                                   [--dry]

Each rank is this script again (--rank R) on GPU D + R. It needs torch with CUDA and NCCL,
greenctx (PYTHONPATH) and --world GPUs; --dry neither torch nor a GPU. BENCHMARKS.md
("Overlap") says what each figure is.
"""
import argparse
import ctypes
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import scenario
from common import percentile, summary, utc_now
from scenario import BlasTarget, loaded, stream_events

SCHEMA = "greenctx.bench.overlap/1"
GEMM_KEEP = 0.9  # of its whole-GPU rate: a GEMM kept
SMALL_BYTES = 16 << 20  # at most: a latency-bound size, timed more often
REPS = {False: (2000, 200), True: (200, 20)}  # all-reduces timed per arm (small, large)
STEPS = {False: 7, True: 3}  # steps timed per arm, after one warm-up
GEMM_ALONE_S = {False: 0.5, True: 0.1}
CLOCK_RAMP_S = {False: 1.0, True: 0.5}  # GEMMs first: the clocks ramp up from idle
AR_WARMUPS, GEMM_WARMUPS, GEMM_IN_FLIGHT, CHECK_SAMPLES = 10, 3, 3, 8
# A spin (about 150 us) ahead of each timed all-reduce, holding its stream while the host
# enqueues it: the events time the all-reduce, not its launch from Python.
GATE_CYCLES = 300_000
MIX_MAX_ALLREDUCES = 100_000
GREEN_VARIANTS = ((False, False), (True, False), (False, True), (True, True))  # maxCTAs, target


def size_arg(text):
    """"4M" -> 4 MiB: a multiple of 4 bytes (fp32 words), 4 B to 4 GiB."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    digits, unit = (text[:-1], units[text[-1].upper()]) if text[-1:].upper() in units \
        else (text, 1)
    if not digits.isdigit() or not 0 < int(digits) * unit <= 4 << 30 or int(digits) * unit % 4:
        raise argparse.ArgumentTypeError(f"needs sizes in bytes, multiples of 4 up to 4G, with "
                                         f"K, M or G (4M: 4 MiB), got '{text}'")
    return int(digits) * unit


def numbers_arg(sep, what, top):  # "8192x8192x8192", "8:40"
    def parse(text):
        parts = text.split(sep)
        if len(parts) != len(top) or not all(p.isdigit() and 0 < int(p) <= t
                                             for p, t in zip(parts, top)):
            raise argparse.ArgumentTypeError(f"needs {what}, got '{text}'")
        return tuple(map(int, parts))
    return parse


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="overlap.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", type=int, default=2, choices=range(1, 9), metavar="N",
                    help="ranks, one a GPU (default 2; 1: the whole path on one GPU)")
    ap.add_argument("--device", type=int, default=0, help="the first rank's GPU")
    ap.add_argument("--sizes", type=size_arg, nargs="+", default=[4 << 20, 256 << 20],
                    metavar="S", help="all-reduce sizes, bytes with K/M/G (default 4M 256M)")
    ap.add_argument("--sms", type=int, nargs="+", default=[8, 16, 24, 32], metavar="C",
                    help="communication partition sizes (default 8 16 24 32)")
    ap.add_argument("--gemm", type=numbers_arg("x", "MxNxK (each 1 to 65536)", (65536,) * 3),
                    default=(8192,) * 3, help="bf16 in and out, fp32 compute (default 8192^3)")
    ap.add_argument("--mix", type=numbers_arg(":", "GEMMS:ALLREDUCES per step, e.g. 8:40",
                                              (1000, MIX_MAX_ALLREDUCES)),
                    help="per step (default 8 GEMMs, --quick 4, and as many all-reduces as "
                         "take as long alone on the whole GPU)")
    ap.add_argument("--reps", type=int, help="all-reduces timed per arm (default 2000 up to "
                                             "16 MiB, 200 above; --quick: 200, 20)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--dry", action="store_true", help="the checks and the plan, nothing run")
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if len(a.sizes) > 4 or len(a.sms) > 8:
        ap.error("--sizes takes at most 4 values, --sms at most 8")
    if not all(0 < c <= 1024 for c in a.sms) or a.reps is not None and not 0 < a.reps <= 100000:
        ap.error("--sms needs SM counts from 1 to 1024, --reps a count from 1 to 100000")
    if a.device < 0:
        ap.error("--device needs a GPU index")
    return a


def reps_of(a, size):
    return a.reps or REPS[a.quick][size > SMALL_BYTES]


def new_arm(kind, comm_sms, compute_sms, max_ctas=0, sm_target=0):
    label = f"green {comm_sms} | {compute_sms}" if kind == "green" else "ordinary streams"
    label += (f", maxCTAs {max_ctas}" if max_ctas else "") + \
        (f", SM target {sm_target}" if sm_target else "")
    return {"label": label, "kind": kind, "comm_sms": comm_sms, "compute_sms": compute_sms,
            "max_ctas": max_ctas, "sm_target": sm_target}


def plan(sms, rests, device_sms):
    """One size's arms in their order (rests[i]: the GEMM's SMs beside sms[i])."""
    arms = [new_arm("ordinary", 0, device_sms)]
    for c, rest in zip(sms, rests):
        arms.append(new_arm("ordinary_maxctas", c, device_sms, max_ctas=c))
        arms += [new_arm("green", c, rest, c if limited else 0, rest if target else 0)
                 for limited, target in GREEN_VARIANTS]
    return arms


def check_machine(a):
    """(device SM count, the rest beside each C), or an exit saying what the machine lacks."""
    nvls = os.environ.get("NCCL_NVLS_ENABLE")
    if nvls not in (None, "0"):
        sys.exit(f"overlap.py: NCCL_NVLS_ENABLE is set to '{nvls}': this benchmark runs NCCL "
                 "only with NVLink multicast (NVLS) off, which on a shared machine can take "
                 "every GPU of the host out of service; unset it or set NCCL_NVLS_ENABLE=0")
    import greenctx
    count = greenctx.device_count()
    if count < a.device + a.world:
        sys.exit(f"overlap.py: needs {a.world} GPU{'s' * (a.world > 1)} (an NCCL all-reduce "
                 f"over devices {a.device} to {a.device + a.world - 1}); this machine has "
                 f"{count} (--world 1: one GPU)")
    rests = []
    for r in range(a.world):
        whole = greenctx.SMPartition.from_device(a.device + r)
        for c in a.sms:
            try:
                counts = whole.plan(num_sms=[c, 0], backfill=[False, True]).sm_counts
            except greenctx.Error as e:
                sys.exit(f"overlap.py: --sms {c} on GPU {a.device + r}: {e}")
            if r == 0:
                rests.append(counts[1])
    return greenctx.device_info(a.device).sm_count, rests


class NcclConfig(ctypes.Structure):
    """ncclConfig_t's fields as of NCCL 2.17 (version 21700): later NCCLs default the rest."""
    _fields_ = [("size", ctypes.c_size_t), ("magic", ctypes.c_uint), ("version", ctypes.c_uint),
                ("blocking", ctypes.c_int), ("cga_cluster_size", ctypes.c_int),
                ("min_ctas", ctypes.c_int), ("max_ctas", ctypes.c_int),
                ("net_name", ctypes.c_char_p)]


class NcclUniqueId(ctypes.Structure):  # ncclUniqueId
    _fields_ = [("internal", ctypes.c_char * 128)]


class Nccl:
    """The NCCL torch loaded, through ctypes: torch.distributed's collectives record primary
    context events, which a green context's stream refuses. The ranks meet in a TCPStore."""
    UNDEF, FLOAT32, SUM = -2 ** 31, 7, 0

    def __init__(self, rank, world):
        import torch.distributed as dist
        self.lib = ctypes.CDLL(loaded("/libnccl.so") or "libnccl.so.2")
        self.lib.ncclGetErrorString.restype = ctypes.c_char_p
        self.lib.ncclCommInitRankConfig.argtypes = [
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, NcclUniqueId, ctypes.c_int,
            ctypes.POINTER(NcclConfig)]
        self.lib.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                           ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                           ctypes.c_void_p]
        self.store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                                   world, rank == 0)
        self.rank, self.world, self.made = rank, world, 0

    def check(self, result, what):
        if result:
            raise RuntimeError(f"{what}: {self.lib.ncclGetErrorString(result).decode()} "
                               f"(ncclResult {result})")

    def comm(self, max_ctas):
        """A communicator of every rank, NCCL's default CTAs or max_ctas."""
        uid, key = NcclUniqueId(), f"id{self.made}"
        self.made += 1
        if self.rank == 0:
            self.check(self.lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
            self.store.set(key, bytes(uid))
        uid = NcclUniqueId.from_buffer_copy(self.store.get(key))
        config = NcclConfig(ctypes.sizeof(NcclConfig), 0xCAFEBEEF, 21700, 1, self.UNDEF,
                            self.UNDEF, max_ctas or self.UNDEF, None)
        comm = ctypes.c_void_p()
        self.check(self.lib.ncclCommInitRankConfig(ctypes.byref(comm), self.world, uid,
                                                   self.rank, config),
                   "ncclCommInitRankConfig")
        return comm

    def allreduce(self, send, recv, words, comm, stream):
        self.check(self.lib.ncclAllReduce(send.data_ptr(), recv.data_ptr(), words, self.FLOAT32,
                                          self.SUM, comm, stream.cuda_stream), "ncclAllReduce")

    def destroy(self, comm):
        self.check(self.lib.ncclCommDestroy(comm), "ncclCommDestroy")

    def gather(self, value):
        """Every rank's value (JSON), in rank order."""
        self.store.set(f"gather{self.rank}", json.dumps(value))
        return [json.loads(self.store.get(f"gather{r}")) for r in range(self.world)]

    def version(self):
        v = ctypes.c_int()
        self.check(self.lib.ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
        return v.value


class Rank:
    """This rank's GPU: the tensors, the arm's streams and communicators (every rank makes the
    same calls: NCCL matches them)."""
    def __init__(self, a):
        import greenctx
        import torch
        self.a, self.torch, self.greenctx = a, torch, greenctx
        self.rank, self.cu = a.rank, ctypes.CDLL("libcuda.so.1")
        self.device = a.device + a.rank
        torch.cuda.set_device(self.device)
        torch.cuda.init()
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False  # fp32 sums
        self.device_sms = torch.cuda.get_device_properties(self.device).multi_processor_count
        self.blas_target = BlasTarget(torch, self.device_sms)
        m, n, k = a.gemm
        gen = torch.Generator().manual_seed(0x9E3779B9)
        self.host_a = (torch.rand(m, k, generator=gen) * 2 - 1).to(torch.bfloat16)
        self.host_b = (torch.rand(k, n, generator=gen) * 2 - 1).to(torch.bfloat16)
        self.mat_a, self.mat_b = self.host_a.cuda(), self.host_b.cuda()
        self.mat_c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        # rank r sends 1.5 + 0.75 r everywhere: the sum is exact
        self.send = torch.full((max(a.sizes) // 4,), 1.5 + 0.75 * self.rank, device="cuda")
        self.recv = torch.zeros_like(self.send)
        torch.cuda.synchronize()  # the streams below never wait for the default stream
        self.nccl, self.changed = Nccl(self.rank, a.world), False
        self.comm_default = self.make_comm(0)
        self.plain = (torch.cuda.Stream(), torch.cuda.Stream())
        self.events = {}
        self.use(self.plain, self.comm_default, 0)

    def make_comm(self, max_ctas):
        """A communicator, the current context kept across NCCL's init (nvidia/nccl #1736)."""
        saved, now = ctypes.c_void_p(), ctypes.c_void_p()
        self.cu.cuCtxGetCurrent(ctypes.byref(saved))
        comm = self.nccl.comm(max_ctas)
        self.cu.cuCtxGetCurrent(ctypes.byref(now))
        if now.value != saved.value:
            self.changed = True
            self.cu.cuCtxSetCurrent(saved)
        return comm

    def use(self, streams, comm, target):
        """The arm's (communication, compute) streams, communicator and SM count target, then
        untimed GEMMs: cuBLAS loads kernels lazily."""
        self.comm_stream, self.compute = streams
        self.comm, self.target = comm, target
        self.ar_events = stream_events(self.events, self.comm_stream, 2)
        self.gemm_events = stream_events(self.events, self.compute, 2 + GEMM_IN_FLIGHT)
        for _ in range(GEMM_WARMUPS):
            self.gemm()
        self.compute.synchronize()

    def gemm(self):
        with self.torch.cuda.stream(self.compute):
            self.blas_target(self.target)  # on this thread's handle
            self.torch.matmul(self.mat_a, self.mat_b, out=self.mat_c)

    def allreduce(self, words, comm=None, stream=None):
        self.nccl.allreduce(self.send, self.recv, words, comm or self.comm,
                            stream or self.comm_stream)

    def sync(self):
        self.comm_stream.synchronize()
        self.compute.synchronize()

    def ar_series(self, size, reps):
        """Closed loop, each all-reduce waited for: its times (us) on this rank's events."""
        us, ev = [], self.ar_events
        for r in range(AR_WARMUPS + reps):
            with self.torch.cuda.stream(self.comm_stream):
                self.torch.cuda._sleep(GATE_CYCLES)
            ev.record(0)
            self.allreduce(size // 4)
            ev.record(1)
            ev.wait(1)
            if r >= AR_WARMUPS:
                us.append(ev.ms(0, 1) * 1e3)
        return summary(us)

    def gemm_for(self, seconds):
        feeder = Feeder(self)
        time.sleep(seconds)
        return feeder.stop()

    def step(self, gemms, allreduces, words):
        """The mix queued at once, interleaved: host ms until both streams are done (after a
        one-word all-reduce: every rank starts together)."""
        self.sync()
        self.allreduce(1, self.comm_default, self.plain[0])
        self.plain[0].synchronize()
        t0, g, r = time.perf_counter(), 0, 0
        while g < gemms or r < allreduces:
            if g < gemms and (r >= allreduces or (2 * g + 1) * allreduces <= (2 * r + 1) * gemms):
                self.gemm()
                g += 1
            else:
                self.allreduce(words)
                r += 1
        self.sync()
        return (time.perf_counter() - t0) * 1e3

    def check(self, arm, words):
        """The all-reduce's sum at sampled words, sampled GEMM entries against fp64 sums."""
        torch = self.torch
        want = sum(1.5 + 0.75 * r for r in range(self.a.world))
        for s in range(CHECK_SAMPLES):
            w = words - 1 if s == CHECK_SAMPLES - 1 else min(words - 1,
                                                             words // CHECK_SAMPLES * s + s)
            if self.recv[w].item() != want:
                raise RuntimeError(f"{arm['label']}: the all-reduce's word {w} on GPU "
                                   f"{self.device} is {self.recv[w].item()}, expected {want}")
        gen = torch.Generator().manual_seed(0x5EED)
        m, n, _ = self.a.gemm
        for _ in range(CHECK_SAMPLES):
            r, c = (int(torch.randint(d, (1,), generator=gen)) for d in (m, n))
            terms = self.host_a[r].double() * self.host_b[:, c].double()
            ref, mag, got = terms.sum().item(), terms.abs().sum().item(), \
                self.mat_c[r, c].double().item()
            if not abs(got - ref) <= 2 ** -7 * abs(ref) + 2 ** -10 * mag:  # a bf16 output
                raise RuntimeError(f"{arm['label']}: GEMM entry ({r}, {c}) on GPU "
                                   f"{self.device} is {got}, expected {ref}")

class Feeder(threading.Thread):
    """GEMMs kept GEMM_IN_FLIGHT deep on the compute stream until stop(): their TFLOP/s."""
    def __init__(self, rank):
        super().__init__(daemon=True)
        self.r, self.halt, self.error, self.tflops = rank, threading.Event(), None, 0.0
        self.start()

    def run(self):
        ev, n = self.r.gemm_events, 0
        try:
            self.r.torch.cuda.set_device(self.r.device)  # each thread has its own
            ev.record(0)
            while not self.halt.is_set():
                if n >= GEMM_IN_FLIGHT:
                    ev.wait(2 + n % GEMM_IN_FLIGHT)
                self.r.gemm()
                ev.record(2 + n % GEMM_IN_FLIGHT)
                n += 1
            ev.record(1)
            ev.wait(1)
            m, k, nn = self.r.a.gemm
            self.tflops = 2.0 * m * k * nn * n / (ev.ms(0, 1) * 1e-3) / 1e12
        except Exception as e:  # noqa: BLE001 - raised again by stop()
            self.error = e

    def stop(self):
        self.halt.set()
        self.join()
        if self.error:
            raise self.error
        return self.tflops


def measure(rk, size, row, arm, progress):
    """One arm on the streams and communicator in use: beside the GEMM, the step, the checks."""
    progress(f"{size_text(size['bytes'])}: {arm['label']}")
    rk.use((rk.comm_stream, rk.compute), rk.comm, arm["sm_target"])
    rk.recv.zero_()
    rk.torch.cuda.synchronize()
    feeder = Feeder(rk)
    try:
        arm["allreduce_us"] = rk.ar_series(size["bytes"], size["reps"])
    finally:
        arm["gemm_tflops"] = feeder.stop()
    ms = [rk.step(size["mix"]["gemms"], size["mix"]["allreduces"], size["bytes"] // 4)
          for _ in range(size["steps"] + 1)][1:]
    arm["step_ms"], arm["step_min_ms"], arm["step_max_ms"] = \
        percentile(sorted(ms), 0.5), min(ms), max(ms)
    rk.check(arm, size["bytes"] // 4)
    arm["measured"] = True
    row.append(arm)


def run_rank(a):
    rk = Rank(a)
    t0, done = time.perf_counter(), [0]
    total = len(a.sizes) * (1 + 5 * len(a.sms))

    def progress(what):
        done[0] += 1
        if rk.rank == 0:
            print(f"overlap [{done[0]}/{total}] {what}", file=sys.stderr, flush=True)

    m, n, k = a.gemm
    rk.gemm_for(CLOCK_RAMP_S[a.quick])
    whole = rk.gemm_for(GEMM_ALONE_S[a.quick])
    sizes = [{"bytes": b, "reps": reps_of(a, b), "steps": STEPS[a.quick], "arms": []}
             for b in a.sizes]
    gemm_ms = 2.0 * m * n * k / (whole * 1e12) * 1e3
    for size in sizes:  # the references on the whole GPU and the mix, then ordinary streams
        arm = new_arm("ordinary", 0, rk.device_sms)
        arm.update(allreduce_alone_us=rk.ar_series(size["bytes"], size["reps"]),
                   gemm_alone_tflops=whole)
        size["allreduce_whole_us"] = arm["allreduce_alone_us"]["p50"]
        g = a.mix[0] if a.mix else 4 if a.quick else 8
        r = a.mix[1] if a.mix else min(MIX_MAX_ALLREDUCES, max(1, round(
            g * gemm_ms * 1e3 / size["allreduce_whole_us"])))
        size["mix"] = {"gemms": g, "allreduces": r}
        measure(rk, size, size["arms"], arm, progress)
    for c in a.sms:
        green = rk.greenctx.GreenContext.split(num_sms=[c, 0], backfill=[False, True],
                                               device_id=rk.device)
        lanes = tuple(ctx.Stream() for ctx in green)
        rest = green[1].sm_count
        limited = rk.make_comm(c)
        alone = {}
        for target in (0, rest):  # the GEMM alone in the rest: no target, target = rest
            rk.use(lanes, rk.comm_default, target)
            alone[target] = rk.gemm_for(GEMM_ALONE_S[a.quick])
        # (streams, communicator) by (kind, max_ctas): the references alone, then the arms
        ways = {("ordinary_maxctas", c): (rk.plain, limited),
                ("green", 0): (lanes, rk.comm_default), ("green", c): (lanes, limited)}
        for size in sizes:
            alone_us = {}
            for way, (streams, comm) in ways.items():
                rk.use(streams, comm, 0)
                alone_us[way] = rk.ar_series(size["bytes"], size["reps"])
            for arm in plan([c], [rest], rk.device_sms)[1:]:
                way = (arm["kind"], arm["max_ctas"])
                arm.update(allreduce_alone_us=alone_us[way], gemm_alone_tflops=whole if
                           arm["kind"] != "green" else alone[arm["sm_target"]])
                rk.use(*ways[way], 0)
                measure(rk, size, size["arms"], arm, progress)
        rk.use(rk.plain, rk.comm_default, 0)  # off the green streams before they go
        rk.nccl.destroy(limited)
        rk.events = {}  # the green streams' handles may come again, on other contexts
    gpus = rk.nccl.gather({"name": rk.torch.cuda.get_device_name(), "sm_count": rk.device_sms})
    if rk.rank == 0:
        print(json.dumps(document(a, rk, whole, gpus, sizes, time.perf_counter() - t0)),
              flush=True)
    rk.nccl.destroy(rk.comm_default)


def document(a, rk, whole, gpus, sizes, seconds):
    torch, greenctx = rk.torch, rk.greenctx
    blas_version = ctypes.c_int()
    ctypes.CDLL(loaded("/libcublas.so")).cublasGetVersion_v2(
        ctypes.c_void_p(torch.cuda.current_blas_handle()), ctypes.byref(blas_version))
    driver = greenctx.driver_version()
    for size in sizes:
        for arm in size["arms"]:
            arm.update(p99_vs_alone=ratio(arm["allreduce_us"]["p99"],
                                          arm["allreduce_alone_us"]["p99"]),
                       p50_vs_alone=ratio(arm["allreduce_us"]["p50"],
                                          arm["allreduce_alone_us"]["p50"]),
                       gemm_vs_alone=ratio(arm["gemm_tflops"], arm["gemm_alone_tflops"]),
                       gemm_vs_whole=ratio(arm["gemm_tflops"], whole))
    return {"greenctx_version": greenctx.__version__, "schema": SCHEMA,
            "meta": {"driver_version": driver, "driver": f"{driver // 1000}.{driver % 1000 // 10}",
                     "date": utc_now(),
                     "simulated": False, "quick": a.quick,
                     "command": " ".join(["python3 bench/compare/overlap.py",
                                          *sys.argv[1:-2]])},  # less --rank R
            "overlap": {"nccl_version": rk.nccl.version(),
                        "nccl_library": loaded("/libnccl.so"),
                        "cublas_version": blas_version.value,
                        "cublas_library": loaded("/libcublas.so"), "nccl_nvls_enable": "0",
                        "init_changed_context": rk.changed,
                        "gpus": gpus,
                        "gemm": {"m": a.gemm[0], "n": a.gemm[1], "k": a.gemm[2],
                                 "inputs": "bf16", "output": "bf16", "compute": "fp32",
                                 "whole_tflops": whole},
                        "gemm_keep": GEMM_KEEP, "seconds": round(seconds, 1), "sizes": sizes}}


def ratio(x, y):
    return x / y if y > 0 else 0.0


def advise(doc):
    """Per size the picks: the shortest step, the shortest all-reduce p99 keeping the GEMM."""
    whole = doc["overlap"]["gemm"]["whole_tflops"]
    for size in doc["overlap"]["sizes"]:
        arms = list(enumerate(size["arms"]))
        keeping = [(i, x) for i, x in arms if x["gemm_tflops"] >= GEMM_KEEP * whole]
        size["shortest_step"] = pick(size, min(arms, key=lambda ix: ix[1]["step_ms"]))
        size["shortest_p99_keeping_gemm"] = pick(size, min(
            keeping, key=lambda ix: ix[1]["allreduce_us"]["p99"])) if keeping else None


def pick(size, index_arm):
    i, arm = index_arm
    return {"arm": i, "label": arm["label"], "step_ms": arm["step_ms"],
            "speedup_over_ordinary": ratio(size["arms"][0]["step_ms"], arm["step_ms"]),
            "allreduce_p99_us": arm["allreduce_us"]["p99"], "line": advice_line(arm)}


def advice_line(arm):
    line = ("gctx_group groups[2] = {{.num_sms = %d}, {.backfill = 1}}; /* gctx_partition_split:"
            " NCCL on a stream of groups[0], GEMMs on the rest */" % arm["comm_sms"]) \
        if arm["kind"] == "green" else "/* ordinary streams, no split */"
    if arm["max_ctas"]:
        line += (" ncclConfig_t config = NCCL_CONFIG_INITIALIZER; config.maxCTAs = "
                 f"{arm['max_ctas']};")
    return line + (f" cublasSetSmCountTarget(handle, {arm['sm_target']});"
                   if arm["sm_target"] else "")


def size_text(size):
    units = ("B", "KiB", "MiB", "GiB")
    u = 0
    while u < 3 and size >= 1024 and size % 1024 == 0:
        size, u = size // 1024, u + 1
    return f"{size} {units[u]}"


def print_table(doc):
    o = doc["overlap"]
    v = o["nccl_version"]
    print(f"NCCL {v // 10000}.{v // 100 % 100}.{v % 100} ({o['nccl_library']}), "
          f"NCCL_NVLS_ENABLE=0; cuBLAS {o['cublas_version']} ({o['cublas_library']})")
    print("; ".join(f"GPU {i}: {g['name']} ({g['sm_count']} SMs)" for i, g in
                    enumerate(o["gpus"])))
    print(f"NCCL's communicator init {'changed' if o['init_changed_context'] else 'did not change'}"
          f" the calling thread's current context"
          f"{'; it was put back' if o['init_changed_context'] else ''}")
    g = o["gemm"]
    for size in o["sizes"]:
        print(f"\n== overlap: {size_text(size['bytes'])} all-reduce (fp32 sum, {len(o['gpus'])} "
              f"GPU{'s' * (len(o['gpus']) > 1)}) beside a bf16 GEMM {g['m']}x{g['n']}x{g['k']} "
              "(fp32 compute)")
        print(f"step = {size['mix']['gemms']} GEMMs + {size['mix']['allreduces']} all-reduces "
              f"queued at once, both done; all-reduce alone on the whole GPU p50 "
              f"{size['allreduce_whole_us']:.1f} us; GEMM alone {g['whole_tflops']:.0f} TFLOP/s;"
              f" {size['reps']} all-reduces timed per arm, median of {size['steps']} steps\n")
        print(f"{'arm':40} {'AR p50':>9} {'AR p99':>9} {'p99/alone':>9} | {'TFLOP/s':>8} "
              f"{'/alone':>7} {'/whole':>7} | {'step ms':>9} {'speedup':>8}")
        for i, arm in enumerate(size["arms"]):
            print(f"{arm['label']:40} {arm['allreduce_us']['p50']:9.1f} "
                  f"{arm['allreduce_us']['p99']:9.1f} {arm['p99_vs_alone']:8.2f}x | "
                  f"{arm['gemm_tflops']:8.0f} {arm['gemm_vs_alone']:7.3f} "
                  f"{arm['gemm_vs_whole']:7.3f} | {arm['step_ms']:9.2f} "
                  f"{ratio(size['arms'][0]['step_ms'], arm['step_ms']):7.2f}x"
                  f"{' *' if i == size['shortest_step']['arm'] else ''}")
        print("(AR: all-reduce beside the GEMM, us; p99/alone: against alone in the same SMs "
              "with the same NCCL config; TFLOP/s: the GEMM beside the all-reduce, /alone in "
              "its SMs with the same SM target, /whole: alone on the whole GPU; speedup: "
              "ordinary streams' step / this arm's; * shortest step)\n")
        for key, why in (("shortest_step", "pick, shortest step"), (
                "shortest_p99_keeping_gemm",
                f"pick, shortest all-reduce p99 keeping the GEMM >= {GEMM_KEEP:.1f} of whole")):
            p = size[key]
            if p is None:
                print(f"{why}: none of the arms qualifies")
                continue
            print(f"{why}: {p['label']} — step {p['step_ms']:.2f} ms, "
                  f"{p['speedup_over_ordinary']:.2f}x ordinary streams' "
                  f"{size['arms'][0]['step_ms']:.2f} ms; all-reduce p99 "
                  f"{p['allreduce_p99_us']:.1f} us ({size['arms'][0]['allreduce_us']['p99']:.1f}"
                  f" us on ordinary streams)\n  {p['line']}")
    print(f"\noverlap: {o['seconds']:.0f} s")


def main():
    a = parse_args()
    if a.rank is not None:
        return run_rank(a)
    device_sms, rests = check_machine(a)
    if a.dry:
        for size in a.sizes:
            print(f"{size_text(size)}: {reps_of(a, size)} all-reduces timed per arm, "
                  f"{STEPS[a.quick]} steps, on GPUs {a.device} to {a.device + a.world - 1}")
            for arm in plan(a.sms, rests, device_sms):
                print(f"  {arm['label']}")
        return 0
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        env = dict(os.environ, NCCL_NVLS_ENABLE="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(s.getsockname()[1]), WORLD_SIZE=str(a.world))
    with tempfile.TemporaryFile("w+") as out:  # rank 0's document
        ranks = [subprocess.Popen(scenario.itself("--rank", str(r)), env=dict(env, RANK=str(r)),
                                  text=True, stdout=out if r == 0 else subprocess.DEVNULL)
                 for r in range(a.world)]
        try:  # a rank that fails leaves the others waiting in NCCL: they are stopped
            while any(p.poll() is None for p in ranks) and not any(p.poll() for p in ranks):
                time.sleep(0.2)
        finally:
            scenario.stop(ranks)
        failed = [r for r, p in enumerate(ranks) if p.returncode]
        if failed:
            sys.exit(f"overlap.py: rank {failed[0]} failed (its error above)")
        out.seek(0)
        doc = json.loads(next(line for line in reversed(out.read().splitlines())
                              if line.startswith("{")))  # NCCL_DEBUG may print after it
    advise(doc)
    if a.json:
        print(json.dumps(doc))
    else:
        print_table(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Elastic partitions over PyTorch and greenctx: LLM decode beside prefill, on the same arrival
trace in every arm (docs/elastic.md, "The bench"; BENCHMARKS.md, "Elastic partitions"). The
one-process arms run as `--role 1p`, the two-process arms' tenants as `--role decode|prefill`.
--dry: the simulated driver, each stream a clock (DryWork): the plumbing, not figures."""
import argparse
import bisect
import gc
import json
import random
import subprocess
import sys
import time

import scenario
from common import summary, utc_now
from scenario import BlasTarget, stream_events

HIDDEN, Q_HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336
MATRICES = ((HIDDEN + 2 * KV_HEADS * HEAD_DIM, HIDDEN), (HIDDEN, HIDDEN), (2 * FFN, HIDDEN),
            (HIDDEN, FFN))  # (rows, cols) of QKV, O, gate+up, down
LAT_SIZES, QUICK_LAT_SIZES = (16, 32, 48, 64, 80, 96, 112), (16, 32, 64, 96, 112)
PERIOD_S, LOW_LOAD, REQUEST_S = 5.0, 0.10, 0.5
PEAK_S = {"onoff": 1.0, "duty50": 2.5}  # the peak's seconds in every period
TRACE_WORDS = {"onoff": "the peak batch 1 s of every 5, 10 % of it otherwise",
               "duty50": "the peak batch 2.5 s of every 5, 10 % of it otherwise",
               "poisson": "Poisson arrivals at on/off's mean load, each request 0.5 s",
               "stationary": "on/off's mean load, constant"}
THR_SLOTS, CAL_REPS, QUICK_CAL_REPS, TARGET_X = 4, 7, 3, 1.5
HBM_BYTES_S = 3.9e12  # the H200's, as a copy kernel measured it
GROW_TIMEOUT_S, REGROW_S, REYIELD_S = 5.0, 0.020, 0.010
# --dry: a launch, and the bytes and FLOPs of its work at these rates on its SMs
DRY_LAUNCH_S, DRY_BYTES_SM_S, DRY_FLOPS_SM_S = 3e-6, 60e9, 5e12
# The two-process arms: (name, label, the decode tenant's claim, MPS, active-thread share,
# resized). "static": the best static split's decode SMs; "min": the smallest split's.
TWO_PROCESS = (
    ("2p_sliced", "2 processes, no MPS (time-sliced)", "primary", 0, 0, 0),
    ("2p_claims", "2 processes, static claims {lat} | rest, MPS", "static", 1, 0, 0),
    ("2p_mps", "2 processes, MPS", "primary", 1, 0, 0),
    ("2p_mps_threads", "2 processes, MPS, active threads {pct} % | {rest} %", "primary", 1, 1, 0),
    ("2p_claims_controller", "2 processes, claims resized (controller), MPS", "min", 1, 0, 1),
    ("2p_claims_controller_sliced", "2 processes, claims resized, no MPS", "min", 0, 0, 1))
CHECKS = ("on/off, one process: controller >= 1.3x the best static split, p99 within target",
          "on/off, two processes: claims controller >= 1.3x static claims, p99 within target",
          "stationary: controller no more than 3 % below the best static split",
          "a re-size in one process (layouts) <= 20 us host time at p99",
          "a re-size across processes <= 5 ms beyond the shrinking tenant's kernel (p99)")
MOVE_TIMED = ("gctx_layouts_switch_ordered (by part); to or from no split, and only then, "
              "gctx_event_record and gctx_stream_wait_event for each workload")
now = time.perf_counter


def decode_bytes(a, batch, weights_only=False):
    weights = sum(r * c * 2 for r, c in MATRICES) * a.layers
    return weights if weights_only else weights + 2.0 * batch * KV_HEADS * a.context * \
        HEAD_DIM * 2 * a.layers


def prefill_flops(tokens):
    return sum(2.0 * tokens * r * c for r, c in MATRICES)


def prefill_bytes(tokens):
    return sum(r * c * 2 + tokens * (c * 2 + r * 4) for r, c in MATRICES)


def mean_load(trace):
    share = PEAK_S.get(trace, 1.0) / PERIOD_S
    return share + (1 - share) * LOW_LOAD


class Trace:
    """The decode batch t seconds into an arm: 1 .. peak, reproducible from the seed."""
    def __init__(self, kind, seconds, peak, seed):
        self.kind, self.peak, self.arrivals = kind, peak, []
        if kind == "poisson":  # Little's law; arrivals before 0 fill the batch at the start
            rng, rate, t = random.Random(seed), mean_load("onoff") * peak / REQUEST_S, -REQUEST_S
            while (t := t + rng.expovariate(rate)) < seconds:
                self.arrivals.append(t)

    def batch(self, t):
        if self.kind in PEAK_S:
            load = 1.0 if t % PERIOD_S < PEAK_S[self.kind] else LOW_LOAD
        elif self.kind == "poisson":
            active = bisect.bisect_right(self.arrivals, t) - bisect.bisect_right(
                self.arrivals, t - REQUEST_S)
            load = active / self.peak
        else:
            load = mean_load("onoff")
        return min(self.peak, max(1, int(load * self.peak + 0.5)))


class TorchWork:
    """The model's tensors; a decode step, prefill unit or GEMM on a torch or greenctx stream."""
    def __init__(self, torch, a):
        self.torch, self.a, self.wrapped = torch, a, {}
        bf, dev, t = torch.bfloat16, "cuda", 2 * a.chunk
        rnd = lambda *shape: torch.randn(*shape, device=dev, dtype=bf)  # noqa: E731
        self.w = [[rnd(r, c) for r, c in MATRICES] for _ in range(a.layers)]
        self.k, self.v = ([rnd(a.batch, KV_HEADS, a.context, HEAD_DIM) for _ in range(a.layers)]
                          for _ in "kv")
        self.device_sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.splits = [attn_splits(a, b, self.device_sms) for b in range(a.batch + 1)]
        self.q = rnd(a.batch * KV_HEADS * self.splits[1] * (Q_HEADS // KV_HEADS) * HEAD_DIM)
        self.x = {c: rnd(a.batch, c) for c in (HIDDEN, FFN)}
        self.tokens = {c: rnd(t, c) for c in (HIDDEN, FFN)}
        self.y = [torch.empty(a.batch, r, device=dev, dtype=bf) for r, _ in MATRICES]
        self.out = [torch.empty(t, r, device=dev, dtype=bf) for r, _ in MATRICES]
        self.attention = torch.nn.functional.scaled_dot_product_attention
        self.sms, self.events, self.last = BlasTarget(torch, self.device_sms, True), {}, {}

    def mark(self, s, end):
        """s's start or end event (in the stream's own context)."""
        st = self.stream(s)
        if not end:
            self.last[st.cuda_stream] = stream_events(self.events, st, 2)
        self.last[st.cuda_stream].record(end)

    def elapsed_ms(self, s):
        return self.last[self.stream(s).cuda_stream].ms(0, 1)

    def stream(self, s):
        if isinstance(s, self.torch.cuda.Stream):
            return s
        if s.handle not in self.wrapped:
            self.wrapped[s.handle] = self.torch.cuda.ExternalStream(s.handle)
        return self.wrapped[s.handle]

    def gemm(self, s, sms, layer, m, tokens):
        with self.torch.cuda.stream(self.stream(s)):
            self.sms(sms)
            self.torch.mm(self.tokens[MATRICES[m][1]][:tokens], self.w[layer][m].t(),
                          out=self.out[m][:tokens])

    def prefill(self, s, sms, layer, tokens):
        for m in range(len(MATRICES)):
            self.gemm(s, sms, layer, m, tokens)

    def decode(self, s, sms, batch, chunk=0):
        with self.torch.cuda.stream(self.stream(s)):
            self.sms(sms)
            for layer in range(self.a.layers):
                for m, (_, cols) in enumerate(MATRICES):
                    self.torch.mm(self.x[cols][:batch], self.w[layer][m].t(), out=self.y[m][:batch])
                    if m == 0:  # each KV head's positions in self.splits[batch] parts
                        rows = KV_HEADS * self.splits[batch]
                        kv = (batch, rows, self.a.context // self.splits[batch], HEAD_DIM)
                        self.attention(self.q[:batch * rows * (Q_HEADS // KV_HEADS) * HEAD_DIM]
                                       .view(batch, rows, Q_HEADS // KV_HEADS, HEAD_DIM),
                                       self.k[layer][:batch].view(kv),
                                       self.v[layer][:batch].view(kv))
                if chunk:
                    self.prefill(s, sms, layer, chunk)

    def idle(self, s):
        return self.stream(s).query()

    def wait(self, s):
        self.stream(s).synchronize()


class DryWork:
    """--dry: each stream a clock a launch moves by the longer of its bytes' and FLOPs' time."""
    def __init__(self, a):
        self.a, self.busy, self.marks = a, {}, {}

    def _clock(self, s):  # (s's key, when its work ends)
        key = getattr(s, "handle", id(s))
        return key, self.busy.get(key, 0)

    def _add(self, s, sms, launches, nbytes, flops):
        key, busy = self._clock(s)
        self.busy[key] = max(now(), busy) + launches * DRY_LAUNCH_S + max(
            nbytes / min(sms * DRY_BYTES_SM_S, HBM_BYTES_S), flops / (sms * DRY_FLOPS_SM_S))

    def gemm(self, s, sms, layer, m, tokens):
        r, c = MATRICES[m]
        self._add(s, sms, 1, r * c * 2 + tokens * (c * 2 + r * 4), 2.0 * tokens * r * c)

    def prefill(self, s, sms, layer, tokens):
        self._add(s, sms, len(MATRICES), prefill_bytes(tokens), prefill_flops(tokens))

    def decode(self, s, sms, batch, chunk=0):
        layers = self.a.layers
        self._add(s, sms, 5 * layers, decode_bytes(self.a, batch), prefill_flops(batch) * layers)
        for layer in range(layers if chunk else 0):
            self.prefill(s, sms, layer, chunk)

    def mark(self, s, end):  # the stream's clock when its work starts, and when it ends
        key, busy = self._clock(s)
        self.marks[key] = (self.marks.get(key, (0, 0))[0] if end else max(now(), busy), busy)

    def elapsed_ms(self, s):
        start, end = self.marks[self._clock(s)[0]]
        return max(0.0, end - start) * 1e3

    def idle(self, s):
        return now() >= self._clock(s)[1]

    def wait(self, s):
        time.sleep(max(0.0, self._clock(s)[1] - now()))


def attn_splits(a, batch, device_sms):
    """The parts of each KV head's positions in decode's attention: 4 or more blocks an SM."""
    splits = 1
    while KV_HEADS * batch * splits < 4 * device_sms and a.context % (2 * splits) == 0 and \
            a.context // (2 * splits) >= 64:
        splits *= 2
    return splits


def chunks(a):  # the chunked prefill arms' tokens a step, each a size the warm-up runs
    return a.chunk // 2, a.chunk, 2 * a.chunk


def make_work(a):
    if a.dry:
        return DryWork(a)
    import torch
    torch.cuda.init()
    return TorchWork(torch, a)


def timed(work, fn, s, reps):
    """The median of reps calls of fn on s after 2: the longer of its events' and host's time."""
    times = []
    for i in range(2 + reps):
        t0 = now()
        work.mark(s, False)
        fn()
        work.mark(s, True)
        work.wait(s)
        times.append(max(now() - t0, work.elapsed_ms(s) * 1e-3))
    return sorted(times[2:])[reps // 2]


def finish(arm, steps, target_ms):
    """The arm's decode figures from its (latency ms, batch) samples."""
    lat, batches = [s[0] for s in steps], [s[1] for s in steps]
    arm.update(steps=len(steps), step_ms=summary(lat), token_ms=summary(lat, batches),
               steps_within_target=sum(v <= target_ms for v in lat),
               tokens_within_target=sum(b for v, b in steps if v <= target_ms))


def new_arm(name, kind, label, **fields):
    return {"name": name, "label": label, "kind": kind, "ran": False, "why": None, "lat_sms": 0,
            "thr_sms": 0, "chunk": 0, "thread_percentage": 0, "prefill_tokens_per_s": 0.0,
            "tflops": 0.0, "resizes": 0, "resize_us": summary([]), "grant_ms": summary([]),
            "thr_kernel_ms": summary([]), "thr_resize_us": summary([]),
            "lat_contexts_made": 0, "thr_contexts_made": 0, "timeline": [], **fields}


def set_rate(arm, units, tokens, seconds, layers):
    if seconds > 0:
        arm["prefill_tokens_per_s"] = units * tokens / layers / seconds
        arm["tflops"] = units * prefill_flops(tokens) / seconds * 1e-12


def workloads(a, target_ms, priors, disjoint):
    """The controller over decode and prefill from the calibration's priors and splits."""
    import greenctx
    device = max(int(s) for s in priors["decode"])
    peak = decode_bytes(a, a.batch)
    decode = greenctx.Workload.latency(
        target_ms * 1e-3, {int(k): v for k, v in priors["decode"].items()},
        ref_demand=a.batch, demand_weight=1.0 - decode_bytes(a, 0, True) / peak,
        bytes_per_step=peak)
    prefill = greenctx.Workload.throughput({int(k): v for k, v in priors["prefill"].items()},
                                           bytes_per_step=prefill_bytes(a.chunk))
    rows = [(int(s), device - int(s)) for s in sorted(priors["decode"], key=int)[:-1]]
    return greenctx.Controller([decode, prefill], rows, device_sms=device, disjoint=disjoint,
                               hbm_bytes_per_s=0.0 if disjoint or device != 132 else HBM_BYTES_S)


class Place:
    """Decode's and prefill's streams, their SMs, the layout (None: every SM), an event each."""
    def __init__(self, streams, sms, layout, contexts):
        import greenctx
        self.streams, self.sms, self.layout = streams, sms, layout
        self.marks = [greenctx.Event(c) for c in contexts]


def move(layouts, a, b):
    """Each workload's stream in b after its own in a; the host's us in the calls (MOVE_TIMED)."""
    from greenctx._capi import GCTX_LAYOUTS_ORDER_BY_PART, lib
    from greenctx._errors import check
    calls = [(lib.gctx_layouts_switch_ordered, (layouts._handle, b.layout,
                                                 GCTX_LAYOUTS_ORDER_BY_PART, None))] \
        if b.layout is not None else []
    if a.layout is None or b.layout is None:
        for mark, old, new in zip(a.marks, a.streams, b.streams):
            calls += [(lib.gctx_event_record, (mark._handle, old._handle)),
                      (lib.gctx_stream_wait_event, (new._handle, mark._handle))]
    t0 = now()
    results = [call(*args) for call, args in calls]
    us = (now() - t0) * 1e6
    for result in results:
        check(result)
    return us


def one_process(a):
    import greenctx
    work = make_work(a)
    info = greenctx.device_info()
    device = info.sm_count
    sizes = [s for s in (QUICK_LAT_SIZES if a.quick else LAT_SIZES) if s + 16 <= device]
    layouts = greenctx.Layouts([(s, 0) for s in sizes])
    places = [Place([layouts.stream(i, p) for p in (0, 1)],
                    [layouts.partition(i, p).sm_count for p in (0, 1)], i,
                    [layouts.context(i, p) for p in (0, 1)]) for i in range(len(sizes))]
    whole = greenctx.GreenContext(num_sms=device)  # no split: every SM, for both
    shared, priority = whole.stream(), whole.stream(priority=-100)  # the driver's greatest
    places.append(Place([whole.stream(), shared], [device, device], None, [whole, whole]))
    places.append(Place([priority, shared], [device, device], None, [whole, whole]))
    print(f"elastic: {len(places)} places; calibrating each workload alone", file=sys.stderr)
    for p in places[:-1]:  # every kernel each place runs, once (they load per context)
        if p.layout is not None:
            layouts.switch(p.layout)
        for batch in range(1, a.batch + 1):
            work.decode(p.streams[0], p.sms[0], batch)
        for tokens in chunks(a):
            work.decode(p.streams[0], p.sms[0], 1, tokens)
            work.prefill(p.streams[1], p.sms[1], 0, tokens)
        for s in p.streams:
            work.wait(s)
    reps = QUICK_CAL_REPS if a.quick else CAL_REPS
    cal = []
    for p in places[:-1]:  # the layouts' decode sides, then every SM
        if p.layout is not None:
            layouts.switch(p.layout)
        cal.append({"decode_sms": p.sms[0], "decode_ms": 1e3 * timed(
            work, lambda: work.decode(p.streams[0], p.sms[0], a.batch), p.streams[0], reps),
            "prefill_unit_ms": 1e3 * timed(
                work, lambda: work.prefill(p.streams[1], p.sms[1], 0, a.chunk), p.streams[1],
                reps)})
    target = a.target_ms or TARGET_X * cal[-1]["decode_ms"]
    priors = {"decode": {p.sms[0]: c["decode_ms"] * 1e-3 for p, c in zip(places, cal)},
              "prefill": {p.sms[1]: c["prefill_unit_ms"] * 1e-3 for p, c in zip(places, cal)}}
    trace = Trace(a.trace, a.seconds, a.batch, a.seed)
    n = len(sizes)  # the plan: (an arm, the place it starts in)
    plan = [(new_arm(f"static_{p.sms[0]}", "static", f"static split {p.sms[0]} | {p.sms[1]}",
                     lat_sms=p.sms[0], thr_sms=p.sms[1]), i) for i, p in enumerate(places[:n])]
    plan += [(new_arm("no_split", "no_split", "no split (equal streams)"), n),
             (new_arm("priority", "priority", "priority streams"), n + 1),
             (new_arm("controller", "controller", "controller over layouts"), 0)]
    plan += [(new_arm(f"chunked_{c}", "chunked", f"chunked prefill, {c} tokens a step",
                      chunk=c), n) for c in chunks(a)]
    gc.collect()
    gc.disable()  # a collection's pause would land in a step or a move: the C bench had none
    for k, (arm, start) in enumerate(plan, 1):
        print(f"elastic [{k}/{len(plan)}] {arm['label']}", file=sys.stderr)
        ctl = workloads(a, target, priors, False) if arm["kind"] == "controller" else None
        if ctl:  # each move once each way, untimed: the driver's first-use costs
            for p in places[:-1]:
                if p is not places[start]:
                    move(layouts, places[start], p)
                    move(layouts, p, places[start])
        run_loop(a, work, layouts, places, start, trace, target, arm, ctl, arm["chunk"])
        for p in places:
            for s in p.streams:
                work.wait(s)
        arm["ran"] = True
    meta = {"gpu": info.name, "sm_count": device, "driver_version": greenctx.driver_version(),
            "greenctx_version": greenctx.__version__}
    gemm = "the model's time on its SMs (--dry)" if a.dry else \
        "torch.mm (cuBLAS, bf16; its SM count target each partition's, cublasSetSmCountTarget" \
        f"{', and torch SM carveout for cuBLASLt' if work.sms.carveout else ''}) and " \
        "scaled_dot_product_attention" if work.sms.fn else \
        "torch.mm (cuBLAS, bf16: no libcublas found loaded, its SM count target the device's) " \
        "and scaled_dot_product_attention"
    print(json.dumps({"meta": meta, "calibration": cal, "target_ms": target, "priors": priors,
                      "gemm": gemm, "arms": [arm for arm, _ in plan]}))


def run_loop(a, work, layouts, places, cur, trace, target_ms, arm, ctl, chunk):
    """Decode steps back to back and (but chunked) THR_SLOTS prefill units queued, one a pass;
    a move ends the queue."""
    steps, resizes, layers = [], [], a.layers
    p = places[cur]
    if p.layout is not None:
        layouts.switch(p.layout)
    arm["timeline"] = [{"t": 0.0, "lat_sms": p.sms[0], "thr_sms": 0 if chunk else p.sms[1]}]
    lat = thr = None  # (place, due, batch); [place, units]
    units = next_unit = 0
    t0 = last_done = now()
    while True:
        t = now() - t0
        is_open = t < a.seconds
        if not is_open and lat is None and thr is None:
            break
        if lat and work.idle(lat[0].streams[0]):
            last_done, ms = now(), work.elapsed_ms(lat[0].streams[0])
            steps.append((max((last_done - lat[1]) * 1e3, ms), lat[2]))
            if ctl and lat[0] is places[cur]:  # the model wants the step's own time
                ctl.observe(0, ms * 1e-3)
            lat = None
        if lat is None and is_open:
            due, batch = now(), trace.batch(t)
            if ctl:
                ctl.set_demand(0, batch)
                d = ctl.decide()
                to = len(places) - 2 if d.no_split else d.candidate
                if to != cur:
                    resizes.append(move(layouts, places[cur], places[to]))
                    cur = to
                    arm["timeline"].append({"t": round(t, 4), "lat_sms": places[to].sms[0],
                                            "thr_sms": places[to].sms[1]})
            p = places[cur]
            work.mark(p.streams[0], False)
            work.decode(p.streams[0], p.sms[0], batch, chunk)
            work.mark(p.streams[0], True)
            lat = (p, due, batch)
        if chunk:
            continue
        queued = thr and thr[1] < THR_SLOTS and thr[0] is places[cur] and is_open
        if thr and not queued and work.idle(thr[0].streams[1]):
            last_done = now()
            if ctl and thr[0] is places[cur] and thr[1] == THR_SLOTS:
                ms = work.elapsed_ms(thr[0].streams[1]) / THR_SLOTS  # queued back to back
                for _ in range(THR_SLOTS):
                    ctl.observe(1, ms * 1e-3)
            units += thr[1]
            thr = None
        if is_open and (thr is None or queued):
            if thr is None:
                thr = [places[cur], 0]
                work.mark(thr[0].streams[1], False)
            work.prefill(thr[0].streams[1], thr[0].sms[1], next_unit % layers, a.chunk)
            work.mark(thr[0].streams[1], True)
            next_unit += 1
            thr[1] += 1
    seconds = last_done - t0
    if chunk:
        units = len(steps) * layers  # each step carried a chunk through every layer
    set_rate(arm, units, chunk or a.chunk, seconds, layers)
    finish(arm, steps, target_ms)
    arm.update(resizes=len(resizes), resize_us=summary(resizes))


def tenant(a):
    """A decode or prefill tenant, ready once its kernels ran on every size it may take."""
    import greenctx
    work, decode = make_work(a), a.role == "decode"
    priors = json.loads(a.priors)
    device = max(int(s) for s in priors["decode"])
    sizes = sorted(int(s) for s in priors["decode"])[:-1]
    out = {"resize_us": [], "grant_ms": [], "timeline": [], "samples": []}
    claim, state = None, {}

    def place():  # the claim's SMs and a stream on them, the last one dropped first (held, its
        # context would stay out of the cache)
        state["stream"] = None
        state.update(sms=claim.info.sm_count, stream=claim.context().stream())

    def resize(request, grow, t=None):
        before, t0 = state["sms"], now()
        try:
            claim.resize(request=str(request), wait=grow and decode,
                         timeout=GROW_TIMEOUT_S if grow and decode else None,
                         rounding="strict" if decode else "down")
        except greenctx.BusyError:
            if decode:
                raise
            return  # nothing free to grow into: again later
        us = (now() - t0) * 1e6
        place()
        if t is not None and state["sms"] != before:
            out["resize_us"].append(us)
            if grow and decode:
                out["grant_ms"].append(us * 1e-3)
            out["timeline"].append((round(t, 4), state["sms"]))

    def step(launch):  # launch on the claim's stream, waited for: its events' ms
        work.mark(state["stream"], False)
        launch()
        work.mark(state["stream"], True)
        work.wait(state["stream"])
        return work.elapsed_ms(state["stream"])

    def warm():  # every kernel of the run at this size, once
        for i in range(a.batch if decode else len(MATRICES)):
            (work.decode(state["stream"], state["sms"], i + 1) if decode else
             work.gemm(state["stream"], state["sms"], 0, i, a.chunk))
        work.wait(state["stream"])

    if a.on == "primary":
        state.update(sms=device, stream=object() if a.dry else __import__("torch").cuda.Stream())
    else:
        greenctx.set_cache_limit(40)  # every size's context stays cached
        claim = greenctx.Claim(request=a.on, runtime_dir=a.runtime, label="bench elastic",
                               priority="latency" if decode else "throughput")
        place()
    warm()
    if a.elastic and claim:  # the context of every set of SMs the run takes, made before it
        home = state["sms"]
        for n in sizes if decode else [device - s for s in sizes if device - s <= home]:
            resize(n, False)
            warm()
            if not decode and device - n > sizes[0]:  # and "rest" beside the decode tenant
                # at device - n: the SMs it would hold beyond its own held by a claim of ours
                # (a count never takes the SMs left over from whole granules; "rest" does)
                with greenctx.Claim(device - n - sizes[0], runtime_dir=a.runtime):
                    resize("rest", False)
                    warm()
                resize(n, False)
        resize(home if decode else "rest", False)
    stats = greenctx.cache_stats()
    gc.collect()
    gc.disable()  # a collection's pause would land in a step: the C bench had none
    scenario.ready()
    start = now()
    end, full = start + a.seconds, state["sms"]
    out["timeline"].append((0.0, full))
    ctl = workloads(a, a.target_ms, priors, True) if a.elastic and decode else None
    trace, gemms, kernel_ms = Trace(a.trace, a.seconds, a.batch, a.seed), 0, []
    last_grow, last_yield = start, 0.0
    while (t := now()) < end:
        if decode:
            due, batch = t, trace.batch(t - start)
            if ctl:
                ctl.set_demand(0, batch)
                want = ctl.decide().sm_counts[0]
                if want != state["sms"]:
                    resize(want, want > state["sms"], t - start)
            ms = step(lambda: work.decode(state["stream"], state["sms"], batch))
            out["samples"].append((max((now() - due) * 1e3, ms), batch))
            if ctl:
                ctl.observe(0, ms * 1e-3)
            continue
        wanted = claim.pressure() if a.elastic and claim else 0
        last_yield = last_yield if wanted else 0.0
        if wanted and (not last_yield or t - last_yield > REYIELD_S):
            last_yield = t  # a want stays posted until its waiter's next pass: once per want
            sms = state["sms"]
            resize(sms - wanted if sms > wanted + 8 else 8, False, t - start)
        elif a.elastic and claim and state["sms"] < full and t - last_grow > REGROW_S:
            last_grow = t
            resize("rest", True, t - start)
        kernel_ms.append(step(lambda: work.gemm(
            state["stream"], state["sms"], gemms // len(MATRICES) % a.layers,
            gemms % len(MATRICES), a.chunk)))
        gemms += 1
    out.update(role=a.role, sms=full, gemms=gemms, seconds=now() - start, kernel_ms=kernel_ms,
               contexts_made=greenctx.cache_stats().misses - stats.misses)
    print(json.dumps(out), flush=True)


def run_pair(a, arm, env, priors, target, on, elastic, pct):
    """Both tenants from one start, their figures into arm; False if one failed."""
    specs = []  # decode's claim first
    for role, where, share in (("decode", on, pct), ("prefill", "primary" if on == "primary"
                                                      else "rest", 100 - pct if pct else 0)):
        cmd = scenario.itself("--role", role, "--on", where, "--runtime",
                              env["GREENCTX_RUNTIME_DIR"], "--priors", json.dumps(priors),
                              "--target-ms", str(target), *(["--elastic"] if elastic else []))
        e = dict(env, **({"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": str(share)} if share else {}))
        specs.append((role, cmd, e))
    try:
        with scenario.tenants(arm["name"], specs) as procs:
            outs = [p.stdout.read().strip().splitlines() for p in procs]
            if any(p.wait() or not o for p, o in zip(procs, outs)):
                return False
    except RuntimeError:  # a tenant did not start
        return False
    dec, pre = (json.loads(o[-1]) for o in outs)
    finish(arm, [tuple(s) for s in dec["samples"]], target)
    set_rate(arm, pre["gemms"] / len(MATRICES), a.chunk, pre["seconds"], a.layers)
    arm.update(lat_sms=dec["sms"], thr_sms=pre["sms"], resizes=len(dec["resize_us"]),
               resize_us=summary(dec["resize_us"]), grant_ms=summary(dec["grant_ms"]),
               thr_kernel_ms=summary(pre["kernel_ms"]), thr_resize_us=summary(pre["resize_us"]),
               lat_contexts_made=dec["contexts_made"], thr_contexts_made=pre["contexts_made"])
    cur, line = [dec["sms"], pre["sms"]], []
    for t, side, sms in sorted([(t, 0, s) for t, s in dec["timeline"]] +
                               [(t, 1, s) for t, s in pre["timeline"]]):
        cur[side] = sms
        line.append({"t": t, "lat_sms": cur[0], "thr_sms": cur[1]})
    arm["timeline"] = line
    return True


def two_process(a, res, env, tool):
    best = res["arms_by_name"].get(res["best_static"])
    lat = best["lat_sms"] if best else res["calibration"][-1]["decode_sms"] // 2
    device = res["calibration"][-1]["decode_sms"]
    pct = int(100.0 * lat / device + 0.5)
    with scenario.mps(tool, env) as (mps_env, why):
        res["mps_available"], res["mps_why"] = mps_env is not None, why
        claims = {"static": str(lat), "min": str(res["calibration"][0]["decode_sms"])}
        for k, (name, label, on, with_mps, threads, elastic) in enumerate(TWO_PROCESS, 1):
            arm = new_arm(name, name, label.format(lat=lat, pct=pct, rest=100 - pct),
                          thread_percentage=pct if threads else 0)
            res["arms"].append(arm)
            if with_mps and not res["mps_available"]:
                arm["why"] = f"MPS is not available: {res['mps_why']}"[:400]
                continue
            print(f"elastic [{k}/{len(TWO_PROCESS)}] {arm['label']}", file=sys.stderr)
            arm["ran"] = run_pair(a, arm, mps_env if with_mps else scenario.no_mps(env),
                                  res["priors"], res["target_ms"], claims.get(on, on), elastic,
                                  arm["thread_percentage"])
            if not arm["ran"]:
                arm["why"] = "failed: see the messages above"


def holds(arm, target_ms):
    return arm["ran"] and arm.get("steps") and arm["token_ms"]["p99"] <= target_ms


def best_of(res, kind):
    """(name or None, within): of a kind, the most prefill within target, else smallest p99."""
    ran = [x for x in res["arms"] if x["kind"] == kind and x["ran"]]
    ok = [x for x in ran if holds(x, res["target_ms"])]
    if ok:
        return max(ok, key=lambda x: x["prefill_tokens_per_s"])["name"], True
    return (min(ran, key=lambda x: x["token_ms"]["p99"])["name"] if ran else None), False


def check_targets(res, dry):
    arms, target = res["arms_by_name"], res["target_ms"]
    sim = "simulated: not a measurement; " if dry else ""
    ran = {x["kind"]: x for x in reversed(res["arms"]) if x["ran"]}
    best, ctl, claims = arms.get(res["best_static"]), ran.get("controller"), ran.get(
        "2p_claims_controller")
    checks = [[False, False, None] for _ in CHECKS]  # applies, met, detail

    def gain(i, arm, ref, need):
        if arm and ref:
            r = arm["prefill_tokens_per_s"] / ref["prefill_tokens_per_s"] if \
                ref["prefill_tokens_per_s"] else 0
            p99, ok = arm["token_ms"]["p99"], holds(arm, target)
            checks[i] = [True, r >= need and ok, f"{sim}{r:.2f}x {ref['name']}'s rate (need "
                         f"{need:.2f}x), p99 {p99:.3f} ms {'<=' if ok else '>'} {target:.3f} ms"]
    if res["trace"] == "onoff":
        gain(0, ctl, best, 1.3)
        gain(1, claims, ran.get("2p_claims") or best, 1.3)
    if res["trace"] == "stationary" and ctl and best:
        r = ctl["prefill_tokens_per_s"] / best["prefill_tokens_per_s"]
        checks[2] = [True, r >= 0.97 and holds(ctl, target), f"{sim}{r:.3f}x {best['name']}'s "
                     f"rate, p99 {ctl['token_ms']['p99']:.3f} ms (target {target:.3f})"]
    if ctl and ctl["resizes"]:
        s = ctl["resize_us"]
        checks[3] = [True, s["p99"] <= 20.0, f"{sim}{ctl['resizes']} re-sizes, median "
                     f"{s['p50']:.1f} us, p99 {s['p99']:.1f} us"]
    if claims and claims["grant_ms"]["n"]:
        g, k = claims["grant_ms"]["p99"], claims["thr_kernel_ms"]["p99"]
        checks[4] = [True, g - k <= 5.0, f"{sim}grant p99 {g:.2f} ms, the GEMM kernel p99 "
                     f"{k:.2f} ms: {g - k:.2f} ms beyond it"]
    res["targets"] = [{"what": w, "applies": ap, "measured": not dry,
                       "met": met if ap and not dry else None,
                       **({"model_met": met} if ap and dry else {}), "detail": detail}
                      for w, (ap, met, detail) in zip(CHECKS, checks)]


def report(res, a, out):
    """The table, on out."""
    p = lambda *x: print(*x, file=out)  # noqa: E731
    p(f"\ntrace {res['trace']}: {TRACE_WORDS[res['trace']]}; {a.seconds} s an arm, seed {a.seed}")
    p(f"model: {a.layers} bf16 layers shaped like Llama-3-8B, peak batch {a.batch}, context "
      f"{a.context}; prefill units of {a.chunk} tokens; GEMMs: {res['gemm']}")
    p(f"calibration, each alone (decode at the peak batch; a prefill unit on the rest):\n"
      f"  {'decode SMs':10} {'decode ms':>12} {'prefill unit ms':>16}")
    for c in res["calibration"]:
        p(f"  {c['decode_sms']:<10} {c['decode_ms']:12.3f} {c['prefill_unit_ms']:16.3f}")
    p(f"target: p99 per output token <= {res['target_ms']:.3f} ms ("
      f"{'given' if a.target_ms else '1.5 x decode at the peak batch alone on every SM'}); a "
      f"step: the longer of its events' time and the host's from when it was due")
    p(f"resize us: {res['resize_timed']}")
    p(f"\n{'arm':38} {'p50 ms':>9} "
      f"{'p99 ms':>9} {'target':>7} {'prefill tok/s':>13} {'x best':>7} {'resizes':>7} "
      f"{'resize us p50/p99':>18} {'step p50/p99':>15}")
    for x in res["arms"]:
        if not x["ran"]:
            continue
        rs = f"{x['resize_us']['p50']:.1f} / {x['resize_us']['p99']:.1f}" if x["resizes"] else "-"
        p(f"{x['label']:38} {x['token_ms']['p50']:9.3f} {x['token_ms']['p99']:9.3f} "
          f"{'met' if holds(x, res['target_ms']) else 'missed':>7} "
          f"{x['prefill_tokens_per_s']:13.0f} {x['ratio_to_best_static']:7.2f} "
          f"{x['resizes']:7} {rs:>18} {x['step_ms']['p50']:7.3f} / {x['step_ms']['p99']:.3f}"
          f"{'  <- best static' if x['name'] == res['best_static'] else ''}")
        if x["grant_ms"]["n"]:
            p(f"{'':38} grant of the SMs: p50 {x['grant_ms']['p50']:.2f} ms, p99 "
              f"{x['grant_ms']['p99']:.2f} ms; the GEMM kernel p99 {x['thr_kernel_ms']['p99']:.2f}"
              f" ms\n{'':38} prefill's re-sizes: {x['thr_resize_us']['n']}, p50 "
              f"{x['thr_resize_us']['p50']:.1f} us; contexts made in the run: decode "
              f"{x['lat_contexts_made']}, prefill {x['thr_contexts_made']}")
    if res["best_static"] and not res["best_static_within_target"]:
        p("no static split holds the target: the best static is the one with the smallest p99")
    for x in res["arms"]:
        if not x["ran"]:
            p(f"not run: {x['label']}: {x['why']}")
    p("\ntargets (issue 17):")
    for t in res["targets"]:
        verdict = "n/a" if not t["applies"] else "simulated" if not t["measured"] else \
            "met" if t["met"] else "not met"
        p(f"  {verdict:9} {t['what']}{': ' + t['detail'] if t['applies'] else ''}")


def bounded(kind, lo, hi):
    def parse(text):
        value = kind(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text}: from {lo} to {hi}")
        return value
    return parse


def main():
    ap = argparse.ArgumentParser(description="decode beside prefill: elastic partitions")
    ap.add_argument("--trace", choices=TRACE_WORDS, default="onoff")
    ap.add_argument("--seconds", type=bounded(float, 0.2, 600), help="an arm's (default 10, "
                    "--quick 5)")
    ap.add_argument("--quick", action="store_true", help="fewer static splits and calibration "
                    "runs, 5 s arms")
    ap.add_argument("--target-ms", type=bounded(float, 0.001, 100000), default=0.0,
                    help="the decode p99 per token to hold (default 1.5 x the peak step on "
                    "every SM)")
    ap.add_argument("--layers", type=bounded(int, 1, 8), default=2)
    ap.add_argument("--batch", type=bounded(int, 1, 256), default=32, help="the peak batch")
    ap.add_argument("--context", type=bounded(int, 64, 131072), default=8192)
    ap.add_argument("--chunk", type=bounded(int, 16, 4096), default=256)
    ap.add_argument("--seed", type=bounded(int, 0, 2**31 - 1), default=1)
    ap.add_argument("--arms", choices=("all", "1p"), default="all")
    ap.add_argument("--dry", action="store_true")
    for hidden in ("--role", "--on", "--runtime", "--priors"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    ap.add_argument("--elastic", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.seconds = a.seconds or (5.0 if a.quick else 10.0)
    if a.role:
        return one_process(a) if a.role == "1p" else tenant(a)
    with scenario.runtime("elastic", a.dry) as (tool, _, env):
        one = subprocess.run(scenario.itself("--role", "1p"), env=env, text=True,
                             stdout=subprocess.PIPE)
        if one.returncode:
            sys.exit("elastic: the one-process arms failed: see the messages above")
        res = {"trace": a.trace, **json.loads(one.stdout.splitlines()[-1]), "mps_available":
               False, "mps_why": "the one-process arms only (--arms 1p)"}
        res["resize_timed"] = f"the host's time in the library's calls of a move: {MOVE_TIMED}"
        res["arms_by_name"] = {x["name"]: x for x in res["arms"]}
        res["best_static"], res["best_static_within_target"] = best_of(res, "static")
        if a.arms == "all":
            two_process(a, res, env, tool)
            res["arms_by_name"] = {x["name"]: x for x in res["arms"]}
    res["best_chunked"] = best_of(res, "chunked")[0]
    best = res["arms_by_name"].get(res["best_static"])
    for x in res["arms"]:
        x["p99_within_target"] = bool(holds(x, res["target_ms"]))
        x["ratio_to_best_static"] = x["prefill_tokens_per_s"] / best["prefill_tokens_per_s"] \
            if best and best["prefill_tokens_per_s"] else 0.0
    check_targets(res, a.dry)
    report(res, a, sys.stderr)
    del res["arms_by_name"], res["priors"]
    doc = {"schema": "greenctx.bench.elastic/2",
           "meta": {**res.pop("meta"), "date": utc_now(),
                    "command": " ".join(sys.argv), "simulated": a.dry},
           "elastic": {**res, "seconds": a.seconds, "seed": a.seed, "target_given":
                       bool(a.target_ms),
                       "model": {"layers": a.layers, "hidden": HIDDEN, "q_heads": Q_HEADS,
                                 "kv_heads": KV_HEADS, "head_dim": HEAD_DIM, "ffn": FFN,
                                 "peak_batch": a.batch, "context": a.context,
                                 "chunk": a.chunk}}}
    print(json.dumps(doc))
    return 1 if any(not x["ran"] and not x["why"].startswith("MPS is not") for x in
                    res["arms"]) else 0


if __name__ == "__main__":
    sys.exit(main())

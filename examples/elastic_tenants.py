"""Elastic claims across two processes (docs/elastic.md, "Across processes").

    python elastic_tenants.py [--sim] [--seconds 5]

A latency tenant (A) holds 16 SMs and, at each burst, grows its claim to 64 with wait=True at
priority "latency", posting its want in the claims registry; a throughput tenant (B) holds the
rest and, before each step, yields what A waits for (Claim.cooperate, as the controller
decides), growing again once A shrinks. A's grow takes about B's step, plus B's running kernel,
plus the resize. Each step is a sleep standing in for a workload on claim.context().
"""
import argparse
import subprocess
import sys
import threading
import time

import greenctx

DECODE = {16: 0.0557, 32: 0.0279, 64: 0.0144, 96: 0.0116, 132: 0.00976}  # H200, seconds
PREFILL = {36: 0.053, 68: 0.028, 132: 0.0126}


def latency(seconds):
    claim = greenctx.Claim(16, priority="latency", label="latency tenant")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.5)                        # low load: steps on 16 SMs
        start = time.monotonic()
        claim.resize(64, wait=True, timeout=2)  # a burst: B sees the want and yields
        print(f"latency: grew to {claim.sm_count} SMs in "
              f"{(time.monotonic() - start) * 1e3:.1f} ms", flush=True)
        time.sleep(0.3)                        # the burst's steps on 64 SMs
        claim.resize(16)
    claim.close()


def throughput(seconds):
    claim = greenctx.Claim(request="rest", label="throughput tenant")
    ctl = greenctx.Controller([greenctx.Workload.latency(0.020, DECODE),
                               greenctx.Workload.throughput(PREFILL)],
                              candidates=[(16, 116), (64, 68)], device_sms=132, dwell=1)
    end, step_s, last = time.monotonic() + seconds, 0.010, None
    while time.monotonic() < end:
        ctl.set_demand(0, 1.0 if claim.pressure() else 0.1)
        allowed = ctl.decide().sm_counts[1]
        sms = claim.cooperate(allowed)
        if sms != last:
            print(f"throughput: {sms} SMs (the controller allows {allowed})", flush=True)
            last = sms
        time.sleep(step_s)  # one step of the throughput workload: then ctl.observe(1, its time)
    claim.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("role", nargs="?", choices=["latency", "throughput"])
    p.add_argument("--sim", action="store_true", help="on the simulated H200")
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    if a.sim:
        greenctx.simulate("h200")
    if a.role:
        (latency if a.role == "latency" else throughput)(a.seconds)
        return
    # Each tenant writes to a pipe of its own, relayed here a whole line at a time: on one
    # shared stdout, two unbuffered children (PYTHONUNBUFFERED=1) glue their lines together.
    lock = threading.Lock()

    def start(role, seconds):
        child = subprocess.Popen([sys.executable, __file__, role, "--seconds", str(seconds)],
                                 stdout=subprocess.PIPE, text=True)
        relay = threading.Thread(target=relay_lines, args=(child.stdout, lock))
        relay.start()
        return child, relay

    b, b_relay = start("throughput", a.seconds)
    time.sleep(0.5)  # B holds the rest first
    a_child, a_relay = start("latency", a.seconds - 1)
    a_rc, b_rc = a_child.wait(), b.wait()
    a_relay.join()
    b_relay.join()
    sys.exit(a_rc or b_rc)


def relay_lines(pipe, lock):
    for line in pipe:
        with lock:
            sys.stdout.write(line)
            sys.stdout.flush()


if __name__ == "__main__":
    main()

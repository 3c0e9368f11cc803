#!/usr/bin/env python3
"""A stand-in for `greenctx-bench tenant-worker`, for test_tenants_bench (no GPU here): it
speaks the worker's protocol (ready SMS, go START_NS, result lines, done) with made-up
figures, and appends to $GREENCTX_TEST_TENANT_RECORD "start ROLE ON PIPE ATP" when it starts
and "go ROLE ON START_NS" once it has its start, so the test sees who ran with which
environment and start.

$GREENCTX_TEST_TENANT_FAIL names a "ROLE:PERCENT" whose worker dies before it is ready
(hog:88: the active-thread arm's hog). Under MPS the first probe dies before it is
ready too, as a new client of a server taken down by a fault may."""
import os
import sys
import time

words = [a for a in sys.argv[1:] if a != "tenant-worker"]
args = dict(zip(words[0::2], words[1::2]))
role, on = args["--role"], args["--on"]
# a claim held aside while on's is claimed: the rest beside it
shown = on + "-beside-" + args["--aside"] if "--aside" in args else on
pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "")
atp = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "-")
mps = not pipe.endswith("/no-mps")


def record(line):
    with open(os.environ["GREENCTX_TEST_TENANT_RECORD"], "a") as f:
        f.write(line + "\n")


record("start %s %s %s %s" % (role, shown, pipe, atp))
if os.environ.get("GREENCTX_TEST_TENANT_FAIL") == "%s:%s" % (role, atp):
    sys.exit("fake worker: failing on purpose")
if role == "probe" and mps:
    marker = os.path.join(args["--registry"], "probed")
    if not os.path.exists(marker):
        open(marker, "w").close()
        sys.exit("fake worker: the first new client fails")
sms = {"primary": 132, "rest": 116}.get(on, int(on) if on.isdigit() else 0)
print("ready %d" % sms, flush=True)
line = sys.stdin.readline().split()
if len(line) != 2 or line[0] != "go":
    sys.exit("fake worker: no go")
start = int(line[1])
record("go %s %s %d" % (role, on, start))
while time.time_ns() < start:
    time.sleep(0.001)
if role == "victim":
    p50 = 2000.0 if on == "primary" else 700.0
    print("latency 500 %.1f %.1f %.1f %.1f %.1f %.1f" % (p50 - 5, p50, p50 * 1.02, p50 * 1.05,
                                                        p50 * 1.1, p50), flush=True)
elif role == "hog":
    print("rate 1000 1.0 %g" % (sms * 4.6e8), flush=True)
elif role == "faulter":
    fault = start + int(args["--fault-at-ms"]) * 1000000
    while time.time_ns() < fault:
        time.sleep(0.001)
    print("fault %d 700" % fault, flush=True)
elif role == "launcher":
    failed = 5000 if mps else 0
    fault = start + int(args["--fault-at-ms"]) * 1000000
    print("launches 1000 %d %d %d" % (failed, fault + 150000000 if mps else 0, 700 if mps else 0))
    if mps:
        print("message under MPS the fault of pid 1 reached this tenant")
elif role == "probe":
    print("probe 0 %d" % time.time_ns())
print("done", flush=True)

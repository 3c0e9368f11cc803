#!/usr/bin/env bash
# Tenants on one GPU (issue 16), from the repository root with $OUT a folder; about 3.5
# minutes on an H200. Builds against the real driver (build-gpu-bench-tenants: the tool, the
# preload and the resize test only), then:
#   resize    tenants.gpu.resize: a claim grown from 16 to 64 SMs while its kernels run
#   bench     tenants.gpu.bench: `bench tenants --quick` under the test's own MPS daemon,
#             loose targets (victim p99 <= 1.10x alone, hog >= 0.90x)
#   disjoint  tenants.gpu.disjoint: two `greenctx run --sms 64` under MPS, disjoint by
#             timing; two `--sms 64 --shared`, not
#   full      `bench tenants --json --svg` (3 s an arm), starting and quitting its own MPS
#             daemon: the figures for BENCHMARKS.md ($OUT/tenants.json, tenants.svg)
#   targets   the full run as markdown tables (targets.log) and the issue's targets on it
#             (victim p99 <= 1.05x alone, hog >= 0.97x alone in its SMs)
#   cleanup   after each bench run no MPS daemon or server and no tenant worker is left
#   signal    `bench tenants --quick` killed with SIGTERM 10 s in: it quits its daemon and
#             kills its workers on the way out
# Each stage logs to $OUT/<stage>.log; a failed stage is recorded and the next one still runs.
# Ends with a PASS/FAIL line per check.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=build-gpu-bench-tenants
. "$(dirname "$0")/gpu_stages.sh"
# Our MPS daemons and servers (this user's), and tenant workers still alive.
leftovers() {
    pgrep -u "$(id -u)" -fa 'nvidia-cuda-mps-(control|server)' || true
    pgrep -u "$(id -u)" -fa 'bench tenant-worker' || true
}
# Waits (up to 10 s) until no MPS daemon or server of ours is left but those there before.
settle() {
    local i=0
    while [ "$(leftovers | wc -l)" -gt "$before" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
}

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=index,name,driver_version,compute_mode,memory.total,clocks.sm --format=csv,noheader
    command -v nvidia-cuda-mps-control nvcc
    echo "MPS processes before: $(leftovers | wc -l)"
    leftovers
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
before=$(leftovers | wc -l)

stage build 150 sh -c "cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DGREENCTX_WERROR=OFF \
    -DGREENCTX_TEST_DRIVER=real && cmake --build $build -j$(nproc) --target greenctx_tool greenctx_bench_tool \
    greenctx_preload test_claims_gpu"
tool=$build/tools/greenctx
export GREENCTX_GPU_OUT="$out"

for t in resize bench disjoint; do
    stage "$t" 170 sh -c "cd $build && ctest -V -R '^tenants\\.gpu\\.$t\$'"
done

# The full run, as a user types it: no daemon answers, so the bench starts and quits its own
# (once the test daemons' servers have gone: up to 10 s).
settle
stage full 200 sh -c "'$tool' bench tenants --json --svg '$out/tenants.svg' >'$out/tenants.json'"
stage targets 30 python3 - "$out/tenants.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
    m, d = doc["meta"], doc["tenants"]
    d["arms"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit("the full run left no figures (%r): see full.log" % e)
print("%s, driver %s, %s; MPS %s (pipe %s)" % (m["gpu"], m["driver"], m["date"],
      "started by the bench" if d["mps"]["started"] else "already running", d["mps"]["pipe_dir"]))
print("| arrangement | SMs | victim p50 / p99 µs | victim p99 ÷ alone | hog | hog ÷ alone in its SMs |")
print("| --- | --- | --- | --- | --- | --- |")
for a in d["arms"]:
    if not a["ran"]:
        print("| %s | not run: %s | | | | |" % (a["label"], a["why_not"]))
        continue
    v, h = a.get("victim"), a.get("hog")
    sms = " \\| ".join(str(x["sms"]) for x in (v, h) if x)
    print("| %s | %s | %s | %s | %s | %s |" % (a["label"], sms,
          "%.0f / %.0f" % (v["latency_us"]["p50"], v["latency_us"]["p99"]) if v else "",
          "%.2f" % a["victim_p99_vs_alone"] if v else "",
          "{:,.0f} {}".format(h["rate"], a["hog_unit"]) if h else "",
          "%.2f" % a["hog_vs_alone"] if h else ""))
print("\n| fault arm | other tenant ok | failed | first failure after the fault | a new tenant runs after (processes) |")
print("| --- | --- | --- | --- | --- |")
for f in d["fault"]:
    name = "MPS" if f["mps"] else "no MPS"
    if not f["ran"]:
        print("| %s | not run: %s | | | |" % (name, f["why_not"]))
        continue
    fs = lambda x: "-" if x is None else "%.3f s" % x
    print("| %s | %d | %d | %s | %s (%d) |" % (name, f["other_ok"], f["other_failed"],
          fs(f["other_first_failure_s"]), fs(f["new_tenant_runs_after_s"]), f["new_tenant_attempts"]))
    if f.get("other_was_told"):
        print("  the other tenant was told: %s" % f["other_was_told"])
c = {a["name"]: a for a in d["arms"]}["mps_claims"]
ok = c["ran"] and c["victim_p99_vs_alone"] <= 1.05 and c["hog_vs_alone"] >= 0.97
print("\n%s: issue 16 targets, MPS + claims: victim p99 %.3fx alone (<= 1.05), hog %.3fx alone in its SMs (>= 0.97)" % (
    "PASS" if ok else "FAIL", c["victim_p99_vs_alone"], c["hog_vs_alone"]))
sys.exit(0 if ok else 1)
PY
t0=$SECONDS
settle # an MPS server quits a moment after its daemon
after=$(leftovers | wc -l)
leftovers >"$out/cleanup.log" 2>&1
echo "MPS processes and workers: $before before, $after after the bench runs" >>"$out/cleanup.log"
verdict cleanup $([ "$after" -le "$before" ] && echo 0 || echo 1) $((SECONDS - t0))
cat "$out/cleanup.log"

# A signal in the middle: the bench must still quit its daemon and kill its workers.
t0=$SECONDS
{
    "$tool" bench tenants --quick &
    pid=$!
    sleep 10
    echo "sending SIGTERM to $pid; live before: $(leftovers | wc -l)"
    kill -TERM "$pid"
    wait "$pid"
    echo "bench exit status $? (143: died of SIGTERM, as it should after cleaning up)"
    settle
    left=$(leftovers | wc -l)
    leftovers
    echo "left after the signal: $left (before the runs: $before)"
    ls -d /tmp/greenctx-bench-* 2>/dev/null && echo "(run directories of killed benches stay)"
    [ "$left" -le "$before" ]
} >"$out/signal.log" 2>&1
verdict signal $? $((SECONDS - t0))
cat "$out/signal.log"

echo
printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then echo "gpu_bench_tenants: FAIL"; exit 1; fi
echo "gpu_bench_tenants: PASS"

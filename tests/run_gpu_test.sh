#!/bin/sh
# run_gpu_test.sh CASE TOOL LIBGREENCTX PRELOAD: `greenctx run` on a real GPU (make test-gpu):
#   torch    a PyTorch program: every block of its %smid kernels, on the main thread, a new
#            thread, after torch.cuda.set_device, a side stream and a CUDA graph, ran on the
#            partition's SMs (as the report's own probe saw them), for --sms 16 and 64
#   static   the same for a program linked with the static cudart (nvcc -cudart static)
#   copies   a PyTorch copy hog (copy_ of device tensors) paced beside a latency program to
#            under a quarter of its copies alone
#   sweep    --sweep 16,32,64,all on a bf16 8192^3 GEMM
#   targets  the GEMM under --sms 16 and 64 within 5% of the same GEMM on an in-process
#            greenctx context of that size (asserted); launch cost against the same program
#            without greenctx run (PyTorch, static cudart; target within 1%) and start-up against
#            making the context in-process (target within 5 ms) are measured and reported as
#            met or missed, not failed: a few-microsecond launch moves by more than 1% from run
#            to run on a shared GPU, and the start-up miss is known (BENCHMARKS.md)
# Skips (77) on the simulated driver, without a GPU, torch or nvcc. $GREENCTX_GPU_OUT, when
# set, is a folder that gets the measurements (JSON, SVG); not GREENCTX_RUN_*, which the
# preload refuses as a typo of its own variables.
. "$(dirname "$0")/tool_lib.sh"
lib=$3
preload=$4
here=$(cd "$(dirname "$0")" && pwd)/run_gpu
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$tmp"' EXIT
# The runs claim their SMs: a claims registry of this test's own.
export GREENCTX_RUNTIME_DIR="$tmp/runtime"
keep=${GREENCTX_GPU_OUT:-$tmp}
mkdir -p "$keep"

case "${GREENCTX_CUDA_LIBRARY:-}" in *greenctx_sim*)
    echo "needs a GPU: the simulated driver runs no kernels"
    exit 77 ;;
esac
"$tool" info >/dev/null 2>&1 || { echo "no CUDA driver on this machine"; exit 77; }
need_torch() {
    "$python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && return 0
    echo "needs python3 with torch and a GPU"
    exit 77
}
# inside REPORT OBSERVED: every sample of every case ran on the report's SMs.
inside() {
    "$python" - "$1" "$2" <<'PY' || fail "samples ran outside the partition"
import json, sys
r = json.load(open(sys.argv[1]))
ids = set(r["devices"][0]["sm_ids"])
assert len(ids) == r["devices"][0]["sm_count"], ("the report's probe", sorted(ids))
cases = {}
text = open(sys.argv[2]).read()
if text.lstrip().startswith('{"device_sm_count"'):
    cases = json.loads(text)["cases"]
else:
    for line in text.splitlines():
        if line.startswith('{"case"'):
            c = json.loads(line)
            if c["samples"]:
                assert c["error"] == "cudaSuccess", c["case"] + ": " + c["error"]
                cases[c["case"]] = c["samples"]
total = 0
for name, samples in cases.items():
    outside = [s for s in samples if s not in ids]
    assert not outside, f"{name}: {len(outside)} of {len(samples)} samples outside {sorted(ids)}"
    total += len(samples)
    print(f"{name}: {len(samples)} samples on {len(set(samples))} SMs, all inside")
assert len(cases) >= 5 and total > 0, cases
print(f"{total} samples, 100% on the {len(ids)} SMs of the partition")
PY
}

case "$1" in
torch)
    need_torch
    for n in 16 64; do
        run 0 run --sms $n --report "$keep/torch-$n.report.json" -- \
            "$python" "$here/confine_torch.py" "$keep/torch-$n.samples.json"
        inside "$keep/torch-$n.report.json" "$keep/torch-$n.samples.json"
    done
    ;;
copies)
    # PyTorch's copy hog (dst.copy_(src) of 256 MiB tensors, back to back) alone, then paced
    # beside a latency program over its target (a copy and 3 ms of host work per step, 1 ms
    # asked): its copies are held back to under a quarter of its rate alone (level 5).
    need_torch
    run 0 run --sms rest --class best-effort -- "$python" "$here/copy_hog.py" 4
    alone=$(awk '$1 == "copies_per_s" { print $2 }' "$out")
    "$tool" run --sms 16 --class latency:1ms -- "$python" "$here/copy_hog.py" 20 3 \
        >"$tmp/latency" 2>&1 &
    latency=$!
    sleep 5 # its PyTorch start-up, then steps over its target
    run 0 run --sms rest --class best-effort -- "$python" "$here/copy_hog.py" 4
    paced=$(awk '$1 == "copies_per_s" { print $2 }' "$out")
    kill $latency
    wait $latency
    echo "torch copy_ hog: $paced copies/s paced, $alone alone"
    awk -v p="$paced" -v a="$alone" 'BEGIN { exit !(a > 0 && p > 0 && p < 0.25 * a) }' ||
        fail "torch's copies, paced, ran at $paced copies/s, alone at $alone"
    ;;
static)
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    [ -x "$nvcc" ] || { echo "needs nvcc"; exit 77; }
    "$nvcc" -O2 -cudart static -o "$tmp/static_probe" "$here/static_probe.cu" ||
        { fail "nvcc failed"; exit 1; }
    ldd "$tmp/static_probe" | grep -q libcudart && fail "cudart is linked dynamically"
    run 0 run --sms 16 --report "$keep/static-16.report.json" -- "$tmp/static_probe"
    cp "$out" "$keep/static-16.samples.txt"
    inside "$keep/static-16.report.json" "$keep/static-16.samples.txt"
    has "$out" '"case":"cudaDeviceReset","error":"cudaErrorNotPermitted"'
    "$tmp/static_probe" >"$tmp/plain.txt" 2>&1
    grep -q '"case":"main thread","error":"cudaSuccess"' "$tmp/plain.txt" ||
        fail "the probe does not run without greenctx run"
    ;;
sweep)
    need_torch
    run 0 run --sweep 16,32,64,all --json --svg "$keep/sweep-gemm.svg" -- \
        "$python" "$here/gemm.py" plain 300
    cp "$out" "$keep/sweep-gemm.json"
    "$python" - "$out" <<'PY' || fail "the sweep is not what it ran"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert [x["request"] for x in runs] == ["16", "32", "64", "all"], runs
assert all(x["exit_status"] == 0 for x in runs), runs
assert runs[-1]["speedup"] > 1.0, runs  # 300 GEMMs on every SM beat 16 SMs, start-up included
for x in runs:
    print(f'{x["sm_count"]:4} SMs {x["wall_ms"]:9.1f} ms speed-up {x["speedup"]:.2f} '
          f'efficiency/SM {x["efficiency_per_sm"]:.2f}')
PY
    ;;
targets)
    need_torch
    export GREENCTX_LIBRARY="$lib"
    for n in 16 64; do
        "$tool" run --sms $n -- "$python" "$here/gemm.py" plain 30 >"$tmp/run-$n.json" ||
            fail "gemm under greenctx run --sms $n"
        "$python" "$here/gemm.py" inprocess $n 30 >"$tmp/in-$n.json" || fail "gemm in-process $n"
    done
    # Launch cost: the same program with and without greenctx run (PyTorch, and cudart
    # alone), alternating, the best of two each.
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    "$nvcc" -O2 -cudart static -o "$tmp/static_probe" "$here/static_probe.cu" || fail "nvcc failed"
    for i in 1 2; do
        "$tool" run --sms 64 -- "$python" "$here/gemm.py" launch-plain >"$tmp/launch-run-$i.json" ||
            fail "launch under greenctx run"
        "$python" "$here/gemm.py" launch-plain >"$tmp/launch-plain-$i.json" || fail "launch plain"
        "$tool" run --sms 64 -- "$tmp/static_probe" launch >"$tmp/static-run-$i.json" ||
            fail "static launch under greenctx run"
        "$tmp/static_probe" launch >"$tmp/static-plain-$i.json" || fail "static launch plain"
    done
    "$python" "$here/gemm.py" launch-inprocess 64 >"$tmp/launch-in.json" || fail "launch in-process"
    # Start-up varies from process to process: three of each, alternating, the best of each.
    for i in 1 2 3; do
        "$tool" run --sms 16 --report "$tmp/startup-$i.json" -- \
            "$python" -c "import torch; torch.zeros(1, device='cuda')" || fail "start-up run"
        "$python" "$here/gemm.py" create 16 >"$tmp/create-$i.json" || fail "create in-process"
        # The preload without the tool, which plans on the GPU before the program starts: its
        # one process writes one part in the directory.
        mkdir -p "$tmp/direct-$i"
        env LD_PRELOAD="$preload" GREENCTX_RUN_SMS=16 GREENCTX_RUN_REPORT_DIR="$tmp/direct-$i" \
            "$python" -c "import torch; torch.zeros(1, device='cuda')" || fail "preload alone"
    done
    "$python" - "$tmp" "$keep/targets.json" <<'PY' || fail "the GEMM under greenctx run is more than 5% off in-process greenctx"
import glob, json, os, sys
t = sys.argv[1]
load = lambda name: json.loads(open(os.path.join(t, name)).read().strip().splitlines()[-1])
res, ok = {}, True
for n in (16, 64):
    under, inproc = load(f"run-{n}.json")["median_ms"], load(f"in-{n}.json")["median_ms"]
    res[f"gemm_{n}"] = {"greenctx_run_ms": under, "in_process_ms": inproc, "ratio": under / inproc}
    ok &= under <= inproc * 1.05
best = lambda name: min(load(f"{name}-{i}.json")["us_per_launch"] for i in (1, 2))
for what, run_, plain in (("launch_torch", "launch-run", "launch-plain"),
                          ("launch_cudart_static", "static-run", "static-plain")):
    r, p = best(run_), best(plain)
    res[what] = {"greenctx_run_us": r, "without_us": p, "ratio": r / p}
    res[what]["target_met"] = r <= p * 1.01
res["launch_torch"]["in_process_greenctx_external_stream_us"] = load("launch-in.json")["us_per_launch"]
runs = [json.load(open(os.path.join(t, f"startup-{i}.json"))) for i in (1, 2, 3)]
creates = [load(f"create-{i}.json") for i in (1, 2, 3)]
setup, create = min(r["setup_ms"] for r in runs), min(c["create_ms"] for c in creates)
res["startup"] = {"preload_setup_ms": [r["setup_ms"] for r in runs],
                  "preload_driver_ms": [r["driver_ms"] for r in runs],
                  "in_process_create_ms": [c["create_ms"] for c in creates],
                  "in_process_driver_ms": [c["driver_ms"] for c in creates],
                  "preload_without_tool_setup_ms":
                      [json.load(open(glob.glob(os.path.join(t, f"direct-{i}", "*.part"))[0]))
                       ["setup_ms"] for i in (1, 2, 3)],
                  "beyond_ms": setup - create}
res["startup"]["target_met"] = setup <= create + 5
json.dump(res, open(sys.argv[2], "w"), indent=1)
print(json.dumps(res, indent=1))
for what in ("launch_torch", "launch_cudart_static", "startup"):
    print(f"target {what}:", "met" if res[what]["target_met"] else "MISSED (reported)")
print("GEMM within 5% of in-process greenctx:", "met" if ok else "MISSED")
sys.exit(0 if ok else 1)
PY
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

#!/usr/bin/env bash
# Tenants on one GPU (issue 16), for the lead on a GPU machine. From the repository root, with
# $OUT a folder: builds against the real driver (build-gpu-tenants), then with a runtime
# directory of its own and its own MPS daemon (`greenctx mps start`, stopped at the end
# whatever happens):
#   1. one tenant alone, greenctx run --sms 64, a bf16 GEMM loop (ms per GEMM)
#   2. two tenants at once under MPS: --sms 64 and --sms rest (68 SMs), disjoint claims;
#      `greenctx ps --json` while they run; each should run near its alone figure
#   3. the same two with --shared --sms 64 (the same 64 SMs): each near twice (serialized)
#   4. two claims without MPS (time-sliced), and the warning greenctx run prints
#   5. the refusal of a third tenant, and --memory 16G under MPS
# Disjointness across processes is proven by timing (%smid is renumbered per MPS client).
# Needs python3 with torch. Results: $OUT/tenants.txt (and the JSON of each tenant, ps.json).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
root=$(pwd)
cmake -S . -B build-gpu-tenants -DCMAKE_BUILD_TYPE=Release -DGREENCTX_TEST_DRIVER=real \
  -DGREENCTX_WERROR=OFF >"$out/configure.log" 2>&1 &&
  cmake --build build-gpu-tenants -j"$(nproc)" >"$out/build.log" 2>&1 ||
  { echo "FAIL: build (see build.log)"; tail -20 "$out/build.log"; exit 1; }
tool=$root/build-gpu-tenants/tools/greenctx
gemm=$root/tests/run_gpu/tenant_gemm.py
export GREENCTX_RUNTIME_DIR=$(mktemp -d)
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
stop_mps() { "$tool" mps stop >>"$out/tenants.txt" 2>&1 || true; }
trap 'stop_mps; rm -rf "$GREENCTX_RUNTIME_DIR"' EXIT
log() { echo "$*" | tee -a "$out/tenants.txt"; }
# pair NAME SECONDS RUN-OPTIONS-A -- RUN-OPTIONS-B: two tenants whose loops start together.
pair() {
    name=$1 secs=$2
    shift 2
    a=() b=()
    while [ "$1" != "--" ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    start=$(python3 -c "import time; print(time.time() + 25)")
    "$tool" run "${a[@]}" -- python3 "$gemm" "$start" "$secs" >"$out/$name.a.json" 2>"$out/$name.a.err" &
    pa=$!
    # A claims first (the tool claims before the program starts): B's request is what is left.
    sleep 2
    "$tool" run "${b[@]}" -- python3 "$gemm" "$start" "$secs" >"$out/$name.b.json" 2>"$out/$name.b.err" &
    pb=$!
    sleep 20
    "$tool" ps --json >"$out/$name.ps.json" 2>&1
    wait $pa; ra=$?
    wait $pb; rb=$?
    log "$name: A (${a[*]}) exit $ra: $(cat "$out/$name.a.json")"
    log "$name: B (${b[*]}) exit $rb: $(cat "$out/$name.b.json")"
    log "$name: banners: $(grep -h 'greenctx run: device' "$out/$name.a.err" "$out/$name.b.err" | tr '\n' ' ')"
}

log "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
env_lines=$("$tool" mps start --print-env 2>>"$out/tenants.txt") || { log "FAIL: mps start"; exit 1; }
eval "$env_lines"
log "mps: $("$tool" mps status 2>&1 | tr '\n' ' ')"
start=$(python3 -c "import time; print(time.time() + 8)")
"$tool" run --sms 64 -- python3 "$gemm" "$start" 3 >"$out/alone64.json" 2>"$out/alone64.err"
log "alone, --sms 64: $(cat "$out/alone64.json")"
start=$(python3 -c "import time; print(time.time() + 8)")
"$tool" run --sms 68 -- python3 "$gemm" "$start" 3 >"$out/alone68.json" 2>"$out/alone68.err"
log "alone, --sms 68: $(cat "$out/alone68.json")"
pair mps_claims 3 --sms 64 --label a -- --sms rest --label b
python3 - "$out/mps_claims.ps.json" <<'PY' | tee -a "$out/tenants.txt"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["devices"][0]["claims"]
g = [set(x["granules"]) for x in c]
print("ps while both ran:", [(x["pid"], x["sm_count"], x["label"], x["mps"]) for x in c],
      "disjoint" if len(g) == 2 and not g[0] & g[1] else "NOT DISJOINT", "mps", d["mps"]["daemon_running"])
PY
pair mps_shared 3 --sms 64 --shared -- --sms 64 --shared
"$tool" run --sms 64 -- python3 -c "import time; time.sleep(30)" 2>"$out/holder.err" &
holder=$!
sleep 5
"$tool" run --sms 64 -- true >"$out/third.out" 2>&1
log "third tenant: exit $? $(tr '\n' ' ' <"$out/third.out")"
"$tool" run --sms rest --memory 16G -- sh -c 'echo "limit=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"' >"$out/memory.out" 2>&1
log "--memory 16G under MPS: exit $? $(tr '\n' ' ' <"$out/memory.out")"
kill $holder 2>/dev/null; wait $holder 2>/dev/null
stop_mps
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
pair nomps_claims 3 --sms 64 -- --sms rest
grep -h "time-sliced" "$out/nomps_claims.a.err" "$out/nomps_claims.b.err" | head -1 | tee -a "$out/tenants.txt"
log "expected (h200-mps-tenants.md, product table): alone --sms 64 about 2.62 ms; two claims under MPS each near alone (64) and near 64/68 of it (rest); two --shared 64 about 5.1; without MPS time-sliced (about 2x)"

#!/usr/bin/env bash
# One session on a machine with an NVIDIA GPU, from the repository root: the driver-facing
# tests against the real driver (make test-gpu, once: it also runs `greenctx bench all --quick`
# as bench.gpu_quick and the header's example as header.example), each behaviour test's own
# TAP lines, and the tool as a user types it. About 2.5 minutes on an H200. Three files land
# in $OUT (or ./gpu-out): machine.txt, test-gpu.log, checks.log (every check's command and
# output, then the PASS/FAIL summary, which is also printed).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
log=$out/checks.log
: >"$log"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  uname -m
} | tee "$out/machine.txt"

results=()
# check NAME COMMAND...: runs it (its output into checks.log), PASS when it exits 0.
check() {
  local name=$1; shift
  echo "== $name: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then results+=("PASS $name"); else results+=("FAIL $name"); fi
  echo >>"$log"
}

check test-gpu sh -c "make test-gpu JOBS=$(nproc) >'$out/test-gpu.log' 2>&1"

# The behaviour tests' own lines (ok / not ok / SKIP and why), which ctest keeps to itself;
# no test failed (exit 0), or every one skipped here (77: test_faults needs the simulator).
tap() { "$1"; local rc=$?; [ $rc -eq 0 ] || [ $rc -eq 77 ]; }
for t in test_partitions test_contexts test_gpu test_handles test_sized test_faults; do
  check "tap-$t" tap "build-gpu/tests/$t"
done
check header-example build-gpu/tests/header_example

tool=build-gpu/tools/greenctx
# json_ok COMMAND...: the command exits 0 and prints one JSON document.
json_ok() { "$@" | python3 -c 'import json, sys; print("a JSON object:", sorted(json.load(sys.stdin)))'; }
# exits CODE COMMAND...: the command exits with CODE.
exits() { local code=$1; shift; "$@"; test $? -eq "$code"; }

check tool-links-shared sh -c "readelf -d $tool | grep 'NEEDED.*libgreenctx.so.0'"
check help "$tool" --help
for command in info plan map bench; do
  check "$command-help" "$tool" "$command" --help
done
check info "$tool" info
check info-json sh -c "$tool info --json | python3 -c 'import json, sys; d = json.load(sys.stdin); \
assert d[\"simulated\"] is False and d[\"devices\"][0][\"sm_count\"] > 0; print(d)'"
# The help's examples, the H200 splits the 13.1 structured split refuses (the granule path
# gives them), and options after the command in both spellings.
for groups in "24 40 rest" "25% 75%" "16:c2 rest" "20:b" "0" "50%" "128" "64 64" "16:c2 6:c2 rest"; do
  check "plan ${groups}" "$tool" plan $groups
done
check plan-options-after "$tool" plan --device=0 --round down 24 40 rest
check plan-json json_ok "$tool" plan --json 24 40 rest
for groups in "24 40 rest" "16:c2 6:c2 rest" "32 20:b"; do
  check "map ${groups}" "$tool" map $groups
done
check bench-overhead-json json_ok "$tool" bench overhead --quick --json
# Refusals: under --json a JSON object on stdout (exit 1), a failed write exits 1, a bad
# option exits 2.
check json-refusal sh -c "$tool plan --json 12 2>/dev/null | python3 -c 'import json, sys; \
d = json.load(sys.stdin); assert \"error\" in d; print(d)'"
check json-refusal-exit exits 1 "$tool" plan --json 12
check dev-full exits 1 sh -c "$tool info >/dev/full"
check bad-option exits 2 "$tool" info --frob

printf '%s\n' "${results[@]}" | tee -a "$log"
if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then
  echo "gpu_session: FAIL (details in $log)"
  exit 1
fi
echo "gpu_session: PASS"

#!/usr/bin/env bash
# GPU check for branch h-bench: the bench in bench/ (own driver table, tool on the shared
# library), the private library driver table, and the tests' raw driver calls, on the real
# driver. Run from the repository root with $OUT set; about 2 minutes on an H200.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
results=()
check() { # check NAME COMMAND...: runs it, logs to $out/NAME.log, records PASS/FAIL
    local name=$1; shift
    if "$@" >"$out/$name.log" 2>&1; then results+=("PASS $name"); else results+=("FAIL $name"); fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/machine.txt" 2>&1

# 1. The driver-facing tests against the real driver (make test-gpu): gpu (kernels, graphs
#    through tests/raw_calls.h), contexts (raw green contexts), partitions, bench.gpu_quick.
check test-gpu make test-gpu JOBS="$(nproc)"
for t in test_gpu test_contexts test_partitions; do
    check "tap-$t" build-gpu/tests/$t
done

# 2. `greenctx bench all --quick` from its new home, through the tool as BENCHMARKS.md says.
tool=build-gpu/tools/greenctx
check bench-all-quick timeout 120 "$tool" bench all --quick
check bench-overhead-json sh -c "$tool bench overhead --quick --json | python3 -c 'import json,sys; json.load(sys.stdin)'"
check tool-links-shared sh -c "readelf -d $tool | grep -q 'NEEDED.*libgreenctx.so.0'"

# 3. The feature matrix (fine_granules is new) and the driver path on the real driver.
check info "$tool" info

printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then echo "h-bench GPU: FAIL"; exit 1; fi
echo "h-bench GPU: PASS"

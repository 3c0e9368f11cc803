#!/usr/bin/env bash
# GPU check for branch h-cli: the tool's options, JSON errors, failed writes and percentages on
# the real driver, and the driver-labelled tests (errors.kept_after_success, tool.*). Run from
# the repository root with $OUT set; about a minute on an H200.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
results=()
check() { # check NAME COMMAND...: runs it, logs to $out/NAME.log, records PASS/FAIL
    local name=$1; shift
    if "$@" >"$out/$name.log" 2>&1; then results+=("PASS $name"); else results+=("FAIL $name"); fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/machine.txt" 2>&1

# 1. The driver-facing tests against the real driver.
check test-gpu make test-gpu JOBS="$(nproc)"

tool=build-gpu/tools/greenctx
# 2. What a new user types first, on the real H200 (driver 13.0).
check info "$tool" info
check info-help "$tool" info --help
check info-json sh -c "$tool info --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"simulated\"] is False and d[\"devices\"][0][\"sm_count\"] > 0'"
check options-after-command "$tool" plan --device=0 --round down 24 40 rest
for groups in "24 40 rest" "25% 75%" "0" "50%" "20:b" "16:c2 rest"; do
    check "plan-${groups// /_}" "$tool" plan $groups
done
# 3. A refusal under --json is a JSON object on stdout; a failed write exits 1.
check json-error sh -c "$tool plan --json 12; test \$? -eq 1 && $tool plan --json 12 2>/dev/null | python3 -c 'import json,sys; assert \"error\" in json.load(sys.stdin)'"
check dev-full sh -c "$tool info >/dev/full; test \$? -eq 1"
check bad-option sh -c "$tool info --frob; test \$? -eq 2"

printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then echo "h-cli GPU: FAIL"; exit 1; fi
echo "h-cli GPU: PASS"

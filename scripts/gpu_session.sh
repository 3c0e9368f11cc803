#!/usr/bin/env bash
# One session on a machine with an NVIDIA GPU: build, the driver-facing tests against the real
# driver, and the tool's main commands. Logs go to $OUT (or ./gpu-out) for the record.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  uname -m
} | tee "$out/machine.txt"

status=0
make test-gpu JOBS="$(nproc)" 2>&1 | tee "$out/test-gpu.log" || status=1

# Each behaviour test's own lines (ok / not ok / SKIP and why), which ctest keeps to itself.
for t in test_partitions test_contexts test_gpu; do
  echo "== $t"
  build-gpu/tests/$t
done > "$out/tap.log" 2>&1 || status=1

tool=build-gpu/tools/greenctx
{
  for args in "info" "info --json" "plan 24 40" "plan 24 40 rest" "plan 12" "plan 16:c2 6:c2 rest" \
              "map 24 40 rest" "map 16:c2 6:c2 rest" "map 32 20:b"; do
    echo "\$ greenctx $args"
    $tool $args
    echo "[exit $?]"
    echo
  done
} 2>&1 | tee "$out/tool.log"
exit $status

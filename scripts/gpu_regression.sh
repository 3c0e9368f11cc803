#!/usr/bin/env bash
# Issue 20's figures on a GPU, from the repository root: OUT=/some/dir scripts/gpu_regression.sh.
# Builds against the real driver (build-gpu, as make test-gpu does), then:
#   1. bench.regression, the make test-gpu entry: the quick overhead bench (and
#      bench/compare/run_all.py where python3 imports cuda.core) against
#      bench/results/baseline.json; its outputs in $OUT/quick/;
#   2. two full runs of `greenctx bench overhead --json` and one of bench/compare/run_all.py,
#      each checked the same way, each writing the baseline again with its ratios
#      ($OUT/baseline-run1.json, -run2.json: what BENCHMARKS.md and the baseline would record).
# Logs go to $OUT; the last lines are a PASS/FAIL summary. A regression fails its step; the
# targets are in each check's log as met / not met.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=$(nproc)
py=${PYTHON:-python3}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "cuda.core: $($py -c 'import cuda.core as c; print(c.__version__)' 2>&1 | tail -n 1)"
  git log -1 --format='commit %H %s' 2>/dev/null
} | tee "$out/machine.txt"

declare -A result
order=()
step() { # step NAME COMMAND...: runs it, logs to $out/NAME.log, records PASS/FAIL/SKIP
  local name=$1 rc
  shift
  order+=("$name")
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  case $rc in 0) result[$name]=PASS ;; 77) result[$name]=SKIP ;; *) result[$name]="FAIL (exit $rc)" ;; esac
  echo "== $name: ${result[$name]}"
  tail -n 25 "$out/$name.log"
}

step build bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGREENCTX_TEST_DRIVER=real && cmake --build build-gpu -j$jobs"
if [ "${result[build]}" != PASS ]; then
  echo "SUMMARY: FAIL (build)"
  exit 1
fi
tool=build-gpu/tools/greenctx
library=$(ls build-gpu/src/libgreenctx.so.0.* | head -n 1)

step quick bash -c "cd build-gpu && GREENCTX_GPU_OUT='$out/quick' \
  ctest --output-on-failure -V -R '^bench\.regression$'"
if $py -c 'import cuda.core' >/dev/null 2>&1; then
  step compare env GREENCTX_LIBRARY="$PWD/$library" PYTHONPATH="$PWD/python" \
    "$py" bench/compare/run_all.py
  compare=(--compare "$out/compare.log")
else
  echo "cuda.core is not importable by $py: the Python split is not checked" | tee "$out/compare.log"
  compare=()
fi
for run in 1 2; do
  step "bench_run$run" bash -c "timeout 300 $tool bench overhead --json > '$out/overhead-run$run.json'"
  step "check_run$run" "$py" scripts/check_regression.py --bench "$out/overhead-run$run.json" \
    "${compare[@]}" --write-baseline "$out/baseline-run$run.json"
done

echo "SUMMARY:"
status=0
for name in "${order[@]}"; do
  echo "  $name: ${result[$name]}"
  case ${result[$name]} in FAIL*) status=1 ;; esac
done
exit $status

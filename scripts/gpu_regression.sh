#!/usr/bin/env bash
# Issue 20's figures on a GPU, from the repository root: OUT=/some/dir scripts/gpu_regression.sh.
# Builds against the real driver (build-gpu, as make test-gpu does), then:
#   1. bench.regression, the make test-gpu entry: the quick overhead bench (and
#      bench/compare/run_all.py where python3 imports cuda.core) against
#      bench/results/baseline.json, its outputs in $OUT/quick/;
#   2. RUNS (default 2) full runs of `greenctx bench overhead --json` and one of
#      bench/compare/run_all.py, each run checked the same way and the baseline written again
#      with its ratios ($OUT/baseline-run1.json, ...: what BENCHMARKS.md and the baseline
#      would record).
# Logs go to $OUT; the last lines are a PASS/FAIL summary. A regression fails its stage; the
# issue's targets are in each check's log, met or not met.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
. "$(dirname "$0")/gpu_stages.sh"
cuda_core() {
  echo "cuda.core: $($py -c 'import cuda.core as c; print(c.__version__)' 2>&1 | tail -n 1)"
}
machine_info cuda_core

build_gpu gpu_regression
library=$(ls build-gpu/src/libgreenctx.so.0.* | head -n 1)

stage quick 900 bash -c "cd build-gpu && GREENCTX_GPU_OUT='$out/quick' \
  ctest --output-on-failure -V -R '^bench\.regression$'"
compare=()
if $py -c 'import cuda.core' >/dev/null 2>&1; then
  stage compare 900 env GREENCTX_LIBRARY="$PWD/$library" PYTHONPATH="$PWD/python" \
    "$py" bench/compare/run_all.py
  compare=(--compare "$out/compare.log")
fi
for run in $(seq "${RUNS:-2}"); do
  stage "bench_run$run" 300 bash -c \
    "build-gpu/tools/greenctx bench overhead --json > '$out/overhead-run$run.json'"
  stage "check_run$run" 60 "$py" scripts/check_regression.py \
    --bench "$out/overhead-run$run.json" "${compare[@]}" \
    --write-baseline "$out/baseline-run$run.json"
done
summary gpu_regression

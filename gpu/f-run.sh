#!/usr/bin/env bash
# gpu/f-run.sh: `greenctx run` on the H200. From the repository root, with $OUT a folder:
# builds against the real driver, runs the run.* tests (make test-gpu's entries for
# greenctx run: the probe, PyTorch, a static-cudart program, the GEMM sweep, the targets),
# keeps the logs and measurements in $OUT and prints PASS/FAIL per entry.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__)" 2>&1
  (command -v nvcc || echo /usr/local/cuda/bin/nvcc) | xargs -I{} {} --version 2>&1 | tail -1
} | tee "$out/machine.txt"

# No -Werror: a newer host compiler there must not stop the run over a warning.
cmake -S . -B build-gpu-run -DCMAKE_BUILD_TYPE=Release -DGREENCTX_TEST_DRIVER=real \
  -DGREENCTX_WERROR=OFF >"$out/configure.log" 2>&1 &&
  cmake --build build-gpu-run -j"$(nproc)" >"$out/build.log" 2>&1 ||
  { echo "FAIL: build (see build.log)"; tail -20 "$out/build.log"; exit 1; }

export GREENCTX_RUN_GPU_OUT="$out/measurements"
mkdir -p "$GREENCTX_RUN_GPU_OUT"
(cd build-gpu-run && ctest --output-on-failure -L driver -R '^run\.' --timeout 200) \
  >"$out/ctest.log" 2>&1
status=$?
grep -E "^ *[0-9]+/[0-9]+ Test" "$out/ctest.log" | sed -E 's/.*Test +#[0-9]+: //' |
  while read -r name dots result rest; do
    case "$result" in
      Passed) echo "PASS: $name" ;;
      *Skipped*|Not) echo "SKIP: $name ($result $rest)" ;;
      *) echo "FAIL: $name ($result $rest)" ;;
    esac
  done | tee "$out/summary.txt"
for f in targets.json; do
  [ -f "$GREENCTX_RUN_GPU_OUT/$f" ] && { echo "== $f"; cat "$GREENCTX_RUN_GPU_OUT/$f"; }
done
grep -A8 "speed-up" "$out/ctest.log" | grep "SMs" | head -8
if [ $status -eq 0 ]; then echo "PASS: gpu/f-run.sh"; else echo "FAIL: gpu/f-run.sh (ctest.log)"; fi
exit $status

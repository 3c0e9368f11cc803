#!/usr/bin/env bash
# Checks `greenctx run` on a GPU. From the repository root, with $OUT a folder: builds against
# the real driver (build-gpu-run), runs the run.* CTest entries (the same make test-gpu runs:
# the probe, PyTorch, a static-cudart program, the GEMM sweep, the targets), keeps the logs and
# the measurements (reports, samples, the sweep, targets.json) in $OUT and prints PASS/FAIL
# per entry.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__)" 2>&1
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version 2>&1 | tail -1
} | tee "$out/machine.txt"

# No -Werror: a newer host compiler there must not stop the run over a warning.
cmake -S . -B build-gpu-run -DCMAKE_BUILD_TYPE=Release -DGREENCTX_TEST_DRIVER=real \
  -DGREENCTX_WERROR=OFF >"$out/configure.log" 2>&1 &&
  cmake --build build-gpu-run -j"$(nproc)" >"$out/build.log" 2>&1 ||
  { echo "FAIL: build (see build.log)"; tail -20 "$out/build.log"; exit 1; }

export GREENCTX_GPU_OUT="$out/measurements"
mkdir -p "$GREENCTX_GPU_OUT"
(cd build-gpu-run && ctest -V -L driver -R '^run\.') \
  >"$out/ctest.log" 2>&1
status=$?
grep -E "^ *[0-9]+/[0-9]+ Test" "$out/ctest.log" | sed -E 's/.*Test +#[0-9]+: //' |
  while read -r line; do
    name=${line%% *}
    case "$line" in
      *Passed*) echo "PASS: $name" ;;
      *Skipped*|*"Not Run"*) echo "SKIP: $name" ;;
      *) echo "FAIL: $name (${line##*.})" ;;
    esac
  done | tee "$out/summary.txt"
m=$GREENCTX_GPU_OUT
[ -f "$m/targets.json" ] && { echo "== targets"; cat "$m/targets.json"; echo; }
[ -f "$m/sweep-gemm.json" ] && python3 - "$m/sweep-gemm.json" <<'PY'
import json, sys
print("== greenctx run --sweep 16,32,64,all -- gemm.py plain 300 (bf16 8192^3, wall time with start-up)")
for x in json.load(open(sys.argv[1]))["runs"]:
    print(f'{x["sm_count"]:4} SMs {x["wall_ms"]:9.1f} ms  speed-up {x["speedup"]:.2f}  '
          f'efficiency/SM {x["efficiency_per_sm"]:.2f}')
PY
for r in "$m"/*.report.json; do
  [ -f "$r" ] && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); d=r['devices'][0]; print(sys.argv[1].split('/')[-1], 'setup', r['setup_ms'], 'ms; SMs', d['sm_ids'], '; binds redirected', r['binds_redirected'], '; threads', r['threads_seen'])" "$r"
done
if [ $status -eq 0 ]; then echo "PASS: scripts/gpu_run.sh"; else echo "FAIL: scripts/gpu_run.sh (ctest.log)"; fi
exit $status

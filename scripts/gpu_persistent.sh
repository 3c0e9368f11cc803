#!/usr/bin/env bash
# scripts/gpu_persistent.sh: issue 29 on a GPU, from the repository root. Builds against the
# real driver in build-gpu (as make test-gpu does), runs the CTest entries of programs that
# size their grids by the SM count they are told (run.driver, run.gpu.persistent.*: a CUDA
# persistent kernel with a grid barrier and cooperative launches, cudart shared and static,
# with and without MPS, --device-sms physical, torch/Triton/CuPy counts; under a minute) and
# prints their per-case PASS/FAIL lines; then, unless QUICK=1, run.gpu.sweep (30 s) and a
# persistent Triton matmul (grid = the reported SM count) under greenctx run --sms 16 and 64,
# whose times must scale.
# The full log is in $OUT (default gpu-out)/persistent-ctest.log.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
build=build-gpu
[ -f "$build/CMakeCache.txt" ] ||
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGREENCTX_TEST_DRIVER=real \
    >"$out/persistent-configure.log" 2>&1
cmake --build "$build" -j"$(nproc)" >"$out/persistent-build.log" 2>&1 ||
  { echo "FAIL: build (see $out/persistent-build.log)"; tail -20 "$out/persistent-build.log"; exit 1; }

tests='^run\.(driver|gpu\.persistent\..*)$'
# The sweep (a bf16 GEMM at 16, 32, 64 and all SMs, 30 s) still scales with the count told.
[ "${QUICK:-0}" = 1 ] || tests='^run\.(driver|gpu\.persistent\..*|gpu\.sweep)$'
(cd "$build" && ctest -V -L driver -R "$tests") \
  >"$out/persistent-ctest.log" 2>&1
status=$?
# ctest -V prefixes each line with its test's number: the verdicts and the probes' case lines.
sed -nE 's/^[0-9]+: ((PASS|FAIL|SKIP|ok:|needs|  \| |  out\| ).*)/\1/p; /Test +#[0-9]+:/p' \
  "$out/persistent-ctest.log"

[ "${QUICK:-0}" = 1 ] && exit $status
python3 -c "import torch, triton" 2>/dev/null ||
  { echo "SKIP triton matmul: python3 has no torch or triton"; exit $status; }
tool=$build/tools/greenctx
export GREENCTX_RUNTIME_DIR=$(mktemp -d /tmp/greenctx-persistent-XXXXXX)
trap 'rm -rf "$GREENCTX_RUNTIME_DIR"' EXIT
for n in 16 64; do
  timeout 300 "$tool" run --sms $n -- python3 tests/run_gpu/triton_persistent.py \
    >"$out/triton-$n.json" 2>"$out/triton-$n.err" ||
    { echo "FAIL triton matmul --sms $n"; tail -5 "$out/triton-$n.err"; status=1; continue; }
  echo "triton matmul --sms $n: $(tail -n 1 "$out/triton-$n.json")"
done
python3 - "$out/triton-16.json" "$out/triton-64.json" <<'PY' || status=1
import json, sys
r16, r64 = (json.loads(open(f).read().strip().splitlines()[-1]) for f in sys.argv[1:])
ok = (r16["grid"] == 16 and r64["grid"] == 64 and r16["correct"] and r64["correct"]
      and r16["median_ms"] / r64["median_ms"] > 2.5)
print(f'{"PASS" if ok else "FAIL"} triton persistent matmul: grid {r16["grid"]} -> '
      f'{r16["median_ms"]} ms, grid {r64["grid"]} -> {r64["median_ms"]} ms: '
      f'{r16["median_ms"] / r64["median_ms"]:.2f}x faster on 4x the SMs (> 2.5 expected)')
sys.exit(0 if ok else 1)
PY
exit $status

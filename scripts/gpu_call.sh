#!/usr/bin/env bash
# scripts/gpu_call.sh PART...: one call of a GPU machine, from the repository root. Each part's
# log, JSON and SVG come back packed in $OUT/PART.tar.gz (the device tool brings back at most 8
# files); $OUT/summary.txt gets the GPUs, the sources' hash (scripts/tree_hash.sh: the copy's
# .git may be older than its files) and each part's exit status and last lines. Parts (run_part
# below): test (make test-gpu; SKIP_TESTS, a ctest regex, leaves some out), bench (make
# bench-gpu), examples (the CUDA examples, with nvcc, cuBLAS and NCCL), overlap
# (bench/compare/overlap.py on two GPUs; WORLD=1: the one-GPU smoke run), tenants and elastic
# (PyTorch, their own MPS daemon; elastic on each of $TRACES, --quick unless QUICK=0), compare
# (bench/compare/run_all.py), triton (a persistent matmul under greenctx run --sms 16 and 64:
# 64 should be more than 2.5x faster).
# e.g. OUT=$OUT scripts/gpu_call.sh test bench
set -uo pipefail
mkdir -p "${OUT:?set OUT to the folder that comes back}"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
[ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null || export CUDACXX=/usr/local/cuda/bin/nvcc
work=$(mktemp -d /tmp/greenctx-gpu-call-XXXXXX)
trap 'rm -rf "$work"' EXIT
tool=build-gpu/tools/greenctx
# build-gpu as make test-gpu builds it (incremental after it).
build_gpu() {
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGREENCTX_TEST_DRIVER=real &&
    cmake --build build-gpu -j"$(nproc)"
}
# python3 with build-gpu's library and this tree's package.
py() { GREENCTX_LIBRARY=$PWD/build-gpu/src/libgreenctx.so PYTHONPATH=$PWD/python python3 "$@"; }
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm --format=csv,noheader
  echo "sources: $(scripts/tree_hash.sh)"
} >"$OUT/summary.txt" 2>&1
# run_part PART: its files into $out.
run_part() {
  case $1 in
    test) # shellcheck disable=SC2016 # the quotes are make's: the regex reaches ctest whole
      make test-gpu CTEST="ctest${SKIP_TESTS:+ -E '$SKIP_TESTS'}" ;;
    bench) make bench-gpu ;;
    examples)
      cmake -S . -B build-gpu-examples -DGREENCTX_TEST_DRIVER=real -DGREENCTX_BUILD_EXAMPLES=ON \
        -DGREENCTX_WERROR=OFF && cmake --build build-gpu-examples -j"$(nproc)" &&
        (cd build-gpu-examples && ctest --output-on-failure -R '^examples\.') ;;
    overlap)
      build_gpu && py bench/compare/overlap.py --world "${WORLD:-2}" --json >"$out/overlap.json" ;;
    tenants)
      build_gpu && GREENCTX_TOOL=$PWD/$tool py bench/compare/tenants.py --pairs fma,read \
        --arms sliced_primary,sliced_claims,mps_plain,mps_percentage,claims,fault,fault_mps \
        --length 3 >"$out/tenants.json" ;;
    elastic)
      build_gpu || return
      local trace rc=0 quick=(--quick)
      [ "${QUICK:-1}" != 0 ] || quick=()
      for trace in ${TRACES:-onoff stationary}; do
        GREENCTX_TOOL=$PWD/$tool py bench/compare/elastic.py "${quick[@]}" --trace "$trace" \
          >"$out/elastic-$trace.json" 2>"$out/elastic-$trace.txt" || rc=1
      done
      return $rc ;;
    compare)
      build_gpu && py bench/compare/run_all.py --json "$out/compare.json" ;;
    triton)
      build_gpu || return
      local n
      for n in 16 64; do
        GREENCTX_RUNTIME_DIR=$work "$tool" run --sms $n -- \
          python3 tests/run_gpu/triton_persistent.py | tail -n 1 || return
      done ;;
    *) echo "gpu_call.sh: no part '$1' (test bench examples overlap tenants elastic compare triton)"
       return 2 ;;
  esac
}
status=0
for part in "$@"; do
  echo "== $part ($(date -u +%H:%M:%SZ))"
  out=$work/$part
  mkdir -p "$out"
  GREENCTX_GPU_OUT=$out run_part "$part" >"$out/$part.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  { echo "== $part: exit $rc"; tail -n 40 "$out/$part.log"; } | tee -a "$OUT/summary.txt"
  tar -czf "$OUT/$part.tar.gz" -C "$work" "$part"
done
exit $status

#!/usr/bin/env bash
# One call of a lent GPU machine, from the repository root: runs each named part with its own
# log folder, then packs every part's folder into $OUT/NAME.tar.gz and the parts' last lines
# into $OUT/summary.txt — a few files, as the device tool brings back (at most 8), whatever
# the parts write. Parts, in the order given (each a script of scripts/ with its own
# PASS/FAIL summary):
#   tests       make test-gpu's tests (ctest -L driver on build-gpu) but two, each left to
#               its own part to keep a call within 10 minutes: the regression check (it runs
#               bench/compare, minutes with torch) and bench elastic's; SKIP_TESTS (a regex of
#               test names, e.g. 'run\.gpu\.targets') leaves out more when device time is short
#   regression  scripts/gpu_regression.sh: bench.regression, RUNS (2) full overhead runs, compare
#   elastic     scripts/gpu_elastic.sh with TEST=1: bench.elastic_gpu, then the traces
#               (TRACES, ARM_SECONDS, QUICK as it reads them)
#   python      scripts/gpu_python.sh: the installed package on the GPU, bench/compare
#   wave3       scripts/gpu_wave3.sh: the tenants wave
# Example (issues 17 and 20, one part a call to stay within 10 minutes each):
#   OUT=$OUT scripts/gpu_call.sh tests
#   OUT=$OUT TRACES=onoff scripts/gpu_call.sh elastic
set -uo pipefail
out=${OUT:?set OUT to the folder that comes back}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
here=$(dirname "$0")
work=$(mktemp -d /tmp/greenctx-gpu-call-XXXXXX)
trap 'rm -rf "$work"' EXIT
tests() {
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGREENCTX_TEST_DRIVER=real &&
    cmake --build build-gpu -j"$(nproc)" &&
    (cd build-gpu && ctest --output-on-failure -L driver \
      -E "^(bench\.(regression|elastic_gpu)${SKIP_TESTS:+|$SKIP_TESTS})\$")
}
status=0
for name in "$@"; do
  mkdir -p "$work/$name"
  echo "== $name ($(date -u +%H:%M:%SZ))"
  case $name in
    tests) tests >"$work/$name/run.log" 2>&1 ;;
    regression) OUT="$work/$name" "$here/gpu_regression.sh" >"$work/$name/run.log" 2>&1 ;;
    elastic) OUT="$work/$name" TEST=${TEST:-1} "$here/gpu_elastic.sh" >"$work/$name/run.log" 2>&1 ;;
    python) OUT="$work/$name" "$here/gpu_python.sh" >"$work/$name/run.log" 2>&1 ;;
    wave3) OUT="$work/$name" "$here/gpu_wave3.sh" >"$work/$name/run.log" 2>&1 ;;
    *) echo "gpu_call.sh: no part '$name' (tests, regression, elastic, python, wave3)" >&2
       exit 2 ;;
  esac
  rc=$?
  [ $rc -eq 0 ] || status=1
  {
    echo "== $name: exit $rc"
    tail -n 40 "$work/$name/run.log"
  } | tee -a "$out/summary.txt"
  tar -czf "$out/$name.tar.gz" -C "$work" "$name"
done
exit $status

#!/bin/sh
# check_real_configure.sh CMAKE CTEST SOURCE_DIR BUILD_DIR C_COMPILER: make test-gpu's build
# (GREENCTX_TEST_DRIVER=real) must configure, here too where no GPU is: a test property set
# on a simulator-only test that the real build leaves out stops its configure, and only the
# GPU machine would see it. Configures in BUILD_DIR (nothing is built), then checks that the
# driver tests are there, the benchmarks' checks in make bench-gpu only, and the
# simulator-only ones nowhere.
set -u
cmake=$1 ctest=$2 src=$3 dir=$4 cc=$5
rm -rf "$dir"
if ! "$cmake" -S "$src" -B "$dir" -DGREENCTX_TEST_DRIVER=real -DCMAKE_C_COMPILER="$cc" \
    >"$dir.log" 2>&1; then
  cat "$dir.log"
  echo "FAIL: the real-driver build (make test-gpu's) does not configure; log above"
  exit 1
fi
listed=$(cd "$dir" && "$ctest" -N -L driver)
bench=$(cd "$dir" && "$ctest" -N -L bench_gpu)
fail=0
for t in gpu claims.processes claims.registry tenants.gpu.disjoint; do
  echo "$listed" | grep -q "Test *#[0-9]*: $t\$" || { echo "FAIL: $t is not a driver test there"; fail=1; }
done
# make bench-gpu's: the long benchmark checks, out of make test-gpu's minutes
for t in bench.elastic_gpu bench.regression tenants.gpu.bench run.gpu.sweep run.gpu.targets; do
  echo "$bench" | grep -q "Test *#[0-9]*: $t\$" || { echo "FAIL: $t is not a bench_gpu test there"; fail=1; }
  echo "$listed" | grep -q "Test *#[0-9]*: $t\$" && { echo "FAIL: $t is in make test-gpu"; fail=1; }
done
for t in python.compare; do
  echo "$listed" | grep -q "Test *#[0-9]*: $t\$" && { echo "FAIL: simulator-only $t is there"; fail=1; }
done
rm -rf "$dir" "$dir.log"
[ $fail = 0 ] && echo "the real-driver build configures: $(echo "$listed" | tail -n 1)"
exit $fail

#!/bin/sh
# GPU checks of branch h-faults, run from the repository root with $OUT set: the driver-facing
# tests on the real H200 (the nested split's exact discovery result, 32 SMs on driver 13.0;
# rollbacks; the pop and release paths), and the tool's plan on the real driver.
set -u
OUT=${OUT:?set OUT to an output folder}
fail=0
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGREENCTX_TEST_DRIVER=real \
  >"$OUT/configure.log" 2>&1 && cmake --build build-gpu -j16 >"$OUT/build.log" 2>&1 || {
  echo "FAIL: build (see build.log)"; exit 1; }
if (cd build-gpu && ctest --output-on-failure -L driver) >"$OUT/ctest-driver.log" 2>&1; then
  echo "PASS: ctest -L driver"
else
  echo "FAIL: ctest -L driver (see ctest-driver.log)"; fail=1
fi
# The nested split on its own, verbose: the real driver's discovery count.
GREENCTX_CUDA_LIBRARY= build-gpu/tests/test_partitions nested_split_of_a_group \
  >"$OUT/nested_split.log" 2>&1 && echo "PASS: nested_split_of_a_group" ||
  { echo "FAIL: nested_split_of_a_group (see nested_split.log)"; fail=1; }
for request in "128" "64 64" "24 40 rest"; do
  build-gpu/tools/greenctx plan $request >>"$OUT/plan.log" 2>&1 || fail=1
done
echo "plan outputs: plan.log"
[ $fail = 0 ] && echo "SUMMARY: PASS" || echo "SUMMARY: FAIL"
exit $fail

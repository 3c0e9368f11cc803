#!/usr/bin/env bash
# h-api on the H200: handles with generations, structs that grow and the header's example
# against the real driver (make test-gpu runs test_handles, test_sized and header.example
# among the driver tests), then both examples (the ctypes one mirrors gctx_group with its
# 0.2.0 reserved fields). Run from the repository root with $OUT set; logs go there.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
status=0

make test-gpu JOBS="$(nproc)" > "$out/test-gpu.log" 2>&1 || status=1
tail -n 25 "$out/test-gpu.log"
for t in test_handles test_sized; do
  echo "== $t"
  build-gpu/tests/$t
done > "$out/tap.log" 2>&1 || status=1
cat "$out/tap.log"

examples/run_on_gpu.sh > "$out/examples.log" 2>&1 || status=1
tail -n 15 "$out/examples.log"

if [ "$status" = 0 ]; then echo "PASS h-api"; else echo "FAIL h-api (logs in $out)"; fi
exit "$status"

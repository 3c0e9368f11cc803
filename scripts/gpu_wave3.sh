#!/usr/bin/env bash
# The tenants wave on a GPU machine, from the repository root, logs into $OUT: builds against
# the real driver once (build-gpu), then the GPU tests of claims, tenants, faults and the
# cache; PyTorch parity and cuda.core interop verbosely; the full `greenctx bench tenants`
# (table, JSON, SVG); the claims' own GPU script (two tenants in two processes, claim and
# context times, MPS) and the tool's (GEMM tenants under MPS with greenctx run). Each part's
# log is in $OUT; the last lines are a PASS/FAIL summary. About 7 minutes on an H200.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
. "$(dirname "$0")/gpu_stages.sh"
machine_info
build_gpu gpu_wave3
stage tests 600 sh -c "cd build-gpu && ctest --output-on-failure \
  -R '^(tenants|claims|faults|cache|layouts)'"
lib=$(ls build-gpu/src/libgreenctx.so.0.* | head -n 1)
stage parity 300 env PYTHONPATH="$PWD/python:${PYTHONPATH:-}" GREENCTX_LIBRARY="$PWD/$lib" \
  python3 python/tests/run_pytest.py -v -rs test_pytorch_parity.py test_gpu.py
stage bench_tenants 300 build-gpu/tools/greenctx bench tenants --svg "$out/tenants.svg"
stage claims 600 env OUT="$out/claims" scripts/gpu_claims.sh
stage tool_tenants 600 env OUT="$out/tool" scripts/gpu_tenants.sh
summary gpu_wave3

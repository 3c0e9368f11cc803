#!/usr/bin/env bash
# Builds the CUDA examples and runs both on this machine's GPU (device 0).
#   examples/run_on_gpu.sh            from the repository root, or from anywhere
# Needs cmake, nvcc (on PATH or at /usr/local/cuda/bin/nvcc), cuBLAS, and python3 with torch.
# Exits non-zero when the build fails or either example does; runs both either way.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-examples}
PYTHON=${PYTHON:-python3}

if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi

set -e
# No -Werror here: a newer host compiler on the GPU machine must not stop the run over a warning.
cmake -S . -B "$BUILD" -DGREENCTX_BUILD_EXAMPLES=ON -DGREENCTX_BUILD_TESTS=OFF -DGREENCTX_WERROR=OFF
cmake --build "$BUILD" -j"$(nproc)" --target greenctx two_partitions
set +e

status=0
echo "== two_partitions"
"$BUILD/examples/two_partitions" || { echo "two_partitions FAILED (exit $?)"; status=1; }
echo "== torch_external_stream.py"
"$PYTHON" examples/torch_external_stream.py "$BUILD/src/libgreenctx.so" ||
  { echo "torch_external_stream.py FAILED (exit $?)"; status=1; }

if [ "$status" = 0 ]; then echo "== both examples passed"; else echo "== an example failed"; fi
exit "$status"

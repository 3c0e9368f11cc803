#!/bin/sh
# bench/run.sh [OUTDIR] [--quick]: on the GPU machine, builds greenctx (Release, no tests) and
# runs `greenctx bench all`: the table, the JSON and the chart land in OUTDIR (default
# bench/results), then the Python comparisons (bench/compare) if python3 is there.
set -u
out=${1:-bench/results}
quick=${2:-}
build=${GREENCTX_BENCH_BUILD:-/tmp/greenctx-bench-build}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
    >"$out/nvidia-smi-before.txt" 2>&1 || true
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGREENCTX_BUILD_TESTS=OFF >/dev/null &&
    cmake --build "$build" -j"$(nproc)" --target greenctx_tool greenctx_bench_tool greenctx >/dev/null || exit 1
tool="$build/tools/greenctx"
name=bench${quick:+-quick}
"$tool" bench all $quick --svg "$out/$name.svg" >"$out/$name.txt" || exit 1
"$tool" bench all $quick --json >"$out/$name.json" 2>/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
    >"$out/nvidia-smi-after.txt" 2>&1 || true
cat "$out/$name.txt"
if command -v python3 >/dev/null 2>&1; then
    GREENCTX_LIBRARY="$build/src/libgreenctx.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
        python3 bench/compare/run_all.py --json "$out/compare.json" >"$out/compare.txt" 2>&1
    cat "$out/compare.txt"
fi

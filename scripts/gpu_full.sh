#!/usr/bin/env bash
# The whole GPU session in one go: tests and tool (gpu_session.sh), the examples, and the
# benchmarks with the Python comparisons. At most eight files land in $OUT.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
status=0
bash scripts/gpu_session.sh || status=1
bash examples/run_on_gpu.sh > "$out/examples.log" 2>&1 || status=1
tmp=$(mktemp -d)
bash bench/run.sh "$tmp" > /dev/null 2>&1 || status=1
cp "$tmp"/bench.txt "$tmp"/bench.json "$tmp"/bench.svg "$tmp"/compare.txt "$out"/ 2>/dev/null
{ echo "--- nvidia-smi around the benchmarks"; cat "$tmp"/nvidia-smi-before.txt "$tmp"/nvidia-smi-after.txt; } >> "$out/machine.txt" 2>&1
exit $status

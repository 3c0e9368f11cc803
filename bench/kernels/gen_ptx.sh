#!/bin/sh
# Regenerates bench_kernels.ptx from bench_kernels.cu (needs nvcc; the build never runs this:
# it compiles the .ptx file in, cmake/embed.cmake).
#   sh bench/kernels/gen_ptx.sh [NVCC]
# nvcc 13 no longer emits compute_70, so the PTX comes from compute_75 and its header is set
# to ".version 7.0 / .target sm_70": nothing in these kernels needs more, and ptxas checks it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${1:-nvcc}
ptxas=$(dirname "$(command -v "$nvcc")")/ptxas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nvcc" -ptx -arch=compute_75 "$here/bench_kernels.cu" -o "$tmp/k.ptx"
sed -e 's/^\.version .*/.version 7.0/' -e 's/^\.target .*/.target sm_70/' \
    -e 's/[[:space:]]*\/\/.*$//' -e '/^[[:space:]]*$/d' "$tmp/k.ptx" >"$tmp/clean.ptx"
"$ptxas" -arch=sm_90 "$tmp/clean.ptx" -o /dev/null
mv "$tmp/clean.ptx" "$here/bench_kernels.ptx"
echo "wrote $here/bench_kernels.ptx ($(wc -l <"$here/bench_kernels.ptx") lines)"

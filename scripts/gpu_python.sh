#!/usr/bin/env bash
# Checks the Python package on a GPU with PyTorch and cuda.core: `pip install` of this
# checkout into a fresh folder (timed) and the installed copy alone; python/tests/test_gpu.py
# with it (PyTorch's two documented examples verbatim, checked with %smid; a matmul under
# torch.cuda.stream(ctx.Stream()) right and slower on 16 SMs; a CUDA graph captured on a green
# stream replaying on its SMs; cuda.core running a kernel on a greenctx stream through
# __cuda_stream__; events; the deprecated context stack; a layout switch); and the creation
# costs of the package beside greenctx through ctypes, cuda.core and torch in one run, with
# the issue's targets. make test-gpu (scripts/gpu_session.sh) runs the same test_gpu.py as
# python.gpu.
# Run from the repository root with $OUT set; logs in $OUT, PASS/FAIL at the end.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
py=${PYTHON:-python3}
jobs=$(nproc 2>/dev/null || echo 4)
work=$(mktemp -d)
unset GREENCTX_LIBRARY GREENCTX_CUDA_LIBRARY
. "$(dirname "$0")/gpu_stages.sh"
versions() {
  echo "python: $($py --version 2>&1)"
  echo "torch: $($py -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
  echo "cuda.core: $($py -c 'import cuda.core as c; print(c.__version__)' 2>&1 | tail -1)"
}
machine_info versions

# 1. pip install <checkout> into a fresh folder, then the installed copy alone on the GPU.
stage install 600 "$py" python/tests/install_check.py "$PWD" "$work" --no-editable
site=$work/site
if [ -d "$site/greenctx" ]; then
  pkg=(env PYTHONPATH="$site")
  library=$(ls $site/greenctx/_native/lib/libgreenctx.so.0.* | head -n 1)
else  # the install failed (reported above): the source tree, with the library CMake builds
  cmake -S . -B build-python-gpu -DGREENCTX_BUILD_TESTS=OFF >/dev/null &&
    cmake --build build-python-gpu -j"$jobs" --target greenctx >/dev/null
  library=$PWD/build-python-gpu/src/libgreenctx.so
  pkg=(env PYTHONPATH="$PWD/python" GREENCTX_LIBRARY="$library")
fi
echo "package used below: ${pkg[*]}"

# 2. The GPU tests against that package.
stage pytest-gpu 600 "${pkg[@]}" "$py" python/tests/run_pytest.py -v -s -rs test_gpu.py

# 3. Creation costs side by side: greenctx (ctypes over the C API), greenctx's package,
#    cuda.core, torch; each in its own process, one run.
#    compare.json: the run as one record (versions, rows, python_split_vs_cuda_core).
stage compare 600 "${pkg[@]}" GREENCTX_LIBRARY="$library" \
  "$py" bench/compare/run_all.py --reps 1000 --json "$out/compare.json"
"$py" - "$out/compare.json" <<'PYEOF' | tee "$out/targets.txt"
import json, sys
record = json.load(open(sys.argv[1]))
print("versions:", record["versions"], "skipped:", record["skipped"])
print("python_split_vs_cuda_core:", record["python_split_vs_cuda_core"])
rows = {(r["lib"], r["op"]): r for r in record["rows"] if "p50_us" in r}
def ratio(op, limit):
    a, b = rows.get(("greenctx-py", op)), rows.get(("cuda.core", op))
    c = rows.get(("greenctx", op))
    if not a or not b:
        print(f"{op}: missing a measurement"); return
    r = a["p50_us"] / b["p50_us"]
    print(f"{op}: greenctx-py p50 {a['p50_us']} us (p99 {a['p99_us']}), cuda.core p50 "
          f"{b['p50_us']} us (p99 {b['p99_us']}): {r:.2f}x, target <= {limit}x: "
          f"{'met' if r <= limit else 'MISSED'}")
    if c:  # the C library through bare ctypes: what the package's Python adds is the rest
        print(f"    the C library alone (ctypes): p50 {c['p50_us']} us, "
              f"{c['p50_us'] / b['p50_us']:.2f}x cuda.core; the package adds "
              f"{a['p50_us'] - c['p50_us']:.2f} us")
ratio("split 16", 1.5)
ratio("16 SMs: context + stream", 1.05)
ratio("{16, rest}: 2 disjoint contexts + streams", 1.05)
PYEOF

rm -rf "$work"
summary gpu_python

#!/usr/bin/env bash
# Communication beside compute on a machine with two GPUs (two H200s: nvidia-h200-x2): the
# NCCL example, `greenctx bench overlap --quick` and then the default run (--json, --svg into
# $OUT), the current-context test on the real driver, the overlap ABI check against the
# machine's nccl.h, and the issue's targets read from the default run. Each stage logs to
# $OUT/<stage>.log; a failed stage is recorded and the next one still runs. About 5 minutes.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 # never NVLink multicast: it can take every GPU of the host down
out=${OUT:-gpu-out}
mkdir -p "$out"
build=build-nccl
. "$(dirname "$0")/gpu_stages.sh"

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm --format=csv,noheader
    nvidia-smi topo -m
    echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

# NCCL and cuBLAS as the tool will load them (python3's nvidia-nccl-cu13 on this machine).
nccl_dir=$(python3 -c 'import importlib; print(list(importlib.import_module("nvidia.nccl").__path__)[0])' 2>/dev/null)
if [ -n "$nccl_dir" ] && [ -r "$nccl_dir/lib/libnccl.so.2" ] && [ -z "${GREENCTX_NCCL_LIBRARY:-}" ]; then
    export GREENCTX_NCCL_LIBRARY=$nccl_dir/lib/libnccl.so.2
fi
echo "NCCL: ${GREENCTX_NCCL_LIBRARY:-searched by the tool}"
[ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null 2>&1 || export CUDACXX=/usr/local/cuda/bin/nvcc

# 1. Build (no -Werror: a newer compiler must not stop it): the tool and the tests, then the
#    example in its own build directory, so that an nvcc problem cannot cost the benchmark.
stage build 240 sh -c "cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DGREENCTX_WERROR=OFF \
    -DGREENCTX_TEST_DRIVER=real && cmake --build $build -j$(nproc)"
stage build-example 180 sh -c "cmake -S . -B $build-example -DCMAKE_BUILD_TYPE=Release \
    -DGREENCTX_BUILD_EXAMPLES=ON -DGREENCTX_BUILD_TESTS=OFF -DGREENCTX_WERROR=OFF && \
    cmake --build $build-example -j$(nproc) --target nccl_overlap"
tool=$build/tools/greenctx

# 2. The library's save/restore on the real driver, and bench/overlap_libs.h against nccl.h.
stage current-context 60 "$build/tests/test_current"
stage overlap-abi 60 sh -c "cd $build && ctest --output-on-failure -R 'overlap\\.(abi_check|libraries_load)'"

# 3. The example: {16, rest} on both GPUs, checked on the host.
stage example 120 "$build-example/examples/nccl_overlap" 16

# 4. The benchmark, quick then the default run.
stage overlap-quick 120 "$tool" bench overlap --quick --svg "$out/overlap-quick.svg"
stage overlap 270 sh -c "'$tool' bench overlap --json --svg '$out/overlap.svg' >'$out/overlap.json'"

# 5. The issue's targets, from the default run (the quick run's table is in overlap-quick.log).
stage targets 30 python3 - "$out/overlap.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit("no JSON from the default run (%s): see overlap.log" % e)
if "overlap" not in doc:
    sys.exit("the default run failed: %s" % doc.get("error", doc))
d = doc["overlap"]
ok = True
def ratio(a, b):
    return a / b if b else float("inf")
def verdict(name, good, text):
    global ok
    ok &= good
    print(("PASS " if good else "FAIL ") + name + ": " + text)
print("NCCL %d, cuBLAS %d, %s, NVLS %s, %.0f s; init changed the current context: %s" % (
    d["nccl_version"], d["cublas_version"], d["gpus"][0]["name"], d["nccl_nvls_enable"],
    d["seconds"], d["init_changed_context"]))
for s in d["sizes"]:
    mib = s["bytes"] >> 20
    arms = [a for a in s["arms"] if a["measured"]]
    plain = arms[0]
    print("\n%d MiB: mix %d GEMMs + %d all-reduces per step" % (mib, s["mix"]["gemms"], s["mix"]["allreduces"]))
    print("%-40s %8s %8s %9s %8s %8s %8s %8s" % ("arm", "p50 us", "p99 us", "p99/alone", "GEMM/alone", "/whole", "step ms", "speedup"))
    for a in arms:
        print("%-40s %8.1f %8.1f %9.2f %8.3f %8.3f %8.2f %8.2f" % (a["label"], a["allreduce_us"]["p50"],
              a["allreduce_us"]["p99"], a["p99_vs_alone"], a["gemm_vs_alone"], a["gemm_vs_whole"],
              a["step_ms"], ratio(plain["step_ms"], a["step_ms"])))
    green16 = [a for a in arms if a["kind"] == "green" and a["comm_sms"] == 16]
    canonical = [a for a in green16 if a["max_ctas"] == 0 and a["sm_target"] == 0]
    if mib == 4 and canonical:
        g = canonical[0]
        verdict("4 MiB p99 beside the GEMM <= 1.25x alone in the same 16 SMs (%s)" % g["label"],
                g["p99_vs_alone"] <= 1.25, "%.1f / %.1f us = %.2fx" % (g["allreduce_us"]["p99"],
                g["allreduce_alone_us"]["p99"], g["p99_vs_alone"]))
        verdict("4 MiB p99 >= 2x faster than ordinary streams beside the GEMM (%s)" % g["label"],
                plain["allreduce_us"]["p99"] >= 2 * g["allreduce_us"]["p99"],
                "%.1f vs %.1f us = %.2fx (p50 %.1f vs %.1f)" % (plain["allreduce_us"]["p99"],
                g["allreduce_us"]["p99"], ratio(plain["allreduce_us"]["p99"], g["allreduce_us"]["p99"]),
                plain["allreduce_us"]["p50"], g["allreduce_us"]["p50"]))
        for o in green16:
            if o is not g:
                print("     (%s: p99/alone %.2f, %.2fx faster than ordinary)" % (o["label"],
                      o["p99_vs_alone"], ratio(plain["allreduce_us"]["p99"], o["allreduce_us"]["p99"])))
    for g in canonical:
        verdict("%d MiB: GEMM in its partition >= 0.95x alone in the same SMs (%s)" % (mib, g["label"]),
                g["gemm_vs_alone"] >= 0.95, "%.3f" % g["gemm_vs_alone"])
    pick = s["shortest_step"]
    if pick is None:
        verdict("%d MiB: advisor's pick" % mib, False, "no pick")
        continue
    shortest = min(a["step_ms"] for a in arms)
    verdict("%d MiB: advisor's pick has the shortest step" % mib,
            abs(pick["step_ms"] - shortest) < 1e-9,
            "%s, %.2f ms, %.2fx ordinary streams (%.2f ms)\n     %s" % (pick["label"],
            pick["step_ms"], pick["speedup_over_ordinary"], plain["step_ms"], pick["line"]))
    p99 = s["shortest_p99_keeping_gemm"]
    print("     shortest p99 keeping the GEMM >= %.1f of whole: %s" % (d["gemm_keep"],
          "%s, p99 %.1f us\n     %s" % (p99["label"], p99["allreduce_p99_us"], p99["line"]) if p99 else "none"))
sys.exit(0 if ok else 1)
PY

echo
printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then echo "f-nccl GPU: FAIL"; exit 1; fi
echo "f-nccl GPU: PASS"

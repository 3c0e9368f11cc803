#!/bin/sh
# overlap_test.sh CASE TOOL: `greenctx bench overlap` where it cannot run (one GPU, the
# simulated driver, NVLink multicast asked for) refuses clearly with exit status 1, and its
# usage errors exit 2. Cases with --sim skip (77) without the simulated driver.
. "$(dirname "$0")/tool_lib.sh"

need_sim() {
    [ -n "${GREENCTX_SIM_LIBRARY:-}" ] && [ -r "$GREENCTX_SIM_LIBRARY" ] && return 0
    echo "needs the simulated driver (GREENCTX_SIM_LIBRARY)"
    exit 77
}

case "$1" in
usage)
    run 0 bench overlap --help
    has "$out" "usage: greenctx bench overlap"
    has "$out" "NCCL_NVLS_ENABLE=0"
    run 0 bench --help
    has "$out" "overlap"
    run 2 bench overlap --sizes 3
    has "$err" "--sizes needs sizes in bytes, multiples of 4 up to 4G, with K, M or G (4M: 4 MiB), got '3'"
    run 2 bench overlap --sizes
    run 2 bench overlap --sizes 1M 2M 3M 4M 5M
    has "$err" "--sizes takes at most 4 values; '5M' is one too many"
    run 2 bench overlap --sms 0
    run 2 bench overlap --gemm 8192x8192
    has "$err" "--gemm needs MxNxK"
    run 2 bench overlap --mix 8
    run 2 bench overlap --reps 0
    run 2 bench overlap --svg
    run 2 bench overlap --frobnicate
    has "$err" "unknown option '--frobnicate'"
    run 2 bench overlap extra
    has "$err" "unexpected argument 'extra'"
    run 2 bench overlap --sizes=4M --sms 8 16 24 32 40 48 56 64 72
    has "$err" "--sms takes at most 8 values; '72' is one too many"
    ;;
sim_one_gpu)
    need_sim
    run 1 --sim h200 bench overlap --quick
    has "$err" "needs 2 GPUs"
    has "$err" "this machine has 1"
    run 1 --sim h200,h200 bench overlap --device 1
    has "$err" "between devices 1 and 2"
    ;;
sim_no_kernels)
    need_sim
    run 1 --sim h200,h200 bench overlap --quick --json
    has "$err" "needs real GPUs: this driver runs no kernels"
    # under --json, stdout is one JSON document: the error
    has "$out" '"error":{"status":"GCTX_ERROR_UNSUPPORTED","message":"needs real GPUs'
    [ "$(wc -l <"$out")" -eq 1 ] || fail "stdout should hold the JSON error alone"
    ;;
sim_bad_sms)
    need_sim
    run 1 --sim h200,h200 bench overlap --sms 16 12
    has "$err" "--sms 12 on GPU 0"
    has "$err" "nearest: 8 or 16"
    ;;
nvls_refused)
    need_sim
    NCCL_NVLS_ENABLE=1 run 1 --sim h200,h200 bench overlap --quick
    has "$err" "NCCL_NVLS_ENABLE is set to '1'"
    NCCL_NVLS_ENABLE=0 run 1 --sim h200,h200 bench overlap --quick
    has "$err" "needs real GPUs"
    ;;
sim_flow)
    # The whole benchmark on the simulated driver with test doubles of NCCL and cuBLAS (the
    # CTest entry names them): every arm runs, its results are checked, the picks are made.
    need_sim
    svg=$(mktemp)
    args="bench overlap --quick --sizes 4K 64K --sms 8 16 --gemm 64x48x32 --mix 2:3 --reps 5"
    run 0 --sim h200,h200 $args --json --svg "$svg"
    command -v python3 >/dev/null 2>&1 && python3 - "$out" <<'PY' || fail "JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
o = d["overlap"]
assert d["meta"]["simulated"] is True
assert o["init_changed_context"] is True, "the fake init leaves a context current"
assert o["gemm"] == {**o["gemm"], "m": 64, "n": 48, "k": 32}
assert [s["bytes"] for s in o["sizes"]] == [4096, 65536]
for s in o["sizes"]:
    assert s["mix"] == {"gemms": 2, "allreduces": 3}
    arms = s["arms"]
    assert len(arms) == 11 and all(a["measured"] for a in arms), len(arms)
    assert [a["kind"] for a in arms[:2]] == ["ordinary", "ordinary_maxctas"]
    green = [a for a in arms if a["kind"] == "green"]
    assert sorted({(a["comm_sms"], a["max_ctas"], a["sm_target"]) for a in green}) == [
        (8, 0, 0), (8, 0, 124), (8, 8, 0), (8, 8, 124),
        (16, 0, 0), (16, 0, 116), (16, 16, 0), (16, 16, 116)]
    assert all(a["allreduce_us"]["n"] == 5 for a in arms)
    pick = s["shortest_step"]  # simulated timings: any arm may win, but one does
    assert pick is not None and pick["step_ms"] == min(a["step_ms"] for a in arms)
    assert pick["line"].startswith(("gctx_group groups[2]", "/* ordinary streams"))
PY
    grep -q "</svg>" "$svg" || fail "the chart is not a whole SVG file"
    rm -f "$svg"
    run 0 --sim h200,h200 $args
    has "$out" "simulated: timings meaningless"
    has "$out" "NCCL's communicator init changed the calling thread's current context"
    has "$out" "pick, shortest step:"
    has "$out" "green 16 | 116, maxCTAs 16, SM target 116"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
exit $failed

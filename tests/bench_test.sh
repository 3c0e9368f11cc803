#!/bin/sh
# bench_test.sh CASE TOOL: `greenctx bench` (bench/, linked into the tool) on the simulated driver (what runs there, and the
# clean refusal of what needs a GPU), its usage errors, and a quick real run on a GPU.
# Cases with --sim need the simulated driver (GREENCTX_CUDA_LIBRARY names it); they skip (77)
# without it.
. "$(dirname "$0")/tool_lib.sh"
svg=$(mktemp)
trap 'rm -f "$out" "$err" "$svg"' EXIT

need_sim() {
    case "${GREENCTX_CUDA_LIBRARY:-}" in
    *greenctx_sim*) [ -r "$GREENCTX_CUDA_LIBRARY" ] && return 0 ;;
    esac
    echo "needs the simulated driver (GREENCTX_CUDA_LIBRARY)"
    exit 77
}

# json_ok FILE EXPR: the file is one JSON document and the python expression on it (as d) holds.
json_ok() {
    command -v python3 >/dev/null 2>&1 || { echo "python3 missing: JSON not parsed"; return; }
    python3 - "$1" "$2" <<'PY' || fail "JSON check failed: $2"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

case "$1" in
sim_overhead)
    need_sim
    run 0 --sim h200@13000 bench overhead --reps 20
    has "$out" "simulated: timings meaningless"
    has "$out" "command: greenctx --sim h200@13000 bench overhead --reps 20"
    has "$out" "NVIDIA H200 (132 SMs), driver 13.0"
    for row in "split {16, rest}" "green context create" "green context destroy" \
        "stream create" "stream destroy" "2 partitions + context + stream" "re-partition 16/116"; do
        has "$out" "$row"
    done
    has "$out" "needs a GPU: this driver runs no kernels"
    # The context cache and layouts: no memory lost with the cache, 4 MiB per context without.
    has "$out" "re-partitioning: 16/rest <-> 64/rest"
    has "$out" "device memory lost, MiB                   0.0            |     1600.0"
    has "$out" "layout switch, host"
    has "$out" "layout switch by part, host"
    has "$out" "16 layouts x 2, empty cache, ms"
    run 0 --sim h200@13000 bench overhead --reps 3 --json
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["memory_lost_cache_mib"] == 0 and d["overhead"]["repartitioning"]["layout_switch_host_us"]["n"] == 3'
    json_ok "$out" \
        'd["meta"]["simulated"] and d["overhead"]["reps"] == 3 and d["isolation"] is None'
    # Issue 20's figures: each with its twin by hand and their ratio (check_regression.py).
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["layout_switch_by_hand_us"]["n"] == 3 and d["overhead"]["repartitioning"]["layouts_16x2_by_hand_ms"]["n"] == 15'
    json_ok "$out" \
        'all(d["overhead"]["repartitioning"][k] > 0 for k in ("repartition_ratio_p50", "layout_switch_ratio_p50", "layout_switch_by_part_ratio_p50", "layouts_16x2_ratio_p50"))'
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["layout_switch_by_part_host_us"]["n"] == 3'
    json_ok "$out" \
        'all(o["valid"] == (not o["op"].startswith("launch")) for o in d["overhead"]["ops"])'
    # 12.4 has no cuGreenCtxStreamCreate: greenctx still makes streams, the raw column is empty.
    run 0 --sim h200@12040 bench overhead --reps 3
    has "$out" "stream create"
    # 13.1: the structured split on both sides.
    run 0 --sim b200@13010 bench overhead --reps 3 --victim-sms 32
    has "$out" "one cuDevSmResourceSplit"
    ;;
sim_needs_gpu)
    need_sim
    for what in isolation scaling all tenants; do
        run 1 --sim h200 bench $what --quick
        has "$err" "benchmarks need a GPU"
    done
    # tenants refuses before it starts any process or MPS daemon: nothing on stdout but the
    # simulator's banner, and under --json one error document.
    has "$out" "simulated driver: h200"
    grep -q "== tenants" "$out" && fail "tenants printed a table without a GPU"
    run 1 --sim h200 bench tenants --json
    json_ok "$out" 'd["error"]["status"] == "GCTX_ERROR_UNSUPPORTED" and "need a GPU" in d["error"]["message"]'
    # The worker is the bench's own; by hand it only says what it needs.
    run 2 --sim h200 bench tenant-worker
    has "$err" "started by bench tenants"
    run 1 --sim h200@12030 bench overhead
    has "$err" "needs driver 12.4"
    ;;
sim_bad_victim)
    need_sim
    run 1 --sim h200 bench overhead --victim-sms 12 --reps 2
    has "$err" "greenctx bench:"
    ;;
usage)
    run 0 bench --help
    has "$out" "usage: greenctx bench"
    run 2 bench
    run 2 bench nothing-like-it
    run 2 bench overhead scaling
    run 2 bench overhead --reps 0
    run 2 bench overhead --reps
    run 2 bench isolation --victim-sms
    run 2 bench isolation --victim-sms 1 2 3 4 5 6 7 8 9
    run 2 bench overhead --svg "$svg"
    run 2 bench all --svg
    run 2 bench all --frobnicate
    run 2 bench all --device minus-one
    has "$err" "--device"
    run 0 bench tenants --help
    has "$out" "usage: greenctx bench isolation|scaling|overhead|all|tenants"
    has "$out" "tenants     two processes on one GPU"
    has "$out" "Starts and quits its"
    run 2 bench tenants --reps 5
    has "$err" "tenants run for a time"
    run 2 bench tenants --victim-sms 16 32
    has "$err" "tenants take one victim size"
    run 2 bench tenants isolation
    has "$err" "one benchmark at a time"
    ;;
gpu_quick)
    # A real GPU: every benchmark runs, checks its kernels' results and draws its chart.
    # Without one (make test-gpu on a machine with no driver or no device): skipped.
    "$tool" info 2>/dev/null | grep -q '^device 0:' ||
        { echo "needs a GPU: no CUDA driver or device here"; exit 77; }
    run 0 bench all --quick --svg "$svg"
    for text in "== isolation" "green: victim | hog rest" "== scaling" "== overhead" \
        "submit, per launch"; do
        has "$out" "$text"
    done
    grep -q "</svg>" "$svg" || fail "the chart is not a whole SVG file"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
exit $failed

#!/bin/sh
# bench_test.sh CASE TOOL: `greenctx bench` (greenctx-bench, bench/'s program beside the tool,
# run by it) on the simulated driver (what runs there, and the clean refusal of what needs a
# GPU), its usage errors, the program run directly, and a quick real run on a GPU.
# Cases with --sim need the simulated driver (GREENCTX_CUDA_LIBRARY names it); they skip (77)
# without it.
. "$(dirname "$0")/tool_lib.sh"
svg=$(mktemp) json=$(mktemp)
trap 'rm -f "$out" "$err" "$svg" "$json"' EXIT

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
    # Progress on stderr: a step per row, the launches and the cache's rows, the time left.
    has "$err" "greenctx bench: overhead [1/7] split"
    has "$err" "greenctx bench: overhead [7/7] re-partitioning: the context cache and layouts (about "
    # The context cache and layouts: no memory lost with the cache, 4 MiB per context without.
    has "$out" "re-partitioning: 16/rest <-> 64/rest"
    has "$out" "device memory lost, MiB                   0.0            |     1600.0"
    has "$out" "layout switch, host"
    has "$out" "layout switch by part, host"
    has "$out" "16 layouts x 2, empty cache, ms"
    run 0 --sim h200@13000 bench overhead --reps 3 --json
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["memory_lost_cache_mib"] == 0 and d["overhead"]["repartitioning"]["layout_switch_host_us"]["n"] == 12'
    # The switch rows take 4 reps to one of --reps; the re-partition row's sides in blocks,
    # every rep of both kept; the thread pinned where the mask can be set (-1: not pinned).
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["layout_switch_reps"] == 12 and d["overhead"]["repartition_order"] == "blocks"'
    json_ok "$out" \
        'all(o["greenctx_us"]["n"] == 3 and o["raw_driver_us"]["n"] == 3 for o in d["overhead"]["ops"] if o["op"] == "repartition")'
    json_ok "$out" 'isinstance(d["overhead"]["host_cpu"], int) and d["overhead"]["host_cpu"] >= -1'
    # Each host-time row again over its quiet reps (bench_pin.h): the rep of the row's fastest
    # check on one side or the other, at most all of them, each summary over exactly those.
    json_ok "$out" \
        'all(o["quiet_reps"] <= 3 and o["raw_driver_quiet_reps"] <= 3 and o["quiet_reps"] + o["raw_driver_quiet_reps"] >= 1 and o["greenctx_quiet_us"]["n"] == o["quiet_reps"] and o["raw_driver_quiet_us"]["n"] == o["raw_driver_quiet_reps"] for o in d["overhead"]["ops"] if o["op"] in ("split", "repartition"))'
    json_ok "$out" \
        '(r := d["overhead"]["repartitioning"]) and 1 <= r["layout_switch_quiet_reps"] <= 12 and r["layout_switch_check_us"]["n"] == 12 and r["layout_switch_check_us"]["min"] > 0 and all(r[k]["n"] == r["layout_switch_quiet_reps"] for k in ("layout_switch_host_quiet_us", "layout_switch_by_part_host_quiet_us", "layout_switch_by_hand_quiet_us", "layout_switch_barrier_by_hand_quiet_us"))'
    json_ok "$out" \
        'd["meta"]["simulated"] and d["overhead"]["reps"] == 3 and d["isolation"] is None'
    # Issue 20's figures: each with its twin by hand and their ratio (check_regression.py).
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["layout_switch_by_hand_us"]["n"] == 12 and d["overhead"]["repartitioning"]["layouts_16x2_by_hand_ms"]["n"] == 15'
    json_ok "$out" \
        'all(d["overhead"]["repartitioning"][k] > 0 for k in ("repartition_ratio_p50", "layout_switch_ratio_p50", "layout_switch_by_part_ratio_p50", "layouts_16x2_ratio_p50"))'
    json_ok "$out" \
        'd["overhead"]["repartitioning"]["layout_switch_by_part_host_us"]["n"] == 12'
    json_ok "$out" \
        'all(o["valid"] == (not o["op"].startswith("launch")) for o in d["overhead"]["ops"])'
    # 12.4 has no cuGreenCtxStreamCreate: greenctx still makes streams, the raw column is empty.
    run 0 --sim h200@12040 bench overhead --reps 3
    has "$out" "stream create"
    # 13.1: the structured split on both sides.
    run 0 --sim b200@13010 bench overhead --reps 3 --victim-sms 32
    has "$out" "one cuDevSmResourceSplit"
    ;;
sim_devices)
    need_sim
    # overhead runs on every simulated device, its sizes scaled to the device's; a device is
    # picked by UUID as by number.
    run 0 --sim a100 bench overhead --quick
    has "$out" "re-partition 16/92<->8/100"
    has "$out" "16 layouts x 2, empty cache, ms"
    run 0 --sim l4 bench overhead --quick
    has "$out" "re-partitioning: 16/rest <-> 28/rest"
    has "$out" "16 layouts x 2                     not measured: 16 groups of this device's minimum partition don't fit"
    run 0 --sim h200,a100 -d GPU-5de9 bench overhead --quick
    has "$out" "NVIDIA A100-SXM4-80GB (108 SMs)"
    ;;
sim_needs_gpu)
    need_sim
    for what in isolation scaling all; do
        run 1 --sim h200 bench $what --quick
        has "$err" "benchmarks need a GPU"
    done
    run 1 --sim h200@12030 bench overhead
    has "$err" "needs driver 12.4"
    ;;
sim_elastic)
    # bench elastic on the simulator's cost model: every arm present (the MPS ones skipped
    # with the reason), the report's parts, a well-formed SVG, the JSON fields. Not timing.
    need_sim
    # One layer: the simulator's buffers are host memory (untouched, but counted by ASan).
    run 0 --sim h200 bench elastic --quick --layers 1 --seconds 0.4 --svg "$svg" --json-file "$json"
    # cuBLAS not used (--gemm auto): said where it happens, and in the report's GEMM line
    has "$err" "greenctx bench: cuBLAS not used (the simulated driver runs no cuBLAS): the GEMMs run on the bench's own kernel"
    for text in "simulated: the kernels are a cost model" "trace onoff" "calibration" \
        "static split 16 | 116" "no split (equal streams)" "priority streams" \
        "controller over layouts" "chunked prefill, 256 tokens a step" \
        "2 processes, no MPS (time-sliced)" "2 processes, claims resized, no MPS" \
        "<- best static" "not run:" "MPS is not available" "targets (issue 17):" \
        "simulated: not a measurement" "chart: $svg"; do
        has "$out" "$text"
    done
    # Progress on stderr, a step per arm that runs with the time left from the second on: 11
    # one-process arms, then the 6 two-process ones less the 4 MPS ones skipped here.
    has "$err" "greenctx bench: elastic [1/17] static split 16 | 116"
    has "$err" "greenctx bench: elastic [2/17] static split 32 | 100 (about "
    has "$err" "greenctx bench: elastic [13/13] 2 processes, claims resized, no MPS (about "
    sed -n '/^targets (issue 17):/,$p' "$out" | grep -Eq '^  (met|not met) ' &&
        fail "a simulated run gives a target's verdict"
    sed -n '/^targets (issue 17):/,$p' "$out" | grep -q '^  simulated ' ||
        fail "a simulated run's targets do not say simulated"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$svg" ||
            fail "the SVG is not well-formed XML"
    fi
    has "$svg" "SMs over time: controller over layouts"
    has "$svg" "</svg>"
    # The two-process arms: skipped MPS arms say why; the resized claims moved and timed it.
    json_ok "$json" 'sorted(a["name"] for a in d["elastic"]["arms"] if a["kind"].startswith("2p") and not a["ran"]) == ["2p_claims", "2p_claims_controller", "2p_mps", "2p_mps_threads"]'
    json_ok "$json" 'all("MPS is not available" in a["why"] for a in d["elastic"]["arms"] if not a["ran"])'
    json_ok "$json" '[a for a in d["elastic"]["arms"] if a["name"] == "2p_claims_controller_sliced"][0]["resizes"] >= 1 and [a for a in d["elastic"]["arms"] if a["name"] == "2p_claims_controller_sliced"][0]["timeline"][0]["lat_sms"] == 16'
    json_ok "$json" '[a for a in d["elastic"]["arms"] if a["name"] == "2p_sliced"][0]["steps"] > 0 and [a for a in d["elastic"]["arms"] if a["name"] == "2p_sliced"][0]["prefill_tokens_per_s"] > 0'
    # Its MPS arms under the bench's own daemon (a stand-in nvidia-cuda-mps-control, where no
    # daemon answers for the user's pipe directory): started, every two-process arm run, quit.
    GREENCTX_MPS_CONTROL=$(cd "$(dirname "$0")" && pwd)/fake_mps_control.sh
    CUDA_MPS_PIPE_DIRECTORY=$out.no-daemon
    export GREENCTX_MPS_CONTROL CUDA_MPS_PIPE_DIRECTORY
    run 0 --sim h200 bench elastic --quick --layers 1 --seconds 0.2 --json
    unset GREENCTX_MPS_CONTROL CUDA_MPS_PIPE_DIRECTORY
    json_ok "$out" 'd["elastic"]["mps_available"] and all(a["ran"] for a in d["elastic"]["arms"] if a["kind"].startswith("2p"))'
    run 0 --sim h200 bench elastic --quick --layers 1 --seconds 0.3 --trace stationary --arms 1p --json
    json_ok "$out" 'd["schema"] == "greenctx.bench.elastic/1" and d["meta"]["simulated"]'
    json_ok "$out" 'd["elastic"]["trace"] == "stationary" and d["elastic"]["model"]["hidden"] == 4096 and d["elastic"]["model"]["kv_heads"] == 8 and d["elastic"]["target_ms"] > 0 and len(d["elastic"]["calibration"]) == 6'
    json_ok "$out" 'all(n in [a["name"] for a in d["elastic"]["arms"]] for n in ["static_16", "static_96", "no_split", "priority", "controller", "chunked_128", "chunked_256", "chunked_512"]) and not any(a["name"].startswith("2p") for a in d["elastic"]["arms"])'
    json_ok "$out" 'all(a["ran"] and a["steps"] > 0 and a["step_ms"]["p99"] > 0 and a["prefill_tokens_per_s"] > 0 for a in d["elastic"]["arms"])'
    json_ok "$out" 'd["elastic"]["best_static"].startswith("static_") and [t["applies"] for t in d["elastic"]["targets"]][2]'
    json_ok "$out" 'all("simulated" in t["detail"] for t in d["elastic"]["targets"] if t["applies"])'
    # No verdict from the model's figures: "met" is null, the rule's answer is model_met.
    json_ok "$out" 'all(t["met"] is None and not t["measured"] and ("model_met" in t) == t["applies"] for t in d["elastic"]["targets"])'
    # With the context cache off, releasing the layouts destroys their contexts: the kernels
    # and events loaded there are gone before, never pushed after.
    export GREENCTX_CONTEXT_CACHE=0
    run 0 --sim h200 bench elastic --quick --layers 1 --seconds 0.2 --arms 1p
    unset GREENCTX_CONTEXT_CACHE
    grep -q "cuCtxPushCurrent" "$err" && fail "a context was used after the layouts ended"
    # Bad arguments: refused with what would work, before anything runs.
    run 2 --sim h200 bench elastic --trace bursty
    has "$err" "--trace needs onoff, duty50, poisson or stationary, got 'bursty'"
    run 2 --sim h200 bench elastic --seconds 0.01
    has "$err" "--seconds needs seconds from 0.2 to 600"
    run 2 --sim h200 bench elastic --layers 9
    has "$err" "--layers needs a count from 1 to 8"
    run 2 --sim h200 bench elastic --arms 2p
    has "$err" "--arms needs all or 1p (the one-process arms only), got '2p'"
    run 2 --sim h200 bench elastic --reps 3
    has "$err" "unknown option '--reps'"
    run 0 bench elastic --help
    has "$out" "usage: greenctx bench elastic"
    run 2 --sim h200 bench elastic-worker
    has "$err" "started by bench elastic"
    ;;
sim_elastic_cublas)
    # --gemm cublas on the simulator: the double (GREENCTX_CUBLAS_LIBRARY) takes every GEMM
    # of every arm, the two processes' too; the report says cuBLAS ran.
    need_sim
    run 0 --sim h200 bench elastic --quick --layers 1 --seconds 0.3 --gemm cublas --json
    json_ok "$out" '"cuBLAS" in d["elastic"]["gemm"] and "fake_cublas" in d["elastic"]["gemm"]'
    json_ok "$out" '"decode'"'"'s GEMVs" in d["elastic"]["gemm"]' # the double checks their shapes too
    json_ok "$out" 'all(a["ran"] and a["steps"] > 0 for a in d["elastic"]["arms"] if "MPS" not in a["label"] or "no MPS" in a["label"])'
    json_ok "$out" 'all(c["prefill_unit_ms"] > 0 for c in d["elastic"]["calibration"])'
    # Asked for and missing: refused with where it looked; auto goes on without it.
    double=$GREENCTX_CUBLAS_LIBRARY
    export GREENCTX_CUBLAS_LIBRARY=/nonexistent/libcublas.so.13
    run 1 --sim h200 bench elastic --quick --layers 1 --seconds 0.3 --gemm cublas
    export GREENCTX_CUBLAS_LIBRARY="$double"
    has "$err" "--gemm cublas: cuBLAS could not be loaded from GREENCTX_CUBLAS_LIBRARY"
    run 2 --sim h200 bench elastic --gemm tensor
    has "$err" "--gemm needs auto (cuBLAS when found), own (the bench's kernel) or cublas, got 'tensor'"
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
    has "$err" "--victim-sms takes at most 8 values; '9' is one too many"
    run 2 bench overhead --svg "$svg"
    run 2 bench all --svg
    run 2 bench all --frobnicate
    run 2 bench all --device minus-one
    has "$err" "--device"
    # Two tenants are a script: the help and the old name say where it is.
    run 0 bench --help
    has "$out" "usage: greenctx bench isolation|scaling|overhead|all|overlap|elastic"
    has "$out" "script: python3 bench/compare/tenants.py"
    run 2 bench tenants --quick
    has "$err" "bench tenants is a script now: python3 bench/compare/tenants.py"
    ;;
program)
    # greenctx-bench on its own, with the shared options before the benchmark as the tool
    # hands them on, prints what `greenctx bench` prints; the tool without it says so.
    need_sim
    bench="$(dirname "$tool")/greenctx-bench"
    "$bench" --sim h200@13000 -d 0 overhead --reps 2 >"$out" 2>"$err" || fail "greenctx-bench failed"
    has "$out" "command: greenctx --sim h200@13000 bench overhead --reps 2"
    "$bench" --device >"$out" 2>"$err"; [ $? -eq 2 ] || fail "greenctx-bench --device: not 2"
    has "$err" "greenctx bench: --device needs a device number"
    "$bench" --help >"$out" || fail "greenctx-bench --help failed"
    has "$out" "usage: greenctx bench"
    GREENCTX_BENCH=/nonexistent/greenctx-bench run 1 bench overhead
    has "$err" "could not run /nonexistent/greenctx-bench"
    run 2 --json bench overhead --reps 0
    json_ok "$out" 'd["schema"] == "greenctx.error/1" and d["command"] == "bench"'
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
gpu_elastic)
    # A real GPU: bench elastic --quick runs every arm it can (the MPS ones need
    # nvidia-cuda-mps-control) and reports the targets. Skipped without a GPU or on the sim.
    case "${GREENCTX_CUDA_LIBRARY:-}" in
    *greenctx_sim*) echo "the simulated driver: bench.elastic covers it"; exit 77 ;;
    esac
    "$tool" info 2>/dev/null | grep -q '^device 0:' ||
        { echo "needs a GPU: no CUDA driver or device here"; exit 77; }
    run 0 bench elastic --quick --svg "$svg"
    for text in "controller over layouts" "<- best static" "targets (issue 17):" \
        "2 processes, no MPS (time-sliced)"; do
        has "$out" "$text"
    done
    grep -q "simulated" "$out" && fail "a real GPU's run says simulated"
    grep -q "</svg>" "$svg" || fail "the chart is not a whole SVG file"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
exit $failed

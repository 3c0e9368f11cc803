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
    has "$out" "device memory lost, MiB                 0.000            |   1600.000"
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
    has "$out" "16 layouts x 2, empty cache, ms    not measured: 16 groups of this device's minimum partition don't fit"
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
elastic_dry)
    # bench/compare/elastic.py --dry: every arm on the simulated driver, its document checked
    # (tests/elastic_doc.py); a bad argument refused before anything runs. The target is given:
    # the simulated calibration carries the host's sleeps, and on a loaded machine set one that
    # the smallest claim already held, so the resized claims never moved.
    here=$(cd "$(dirname "$0")" && pwd)
    script=$here/../bench/compare/elastic.py
    python3 "$script" --dry --quick --layers 1 --seconds 0.3 --target-ms 0.7 >"$json" 2>"$err" ||
        { cat "$err"; fail "elastic.py --dry failed"; }
    python3 "$here/elastic_doc.py" "$json" dry || fail "elastic.py --dry's document"
    for text in "elastic [1/11] static split 16 | 116" "2 processes, claims resized, no MPS" \
        "<- best static" "targets (issue 17):" "simulated: not a measurement"; do
        has "$err" "$text"
    done
    python3 "$script" --dry --trace bursty >"$out" 2>"$err" && fail "--trace bursty ran"
    has "$err" "invalid choice: 'bursty'"
    run 2 bench elastic --quick
    has "$err" "bench elastic is a script now: python3 bench/compare/elastic.py"
    ;;
overlap_dry)
    # bench/compare/overlap.py without torch: on the simulated driver its refusals (too few
    # GPUs, an illegal split, NVLink multicast asked for) and the plan --dry lists; its usage
    # errors (exit 2) before anything is looked at.
    [ -r "${GREENCTX_SIM_LIBRARY:-}" ] || { echo "needs the simulated driver"; exit 77; }
    export GREENCTX_CUDA_LIBRARY="$GREENCTX_SIM_LIBRARY" GREENCTX_SIM_DEVICES=h200
    script=$(cd "$(dirname "$0")" && pwd)/../bench/compare/overlap.py
    overlap() { # overlap STATUS ARGS...
        want=$1
        shift
        python3 "$script" "$@" >"$out" 2>"$err"
        got=$?
        [ "$got" -eq "$want" ] || { cat "$err"; fail "overlap.py $*: exit $got, expected $want"; }
    }
    overlap 0 --dry --world 1 --quick --sizes 4K 64M --sms 8 16
    has "$out" "4 KiB: 200 all-reduces timed per arm, 3 steps, on GPUs 0 to 0"
    has "$out" "64 MiB: 20 all-reduces timed per arm, 3 steps"
    has "$out" "  green 16 | 116, maxCTAs 16, SM target 116"
    [ "$(grep -c '^  ' "$out")" -eq 22 ] || fail "--dry should list 11 arms for each size"
    overlap 1 --dry
    has "$err" "needs 2 GPUs (an NCCL all-reduce over devices 0 to 1); this machine has 1"
    overlap 1 --dry --world 1 --sms 16 12
    has "$err" "--sms 12 on GPU 0"
    has "$err" "nearest: 8 or 16"
    NCCL_NVLS_ENABLE=1 overlap 1 --dry --world 1
    has "$err" "NCCL_NVLS_ENABLE is set to '1'"
    GREENCTX_SIM_DEVICES=h200,h200 overlap 0 --dry --device 0
    has "$out" "4 MiB: 2000 all-reduces timed per arm, 7 steps, on GPUs 0 to 1"
    has "$out" "256 MiB: 200 all-reduces"
    [ "$(grep -c '^  ' "$out")" -eq 42 ] || fail "--dry should list 21 arms for each size"
    overlap 2 --sizes 3
    has "$err" "needs sizes in bytes, multiples of 4 up to 4G, with K, M or G (4M: 4 MiB), got '3'"
    overlap 2 --sizes 1M 2M 3M 4M 5M
    has "$err" "--sizes takes at most 4 values"
    overlap 2 --gemm 8192x8192
    has "$err" "needs MxNxK"
    for bad in "--sizes" "--sms 0" "--mix 8" "--reps 0" "--world 0" "--frobnicate" "extra"; do
        # shellcheck disable=SC2086 # each a few words
        overlap 2 --dry $bad
    done
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
    # Two tenants, elastic partitions and overlap are scripts: the help and the old names say
    # where.
    run 0 bench --help
    has "$out" "usage: greenctx bench isolation|scaling|overhead|all"
    grep -q "all|" "$out" && fail "the usage names a script as a benchmark"
    has "$out" "python3 bench/compare/tenants.py, bench/compare/elastic.py and"
    has "$out" "bench/compare/overlap.py"
    run 2 bench tenants --quick
    has "$err" "bench tenants is a script now: python3 bench/compare/tenants.py"
    run 2 bench overlap --quick --sizes 4M
    has "$err" "bench overlap is a script now: python3 bench/compare/overlap.py [--quick] in the source tree (torch on the GPU; --dry on the simulated driver; BENCHMARKS.md)"
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
    # A real GPU: bench/compare/elastic.py --quick (its own MPS daemon, torch's kernels) runs
    # every arm, and every target that applies to the on/off trace is met. Skipped without a
    # GPU, without torch with CUDA, or on the sim (bench.elastic_dry covers that).
    case "${GREENCTX_CUDA_LIBRARY:-}" in
    *greenctx_sim*) echo "the simulated driver: bench.elastic_dry covers it"; exit 77 ;;
    esac
    "$tool" info 2>/dev/null | grep -q '^device 0:' ||
        { echo "needs a GPU: no CUDA driver or device here"; exit 77; }
    python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null ||
        { echo "needs PyTorch with CUDA"; exit 77; }
    here=$(cd "$(dirname "$0")" && pwd)
    python3 "$here/../bench/compare/elastic.py" --quick >"$json" ||
        fail "bench/compare/elastic.py --quick failed"
    [ -n "${GREENCTX_GPU_OUT:-}" ] && mkdir -p "$GREENCTX_GPU_OUT" &&
        cp "$json" "$GREENCTX_GPU_OUT/elastic-quick.json"
    python3 "$here/elastic_doc.py" "$json" gpu || fail "elastic.py --quick's arms or targets"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
exit $failed

#!/bin/sh
# tool_test.sh CASE TOOL: runs the greenctx tool and checks its output and exit status.
# Cases with --sim need the simulated driver (GREENCTX_CUDA_LIBRARY names it in the test's
# environment; the tool finds it in the build tree); they skip (77) without it.
. "$(dirname "$0")/tool_lib.sh"

# --sim cases: the test names the simulated driver in GREENCTX_SIM_LIBRARY.
need_sim() {
    [ -r "${GREENCTX_SIM_LIBRARY:-}" ] && return 0
    echo "needs the simulated driver (GREENCTX_SIM_LIBRARY: ${GREENCTX_SIM_LIBRARY:-unset})"
    exit 77
}

# The driver the other tests use: the simulated one when GREENCTX_CUDA_LIBRARY names it.
on_sim() { case "${GREENCTX_CUDA_LIBRARY:-}" in *greenctx_sim*) return 0 ;; esac; return 1; }

case "$1" in
sim_info)
    need_sim
    run 0 --sim h200@13000 info
    head -n 1 "$out" | grep -q "^simulated driver: h200 (driver 13.0)" ||
        fail "the first line is not the simulated-driver banner"
    has "$out" "no GPU is used"
    has "$out" "132"
    has "$out" "structured_split"
    has "$out" "needs driver 13.1, found 13.0"
    run 0 --sim h200,a100@12050 info
    has "$out" "simulated driver: h200,a100 (driver 12.5)"
    has "$out" "derived from the architecture: driver before 13.0 reports none"
    has "$out" "108"
    run 0 --sim h200,a100@13000 info --device 1
    has "$out" "device 1:"
    grep -q "device 0:" "$out" && fail "--device 1 also printed device 0"
    ;;
sim_json)
    need_sim
    run 0 --sim h200,a100@12050 info --json
    has "$err" "simulated driver"
    if ! command -v python3 >/dev/null 2>&1; then
        echo "python3 is not installed: the JSON was not parsed"
        exit 77
    fi
    python3 - "$out" <<'PY' || fail "the JSON output is not what info should print"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["simulated"] is True, doc
assert doc["driver_version"] == 12050, doc
assert doc["driver_path"].endswith(".so"), doc
d = doc["devices"]
assert [x["ordinal"] for x in d] == [0, 1], d
assert d[0]["sm_count"] == 132 and d[0]["cc"] == "9.0", d
assert d[1]["sm_count"] == 108 and d[1]["cc"] == "8.0", d
assert d[0]["sm_rules_derived"] is True, d
assert (d[1]["min_partition_sms"], d[1]["coscheduled_alignment"]) == (4, 2), d
f = doc["features"]
assert f["green_contexts"]["available"] is True, f
assert f["structured_split"] == {"available": False, "reason": "needs driver 13.1, found 12.5"}, f
assert doc["warnings"] == [], doc
print("json ok")
PY
    ;;
usage)
    run 2
    has "$err" "usage: greenctx"
    run 2 frobnicate
    has "$err" "unknown command 'frobnicate'"
    run 2 --bogus info
    run 2 --sim
    run 2 --sim @13000 info
    need_sim
    run 2 --sim h200@13k info
    run 2 --sim h200 info --device
    run 2 --sim h200 info --device x
    run 2 --sim h200 info extra
    ;;
help_and_version)
    run 0 --help
    has "$out" "--sim MODEL"
    has "$out" "info"
    run 0 --version
    has "$out" "greenctx 0.1.0"
    ;;
bad_device)
    need_sim
    run 1 --sim h200@13000 info --device 3
    has "$err" "valid devices are 0 to 0"
    ;;
mps_warning)
    need_sim
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
    run 0 --sim h200 info
    has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
    has "$out" "overrides green-context SM limits"
    unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
    run 0 --sim h200 info
    grep -q "MPS" "$out" && fail "MPS warning without CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
    ;;
info)
    # Whatever driver the tests use (the real one under make test-gpu): invariants only.
    "$tool" info >/dev/null 2>&1
    if [ $? -eq 1 ] && ! on_sim; then
        echo "no CUDA driver on this machine"
        exit 77
    fi
    run 0 info
    has "$out" "driver: "
    has "$out" "device 0: "
    has "$out" "green_contexts"
    if on_sim; then has "$out" "simulated driver"; else grep -q "simulated" "$out" && fail "banner on the real driver"; fi
    run 0 info --json
    command -v python3 >/dev/null 2>&1 || exit $failed
    if on_sim; then simulated=True; else simulated=False; fi
    python3 - "$out" "$simulated" <<'PY' || fail "the JSON output is not what info should print"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["simulated"] is (sys.argv[2] == "True"), doc
assert doc["driver_version"] >= 12000, doc
assert len(doc["devices"]) >= 1, doc
for d in doc["devices"]:
    assert d["sm_count"] > 0 and d["coscheduled_alignment"] > 0, d
    assert d["min_partition_sms"] >= d["coscheduled_alignment"], d
assert set(doc["features"]) >= {"green_contexts", "structured_split"}, doc
print("json ok")
PY
    ;;
no_driver)
    # GREENCTX_CUDA_LIBRARY names a missing file: no driver, and the tool says what to try.
    run 1 info
    has "$err" "no CUDA driver was found"
    has "$err" "$GREENCTX_CUDA_LIBRARY"
    has "$err" "try the simulated driver: greenctx --sim h200 info"
    [ -s "$out" ] && fail "stdout is not empty"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

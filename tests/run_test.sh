#!/bin/sh
# run_test.sh CASE TOOL PROBE PRELOAD: `greenctx run` and its preload, with run_probe (a
# program that finds the driver as cudart does) as the program. Cases on `--sim` need the
# simulated driver (GREENCTX_SIM_LIBRARY) and skip (77) without it; `driver` runs on the
# tests' driver, the GPU's under make test-gpu.
. "$(dirname "$0")/tool_lib.sh"
probe=$3
preload=$4
report=$(mktemp) svg=$(mktemp) copy=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$report" "$svg" "$copy"' EXIT
# Runs claim their SMs: a claims registry of this test's own, so that tests running at the
# same time don't see each other's claims.
export GREENCTX_RUNTIME_DIR="$copy/runtime"

need_sim() {
    [ -r "${GREENCTX_SIM_LIBRARY:-}" ] && return 0
    echo "needs the simulated driver (GREENCTX_SIM_LIBRARY: ${GREENCTX_SIM_LIBRARY:-unset})"
    exit 77
}
# The preload of a sanitizer build needs the sanitizer's runtime in the program: it can't be
# loaded into programs that are not instrumented (env, sh, ...).
need_plain_preload() {
    [ -z "${GREENCTX_TEST_SANITIZE:-}" ] && return 0
    echo "a $GREENCTX_TEST_SANITIZE build: its preload can't load into env, sh and the other wrappers"
    exit 77
}
need_python() {
    command -v python3 >/dev/null 2>&1 && return 0
    echo "python3 is not installed: the JSON was not checked"
    exit 77
}
# report_has PYTHON-EXPRESSION...: each holds for the report (r = the parsed JSON).
report_has() {
    python3 - "$report" "$@" <<'PY' || fail "the report is not what the run did: $(cat "$report")"
import json, sys
r = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    assert eval(e), e
PY
}
# Every claim of the runs so far given back by a release, none left to die (greenctx ps).
claims_released() {
    "$tool" --sim h200 ps --json >"$report" 2>/dev/null || fail "ps --json failed"
    report_has 'r["devices"][0]["claims"] == []' \
        'all(e["kind"] == "released" for e in r["devices"][0]["events"])'
}
not_started() { [ -s "$out" ] && fail "the program ran: its output is not empty"; }
# The preload without the tool: LD_PRELOAD and the variables set by hand.
preload_run() {
    expected=$1
    shift
    env LD_PRELOAD="$preload" GREENCTX_CUDA_LIBRARY="$GREENCTX_SIM_LIBRARY" "$@" >"$out" 2>"$err"
    status=$?
    echo "\$ LD_PRELOAD=preload $* -> $status"
    sed 's/^/  out| /' "$out"
    sed 's/^/  err| /' "$err"
    [ "$status" -eq "$expected" ] || fail "$* exited $status, expected $expected"
}

case "$1" in
confined)
    need_sim
    need_python
    # Without the preload the probe's check fails: it would see every SM.
    GREENCTX_CUDA_LIBRARY=$GREENCTX_SIM_LIBRARY "$probe" confined 16 >"$out" 2>&1 &&
        fail "run_probe confined 16 passed without greenctx run"
    has "$out" "main thread, default stream: 132 SMs"
    run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" confined 16
    has "$err" "greenctx run: device 0: 16 of 132 SMs (claimed granules 0-1)"
    has "$out" "one of 4 threads: 16 SMs"
    # What the probe did, call by call: 2 binds on the main thread and a bind and a push on
    # each of 5 threads; each thread unbinds once (NULL passes); 11 reads of the current
    # context showed the primary one.
    report_has 'r["cuda_used"] is True' 'r["request"] == "16"' \
        'len(r["devices"]) == 1' 'r["devices"][0]["sm_count"] == 16' \
        'r["devices"][0]["device_sm_count"] == 132' \
        'r["devices"][0]["sm_ids"] == list(range(16))' \
        'r["devices"][0]["sm_ids_error"] is None' \
        'r["devices"][0]["claim"] == {"sm_count": 16, "granules": [0, 1]}' \
        'r["binds_redirected"] == 12' 'r["binds_passed"] == 5' \
        'r["current_shown_primary"] == 11' 'r["threads_seen"] == 6' \
        'r["primary_retains"] == 2' 'r["primary_releases"] == 2' \
        'set(r["refused"].values()) == {0}' 'r["setup_ms"] >= 0' \
        'r["complete"] is True' 'r["processes_missing"] == []' \
        '[p["pid"] for p in r["processes"]] == [r["pid"]]'
    # A share and the whole device.
    run 0 --sim h200 run --sms 25% -- "$probe" confined 32
    has "$err" "device 0: 32 of 132 SMs"
    run 0 --sim h200 run --sms=all -- "$probe" confined 132
    has "$err" "device 0: 132 of 132 SMs (claimed granules 0-16)"
    # Without a claim (--shared), the planner's split, as before claims.
    run 0 --sim h200 run --sms 16 --shared --report "$report" -- "$probe" confined 16
    has "$err" "16 of 132 SMs (--shared: not claimed, other tenants may run on the same SMs)"
    report_has 'r["devices"][0]["sm_ids"] == [0, 1, 4, 5, 16, 17, 20, 21, 32, 33, 36, 37, 48, 49, 52, 53]' \
        'r["devices"][0]["claim"] is None'
    ;;
direct)
    # A program linked with -lcuda calls the exported names.
    need_sim
    run 0 --sim h200 run --sms 24 -- "$probe" direct 24
    ;;
per_device)
    need_sim
    need_python
    run 0 --sim h200,a100 run --sms 0=16,1=8 --report "$report" -- "$probe" confined 16
    has "$err" "device 1: 8 of 108 SMs"
    report_has '[d["sm_count"] for d in r["devices"]] == [16, 8]' \
        '[d["request"] for d in r["devices"]] == ["16", "8"]'
    run 0 --sim h200,a100 run --sms 16 --report "$report" -- "$probe" confined 16
    report_has '[d["sm_count"] for d in r["devices"]] == [16, 16]'
    ;;
refusals)
    need_sim
    need_python
    # Without the preload the simulated driver answers these itself.
    GREENCTX_CUDA_LIBRARY=$GREENCTX_SIM_LIBRARY GREENCTX_SIM_DEVICES=h200,h200 \
        "$probe" refusals >"$out" 2>&1
    has "$out" "cuCtxCreate -> 801"
    has "$out" "cuDevicePrimaryCtxRetain(device 1) -> 0"
    run 0 --sim h200,h200 run --device 0 --sms 16 --report "$report" -- "$probe" refusals
    for call in "cuCtxCreate" "cuGreenCtxCreate" "cuDevicePrimaryCtxReset" \
        "cuDevicePrimaryCtxRetain(device 1)"; do
        has "$out" "$call -> 800"
    done
    has "$err" "cuCtxCreate refused (CUDA_ERROR_NOT_PERMITTED)"
    has "$err" "cuGreenCtxCreate refused"
    has "$err" "(cudaDeviceReset) refused"
    has "$err" "device 1 is not confined"
    report_has 'r["refused"] == {"cuCtxCreate": 1, "cuGreenCtxCreate": 1, "cuDevicePrimaryCtxReset": 1, "unconfined_context": 0, "unconfined_device": 1}' \
        '[d["device"] for d in r["devices"]] == [0]'
    run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" foreign_bind
    has "$out" "cuCtxSetCurrent(foreign) -> 800"
    has "$out" "cuCtxPushCurrent(foreign) -> 800"
    report_has 'r["refused"]["unconfined_context"] == 2'
    ;;
fail_closed)
    need_sim
    # The tool refuses before starting the program...
    export GREENCTX_CUDA_LIBRARY=/nonexistent/libcuda.so.1
    run 1 run --sms 16 -- "$probe" confined 16
    unset GREENCTX_CUDA_LIBRARY
    has "$err" "no CUDA driver was found"
    not_started
    run 1 --sim h200@12030 run --sms 16 -- "$probe" confined 16
    has "$err" "green contexts are not available: needs driver 12.4, found 12.3"
    has "$err" "the program was not started"
    not_started
    # A split's rule (--shared) is a claim's too: 12 SMs is no count a split gives.
    run 1 --sim h200 run --sms 12 --shared -- "$probe" confined 12
    has "$err" "12 SMs: on this device groups are multiples of 8 (min 8); nearest: 8 or 16"
    not_started
    run 0 --sim h200 run --sms 12 --shared --round up -- "$probe" confined 16
    run 1 --sim h200 run --sms 12 -- "$probe" confined 12
    has "$err" "12 SMs can't be claimed on this device: a claim is whole claim granules"
    has "$err" "the 4 SMs left over go with \"rest\""
    run 1 --sim h200 run --sms 13 -- "$probe" confined 13
    has "$err" "13 SMs can't be claimed on this device: a claim is whole claim granules"
    has "$err" "the program was not started"
    not_started
    run 0 --sim h200 run --sms 13 --round up -- "$probe" confined 16
    run 2 --sim h200 run --sms 16:c2 -- "$probe" confined 16
    has "$err" "suffixes need --shared"
    run 1 --sim none run --sms 16 -- "$probe" confined 16
    has "$err" "the driver shows no device"
    not_started
    run 1 --sim h200 run --device 3 --sms 16 -- "$probe" confined 16
    has "$err" "there is no device 3"
    not_started
    export GREENCTX_PRELOAD_LIBRARY="$copy/missing.so"
    run 1 --sim h200 run --sms 16 -- "$probe" confined 16
    unset GREENCTX_PRELOAD_LIBRARY
    has "$err" "the preload $copy/missing.so can't be used"
    not_started
    # ...and the preload stops the program (exit status 125) before it runs anything.
    preload_run 125 GREENCTX_RUN_SMS=12 "$probe" confined 12
    has "$err" "greenctx run: GREENCTX_RUN_SMS=12: device 0: group 0: 12 SMs"
    has "$err" "the program was stopped so that it does not run unconfined (exit status 125)"
    not_started
    preload_run 125 GREENCTX_RUN_SMS=16 GREENCTX_SIM_FAIL=cuGreenCtxCreate:1 "$probe" confined 16
    has "$err" "cuGreenCtxCreate"
    not_started
    preload_run 125 GREENCTX_RUN_SMS=16 GREENCTX_SIM_DRIVER_VERSION=12030 "$probe" confined 16
    has "$err" "needs driver 12.4"
    preload_run 125 GREENCTX_RUN_SMSS=16 "$probe" confined 16
    has "$err" "unknown variable GREENCTX_RUN_SMSS"
    preload_run 125 "$probe" confined 16
    has "$err" "GREENCTX_RUN_SMS is not set"
    preload_run 125 GREENCTX_RUN_SMS=16 GREENCTX_RUN_ROUND=sideways "$probe" confined 16
    has "$err" "GREENCTX_RUN_ROUND='sideways'"
    # A GROUP written wrong, set by hand: the preload says why in one line of its own (the
    # shared parser prints nothing, so the tool's GROUP help is not in the program's stderr).
    preload_run 125 GREENCTX_RUN_SMS=16:c02 "$probe" confined 16
    has "$err" "greenctx run: GREENCTX_RUN_SMS=16:c02: '16:c02' is not a GROUP"
    grep -q "GROUP is COUNT" "$err" && fail "the preload printed the tool's GROUP help"
    not_started
    preload_run 125 GREENCTX_RUN_SMS=0=16,0=24 "$probe" confined 16
    has "$err" "names device 0 twice"
    preload_run 125 GREENCTX_RUN_SMS=2=16 "$probe" confined 16
    has "$err" "names device 2, but the driver shows 1"
    # A second copy of the driver would run the program unconfined.
    cp "$GREENCTX_SIM_LIBRARY" "$copy/libcuda-copy.so"
    run 125 --sim h200 run --sms 16 -- "$probe" second_driver "$copy/libcuda-copy.so"
    has "$err" "in a CUDA driver other than the one greenctx confines"
    grep -q "looked up" "$out" && fail "the second driver's cuGetProcAddress_v2 was handed out"
    ;;
inherit)
    need_sim
    need_python
    # The report is the CUDA work, wherever it ran: here the child's, not its parent's.
    run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" spawn confined 16
    report_has 'r["cuda_used"] is True' 'len(r["processes"]) == 1' \
        'r["devices"][0]["sm_count"] == 16' 'r["complete"] is True'
    # --no-inherit releases the children of the first process that uses CUDA, not before:
    # a parent that never used CUDA is a wrapper, and its child is confined.
    run 0 --sim h200 run --sms 16 --no-inherit -- "$probe" spawn confined 16
    run 0 --sim h200 run --sms 16 --no-inherit -- "$probe" parent 16 execv confined 132
    run 1 --sim h200 run --sms 16 --no-inherit -- "$probe" parent 16 execv confined 16
    has "$out" "main thread, default stream: 132 SMs"
    ;;
children)
    # However a process that used CUDA starts a program, --no-inherit releases it (and only
    # it), and without it the program is confined and writes its part of the report.
    need_sim
    need_python
    for how in exec execv execve posix_spawn vfork system bash; do
        run 0 --sim h200 run --sms 16 --no-inherit --report "$report" -- \
            "$probe" parent 16 "$how" confined 132
        report_has 'len(r["processes"]) == 1' 'r["complete"] is True' \
            'r["devices"][0]["sm_count"] == 16'
        # The shells of system and bash are not instrumented: see need_plain_preload.
        case $how in system | bash) [ -n "${GREENCTX_TEST_SANITIZE:-}" ] && continue ;; esac
        run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" parent 16 "$how" confined 16
        report_has 'len(r["processes"]) == 2' 'r["complete"] is True' \
            'all(p["devices"][0]["sm_count"] == 16 for p in r["processes"])'
    done
    # exec replaces the process: its part is written before, so both images are in it.
    run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" parent 16 exec confined 16
    report_has 'len({p["pid"] for p in r["processes"]}) == 1' 'len(r["processes"]) == 2'
    # Without --report the program holds the claim alone: its exec hands the claim on to the
    # program it becomes, which joins it and gives it back when it ends (released, not died).
    run 0 --sim h200 run --sms 16 -- "$probe" parent 16 exec confined 16
    run 0 --sim h200 run --sms 16 -- "$probe" parent 16 execve confined 16
    claims_released
    # Children started with posix_spawn inherit the claim's lock as forked ones do (not only
    # join it while its holders live); released children get none.
    for how in execv posix_spawn; do
        run 0 --sim h200 run --sms 16 -- "$probe" parent 16 "$how" claim_fd
        has "$out" "claim inherited"
        run 1 --sim h200 run --sms 16 --no-inherit -- "$probe" parent 16 "$how" claim_fd
        has "$out" "claim not inherited"
    done
    ;;
wrappers)
    # Confinement follows the program through wrappers that don't use CUDA, under dash and
    # bash, one and two levels deep; --no-inherit releases only the program's own children.
    need_sim
    need_python
    need_plain_preload
    printf '#!/bin/dash\n"$@" && true\n' >"$copy/script.dash"
    printf '#!/bin/bash\n"$@" && true\n' >"$copy/script.bash"
    printf '#!/bin/dash\nbash -c '"'"'"$@" && true'"'"' bash "$@" && true\n' >"$copy/script.deep"
    chmod +x "$copy/script.dash" "$copy/script.bash" "$copy/script.deep"
    for wrapper in env nice 'taskset -c 0' 'timeout 60' 'stdbuf -o0' \
        "sh -c '\"\$@\" && true' sh" "dash -c '\"\$@\" && true' dash" \
        "bash -c '\"\$@\" && true' bash" "bash -c '\"\$@\"' bash" \
        "$copy/script.dash" "$copy/script.bash" 'env nice' "$copy/script.deep"; do
        eval "set -- $wrapper"
        run 0 --sim h200 run --sms 16 --no-inherit --report "$report" -- \
            "$@" "$probe" parent 16 execv confined 132
        report_has 'len(r["processes"]) == 1' 'r["devices"][0]["sm_count"] == 16' \
            'r["complete"] is True'
        run 0 --sim h200 run --sms 16 --report "$report" -- "$@" "$probe" parent 16 execv confined 16
        report_has 'len(r["processes"]) == 2' 'r["complete"] is True'
    done
    ;;
report)
    need_sim
    need_python
    report=$copy/report.json # its parts' directory is made beside it, in $copy
    # Checked before the program starts: usage errors (2), nothing run.
    run 2 --sim h200 run --sms 16 --report '' -- "$probe" confined 16
    has "$err" "give a file name"
    not_started
    run 2 --sim h200 run --sms 16 --report "$copy" -- "$probe" confined 16
    has "$err" "is a directory"
    not_started
    run 2 --sim h200 run --sms 16 --report "$copy/missing/r.json" -- "$probe" confined 16
    has "$err" "does not exist"
    not_started
    # Relative to where the tool started, whatever directory the program works in.
    (cd "$copy" && "$tool" --sim h200 run --sms 16 --report rel.json -- "$probe" confined 16) \
        >"$out" 2>&1 || fail "the run with a relative report failed: $(cat "$out")"
    [ -s "$copy/rel.json" ] || fail "no report at $copy/rel.json"
    # A process that used CUDA and wrote no part: the report says so, and the tool fails.
    run 1 --sim h200 run --sms 16 --report "$report" -- "$probe" no_part
    has "$err" "is incomplete: 1 process(es) used CUDA"
    report_has 'r["complete"] is False' 'len(r["processes_missing"]) == 1' 'r["processes"] == []'
    # A folder where the parts' directory can't be made (its path would pass PATH_MAX): exit
    # 1, nothing run, and the claim taken for the run given back (released, not died).
    long=$(python3 -c 'import os, sys
d = sys.argv[1]
while len(d) < 4085:
    d += "/" + "d" * min(200, 4085 - len(d) - 1)
os.makedirs(d)
print(d)' "$copy/long")
    run 1 --sim h200 run --sms 16 --report "$long/r" -- "$probe" confined 16
    has "$err" "the report's directory"
    not_started
    rm -rf "$copy/long"
    claims_released
    # The tool is the program's parent: a signal sent to it reaches the program, the report is
    # still merged, and the tool ends by the same signal.
    "$tool" --sim h200 run --sms 16 --report "$report" -- "$probe" sleep 30 >"$out" 2>"$err" &
    pid=$!
    for _ in $(seq 100); do
        ls -a "$copy"/.greenctx-run-*/*.started >/dev/null 2>&1 && break
        sleep 0.1
    done
    start=$(date +%s)
    kill -TERM "$pid"
    wait "$pid"
    status=$?
    [ "$status" -eq 143 ] || fail "the tool ended with $status after SIGTERM, expected 143"
    [ $(($(date +%s) - start)) -lt 10 ] || fail "SIGTERM did not reach the program"
    report_has 'r["complete"] is False' 'len(r["processes_missing"]) == 1'
    ls -a "$copy" | grep -q '^\.greenctx-run-' && fail "the parts' directory was left"
    ;;
nested)
    need_sim
    run 1 --sim h200 run --sms 16 -- "$tool" run --sms 32 -- "$probe" confined 32
    has "$err" "already inside greenctx run (GREENCTX_RUN_SMS=16)"
    not_started
    # Released children may start their own run.
    run 0 --sim h200 run --sms 16 --no-inherit -- "$probe" parent 16 execv noop
    ;;
companions)
    # A copy of the tool finds the preload and the simulated driver only relative to itself.
    need_sim
    cp "$tool" "$copy/greenctx"
    sim=$GREENCTX_SIM_LIBRARY
    unset GREENCTX_SIM_LIBRARY
    "$copy/greenctx" --sim h200 info >"$out" 2>"$err"
    [ $? -eq 1 ] || fail "a copy of the tool found a simulated driver: $(cat "$out")"
    has "$err" "the simulated driver (libgreenctx_sim.so) was not found"
    export GREENCTX_CUDA_LIBRARY=$sim
    "$copy/greenctx" run --sms 16 -- "$probe" confined 16 >"$out" 2>"$err"
    [ $? -eq 1 ] || fail "a copy of the tool found a preload"
    has "$err" "the preload (libgreenctx_preload.so) was not found"
    not_started
    unset GREENCTX_CUDA_LIBRARY
    export GREENCTX_SIM_LIBRARY=$sim
    # Any other library is refused before the program starts.
    export GREENCTX_PRELOAD_LIBRARY=$sim
    run 1 --sim h200 run --sms 16 -- "$probe" confined 16
    unset GREENCTX_PRELOAD_LIBRARY
    has "$err" "it is not greenctx's preload: it has no greenctx_preload_abi"
    not_started
    ;;
fault)
    # After a fault the program gets the driver's own error from every wrapped call, and the
    # fault stays, as on the H200 (700 is sticky: every later call of the process fails).
    need_sim
    need_python
    run 0 --sim h200 run --sms 16 --report "$report" -- "$probe" fault
    for call in cuCtxSetCurrent cuCtxPushCurrent cuCtxGetCurrent cuCtxPopCurrent \
        cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRelease; do
        has "$out" "$call -> 700"
    done
    has "$out" "cuCtxSetCurrent after -> 700"
    report_has 'r["complete"] is True' 'r["refused"]["unconfined_context"] == 0'
    ;;
next_wrapper)
    # A library after the preload in LD_PRELOAD that wraps execve and finds the next one with
    # dlsym(RTLD_NEXT): it gets the C library's (not itself), and the preload's release still
    # happens before it.
    need_sim
    LD_PRELOAD=$GREENCTX_TEST_NEXT_WRAPPER "$tool" --sim h200 run --sms 16 --no-inherit -- \
        "$probe" parent 16 execve confined 132 >"$out" 2>"$err"
    status=$?
    sed 's/^/  err| /' "$err"
    [ "$status" -eq 0 ] || fail "the run with a wrapping library after the preload exited $status"
    has "$err" "next_wrapper: execve"
    grep -q "found itself" "$err" && fail "dlsym(RTLD_NEXT) from the library found itself"
    ;;
sweep)
    need_sim
    need_python
    run 0 --sim h200 run --sweep 16,32,all -- "$probe" noop
    has "$out" "efficiency/SM"
    grep -Eq "^ +16 +16 " "$out" || fail "no row for 16 SMs"
    grep -Eq "^ +132 +all " "$out" || fail "no row for all 132 SMs"
    run 0 --sim h200 run --sweep 32,16,all --json --svg "$svg" -- "$probe" noop
    python3 - "$out" <<'PY' || fail "the sweep's JSON is not what it ran"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert [x["sm_count"] for x in runs] == [32, 16, 132], runs
assert [x["request"] for x in runs] == ["32", "16", "all"], runs
assert runs[1]["speedup"] == 1.0 and runs[1]["efficiency_per_sm"] == 1.0, runs
assert all(x["exit_status"] == 0 and x["wall_ms"] > 0 for x in runs), runs
r0 = runs[0]
assert abs(r0["efficiency_per_sm"] - r0["speedup"] * 16 / 32) < 1e-3, r0
assert d["device_sm_count"] == 132 and d["command"][-1] == "noop", d
print("sweep json ok")
PY
    has "$svg" "<svg"
    has "$svg" "polyline"
    # A run that fails makes the sweep fail, and says which.
    run 1 --sim h200 run --sweep 16 -- "$probe" confined 999
    has "$err" "a run failed"
    run 1 --sim h200 run --sweep 16,13 -- "$probe" noop
    has "$err" "13 SMs can't be claimed on this device"
    run 1 --sim h200 run --sweep 16,12 --shared -- "$probe" noop
    has "$err" "12 SMs: on this device groups are multiples of 8"
    # Sizes are whole: nothing runs on a typo.
    run 2 --sim h200 run --sweep '' -- "$probe" noop
    has "$err" "--sweep '': size 1 is empty"
    run 2 --sim h200 run --sweep 16,,32 -- "$probe" noop
    has "$err" "size 2 is empty"
    not_started
    run 2 --sim h200 run --sweep ' 16' -- "$probe" noop
    has "$err" "' 16' has white space"
    # A chart that can't be written: refused before the runs, or said as what it is.
    run 2 --sim h200 run --sweep 16 --svg "$copy/missing/x.svg" -- "$probe" noop
    has "$err" "--svg '$copy/missing/x.svg' can't be written"
    not_started
    run 1 --sim h200 run --sweep 16 --svg /dev/full -- "$probe" noop
    has "$err" "--svg '/dev/full' could not be written"
    grep -q "a run failed" "$err" && fail "a chart that failed was reported as a failed run"
    # A signal to the tool reaches the run, and stops the sweep (and the tool, by that signal).
    "$tool" --sim h200 run --sweep 16,32,64 -- "$probe" sleep 30 >"$out" 2>"$err" &
    pid=$!
    for _ in $(seq 100); do
        grep -q "on 16 of 132 SMs" "$err" && break
        sleep 0.1
    done
    sleep 0.5
    start=$(date +%s)
    kill -TERM "$pid"
    wait "$pid"
    status=$?
    [ "$status" -eq 143 ] || fail "the sweep ended with $status after SIGTERM, expected 143"
    [ $(($(date +%s) - start)) -lt 10 ] || fail "SIGTERM did not stop the sweep"
    has "$err" "the sweep was stopped by signal 15"
    # SIGCHLD ignored by whoever started the tool (daemons, CI runners): no hang.
    timeout 30 "$probe" sigchld_ignored "$tool" --sim h200 run --sweep 16,32 -- "$probe" noop \
        >"$out" 2>"$err"
    status=$?
    [ "$status" -eq 0 ] || fail "the sweep with SIGCHLD ignored exited $status: $(cat "$err")"
    ;;
sm_count)
    need_sim
    need_python
    # Without the preload the probe is told the whole device, 132 SMs, as under greenctx run
    # before issue 29 (then its grids of 132 blocks did not fit in a partition).
    GREENCTX_CUDA_LIBRARY=$GREENCTX_SIM_LIBRARY "$probe" persistent count >"$out" 2>&1
    has "$out" "count: cuDeviceGetAttribute 132,"
    # Told the claim's count, through cuGetProcAddress, the exported name and the SM resources,
    # it sizes a persistent grid (all resident) and a cooperative launch that fit; one block
    # more is refused (720).
    for size in 8 16 64 rest; do
        run 0 --sim h200 run --sms $size --report "$report" -- "$probe" persistent
        n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"][0]["sm_count"])' "$report")
        has "$out" "count: cuDeviceGetAttribute $n, exported $n, cuDeviceGetDevResource $n, cuCtxGetDevResource $n"
        has "$out" "case persistent: ok, $n blocks"
        has "$out" "case cooperative: ok, $n blocks"
        has "$out" "case too_large: ok, $((n + 1)) blocks of 200 KB (refused)"
        has "$err" "the program is told $n"
        report_has 'r["device_sms"] == "partition"' 'r["sm_count_shown_calls"] >= 4' \
            'r["devices"][0]["sm_count_shown"] == r["devices"][0]["sm_count"]'
    done
    # rest, with no other tenant: every granule (the 4 left over go alone, or with all)
    has "$out" "count: cuDeviceGetAttribute 128,"
    # --device-sms physical: the whole device's count, and grids sized by it do not fit.
    run 1 --sim h200 run --sms 16 --device-sms physical --report "$report" -- "$probe" persistent
    has "$out" "count: cuDeviceGetAttribute 132, exported 132, cuDeviceGetDevResource 132, cuCtxGetDevResource 132"
    has "$out" "FAIL case persistent: 132 blocks, only 16 resident at once"
    has "$out" "FAIL case cooperative: 132 blocks gave 720"
    has "$err" "16 of 132 SMs (claimed granules 0-1); the program is told 132"
    report_has 'r["device_sms"] == "physical"' 'r["sm_count_shown_calls"] == 0' \
        'r["devices"][0]["sm_count_shown"] == 132' 'r["devices"][0]["sm_count"] == 16'
    # Each device its own count; a device not confined keeps its own.
    run 0 --sim h200,a100 run --sms 0=16,1=8 -- "$probe" sm_counts
    has "$out" "device 0: cuDeviceGetAttribute 16, exported 16, cuDeviceGetDevResource 16"
    has "$out" "device 1: cuDeviceGetAttribute 8, exported 8, cuDeviceGetDevResource 8"
    run 0 --sim h200,a100 run --device 0 --sms 64 -- "$probe" sm_counts
    has "$out" "device 0: cuDeviceGetAttribute 64,"
    has "$out" "device 1: cuDeviceGetAttribute 108, exported 108, cuDeviceGetDevResource 108"
    # The preload alone: partition unless GREENCTX_RUN_DEVICE_SMS says physical; anything else
    # stops the program.
    preload_run 0 GREENCTX_RUN_SMS=16 "$probe" sm_counts
    has "$out" "device 0: cuDeviceGetAttribute 16,"
    preload_run 0 GREENCTX_RUN_SMS=16 GREENCTX_RUN_DEVICE_SMS=physical "$probe" sm_counts
    has "$out" "device 0: cuDeviceGetAttribute 132,"
    preload_run 125 GREENCTX_RUN_SMS=16 GREENCTX_RUN_DEVICE_SMS=phys "$probe" sm_counts
    has "$err" "GREENCTX_RUN_DEVICE_SMS='phys': use partition or physical"
    run 2 --sim h200 run --sms 16 --device-sms phys -- "$probe" sm_counts
    has "$err" "--device-sms takes partition or physical; got 'phys'"
    not_started
    ;;
usage)
    need_sim
    run 0 --sim h200 run --help
    has "$out" "usage: greenctx run"
    has "$out" "--device-sms MODE"
    run 2 --sim h200 run
    run 2 --sim h200 run --sms 16
    has "$err" "give the command to run"
    run 2 --sim h200 run --sms 16 --sweep 16,32 -- true
    run 2 --sim h200 run --sms 16 --json -- true
    run 2 --sim h200 run --sweep 16 --report x.json -- true
    run 2 --sim h200 run --device 0 --sms 0=16 -- true
    run 2 --sim h200 run --sms 16 --round sideways -- true
    run 2 --sim h200 run --sms 16x -- true
    has "$err" "'16x' is not a GROUP"
    run 2 --sim h200 run --sms 16 --frobnicate -- true
    run 2 --sim h200 run --sms 0=16,16 -- true
    # A request the preload would read cut is refused whole, as are spaces.
    run 2 --sim h200 run --sms "$(printf '0=16,%0600d' 0)" -- true
    has "$err" "the request is 605 bytes long; the preload takes at most 511"
    run 2 --sim h200 run --sms ' 16' -- true
    has "$err" "has white space"
    run 127 --sim h200 run --sms 16 -- "$copy/no-such-program"
    # The exit status is the program's; its own options are its own, after -- or not.
    run 2 --sim h200 run --sms 16 -- "$probe" no-such-case
    has "$err" "usage: run_probe"
    run 2 --sim h200 run --sms 16 "$probe" --device 3 --json
    has "$err" "usage: run_probe"
    ;;
installed)
    # The installed tool (TOOL) finds the installed preload and simulated driver beside it.
    need_sim
    ls "$(dirname "$tool")"/../lib*/greenctx/libgreenctx_preload.so ||
        fail "the preload was not installed in <libdir>/greenctx"
    unset GREENCTX_SIM_LIBRARY
    run 0 --sim h200 run --sms 16 -- "$probe" confined 16
    ;;
driver)
    # Whatever driver the tests use; on a GPU the probe's %smid kernel (default stream, own
    # streams, a graph, 5 threads) must see exactly the SMs the report's probe saw.
    need_python
    "$tool" info >/dev/null 2>&1 || { echo "no CUDA driver on this machine"; exit 77; }
    run 0 run --sms 16 --report "$report" -- "$probe" confined 16
    report_has 'r["devices"][0]["sm_count"] == 16' 'r["binds_redirected"] >= 12'
    python3 - "$report" "$out" <<'PY' || fail "the program ran outside the report's SMs"
import json, re, sys
r = json.load(open(sys.argv[1]))
ids = r["devices"][0]["sm_ids"]
lines = [l for l in open(sys.argv[2]) if re.search(r": \d+ SMs:", l)]
assert lines, "no observation"
for l in lines:
    seen = [int(x) for x in l.split("SMs:")[1].split()]
    if ids is not None:
        assert sorted(seen) == sorted(ids), (l, ids)
print(len(lines), "observations, every one on the partition")
PY
    # Told 16 SMs by the driver API, it sizes a cooperative launch that runs; one more block
    # is refused.
    run 0 run --sms 16 -- "$probe" persistent
    has "$out" "count: cuDeviceGetAttribute 16, exported 16, cuDeviceGetDevResource 16, cuCtxGetDevResource 16"
    has "$out" "case cooperative: ok"
    has "$out" "case too_large: ok"
    # Paced: a best-effort program of 20 ms kernels launched back to back, beside a latency
    # program over its target (3 ms steps, 1 ms asked), gets about its duty's share of the
    # time (level 5: its floor's, 7 %), not the whole GPU.
    "$tool" run --sms 16 --class latency:1ms -- "$probe" steps 20 3 >"$copy/latency" 2>&1 &
    latency=$!
    sleep 1
    run 0 run --sms rest --class best-effort -- "$probe" steps 6 0 20
    awk '$1 == "gpu_share" { ok = $2 > 0 && $2 < 0.25 } END { exit !ok }' "$out" ||
        fail "the paced program's kernels ran for more than its duty's share, or never"
    # The same kernels, each waited for (cuStreamSynchronize) before the next launch.
    run 0 run --sms rest --class best-effort -- "$probe" steps 4 1 20
    awk '$1 == "gpu_share" { ok = $2 > 0 && $2 < 0.25 } END { exit !ok }' "$out" ||
        fail "the paced program's kernels, each waited for, ran for more than its duty's share"
    kill $latency
    wait $latency
    # A copy hog (2 ms device-to-device copies back to back, as torch's copy_ makes them):
    # alone, then beside a latency program over its target, through cuMemcpyDtoDAsync_v2 by
    # its exported name and cuMemcpyAsync by cuGetProcAddress. Paced, it copies at under a
    # quarter of its rate alone (level 5: about 7 %).
    export GREENCTX_SIM_COPY_GBPS=0.1 # the simulated driver's copies take their time
    run 0 run --sms rest --class best-effort -- "$probe" copies 3 0 2
    alone=$(awk '$1 == "gpu_share" { print $2 }' "$out")
    "$tool" run --sms 16 --class latency:1ms -- "$probe" steps 12 3 >"$copy/latency" 2>&1 &
    latency=$!
    sleep 1
    for how in direct ""; do
        run 0 run --sms rest --class best-effort -- "$probe" copies 4 0 $how 2
        paced=$(awk '$1 == "gpu_share" { print $2 }' "$out")
        echo "copies ${how:-by cuGetProcAddress}: rate paced $paced, alone $alone"
        awk -v p="$paced" -v a="$alone" 'BEGIN { exit !(a > 0 && p > 0 && p < 0.25 * a) }' ||
            fail "paced copies (${how:-by cuGetProcAddress}) ran at $paced, alone at $alone"
    done
    kill $latency
    wait $latency
    unset GREENCTX_SIM_COPY_GBPS
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

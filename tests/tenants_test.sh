#!/bin/sh
# tenants_test.sh CASE TOOL PROBE FAKE_MPS_CONTROL: tenants on one GPU on the simulated driver:
# `greenctx run`'s claims (two runs get disjoint granules, a full GPU refuses naming the
# holders, --wait, --shared, a SIGKILLed holder frees its SMs), `greenctx ps` (text and
# JSON), `greenctx mps` with a fake control program (fake_mps_control.sh), the MPS refusals
# and a fault reported at exit. Each case has its own runtime directory (GREENCTX_RUNTIME_DIR)
# and MPS pipe directory, so nothing of the user's or another test's is seen.
. "$(dirname "$0")/tool_lib.sh"
probe=$3
fake_control=$4
work=$(mktemp -d)
export GREENCTX_RUNTIME_DIR="$work/runtime"
# No MPS daemon unless a case starts one: an empty pipe directory of this test's own.
export CUDA_MPS_PIPE_DIRECTORY="$work/no-mps"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
holders=""
cleanup() {
    for h in $holders; do touch "$work/$h/go"; done
    [ -f "$work/runtime/mps/pipe/fake-daemon.pid" ] &&
        kill "$(cat "$work/runtime/mps/pipe/fake-daemon.pid")" 2>/dev/null
    wait
    rm -rf "$out" "$err" "$work"
}
trap cleanup EXIT

[ -r "${GREENCTX_SIM_LIBRARY:-}" ] || {
    echo "needs the simulated driver (GREENCTX_SIM_LIBRARY: ${GREENCTX_SIM_LIBRARY:-unset})"
    exit 77
}
command -v python3 >/dev/null 2>&1 || {
    echo "python3 is not installed: the JSON can't be checked"
    exit 77
}

# wait_for FILE: up to 30 s (sanitizer builds start slowly).
wait_for() {
    i=0
    while [ ! -e "$1" ]; do
        i=$((i + 1))
        [ $i -gt 3000 ] && return 1
        sleep 0.01
    done
}
# hold NAME RUN-OPTIONS...: `greenctx --sim h200 run RUN-OPTIONS -- probe hold` in the
# background until `release NAME`; its pid (the program's, after exec) in $held.
hold() {
    name=$1
    shift
    mkdir -p "$work/$name"
    # The tool stays the program's parent (with --report it merges the report too);
    # HOLD_REPORT=0 runs it plainly.
    [ "${HOLD_REPORT:-1}" = 1 ] && set -- "$@" --report "$work/$name/report.json"
    "$tool" --sim h200 run "$@" -- "$probe" hold "$work/$name" \
        >"$work/$name/out" 2>"$work/$name/err" &
    held=$!
    echo "$held" >"$work/$name/pid"
    holders="$holders $name"
    wait_for "$work/$name/ready" || fail "$name did not start: $(cat "$work/$name/err")"
    echo "holder $name: pid $held; $(cat "$work/$name/err")"
}
# release NAME: lets it end; its exit status in $released.
release() {
    touch "$work/$1/go"
    wait "$(cat "$work/$1/pid")"
    released=$?
}
# ps_check PYTHON...: each expression holds for `greenctx ps --json` (d: the document, dev:
# device 0, claims: its claims by pid).
ps_check() {
    "$tool" --sim h200 ps --json >"$work/ps.json" 2>"$work/ps.err" || fail "ps --json failed"
    python3 -m json.tool "$work/ps.json" >/dev/null || fail "ps --json is not JSON"
    python3 - "$work/ps.json" "$@" <<'PY' || fail "ps --json: $(cat "$work/ps.json")"
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["devices"][0]
claims = {c["pid"]: c for c in dev["claims"]}
for e in sys.argv[2:]:
    assert eval(e), e
PY
}

# until_ps SECONDS PYTHON...: the expressions hold for `ps --json` within SECONDS.
until_ps() {
    limit=$(($1 * 10))
    shift
    i=0
    until "$tool" --sim h200 ps --json >"$work/ps.json" 2>"$work/ps.err" &&
        python3 - "$work/ps.json" "$@" <<'PY'
import json, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
claims = {c["pid"]: c for c in dev["claims"]}
sys.exit(0 if all(eval(e) for e in sys.argv[2:]) else 1)
PY
    do
        i=$((i + 1))
        [ $i -gt $limit ] && { fail "ps --json never had $*: $(cat "$work/ps.json")"; return 1; }
        sleep 0.1
    done
}
# tenant NAME RUN-OPTIONS... -- PROBE-ARGS: in the background; the tool's pid (the claim's)
# in $tool_pid, its program's in $program once it runs.
tenant() {
    name=$1
    shift
    "$tool" --sim h200 run "$@" >"$work/$name.out" 2>"$work/$name.err" &
    tool_pid=$!
    until_ps 30 "$tool_pid in claims" || return 1
    program=$(cat /proc/$tool_pid/task/$tool_pid/children 2>/dev/null)
}

case "$1" in
claims)
    hold a --sms 64 --label first
    a=$held
    has "$work/a/err" "greenctx run: device 0: 64 of 132 SMs (claimed granules"
    # Half each: a second 64 is held beside the first (16 granules of 8); rest takes the
    # 4 SMs left over, alone.
    hold b --sms 64
    b=$held
    has "$work/b/err" "greenctx run: device 0: 64 of 132 SMs (claimed granules 8-15)"
    hold r --sms rest
    has "$work/r/err" "greenctx run: device 0: 4 of 132 SMs (claimed granules 16)"
    release r
    # Both claims, as the registry has them while they run: disjoint.
    ps_check "set(claims) == {$a, $b}" \
        "claims[$a]['sm_count'] == 64 and claims[$b]['sm_count'] == 64" \
        "not set(claims[$a]['granules']) & set(claims[$b]['granules'])" \
        "claims[$a]['label'] == 'first' and claims[$b]['label'] is None" \
        "claims[$a]['command'].endswith('hold $work/a')" \
        "dev['free_sms'] == 4 and dev['claimable_sms'] == 0" \
        "sum(g['sm_count'] for g in dev['granules']) == 132" \
        "all(c['sm_ids'] is None for c in dev['claims'])"
    # A third is refused before it starts, naming the holders.
    run 1 --sim h200 run --sms 64 -- "$probe" noop
    has "$err" "$a"
    has "$err" "$b"
    has "$err" "--wait"
    has "$err" "--shared"
    has "$err" "the program was not started"
    # `all` means every SM: refused while anyone holds a claim.
    run 1 --sim h200 run --sms all -- "$probe" noop
    has "$err" "every SM"
    # --wait=1 gives up after a second.
    start=$(date +%s)
    run 1 --sim h200 run --sms 64 --wait=1 -- "$probe" noop
    [ $(($(date +%s) - start)) -ge 1 ] || fail "--wait=1 gave up before a second"
    # and says while it waits how long it may (not a silent second, nor a silent hour).
    has "$err" "greenctx run: device 0: --sms 64 is not free now; waiting for it up to 1 s"
    # --shared runs on SMs others may hold, and says so.
    run 0 --sim h200 run --sms 64 --shared -- "$probe" confined 64
    has "$err" "--shared: not claimed"
    # --wait (forever) runs once a holder ends.
    "$tool" --sim h200 run --sms 64 --wait -- "$probe" noop >"$work/waiter.out" 2>&1 &
    waiter=$!
    sleep 0.3
    kill -0 $waiter 2>/dev/null || fail "--wait did not wait: $(cat "$work/waiter.out")"
    release a
    [ "$released" -eq 0 ] || fail "holder a exited $released"
    wait $waiter || fail "--wait did not run once the SMs were free: $(cat "$work/waiter.out")"
    has "$work/waiter.out" "waiting for it as long as it takes (greenctx ps shows the holders; Ctrl-C gives up)"
    release b
    [ "$released" -eq 0 ] || fail "holder b exited $released"
    # Where each ran: the reports' SM ids are disjoint, and the claims' granules the ones ps saw.
    python3 - "$work/a/report.json" "$work/b/report.json" "$work/ps.json" <<'PY' ||
import json, sys
a, b = (json.load(open(f))["devices"][0] for f in sys.argv[1:3])
ps = {c["pid"]: c for c in json.load(open(sys.argv[3]))["devices"][0]["claims"]}
assert len(a["sm_ids"]) == 64 and len(b["sm_ids"]) == 64, (a, b)
assert not set(a["sm_ids"]) & set(b["sm_ids"]), (a["sm_ids"], b["sm_ids"])
assert sorted(c["granules"] for c in ps.values()) == sorted(
    [a["claim"]["granules"], b["claim"]["granules"]]), (ps, a, b)
print("disjoint SMs:", a["sm_ids"][:4], "...", b["sm_ids"][:4], "...")
PY
        fail "the two runs' SMs overlap or are not their claims"
    ps_check "dev['claims'] == []" "dev['free_sms'] == 132" \
        "[e['kind'] for e in dev['events']].count('died') == 0"
    ;;
killed)
    # The program (the tool's child; the tool, pid k, holds the claim) killed with SIGKILL:
    # the tool dies of it too, leaving the claim to be found stale, "died".
    HOLD_REPORT=0 hold k --sms 64
    k=$held
    hold l --sms rest
    run 1 --sim h200 run --sms 64 -- "$probe" noop
    program=$(cat /proc/$k/task/$k/children 2>/dev/null)
    [ -n "$program" ] || fail "no program under the tool $k"
    kill -9 $program
    wait "$k"
    [ $? -eq 137 ] || fail "the tool did not end as its program did (SIGKILL)"
    # Its SMs are free for the next run, and ps never shows it as a holder again.
    run 0 --sim h200 run --sms 64 -- "$probe" noop
    ps_check "$k not in claims" "len(claims) == 1" \
        "any(e['kind'] == 'died' and e['pid'] == $k for e in dev['events'])"
    run 0 --sim h200 ps
    grep -E "^ +$k " "$out" && fail "ps shows the killed holder $k as a claim"
    has "$out" "died"
    release l
    # Programs that end without using CUDA (a plain command, a wrapper around one): released,
    # never "died". (The probe's own modes: sanitizer builds' preload loads only into
    # instrumented programs.)
    run 0 --sim h200 run --sms 64 -- "$probe" env HOME
    run 0 --sim h200 run --sms 64 -- "$probe" spawn env HOME
    ps_check "dev['claims'] == []" \
        "[e['kind'] for e in dev['events']][-3:] == ['released', 'released', 'released']"
    ;;
ps)
    run 0 --sim h200 ps
    has "$out" "device 0: 132 of 132 SMs free (granules 0-16; --sms 128 can be claimed, rest takes them all)"
    has "$out" "no control daemon answers on $CUDA_MPS_PIPE_DIRECTORY"
    has "$out" "physical SM ids are not shown: under MPS %smid is renumbered per client"
    hold p --sms 16 --label "job 7$(printf '\033]0;title\007')"
    p=$held
    run 0 --sim h200 ps
    grep -E "^ +$p +[^ ]+ +16 " "$out" >/dev/null || fail "ps has no row for $p with 16 SMs"
    # A label's (another user's) terminal escapes are shown, never sent to the terminal.
    has "$out" 'job 7\x1b]0;title\x07'
    grep -q "$(printf '\033')" "$out" && fail "ps printed a raw escape"
    # The documented shape (docs/tenants.md).
    ps_check "set(d) == {'greenctx_version', 'schema', 'driver', 'mps', 'sm_ids_note', 'devices'}" \
        "d['driver'] is True" \
        "d['schema'] == 'greenctx.ps/1'" \
        "set(d['mps']) == {'daemon_running', 'pipe_dir', 'active_thread_percentage', 'pinned_mem_limit'}" \
        "d['mps']['daemon_running'] is False and d['mps']['pinned_mem_limit'] is None" \
        "set(dev) == {'device', 'uuid', 'registry', 'sm_count', 'free_sms', 'claimable_sms', 'granules', 'claims', 'events', 'processes', 'processes_note'}" \
        "dev['uuid'].startswith('GPU-') and dev['processes'] is None and 'NVML' in dev['processes_note']" \
        "set(dev['granules'][0]) == {'index', 'sm_count', 'free'}" \
        "set(claims[$p]) == {'pid', 'uid', 'user', 'command', 'label', 'sm_count', 'granules', 'since_ns', 'since', 'age_s', 'mps', 'self', 'sm_ids', 'tenant'}" \
        "claims[$p]['label'] == 'job 7\\x1b]0;title\\x07' and claims[$p]['self'] is False" \
        "0 <= claims[$p]['age_s'] < 60 and len(claims[$p]['since']) == 19" \
        "dev['free_sms'] == 116 and dev['claimable_sms'] == 112"
    release p
    run 0 --sim h200 ps --device 0 --json
    run 1 --sim h200 ps --device 3
    has "$err" "there is no device 3"
    run 2 --sim h200 ps extra
    run 0 ps --help
    has "$out" "usage: greenctx ps"
    ;;
mps)
    export GREENCTX_MPS_CONTROL="$fake_control"
    pipe="$GREENCTX_RUNTIME_DIR/mps/pipe"
    run 1 mps status
    has "$out" "no MPS control daemon answers on $pipe"
    run 1 mps stop
    has "$err" "nothing to stop"
    run 0 mps start
    has "$out" "export CUDA_MPS_PIPE_DIRECTORY='$pipe'"
    [ -p "$pipe/control" ] || fail "the daemon's control FIFO is not in $pipe"
    [ "$(stat -c %a "$GREENCTX_RUNTIME_DIR/mps")" = 700 ] || fail "the mps directory is not 0700"
    run 1 mps start
    has "$err" "already answers on $pipe"
    run 0 mps status
    has "$out" "your MPS control daemon runs"
    has "$out" "4242"
    run 0 mps status --json
    python3 - "$out" "$pipe" <<'PY' || fail "mps status --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["running"] is True and d["pipe_dir"] == sys.argv[2] and d["servers"] == ["4242"], d
PY
    # What clients need, for eval; then ps and run see the daemon.
    run 0 mps status --print-env
    eval "$(cat "$out")"
    [ "$CUDA_MPS_PIPE_DIRECTORY" = "$pipe" ] || fail "--print-env did not set the pipe directory"
    run 0 --sim h200 ps
    has "$out" "MPS: a control daemon answers on $pipe"
    run 0 --sim h200 run --sms 16 --memory 16G -- "$probe" env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
    has "$out" "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=16G"
    run 0 --sim h200,h200 run --sms 16 --memory 512M -- "$probe" env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
    has "$out" "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=512M,1=512M"
    run 2 --sim h200 run --sms 16 --memory lots -- true
    has "$err" "--memory takes a size"
    run 0 mps stop
    has "$out" "has stopped"
    run 1 mps status
    export CUDA_MPS_PIPE_DIRECTORY="$work/no-mps"
    # Without the control program: a clean refusal.
    export GREENCTX_MPS_CONTROL="$work/none"
    run 1 mps start
    has "$err" "GREENCTX_MPS_CONTROL names no executable file"
    export GREENCTX_MPS_CONTROL="$work"
    run 1 mps start
    has "$err" "GREENCTX_MPS_CONTROL names a directory, not the control program"
    # A runtime directory others can write (or another user's): its owner could swap the
    # pipe directory under the exported CUDA_MPS_PIPE_DIRECTORY.
    export GREENCTX_MPS_CONTROL="$fake_control"
    mkdir -m 0700 "$work/group-rt" && chmod 0770 "$work/group-rt"
    GREENCTX_RUNTIME_DIR="$work/group-rt" "$tool" mps start >"$out" 2>"$err" &&
        fail "mps start accepted a runtime directory others can write"
    has "$err" "is another user's, writable by others, or a link"
    [ -e "$work/group-rt/mps/pipe/control" ] && fail "mps start put its pipe in $work/group-rt"
    unset GREENCTX_MPS_CONTROL
    mkdir "$work/empty"
    env PATH="$work/empty" "$tool" mps start >"$out" 2>"$err" && fail "mps start ran with no control program"
    has "$err" "nvidia-cuda-mps-control is not on PATH"
    run 2 mps
    run 2 mps restart
    run 0 mps --help
    has "$out" "usage: greenctx mps"
    ;;
mps_refusals)
    # Another tenant and no MPS: said once, with the cost and the way out.
    hold t --sms 16
    run 0 --sim h200 run --sms 16 -- "$probe" noop
    has "$err" "time-sliced"
    has "$err" "greenctx mps start"
    [ "$(grep -c "time-sliced" "$err")" -eq 1 ] || fail "the MPS warning was printed more than once"
    release t
    run 0 --sim h200 run --sms 16 -- "$probe" noop
    grep -q "time-sliced" "$err" && fail "the MPS warning without another tenant"
    run 2 --sim h200 run --sms 16 --memory 16G -- "$probe" noop
    has "$err" "no MPS control daemon answers on $CUDA_MPS_PIPE_DIRECTORY"
    has "$err" "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
    [ -s "$out" ] && fail "the program ran"
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
    run 2 --sim h200 run --sms 16 -- "$probe" noop
    has "$err" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 is refused"
    has "$err" "green splits"
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100
    run 0 --sim h200 run --sms 16 -- "$probe" noop
    unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
    ;;
fault)
    # A holder that dies, then a tenant whose context faults: at exit the preload reports
    # the fault, naming the tenant the registry saw die first; the program's status is its own.
    hold first --sms 16
    first=$held
    export GREENCTX_SIM_FAIL=cuStreamQuery:1:700
    hold second --sms 16
    unset GREENCTX_SIM_FAIL
    kill -9 "$first"
    wait "$first"
    run 0 --sim h200 ps
    release second
    [ "$released" -eq 0 ] || fail "the faulted program's exit status changed to $released"
    has "$work/second/err" "700"
    cat "$work/second/err"
    has "$work/second/err" "$first"
    ps_check "any(e['kind'] == 'fault' and e['cuda_result'] == 700 for e in dev['events'])"
    run 0 --sim h200 ps
    has "$out" "fault"
    # Every CUresult the library holds sticky, 721 (a kernel left tensor memory) too.
    # (Not through env(1): a sanitizer build's preload can't load there.)
    export GREENCTX_SIM_FAIL=cuStreamQuery:1:721
    run 0 --sim h200 run --sms 16 -- "$probe" noop
    unset GREENCTX_SIM_FAIL
    has "$err" "721"
    ps_check "any(e['kind'] == 'fault' and e['cuda_result'] == 721 for e in dev['events'])"
    ;;
closefrom)
    # A program that closes the descriptors it inherited (closefrom(3)) after its first CUDA
    # call closes its claim's lock: the claim is gone from then on, as if it had ended, and
    # greenctx run says so at its exit.
    run 0 --sim h200 run --sms 64 -- "$probe" closefrom
    has "$err" "was closed by the program"
    ps_check "dev['claims'] == []"
    ;;
removed)
    # A claim file removed from the registry while its program runs (rm, a /var/tmp cleaner):
    # greenctx run tells the user within a couple of seconds, once, and the program runs on.
    hold a --sms 16
    set -- "$GREENCTX_RUNTIME_DIR"/gpu-*/claim-*
    [ -f "$1" ] || fail "no claim file in $GREENCTX_RUNTIME_DIR"
    rm -f "$1"
    i=0
    until grep -q "was removed from the registry" "$work/a/err"; do
        i=$((i + 1))
        [ $i -gt 500 ] && break
        sleep 0.01
    done
    has "$work/a/err" "another tenant may be given them while this program runs"
    sleep 1.2
    [ "$(grep -c 'was removed from the registry' "$work/a/err")" = 1 ] ||
        fail "the removal was not said once: $(cat "$work/a/err")"
    release a
    [ "$released" -eq 0 ] || fail "the program exited $released"
    ;;
sweep)
    hold s --sms 64
    run 0 --sim h200 run --sweep 16,32 -- "$probe" noop
    has "$err" "on 16 of 132 SMs (claimed granules"
    # Without MPS, the other tenant is named once per run, not once per size.
    [ "$(grep -c 'another tenant holds SMs' "$err")" = 1 ] ||
        fail "the warning without MPS was not said once: $(cat "$err")"
    run 1 --sim h200 run --sweep 16,72 -- "$probe" noop
    has "$err" "--wait"
    release s
    ps_check "dev['claims'] == []"
    ;;
classes)
    # --class: recorded in the claim, shown by ps (text and JSON); a bad one refused.
    run 2 --sim h200 run --sms 16 --class latency:fast -- "$probe" noop
    has "$err" "--class takes latency[:2.5ms|:1.1x] or best-effort; got 'latency:fast'"
    run 2 --sim h200 run --sms 16 --class latency:0.9x -- "$probe" noop
    run 2 --sim h200 run --shared --sms 16 --class best-effort -- "$probe" noop
    has "$err" "--shared takes no claim: --wait, --label and --class go with a claim"
    hold l --sms 16 --class latency:2.5ms
    l=$held
    hold b --sms rest --class best-effort
    b=$held
    ps_check "claims[$l]['tenant']['class'] == 'latency'" \
        "claims[$l]['tenant']['target_ms'] == 2.5 and claims[$l]['tenant']['step_ms'] == 0" \
        "claims[$b]['tenant']['class'] == 'best-effort'" \
        "claims[$b]['tenant']['guard_level'] == 0"
    "$tool" --sim h200 ps >"$out" 2>"$err" || fail "ps failed"
    has "$out" "latency, target 2.50 ms: no step reported yet"
    has "$out" "best-effort: nothing held back"
    release b
    release l
    run 0 --sim h200 run --sms 16 --class latency -- "$probe" noop
    ps_check "dev['claims'] == []"
    ;;
pacing)
    # The guard of unmodified programs (greenctx run --class): a latency program's steps are
    # sampled at its waits (3 ms steps over a 1 ms target), a best-effort program is paced
    # while they are over target, and everything comes back when the latency program dies.
    # A program that runs no guard makes no driver call for it, and its launches call the
    # driver's own function: pacing off costs nothing.
    run 0 --sim h200 run --sms 16 -- "$probe" steps 0.5 0
    has "$out" "event_records 0 event_waits 0"
    has "$out" "launch in $(basename "$GREENCTX_SIM_LIBRARY")"
    # The latency program's waits by cuGetProcAddress, the hog's launches by their exported
    # names (as -lcuda binds them); the other way round below.
    tenant latency --sms 16 --class latency:1ms -- "$probe" steps 60 3
    l=$tool_pid l_program=$program
    tenant hog --sms rest --class best-effort -- "$probe" steps 8 0 direct
    b=$tool_pid
    until_ps 30 "claims[$l]['tenant']['step_ms'] >= 2.5" \
        "claims[$b]['tenant']['paced'] and claims[$b]['tenant']['guard_level'] == 5" \
        "claims[$b]['tenant']['guard_reason'] == 'steps'" \
        "claims[$b]['tenant']['max_outstanding'] == 1" \
        "0 < claims[$b]['tenant']['duty_permille'] < 1000" \
        "claims[$b]['tenant']['held_ms'] > 0"
    run 0 --sim h200 ps
    has "$out" "best-effort, paced: held to 1 launch in flight and 7% of the time (guard level 5, steps); its launches waited"
    has "$out" "latency, target 1.00 ms: p99 step "
    # The latency program dies: within the guard's idle window (25 ms) and a look, the hog
    # has everything back.
    kill -9 $l_program
    wait $l
    until_ps 5 "$l not in claims" "claims[$b]['tenant']['guard_level'] == 0" \
        "claims[$b]['tenant']['max_outstanding'] == 0" \
        "claims[$b]['tenant']['duty_permille'] == 1000"
    wait $b || fail "the paced program failed: $(cat "$work/hog.err")"
    # Held back, never starved: it ran, and its waits were on the events of its own launches.
    grep -E "^launches [1-9][0-9]* event_records [1-9][0-9]* event_waits [1-9]" "$work/hog.out" \
        >/dev/null || fail "the paced program: $(cat "$work/hog.out")"
    # NVML's signal through the paced program's guard (a stand-in NVML: the SM clock at 1450 of
    # 1980 MHz, held by the power cap): the reason it holds the hog back is the power cap.
    tenant latency_p --sms 16 --class latency:1ms -- "$probe" steps 60 3
    l=$tool_pid l_program=$program
    export GREENCTX_NVML_LIBRARY="$GREENCTX_TEST_FAKE_NVML" FAKE_NVML_SM_CLOCK=1450 \
        FAKE_NVML_MAX_CLOCK=1980 FAKE_NVML_REASONS=0x4 FAKE_NVML_MEMORY=40
    tenant hog_p --sms rest --class best-effort -- "$probe" steps 60 0
    b=$tool_pid b_program=$program
    unset GREENCTX_NVML_LIBRARY FAKE_NVML_SM_CLOCK FAKE_NVML_MAX_CLOCK FAKE_NVML_REASONS \
        FAKE_NVML_MEMORY
    until_ps 30 "claims[$b]['tenant']['guard_level'] >= 1" \
        "claims[$b]['tenant']['guard_reason'] == 'power'"
    kill -9 $b_program $l_program
    wait $b
    wait $l
    # A best-effort program killed while paced: its claim, its line and its pace go with it.
    tenant latency2 --sms 16 --class latency:1ms -- "$probe" steps 60 3 direct
    l=$tool_pid l_program=$program
    tenant hog2 --sms rest --class best-effort -- "$probe" steps 60 0
    b=$tool_pid b_program=$program
    until_ps 30 "claims[$b]['tenant']['guard_level'] >= 2"
    kill -9 $b_program
    wait $b
    until_ps 5 "$b not in claims" \
        "any(e['kind'] == 'died' and e['pid'] == $b for e in dev['events'])"
    ls "$GREENCTX_RUNTIME_DIR"/gpu-*/ | grep "state-claim-$b-" && fail "the killed hog's line stayed"
    # A line's temporary file that a killed writer left (as the hog may at any of its writes)
    # goes at the next listing once it is a minute old; a live writer's stays, and so does a
    # fresh one whose pid this process doesn't see (a writer in another pid namespace).
    sh -c true &
    dead=$!
    wait $dead
    registry=$(echo "$GREENCTX_RUNTIME_DIR"/gpu-*)
    touch "$registry/.tmp-state-claim-$b-0-$dead-2"
    touch -d '-2 minutes' "$registry/.tmp-state-claim-$b-0-$dead-1" \
        "$registry/.tmp-state-claim-$$-0-$$-1"
    run 0 --sim h200 ps
    [ -e "$registry/.tmp-state-claim-$b-0-$dead-1" ] && fail "a dead writer's temporary file stayed"
    [ -e "$registry/.tmp-state-claim-$b-0-$dead-2" ] ||
        fail "a fresh temporary file of a pid not seen here (another pid namespace) went"
    [ -e "$registry/.tmp-state-claim-$$-0-$$-1" ] || fail "a live writer's temporary file went"
    rm -f "$registry/.tmp-state-claim-$$-0-$$-1" "$registry/.tmp-state-claim-$b-0-$dead-2"
    # The next best-effort program starts from nothing held back.
    kill -9 $l_program
    wait $l
    run 0 --sim h200 run --sms rest --class best-effort -- "$probe" steps 0.5 0
    has "$out" "event_records 0 event_waits 0"
    has "$out" "launch in libgreenctx_preload.so"
    ;;
paced_kernels)
    # A best-effort program whose kernels run 20 ms each (two periods of its duty cycle),
    # launched back to back, held by the guard at level 5 (one launch in flight, 7 % of the
    # time): each launch comes a period or more after the last one's, while that one still
    # runs. The GPU rests all the same: it runs the program's kernels for about the duty's
    # share of the time, not all of it. Its launches are what cuGetProcAddress's flags 0
    # gave, here the per-thread default stream's: the pace's marker events go to that
    # stream too, never to the legacy one (which would make the program's streams wait).
    tenant latency --sms 16 --class latency:1ms -- "$probe" steps 60 3
    l=$tool_pid l_program=$program
    # Over its target before the hog starts: the hog's first launches (to its first wait, 200
    # ms of work) go before its guard says anything, the next ones are held.
    until_ps 30 "claims[$l]['tenant']['step_ms'] >= 2.5"
    export GREENCTX_SIM_DEFAULT_STREAM=per-thread
    tenant hog --sms rest --class best-effort -- "$probe" steps 6 0 20
    b=$tool_pid
    unset GREENCTX_SIM_DEFAULT_STREAM
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5" \
        "0 < claims[$b]['tenant']['duty_permille'] < 100"
    wait $b || fail "the paced program failed: $(cat "$work/hog.err")"
    cat "$work/hog.out"
    awk '$1 == "gpu_share" { ok = $2 > 0 && $2 < 0.25 } END { exit !ok }' "$work/hog.out" ||
        fail "the GPU ran the paced program's kernels for more than its duty's share, or never"
    grep -E "^launches legacy 0 per_thread [1-9][0-9]*, event_records legacy 0 per_thread [1-9]" \
        "$work/hog.out" >/dev/null || fail "the pace's events went to another stream than its launches"
    # The same kernels, each waited for by the program (1 ms of host work, then
    # cuStreamSynchronize) before it launches the next: nothing is in flight at a launch, yet
    # the GPU was busy from the period's start to the program's wait, and it rests all the same.
    tenant hog_w --sms rest --class best-effort -- "$probe" steps 6 1 20
    b=$tool_pid
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5"
    wait $b || fail "the paced program failed: $(cat "$work/hog_w.err")"
    cat "$work/hog_w.out"
    awk '$1 == "gpu_share" { ok = $2 > 0 && $2 < 0.25 } END { exit !ok }' "$work/hog_w.out" ||
        fail "the GPU ran the kernels the paced program waited for for more than its duty's share"
    # The guard lets go (the latency program dies) and holds the program again a second later
    # (another one over its target, at the last burst's level): its pace starts afresh, never
    # resting for the second it ran free (14 s at 7 %): it ends on time.
    start=$(date +%s)
    tenant hog_a --sms rest --class best-effort -- "$probe" steps 6 1 20
    b=$tool_pid
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5"
    kill -9 $l_program
    wait $l
    until_ps 5 "claims[$b]['tenant']['guard_level'] == 0"
    sleep 1
    tenant latency_a --sms 16 --class latency:1ms -- "$probe" steps 60 3
    l=$tool_pid l_program=$program
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5"
    wait $b || fail "the paced program failed: $(cat "$work/hog_a.err")"
    ran=$(($(date +%s) - start))
    echo "hog_a ran $ran s of its 6"
    [ $ran -le 12 ] ||
        fail "held again after the guard let go, the program rested for the time it ran free"
    kill -9 $l_program
    wait $l
    ;;
paced_copies)
    # A best-effort program that only copies device to device (as torch's copy_ and
    # cudaMemcpyAsync reach the driver), 20 ms a copy, back to back, is paced at level 5 as
    # kernels are: the GPU copies for about its duty's share of the time, its copies are held
    # back (held_ms), and it has the full rate back once the latency program dies.
    export GREENCTX_SIM_COPY_GBPS=0.1
    tenant latency --sms 16 --class latency:1ms -- "$probe" steps 60 3
    l=$tool_pid l_program=$program
    until_ps 30 "claims[$l]['tenant']['step_ms'] >= 2.5"
    # cuMemcpyDtoDAsync_v2 by its exported name.
    tenant hog --sms rest --class best-effort -- "$probe" copies 6 0 direct 20
    b=$tool_pid
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5" \
        "0 < claims[$b]['tenant']['duty_permille'] < 100" "claims[$b]['tenant']['held_ms'] > 0"
    wait $b || fail "the paced program failed: $(cat "$work/hog.err")"
    cat "$work/hog.out"
    has "$work/hog.out" "launch in libgreenctx_preload.so"
    awk '$1 == "gpu_share" { ok = $2 > 0 && $2 < 0.25 } END { exit !ok }' "$work/hog.out" ||
        fail "the GPU ran the paced program's copies for more than its duty's share, or never"
    # cuMemcpyAsync through cuGetProcAddress's flags 0, here the per-thread default stream's:
    # held back too, the pace's events on that stream. Paced in its first half; the latency
    # program dies and the second half runs at the full rate.
    export GREENCTX_SIM_DEFAULT_STREAM=per-thread
    tenant hog_f --sms rest --class best-effort -- "$probe" copies 8 0 20
    b=$tool_pid
    unset GREENCTX_SIM_DEFAULT_STREAM
    until_ps 30 "claims[$b]['tenant']['guard_level'] == 5" "claims[$b]['tenant']['held_ms'] > 0"
    kill -9 $l_program
    wait $l
    until_ps 5 "claims[$b]['tenant']['guard_level'] == 0" \
        "claims[$b]['tenant']['duty_permille'] == 1000"
    wait $b || fail "the paced program failed: $(cat "$work/hog_f.err")"
    cat "$work/hog_f.out"
    has "$work/hog_f.out" "launch in libgreenctx_preload.so"
    grep -E "event_records legacy 0 per_thread [1-9]" "$work/hog_f.out" >/dev/null ||
        fail "the pace's events went to another stream than its copies"
    awk '$1 == "gpu_share" { ok = $2 > 0.8 } END { exit !ok }' "$work/hog_f.out" ||
        fail "the copies did not get their full rate back once the latency program died"
    unset GREENCTX_SIM_COPY_GBPS
    ;;
structured)
    # The default granules (tests/tenants.cmake clears GREENCTX_CLAIM_GRANULES): structured,
    # coarsened to 8 of 16 and 4 over on an H200: 8 is refused and names fine, a count never
    # takes the 4 (plan refuses 116 too), half each fits, rest takes the 4 with the rest.
    run 1 --sim h200 run --sms 8 -- "$probe" noop
    has "$err" "the nearest count that can be claimed is 16 (or ask with rounding down, nearest or up); GREENCTX_CLAIM_GRANULES=fine claims 8, with thread-block clusters of up to 2 SMs"
    run 1 --sim h200 run --sms 116 -- "$probe" noop
    has "$err" "(multiples of 16 up to 128; the 4 SMs left over go with \"rest\"); the nearest counts that can be claimed are 112 and 128"
    run 0 --sim h200 run --sms 16 -- "$probe" confined 16
    has "$err" "16 of 132 SMs (claimed granules 0)"
    hold a --sms 64
    has "$work/a/err" "greenctx run: device 0: 64 of 132 SMs (claimed granules 0-3)"
    run 0 --sim h200 run --sms 64 -- "$probe" confined 64
    has "$err" "64 of 132 SMs (claimed granules 4-7)"
    hold r --sms rest
    has "$work/r/err" "68 of 132 SMs (claimed granules 4-8)"
    # The other mode is refused while these claims live, naming the variable and the mode.
    GREENCTX_CLAIM_GRANULES=fine run 1 --sim h200 run --sms 8 -- "$probe" noop
    has "$err" "its claims are over GREENCTX_CLAIM_GRANULES=structured granules, this process's over fine: run it with GREENCTX_CLAIM_GRANULES=structured"
    release r
    release a
    # 16 and the rest: 116, the hog of bench tenants.
    hold v --sms 16
    hold h --sms rest
    has "$work/h/err" "116 of 132 SMs"
    ps_check "sum(c['sm_count'] for c in dev['claims']) == 132"
    release h
    release v
    # Once empty, the registry is rebuilt in the mode asked: fine, 8 SMs.
    GREENCTX_CLAIM_GRANULES=fine hold f --sms 8
    GREENCTX_CLAIM_GRANULES=fine run 0 --sim h200 run --sms 8 -- "$probe" confined 8
    release f
    GREENCTX_CLAIM_GRANULES=finer run 1 --sim h200 run --sms 8 -- "$probe" noop
    has "$err" "GREENCTX_CLAIM_GRANULES='finer' is neither 'structured' (the default"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

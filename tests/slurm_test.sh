#!/usr/bin/env bash
# slurm_test.sh WORKDIR PLUGIN PRELOAD SIM TOOL PROBE: greenctx_spank.so in a real single-node
# Slurm (Debian's slurmctld, slurmd, srun and munge), started here on 127.0.0.1 with a
# generated slurm.conf, every state, log and spool directory under WORKDIR, and stopped at the
# end whatever happens. Jobs run on the simulated H200 (GREENCTX_CUDA_LIBRARY=SIM, passed to
# them by srun --export=ALL); PROBE is run_probe, TOOL `greenctx` (its `ps` reads the claims).
# Exit 77 only where Slurm is not installed or can't be started here (not root, ...).
# GREENCTX_TEST_NO_MKNOD=1 runs it as where no stand-in GPU device file can be made (no GRES).
set -u
work=$1 plugin=$2 preload=$3 sim=$4 tool=$5 probe=$6

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root (it does in CI); run this test as root"
for cmd in munged mungekey slurmctld slurmd srun sbatch scancel squeue sinfo python3; do
    command -v "$cmd" >/dev/null 2>&1 ||
        skip "$cmd is not installed (Debian: apt-get install munge slurmctld slurmd slurm-client)"
done

failures=0
ok() { echo "ok - $1"; }
not_ok() {
    echo "not ok - $1: $2"
    failures=$((failures + 1))
}

# ---- the cluster -----------------------------------------------------------------------------

# Daemons a run of this test started (their pid files are under WORKDIR), checked by name so
# that a pid reused since is never touched.
stop_daemon() {
    local pidfile=$1 name=$2 pid
    [ -r "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ]; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$pidfile"
}
stop_cluster() {
    if [ -r "$work/slurmctld.pid" ] && [ -n "${SLURM_CONF:-}" ]; then
        local jobs
        jobs=$(timeout 5 squeue -h -o %i 2>/dev/null)
        # shellcheck disable=SC2086
        [ -n "$jobs" ] && timeout 5 scancel $jobs
        for _ in $(seq 50); do
            [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    touch "$work"/hold-*/go 2>/dev/null
    stop_daemon "$work/slurmd.pid" slurmd
    stop_daemon "$work/slurmctld.pid" slurmctld
    stop_daemon "$work/munge/munged.pid" munged
    [ -n "${sockets:-}" ] && [ "$sockets" != "$work/run" ] && rm -rf "$sockets"
}
stop_cluster # a run killed before its trap ran (a CTest timeout) left its daemons
trap stop_cluster EXIT
trap 'exit 1' INT TERM

rm -rf "$work"
mkdir -p "$work"/{munge,state,spool/gctxnode,log,dev,claims} || exit 1
chmod 700 "$work/munge"
# Every tenant of the node, whatever its user, shares the claims: a sticky directory.
chmod 1777 "$work/claims"
# Unix sockets (munge's, slurmstepd's) have room for 107 bytes of path.
sockets=$work/run
if [ ${#sockets} -gt 60 ]; then
    sockets=$(mktemp -d /tmp/greenctx-slurm.XXXXXX) || exit 1
else
    mkdir -p "$sockets"
fi
mkdir -p "$sockets/spool"

start_failed() {
    echo "--- $1 failed; the logs:"
    tail -n 20 "$work"/log/* 2>/dev/null
    skip "Slurm could not be started here: $1"
}
mungekey -c -k "$work/munge/munge.key" -b 1024 -f 2>/dev/null || start_failed "mungekey"
chmod 600 "$work/munge/munge.key"
munged -f --key-file="$work/munge/munge.key" --socket="$sockets/munge.socket" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge/seed" || start_failed "munged"

ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))') || start_failed "finding free ports"
read -r ctld_port slurmd_port <<<"$ports"
# The GPU Slurm hands out: a device file named like the driver's (a character device, as
# slurmd insists), so that the gpu and shard GRES set CUDA_VISIBLE_DEVICES; shards let several
# jobs onto the one GPU. Where no device file can be made (a container without CAP_MKNOD),
# there are no GRES (shards need a device file): jobs share the node, the plugin divides the
# GPU all the same, and Slurm sets no CUDA_VISIBLE_DEVICES.
gres_types="GresTypes=gpu,shard" node_gres="Gres=gpu:1,shard:8" gres="--gres=shard:1" visible=0
if [ -n "${GREENCTX_TEST_NO_MKNOD:-}" ] || ! mknod "$work/dev/nvidia0" c 1 3 2>/dev/null; then
    echo "# no device file could be made here: no GRES, and no CUDA_VISIBLE_DEVICES from Slurm"
    gres_types="" node_gres="" gres="" visible=""
fi
host=$(hostname -s 2>/dev/null || uname -n)
cat >"$work/slurm.conf" <<EOF
ClusterName=greenctx
SlurmctldHost=${host%%.*}(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sockets/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$sockets/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmdDebug=verbose
MailProg=/bin/true
MessageTimeout=5
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
PlugStackConfig=$work/plugstack.conf
$gres_types
NodeName=gctxnode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 $node_gres State=UNKNOWN
PartitionName=debug Nodes=gctxnode Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
if [ -n "$gres" ]; then
    cat >"$work/gres.conf" <<EOF
NodeName=gctxnode Name=gpu File=$work/dev/nvidia0
NodeName=gctxnode Name=shard Count=8 File=$work/dev/nvidia0
EOF
fi
plugstack() { echo "required $plugin runtime_dir=$work/claims preload=$preload $*" >"$work/plugstack.conf"; }
plugstack
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF" -i || start_failed "slurmctld"
slurmd -f "$SLURM_CONF" -N gctxnode || start_failed "slurmd"
for i in $(seq 100); do
    timeout 3 sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    [ "$i" -eq 100 ] && start_failed "waiting for the node to be idle"
    sleep 0.2
done
echo "# Slurm $(slurmd -V | cut -d' ' -f2) on 127.0.0.1:$ctld_port, node gctxnode idle"

# ---- helpers ---------------------------------------------------------------------------------

# What jobs see: the simulated H200, nothing of greenctx run's from this environment.
unset LD_PRELOAD GREENCTX_RUNTIME_DIR GREENCTX_RUNTIME_SHARED
for v in $(env | sed -n 's/^\(GREENCTX_RUN_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export GREENCTX_CUDA_LIBRARY=$sim GREENCTX_SIM_DEVICES=h200

# job NAME SRUN-ARGS...: srun, its output in $work/NAME.out and .err; the status in $status.
job() {
    local name=$1
    shift
    timeout 60 srun --export=ALL "$@" >"$work/$name.out" 2>"$work/$name.err"
    status=$?
}
show() {
    sed 's/^/  out| /' "$work/$1.out"
    sed 's/^/  err| /' "$work/$1.err"
}
has() { grep -qF -- "$2" "$work/$1"; }
# verdict STATUS WHAT [JOB...]: ok WHAT when STATUS is 0, else not ok, with the jobs' output.
verdict() {
    local rc=$1 what=$2
    shift 2
    if [ "$rc" -eq 0 ]; then
        ok "$what"
        return
    fi
    not_ok "$what" "the last job's status: $status"
    for name; do show "$name"; done
}
# parts NAME: a directory for the report parts of job NAME's processes (GREENCTX_RUN_REPORT_DIR:
# each process that uses CUDA writes its own); report NAME: the one part, as $work/NAME.json.
parts() { mkdir -p "$work/$1.parts" && echo "$work/$1.parts"; }
report() { cat "$work/$1.parts"/*.part >"$work/$1.json" 2>/dev/null; }
# The claims as `greenctx ps --json` shows them, into $work/ps.json.
ps_json() {
    GREENCTX_RUNTIME_DIR=$work/claims GREENCTX_RUNTIME_SHARED=1 "$tool" ps --json \
        >"$work/ps.json" 2>"$work/ps.err"
}
# json FILE PYTHON-EXPRESSION...: each holds for the JSON in FILE (d), else prints which not.
json() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    if not eval(e):
        print("  false:", e)
        sys.exit(1)
PY
}
free_all() { ps_json && json "$work/ps.json" 'd["devices"][0]["free_sms"] == 132' \
    'd["devices"][0]["claims"] == []'; }
# The label the plugin printed for the task: "slurm 12.0".
label_of() { sed -n 's/^greenctx: \(slurm [0-9.a-z]*\): GPU 0: .*/\1/p' "$work/$1.err" | head -n 1; }
# The label of a job still running: srun relays its task's stderr a moment after the task
# has gone on (its ready file can come first).
label_said() {
    for _ in $(seq 100); do
        local label
        label=$(label_of "$1")
        [ -n "$label" ] && { echo "$label"; return; }
        sleep 0.1
    done
}
wait_for() {
    for _ in $(seq 200); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# ---- the cases -------------------------------------------------------------------------------

# Without --gpu-sms a job runs as it would without the plugin: no preload, no claim.
job plain sh -c 'env; '"$probe"' confined 132'
[ "$status" -eq 0 ] && ! has plain.out "LD_PRELOAD=" && ! has plain.out "GREENCTX_RUN_" &&
    has plain.out "main thread, default stream: 132 SMs" && ! has plain.err "greenctx" && free_all
verdict $? "a job without --gpu-sms runs unconfined, with nothing claimed" plain

# --gpu-sms=16 on a shard of the GPU: Slurm sets CUDA_VISIBLE_DEVICES, the task gets the
# preload's variables and its work runs on 16 SMs of its claim, which is gone once the step is.
job env $gres --gpu-sms=16 sh -c 'echo "visible=$CUDA_VISIBLE_DEVICES sms=$GREENCTX_RUN_SMS claim=$GREENCTX_RUN_CLAIM preload=$LD_PRELOAD"'
[ "$status" -eq 0 ] && has env.out "visible=$visible sms=16 claim=0=v1:$work/claims/gpu-GPU-" &&
    has env.out "preload=$preload"
verdict $? "the task gets greenctx run's variables, its claim's token for GPU 0" env
GREENCTX_RUN_REPORT_DIR=$(parts confined) job confined $gres --gpu-sms=16 "$probe" confined 16
report confined
label=$(label_of confined)
[ "$status" -eq 0 ] && [ -n "$label" ] &&
    has confined.err "GPU 0: 16 of 132 SMs (claimed granules " &&
    has confined.out "one of 4 threads: 16 SMs" &&
    json "$work/confined.json" 'd["devices"][0]["sm_count"] == 16' \
        'len(d["devices"][0]["sm_ids"]) == 16' 'd["devices"][0]["claim"]["sm_count"] == 16' &&
    free_all
verdict $? "srun --gpu-sms=16 confines the task to 16 SMs of its claim ($label), released at its end" confined
# The task is told its claim's SM count, as under greenctx run; --gpu-device-sms=physical
# tells it the whole GPU's.
job told $gres --gpu-sms=16 "$probe" sm_counts
[ "$status" -eq 0 ] && has told.out "device 0: cuDeviceGetAttribute 16, exported 16, cuDeviceGetDevResource 16"
verdict $? "srun --gpu-sms=16: the task is told 16 SMs" told
job told_physical $gres --gpu-sms=16 --gpu-device-sms=physical "$probe" sm_counts
[ "$status" -eq 0 ] && has told_physical.out "device 0: cuDeviceGetAttribute 132, exported 132, cuDeviceGetDevResource 132"
verdict $? "srun --gpu-sms=16 --gpu-device-sms=physical: the task is told 132 SMs" told_physical

# Two jobs at once on the one GPU: disjoint SMs, each claim named by its job step in
# `greenctx ps`; a third that does not fit is refused naming the holders, or waits. (Half
# each: the H200's claim granules are the planner's, 16 of 8 SMs and 4 left over, so two 64s
# are made of them and leave the 4, which --gpu-sms=rest takes.)
mkdir -p "$work"/hold-{a,b}
GREENCTX_RUN_REPORT_DIR=$(parts a) job a $gres --gpu-sms=64 "$probe" hold "$work/hold-a" &
pid_a=$!
GREENCTX_RUN_REPORT_DIR=$(parts b) job b $gres --gpu-sms=64 "$probe" hold "$work/hold-b" &
pid_b=$!
if wait_for "$work/hold-a/ready" && wait_for "$work/hold-b/ready"; then
    label_a=$(label_said a) label_b=$(label_said b)
    if ps_json && json "$work/ps.json" 'len(d["devices"][0]["claims"]) == 2' \
        'd["devices"][0]["free_sms"] == 4' \
        "sorted(c['label'] for c in d['devices'][0]['claims']) == sorted(['$label_a', '$label_b'])" \
        'all(c["sm_count"] == 64 for c in d["devices"][0]["claims"])' \
        'not set(d["devices"][0]["claims"][0]["granules"]) & set(d["devices"][0]["claims"][1]["granules"])' \
        'all("run_probe hold" in c["command"] for c in d["devices"][0]["claims"])'; then
        ok "two jobs hold 64 SMs each, disjoint granules; greenctx ps names them ($label_a, $label_b)"
    else
        not_ok "two jobs on one GPU" "ps: $(cat "$work/ps.json")"
    fi
    job busy $gres --gpu-sms=40 true
    [ "$status" -ne 0 ] && has busy.err "the task was not started" &&
        has busy.err "; --gpu-sms-wait=SECONDS queues for the SMs" && has busy.err "run_probe hold"
    verdict $? "a third job that does not fit fails at once, naming the holders" busy
    job rest $gres --gpu-sms=rest "$probe" confined 4
    [ "$status" -eq 0 ] && has rest.err "GPU 0: 4 of 132 SMs (claimed granules 16)"
    verdict $? "--gpu-sms=rest takes the 4 SMs the two halves leave, alone" rest
    job waited $gres --gpu-sms=40 --gpu-sms-wait=30 "$probe" confined 40 &
    pid_w=$!
    sleep 1
    waiting=no
    kill -0 "$pid_w" 2>/dev/null && ! has waited.err "GPU 0:" && waiting=yes
    touch "$work/hold-a/go"
    wait "$pid_w"
    status=$?
    if [ "$waiting" = yes ] && [ "$status" -eq 0 ] && has waited.err "GPU 0: 40 of 132 SMs"; then
        ok "--gpu-sms-wait queues until a job ends and frees its SMs"
    else
        not_ok "--gpu-sms-wait" "status $status, waiting before the SMs were free: $waiting"
        show waited
    fi
else
    not_ok "two jobs on one GPU" "the tasks did not start"
fi
touch "$work/hold-a/go" "$work/hold-b/go"
wait "$pid_a" "$pid_b"
report a
report b
if python3 -c 'import json, sys
a, b = (set(json.load(open(f))["devices"][0]["sm_ids"]) for f in sys.argv[1:])
sys.exit(0 if len(a) == len(b) == 64 and not a & b else 1)' "$work/a.json" "$work/b.json"; then
    ok "the two jobs' work ran on disjoint SMs (the preload's reports)"
else
    not_ok "disjoint SMs" "reports: $(cat "$work/a.json" "$work/b.json" 2>&1 | head -c 600)"
fi

# Each task of a step has its own claim: two tasks on one GPU get disjoint SMs, under the
# step's one label.
mkdir -p "$work"/hold-t0 "$work"/hold-t1
job tasks -n2 $gres --gpu-sms=16 sh -c 'exec "$0" hold "$1$SLURM_PROCID"' "$probe" "$work/hold-t" &
pid_t=$!
if wait_for "$work/hold-t0/ready" && wait_for "$work/hold-t1/ready" && ps_json &&
    json "$work/ps.json" 'len(d["devices"][0]["claims"]) == 2' \
        'len(set(c["label"] for c in d["devices"][0]["claims"])) == 1' \
        'not set(d["devices"][0]["claims"][0]["granules"]) & set(d["devices"][0]["claims"][1]["granules"])'; then
    ok "srun -n2 --gpu-sms=16: each task claims its own 16 SMs, disjoint"
else
    not_ok "two tasks of one step" "ps: $(cat "$work/ps.json")"
    show tasks
fi
touch "$work/hold-t0/go" "$work/hold-t1/go"
wait "$pid_t"

# sbatch --gpu-sms: the batch script holds the job's claim, and the steps it starts with the
# same request (sbatch hands it to them) run in those SMs; a step that asks for other SMs
# claims its own.
step_parts=$(parts step)
timeout 60 sbatch --wait --export=ALL $gres --gpu-sms=16 -o "$work/steps.out" \
    --wrap "srun --export=ALL,GREENCTX_RUN_REPORT_DIR=$step_parts $probe confined 16 &&
            srun --gpu-sms=8 $probe confined 8" >"$work/steps.err" 2>&1
status=$?
report step
batch_job=$(sed -n 's/^greenctx: slurm \([0-9]*\)\.batch: .*/\1/p' "$work/steps.out")
batch_granules=$(sed -n 's/^greenctx: slurm [0-9]*\.batch: GPU 0: 16 of 132 SMs (claimed granules \(.*\))$/\1/p' "$work/steps.out")
[ "$status" -eq 0 ] && [ -n "$batch_job" ] &&
    has steps.out "greenctx: slurm $batch_job.0: in the SMs of slurm $batch_job.batch, GPU 0: 16 SMs (granules $batch_granules)" &&
    has steps.out "greenctx: slurm $batch_job.1: GPU 0: 8 of 132 SMs (claimed granules " &&
    json "$work/step.json" 'len(d["devices"][0]["sm_ids"]) == 16' \
        "d['devices'][0]['claim']['granules'] == [g for r in '$batch_granules'.split(',') for g in range(int(r.split('-')[0]), int(r.split('-')[-1]) + 1)]" &&
    free_all
verdict $? "sbatch --gpu-sms=16: the script's steps run in the job's claim (granules $batch_granules); srun --gpu-sms=8 in it claims its own" steps

# A batch job killed with scancel frees its SMs: nobody releases the claim, the kernel drops
# its lock when the task dies, and the registry says it died.
mkdir -p "$work/hold-c"
jobid=$(timeout 20 sbatch --parsable --export=ALL $gres --gpu-sms=64 \
    -o "$work/batch.out" --wrap "$probe hold $work/hold-c" 2>"$work/sbatch.err")
if [ -n "$jobid" ] && wait_for "$work/hold-c/ready" && ps_json &&
    json "$work/ps.json" "[c['label'] for c in d['devices'][0]['claims']] == ['slurm $jobid.batch']" \
        'd["devices"][0]["free_sms"] == 68'; then
    timeout 10 scancel "$jobid"
    for _ in $(seq 100); do
        [ -z "$(timeout 5 squeue -h -j "$jobid" -o %i 2>/dev/null)" ] && break
        sleep 0.1
    done
    if free_all && json "$work/ps.json" \
        'any(e["kind"] == "died" and e["sm_count"] == 64 for e in d["devices"][0]["events"])'; then
        ok "sbatch --gpu-sms=64, then scancel: the SMs are free again"
    else
        not_ok "scancel" "ps: $(cat "$work/ps.json")"
    fi
else
    not_ok "sbatch --gpu-sms=64" "job '$jobid': $(cat "$work/sbatch.err" "$work/batch.out" 2>&1)"
fi

# Requests that can't be served fail the step with the reason; nothing stays claimed.
bad() {
    local name=$1 message=$2
    shift 2
    job "$name" "$@" true
    [ "$status" -ne 0 ] && has "$name.err" "$message"
    verdict $? "srun $* true fails: $message" "$name"
}
bad small "4 SMs can't be claimed on this device: a claim is whole claim granules, as greenctx info --sizes shows (multiples of 8 up to 128; the 4 SMs left over go with \"rest\"); the nearest count that can be claimed is 8" --gpu-sms=4
bad huge "500 SMs can't be claimed: the device has 132 SMs in all" --gpu-sms=500
bad typo "Invalid --gpu-sms argument: abc" --gpu-sms=abc
bad typo_why "'abc' is not a count of SMs (16), a share of the GPU (25%), rest (every free SM) or all" --gpu-sms=abc
bad no_gpu "there is no GPU 1" --gpu-sms=1=16
bad wait_alone "--gpu-sms-wait, --gpu-sms-round and --gpu-device-sms need --gpu-sms" --gpu-sms-wait=5
bad device_sms_alone "--gpu-sms-wait, --gpu-sms-round and --gpu-device-sms need --gpu-sms" --gpu-device-sms=physical
bad round_typo "--gpu-sms-round takes strict, down, nearest or up; got 'sideways'" --gpu-sms=16 --gpu-sms-round=sideways
bad device_sms_typo "--gpu-device-sms takes partition or physical; got 'phys'" --gpu-sms=16 --gpu-device-sms=phys
job round_up --gpu-sms=4 --gpu-sms-round=up "$probe" confined 8
[ "$status" -eq 0 ] && has round_up.err "GPU 0: 8 of 132 SMs"
verdict $? "--gpu-sms=4 --gpu-sms-round=up gets 8 SMs" round_up
timeout 60 sbatch --wait --export=ALL --gpu-sms=4 -o "$work/batch_bad.out" --wrap true \
    >/dev/null 2>&1
status=$?
if [ "$status" -ne 0 ] &&
    grep -qF "greenctx: --gpu-sms=4: GPU 0: 4 SMs can't be claimed on this device" "$work/batch_bad.out" &&
    grep -qF "the task was not started" "$work/batch_bad.out"; then
    ok "sbatch --gpu-sms=4: the job fails, its output says why"
else
    not_ok "sbatch --gpu-sms=4" "status $status: $(cat "$work/batch_bad.out")"
fi
if free_all; then
    ok "failed requests leave nothing claimed"
else
    not_ok "failed requests" "ps: $(cat "$work/ps.json")"
fi

# A second user (made here, removed at the end) shares the node's claims with root's job: the
# audit's takeover (issue 28, C1) fails. The user can neither remove the running job's claim
# file (sticky, root's registry) nor open it to hold it (0600), and --gpu-sms=all is refused
# naming the holder, which the user sees through its public info file and /proc/locks.
user=gctxslurm$$
if useradd -M -d /nonexistent "$user" 2>/dev/null; then
    trap 'userdel "$user" 2>/dev/null; stop_cluster' EXIT
    mkdir -p "$work/hold-u"
    jobid=$(timeout 20 sbatch --parsable --export=ALL $gres --gpu-sms=64 \
        -o "$work/hold-u.out" --wrap "$probe hold $work/hold-u" 2>"$work/hold-u.err")
    claim=
    if [ -n "$jobid" ] && wait_for "$work/hold-u/ready"; then
        claim=$(find "$work/claims" -name 'claim-*' -type f | head -1)
        runuser -u "$user" -- rm -f "$claim" 2>/dev/null
        runuser -u "$user" -- flock -n -s "$claim" true 2>/dev/null && claim="held by $user"
        timeout 60 runuser -u "$user" -- srun --export=ALL $gres --gpu-sms=all "$probe" confined 132 \
            >"$work/other.out" 2>"$work/other.err"
        status=$?
    fi
    if [ -n "$claim" ] && [ -f "$claim" ] && [ "${status:-0}" -ne 0 ] &&
        has other.err "can't be claimed now" && has other.err "held by pid"; then
        ok "another user can't remove, hold or take the SMs of a running job's claim"
    else
        not_ok "a second user" "claim '$claim', status ${status:-}: $(cat "$work/other.err" "$work/hold-u.err" 2>&1)"
    fi
    [ -n "$jobid" ] && timeout 10 scancel "$jobid"
    for _ in $(seq 100); do
        [ -z "$(timeout 5 squeue -h -j "$jobid" -o %i 2>/dev/null)" ] && break
        sleep 0.1
    done
    userdel "$user" 2>/dev/null
    trap stop_cluster EXIT
else
    echo "# no second user (useradd failed): the cross-user case is not run"
fi

# plugstack.conf's options: a default for jobs that do not ask, MPS required, a typo.
plugstack default=8
job default "$probe" confined 8
[ "$status" -eq 0 ] && has default.err "GPU 0: 8 of 132 SMs"
verdict $? "plugstack.conf default=8 confines jobs that do not ask" default
plugstack require_mps=yes
bad mps "this cluster requires MPS (plugstack.conf: require_mps=yes)" --gpu-sms=16
mkdir -m 0777 "$work/private" # anyone may write, not sticky: anyone could remove claims
plugstack runtime_dir="$work/private"
bad private "plugstack.conf's runtime_dir=: the shared claims runtime directory $work/private (mode 0777) is not sticky" --gpu-sms=16
plugstack bogus=1
bad bogus "unknown argument 'bogus=1' in plugstack.conf"
plugstack

echo "# $failures failed"
[ "$failures" -eq 0 ]

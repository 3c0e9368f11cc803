#!/bin/sh
# run_gpu_persistent_test.sh CASE TOOL PROBE_SHARED PROBE_STATIC: programs that size their grids
# by the SM count they are told, under `greenctx run` on a real GPU (make test-gpu; issue 29).
# The probes are run_gpu/persistent.cu built with the shared and the static cudart
# (tests/run.cmake); each launch has a 2 s in-kernel timeout and each run a 30 s one, so a
# hang is a failure, never a stuck test.
#   shared, static  --sms 8, 16, 64 and rest: the program is told the claim's count (the
#                   report's sm_count, through cudart and the driver), and a persistent kernel
#                   with a grid barrier and cooperative launches sized by it complete; one
#                   block more than fits is refused
#   mps             the same for both probes under --sms 16 and 64 beside an MPS daemon of the
#                   test's own (its pipe and log directories under /tmp, quit on exit)
#   physical        --device-sms physical: the program is told the whole device's count again
#   frameworks      PyTorch, Triton and CuPy report the partition's count under --sms 16
#                   (each skipped where it is not installed)
# Prints one line per run: PASS or FAIL, the case, the size, what the program was told.
# Skips (77) on the simulated driver, without a GPU, without the probes (no nvcc) or, for mps,
# without nvidia-cuda-mps-control.
. "$(dirname "$0")/tool_lib.sh"
shared=$3
static=$4
python=${PYTHON:-python3}
tmp=$(mktemp -d /tmp/greenctx-persistent-test-XXXXXX)
export GREENCTX_RUNTIME_DIR="$tmp/runtime"
mkdir -m 700 "$GREENCTX_RUNTIME_DIR"
control=
cleanup() {
    [ -n "$control" ] && echo quit | "$control" >/dev/null 2>&1
    rm -rf "$tmp" "$out" "$err"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

case "${GREENCTX_CUDA_LIBRARY:-}" in *greenctx_sim*)
    echo "needs a GPU: the simulated driver runs no kernels"
    exit 77 ;;
esac
"$tool" info >/dev/null 2>&1 || { echo "no CUDA driver on this machine"; exit 77; }
[ -x "$shared" ] && [ -x "$static" ] ||
    { echo "needs the probes built by nvcc (configure with nvcc on PATH or in /usr/local/cuda)"; exit 77; }

# probe NAME PROGRAM SIZE [RUN OPTIONS...] [-- PROGRAM ARGS]: one run under greenctx run, its
# report checked against what the program printed.
probe() {
    name=$1 program=$2 size=$3
    shift 3
    report="$tmp/report.json"
    rm -f "$report"
    timeout 30 "$tool" run --sms "$size" --report "$report" "$@" -- "$program" $probe_args \
        >"$out" 2>"$err"
    status=$?
    sed 's/^/  | /' "$out"
    [ "$status" -eq 124 ] && echo "  (killed after 30 s: a hang)"
    verdict=$("$python" - "$report" "$out" "$status" "$expect_shown" <<'PY'
import json, re, sys
report, out, status, expect = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4]
try:
    d = json.load(open(report))["devices"][0]
except Exception as e:
    print(f"FAIL|no report ({e}); exit status {status}"); sys.exit(0)
m = re.search(r"^count: \w+ (-?\d+)", out, re.M)
told = int(m.group(1)) if m else None
want = d["device_sm_count"] if expect == "physical" else d["sm_count"]
why = []
if status != 0: why.append(f"exit status {status}")
if told != want: why.append(f"told {told}, expected {want}")
if d.get("sm_count_shown") != want: why.append(f"report's sm_count_shown {d.get('sm_count_shown')}")
cases = re.findall(r"^case (\w+): ok", out, re.M)
print(("PASS|" if not why else "FAIL|" + "; ".join(why) + "; ") +
      f"claimed {d['sm_count']} of {d['device_sm_count']} SMs, told {told}" +
      (f"; {', '.join(cases)} ok" if cases else ""))
PY
)
    echo "${verdict%%|*} $name --sms $size${*:+ $*}: ${verdict#*|}"
    case "$verdict" in PASS*) ;; *) failed=1 ;; esac
}

probe_args=
expect_shown=partition
case "$1" in
shared | static)
    program=$shared
    [ "$1" = static ] && program=$static
    for size in 8 16 64 rest; do
        probe "$1" "$program" $size
    done
    ;;
mps)
    control=$(command -v nvidia-cuda-mps-control) || { echo "needs nvidia-cuda-mps-control"; exit 77; }
    export CUDA_MPS_PIPE_DIRECTORY="$tmp/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$tmp/mps-log"
    mkdir -m 700 "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    "$control" -d || { control=; echo "FAIL: nvidia-cuda-mps-control -d"; exit 1; }
    i=0
    while [ ! -S "$CUDA_MPS_PIPE_DIRECTORY/control" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    for size in 16 64; do
        probe "mps shared" "$shared" $size
        probe "mps static" "$static" $size
    done
    ;;
physical)
    probe_args=count
    probe partition "$shared" 16
    expect_shown=physical
    probe physical "$shared" 16 --device-sms physical
    probe physical "$static" 64 --device-sms physical
    ;;
frameworks)
    ran=0
    for fw in torch triton cupy; do
        needs=$fw
        [ $fw = triton ] && needs="triton, torch" # Triton's driver needs a context: PyTorch's
        if ! "$python" -c "import $needs" 2>/dev/null; then
            echo "SKIP $fw: $needs not installed for $python"
            continue
        fi
        ran=1
        timeout 60 "$tool" run --sms 16 -- "$python" - "$fw" >"$out" 2>"$err" <<'PY'
import sys
fw = sys.argv[1]
if fw == "torch":
    import torch
    n = torch.cuda.get_device_properties(0).multi_processor_count
elif fw == "triton":
    import torch
    import triton
    torch.zeros(1, device="cuda")
    n = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]
else:
    import cupy
    n = cupy.cuda.Device(0).attributes["MultiProcessorCount"]
    assert n == cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"], n
print(n)
PY
        status=$?
        told=$(tail -n 1 "$out")
        if [ "$status" -eq 0 ] && [ "$told" = 16 ]; then
            echo "PASS $fw --sms 16: multiprocessor count $told"
        else
            echo "FAIL $fw --sms 16: exit status $status, multiprocessor count '$told'"
            sed 's/^/  err| /' "$err" | tail -n 5
            failed=1
        fi
    done
    [ $ran -eq 1 ] || { echo "needs torch, triton or cupy"; exit 77; }
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

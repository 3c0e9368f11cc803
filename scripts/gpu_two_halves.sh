#!/usr/bin/env bash
# Claims over the planner's granules on the GPU (issue 31), from the repository root with $OUT
# a folder: OUT=/some/dir scripts/gpu_two_halves.sh. Builds build-gpu against the real driver
# (as make test-gpu does), then:
#   granules  claims.h200: the registry's granules are the planner's (16 of 8 and 4 left over
#             on an H200), each granule's context runs on exactly its 8 SMs, and the 4 left
#             over, claimed alone by "rest", make a context of their own that runs on exactly
#             4 other SMs (the remainder measurement: FAIL here means the driver refuses a
#             context of them, and "rest" must then never take them alone)
#   agree     claims.agree is simulator-only; here `greenctx info --sizes` on the GPU: its
#             claims column (16 for 8 SMs, 2 for 64, 1 for 128) and plan 12 / run --sms 12
#             both refused, with the same reason
#   halves    tenants.gpu.disjoint: two `greenctx run --sms 64` tenants side by side under
#             an MPS daemon the test starts under /tmp and quits in a trap; their kernels at
#             one instant take about the time of one alone (< 1.3x: disjoint SMs), two
#             `--sms 64 --shared` on the same SMs about twice (> 1.6x)
#   registry  claims.registry's wall time (39 s before issue 31; a few seconds now)
# Logs go to $OUT; the last lines are a PASS/FAIL summary.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$(dirname "$0")/gpu_stages.sh"
machine_info
build_gpu gpu_two_halves
tool=build-gpu/tools/greenctx
export GREENCTX_GPU_OUT="$out"

stage granules 120 bash -c "cd build-gpu && ctest -V -R '^claims\\.h200\$'"
agree() {
    local rt
    rt=$(mktemp -d /tmp/greenctx-halves-XXXXXX)
    "$tool" info --sizes || return 1
    "$tool" info --sizes | grep -Eq '^ +8 +15 +12 +16  ' || { echo "FAIL: 8 SMs: not 16 claims"; return 1; }
    "$tool" info --sizes | grep -Eq '^ +64 +2 +4 +2  ' || { echo "FAIL: 64 SMs: not 2 claims"; return 1; }
    "$tool" plan 12 && { echo "FAIL: plan 12 accepted"; return 1; }
    GREENCTX_RUNTIME_DIR=$rt "$tool" run --sms 12 -- true &&
        { echo "FAIL: run --sms 12 accepted"; return 1; }
    rm -rf "$rt"
    echo "PASS: info --sizes lists the claims; plan 12 and run --sms 12 both refused"
}
stage agree 60 agree
stage halves 170 bash -c "cd build-gpu && ctest -V -R '^tenants\\.gpu\\.disjoint\$'"
stage registry 120 bash -c "cd build-gpu && ctest -V -R '^claims\\.registry\$'"
summary gpu_two_halves

# Sourced by the GPU scripts (gpu_wave3.sh, gpu_elastic.sh), from the repository root: $out
# (made), the machine's line in $out/machine.txt, the real-driver build in build-gpu, and
#   part NAME COMMAND...   runs COMMAND, its output in $out/NAME.log, PASS or FAIL into
#                          $results and its last $PART_TAIL (12) lines shown
# The script ends with printf '%s\n' "${results[@]}": the summary.
out=${OUT:-gpu-out}
mkdir -p "$out"
results=()
part() {
  local name=$1
  shift
  if "$@" >"$out/$name.log" 2>&1; then results+=("PASS $name"); else results+=("FAIL $name"); fi
  echo "== $name: ${results[-1]}"
  tail -n "${PART_TAIL:-12}" "$out/$name.log"
}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$out/machine.txt"
part build sh -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGREENCTX_TEST_DRIVER=real && cmake --build build-gpu -j$(nproc)"

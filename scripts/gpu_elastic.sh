#!/usr/bin/env bash
# bench elastic on a GPU machine, from the repository root, in one call of at most $BUDGET_S
# seconds (default 470: fits a 10-minute call with room for the transfers), logs into $OUT:
# builds against the real driver (build-gpu, incremental), then `greenctx bench elastic` on
# each trace of $TRACES (default "onoff stationary": the issue's two targets) for $ARM_SECONDS
# an arm (default 5), with --quick unless QUICK=0: the table in elastic-TRACE.log, the JSON
# document in elastic-TRACE.json, the chart in elastic-TRACE.svg. A trace starts only while
# $MIN_TRACE_S (default 150) of the budget are left, under a timeout of what is left. TEST=1
# first runs bench.elastic_gpu (make test-gpu's check, about 2 minutes). On every exit the
# logs are tarred into $OUT/elastic.tar.gz and any MPS daemon a killed bench left under
# /tmp/greenctx-bench-* is quit. About 2 minutes a trace with --quick on an H200 (10
# one-process arms, 6 two-process arms) and 2.5 without (13 one-process arms); e.g.
#   scripts/gpu_elastic.sh
#   QUICK=0 TRACES="duty50 poisson" OUT=$OUT/more scripts/gpu_elastic.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 # nothing here runs NCCL; should anything, never with NVLink multicast
start=$SECONDS
budget=${BUDGET_S:-470}
min_trace=${MIN_TRACE_S:-150}
traces=${TRACES:-onoff stationary}
seconds=${ARM_SECONDS:-5}
quick=()
[ "${QUICK:-1}" != 0 ] && quick=(--quick)

# COMMAND under a timeout of S seconds, in the background so that a signal to this script
# is handled at once: its trap ends the timeout, which passes the signal on to the bench (the
# bench then kills its tenants and quits its MPS daemon) and kills it 15 s later.
bounded_pid=
bounded() {
  timeout -k 15 "$@" &
  bounded_pid=$!
  wait "$bounded_pid"
  local rc=$?
  bounded_pid=
  return "$rc"
}

finish() {
  if [ -n "$bounded_pid" ]; then
    kill -TERM "$bounded_pid" 2>/dev/null
    wait "$bounded_pid"
  fi
  # A bench killed by the timeout could not quit its own MPS daemon: quit it here.
  for pipe in /tmp/greenctx-bench-*/mps-pipe; do
    [ -p "$pipe/control" ] || continue
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=${pipe%/mps-pipe}/mps-log \
      timeout 10 nvidia-cuda-mps-control && echo "quit the MPS daemon left at $pipe"
  done
  if [ -d "${out:-}" ]; then
    (cd "$out" && shopt -s nullglob && tar -czf elastic.tar.gz -- *.log *.json *.svg *.txt)
  fi
  summary gpu_elastic || exit 1 # the summary, last
}
out=${OUT:-gpu-out}
mkdir -p "$out"
# shellcheck source=scripts/gpu_stages.sh
. "$(dirname "$0")/gpu_stages.sh"
trap finish EXIT
trap 'exit 130' INT TERM HUP
machine_info
build_gpu gpu_elastic
left() { echo $((budget - (SECONDS - start))); }
if [ "${TEST:-0}" = 1 ]; then
  stage test_quick 0 bounded "$(left)" \
    sh -c "cd build-gpu && ctest --output-on-failure -R '^bench\.elastic_gpu$'"
fi
for trace in $traces; do
  if [ "$(left)" -lt "$min_trace" ]; then
    results+=("SKIP elastic-$trace (only $(left) s of the ${budget} s budget left)")
    continue
  fi
  stage "elastic-$trace" 0 bounded "$(left)" build-gpu/tools/greenctx bench elastic \
    "${quick[@]}" --trace "$trace" --seconds "$seconds" \
    --svg "$out/elastic-$trace.svg" --json-file "$out/elastic-$trace.json"
done

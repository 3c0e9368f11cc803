#!/usr/bin/env bash
# bench elastic on a GPU machine, from the repository root, logs into $OUT: builds against the
# real driver once (build-gpu), runs bench.elastic_gpu (`bench elastic --quick`, as
# make test-gpu does), then `greenctx bench elastic` on each trace of $TRACES (default all
# four) for $ARM_SECONDS an arm (default 5): the table in elastic-TRACE.log, the JSON document in
# elastic-TRACE.json, the chart in elastic-TRACE.svg. Everything is tarred into
# $OUT/elastic.tar.gz; the last lines are a PASS/FAIL summary. About 2.5 minutes a trace on an
# H200 at 5 s a run (13 one-process arms, 6 two-process arms, calibration, tenants' start),
# plus the build and the quick test (about 5 minutes): within one 10-minute call, e.g.
#   TRACES=onoff scripts/gpu_elastic.sh
#   QUICK=0 TRACES="stationary duty50 poisson" OUT=$OUT/more scripts/gpu_elastic.sh
# (QUICK=0 leaves the quick test out; the build is incremental).
set -uo pipefail
traces=${TRACES:-onoff stationary duty50 poisson}
seconds=${ARM_SECONDS:-5}
PART_TAIL=40
. "$(dirname "$0")/gpu_parts.sh"
if [ "${QUICK:-1}" != 0 ]; then
  part test_quick sh -c "cd build-gpu && ctest --output-on-failure -R '^bench\.elastic_gpu$'"
fi
for trace in $traces; do
  part "elastic-$trace" build-gpu/tools/greenctx bench elastic --trace "$trace" \
    --seconds "$seconds" --svg "$out/elastic-$trace.svg" --json-file "$out/elastic-$trace.json"
done
tar -czf "$out/elastic.tar.gz" -C "$out" $(cd "$out" && ls *.log *.json *.svg machine.txt 2>/dev/null)
printf '%s\n' "${results[@]}"

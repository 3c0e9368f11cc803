#!/usr/bin/env bash
# GPU proof of the context cache and layouts, run from the repository root on a
# machine with an NVIDIA GPU: OUT=/some/dir scripts/gpu_cache.sh. Builds against the real driver,
# then:
#   1. test_cache: a cache hit runs on exactly the SMs (%smid) the same request gets with a
#      fresh context; 100,000 re-partitions lose at most 10 MB of device memory, 0 failures;
#   2. test_layouts: layouts switch without driver objects, work ordered across the switch;
#   3. the object tests on the GPU, with the cache on as users have it (make test-gpu runs the rest);
#   4. `greenctx bench overhead` (text and JSON), its rows checked against the issue's targets.
# Logs go to $OUT; the last lines are a PASS/FAIL summary.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
. "$(dirname "$0")/gpu_stages.sh"
machine_info

build_gpu gpu_cache
stage cache 150 build-gpu/tests/test_cache hits_only_for_the_same_sms other_sms_miss \
  nested_partitions_hit_through_their_context bounded_least_recently_used_first \
  fresh_flag_and_bad_flags bad_arguments adopted_contexts_are_never_cached off_switch \
  streams_come_back_with_their_context \
  many_threads memory_flat_over_1000_repartitions memory_flat_over_100000_repartitions
if [ -x build-gpu/tests/test_layouts ]; then
  stage layouts 60 build-gpu/tests/test_layouts
fi
stage test_gpu 150 bash -c "cd build-gpu && ctest --output-on-failure -R '^(partitions|contexts|gpu|layouts)$'"
stage bench 120 build-gpu/tools/greenctx bench overhead
stage bench_json 120 bash -c "build-gpu/tools/greenctx bench overhead --json > '$out/bench.json'"
stage targets 60 python3 - "$out/bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["overhead"]
ops = {o["op"]: o for o in d["ops"]}
r = d["repartitioning"]
checks = [
    ("re-partition through the cache p50 <= 20 us",
     ops["repartition"]["greenctx_us"]["p50"], lambda v: v <= 20),
    ("raw rebuild p50 (for reference)", ops["repartition"]["raw_driver_us"]["p50"], lambda v: True),
    ("cache miss / raw create p50 <= 1.02", ops["context_create"]["ratio_p50"], lambda v: v <= 1.02),
    ("layout switch host p50 <= 2 us", r["layout_switch_host_us"]["p50"], lambda v: v <= 2),
    ("layout switch by part host p50 <= 1 us (issue 20)",
     r["layout_switch_by_part_host_us"]["p50"], lambda v: v <= 1),
    ("added device gap p50 <= 1 us",
     r["device_gap_switch_us"]["p50"] - r["device_gap_same_stream_us"]["p50"]
     if "device_gap_switch_us" in r else None, lambda v: v <= 1),
    ("16 layouts x 2 contexts <= 60 ms", r["layouts_16x2_cold_ms"], lambda v: v <= 60),
    ("memory lost with the cache (MiB, %d re-partitions) <= 10" % r["cycles"],
     r["memory_lost_cache_mib"], lambda v: v <= 10),
    ("memory lost without the cache (MiB, for reference)", r["memory_lost_no_cache_mib"],
     lambda v: True),
]
bad = 0
for name, value, ok in checks:
    good = value is not None and ok(value)
    bad += not good
    shown = "n/a" if value is None else "%.3f" % value
    print("%-60s %12s  %s" % (name, shown, "MET" if good else "MISSED"))
sys.exit(1 if bad else 0)
PY

summary gpu_cache

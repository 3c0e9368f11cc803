#!/bin/sh
# sweep_chart_test.sh CASE TOOL PROBE: `greenctx run --sweep --svg` on the simulated H200
# shows [k/N] progress with the time left, and draws
# speed-up ticks at nice numbers (every one labelled, not only the top), its lines in SM
# order whatever order the sizes came in, and SM labels that never collide (132 kept, 128
# beside it dropped).
. "$(dirname "$0")/tool_lib.sh"
probe=$3
svg=$(mktemp)
trap 'rm -f "$out" "$err" "$svg"' EXIT
[ -r "${GREENCTX_SIM_LIBRARY:-}" ] || { echo "needs the simulated driver"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
# --shared: 128 SMs are a split (claims give 124 or 132), the size whose label meets 132
run 0 --sim h200 run --shared --sweep 128,all,8,16 --svg "$svg" -- "$probe" noop
# Its progress, run by run, with the time left after the first.
has "$err" "greenctx run --sweep [1/4] $probe on 128 of 132 SMs"
grep -q "^greenctx run --sweep \[4/4\] $probe on 16 of 132 SMs.* (about [0-9]* s left)\$" "$err" ||
    fail "the last run's progress line has no [4/4] or no estimate"
python3 - "$svg" <<'PY' || fail "the sweep chart's axes do not read well"
import re, sys
svg = open(sys.argv[1]).read()
texts = [(float(x), float(y), a, t) for x, y, a, t in
         re.findall(r'<text x="([\d.]+)" y="([\d.]+)"(?: text-anchor="(\w+)")?>([^<]*)</text>', svg)]
ticks = [t for x, y, a, t in texts if a == "end" and t.endswith("x")]
values = [float(t[:-1]) for t in ticks]
assert values == [0, 5, 10, 15, 20], ticks          # speed-up up to 16.5: 0..20 by 5
axis_y = max(y for x, y, a, t in texts if a == "middle" and t.isdigit())
labels = [(x, t) for x, y, a, t in texts if a == "middle" and y == axis_y]
assert [t for x, t in labels] == ["8", "16", "132"], labels
for (x0, t0), (x1, t1) in zip(labels, labels[1:]):
    assert x1 - x0 >= 0.6 * 12 * (len(t0) + len(t1)) / 2 + 4, (t0, t1)
for points in re.findall(r'points="([^"]*)"', svg):
    xs = [float(p.split(",")[0]) for p in points.split()]
    assert xs == sorted(xs), points
print("sweep chart ok")
PY
[ $failed -eq 0 ] && echo "ok: sweep chart"
exit $failed

"""tenants_bursts.py: bench/compare/tenants.py's burst_delays on made-up actions of a
cooperative hog that began 20 ms after its bursty victim: the medians over the bursts of the
first shrink after each burst's start and of everything back after each burst's end, one each
per burst (a later action of the same burst is not counted); exit 1 naming what differs."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                "compare"))
import tenants  # noqa: E402

# (seconds since the hog's start, level, SMs, reason); bursts at 0, 5, 10 s of the victim's
actions = [(0.01, 1, 80, "steps"), (0.9, 2, 64, "power"), (1.01, 0, 116, ""),
           (5.0, 2, 64, "power"), (6.02, 0, 116, ""),
           (10.03, 3, 48, "power"), (10.5, 4, 32, "power"), (11.04, 0, 116, "")]
got = tenants.burst_delays({"began": 100.0}, {"began": 100.02, "guard_actions": actions})
want = {"hog_shrunk_after_ms": 30.0, "hog_back_after_ms": 40.0}  # of 30, 20, 50 and 30, 40, 60
bad = [f"{k}: {got.get(k)}, not {v}" for k, v in want.items()
       if got.get(k) is None or abs(got[k] - v) > 1e-6]
print("\n".join(bad) or f"burst delays: {got}")
sys.exit(1 if bad else 0)

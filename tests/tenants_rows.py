"""tenants_rows.py FILE ARMS FAULTS: bench/compare/tenants.py's JSON lines hold ARMS rows per
pair (each with the ratios its reference gives) and FAULTS fault rows (the other tenant's
counts, a new tenant that ran), the two tenants of an arm measuring from one start, the
guard's cost measured interleaved, a bursty victim's settled steps; exit 1 naming what is
missing."""
import collections
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
arms, faults = int(sys.argv[2]), int(sys.argv[3])
pairs = collections.Counter(r["pair"] for r in rows if "pair" in r)
bad = [f"{p}: {n} arms, not {arms}" for p, n in pairs.items() if n != arms]
for r in rows:
    if "pair" in r:
        want = [k for k, side in (("victim_p99_ratio", "victim"), ("hog_rate_ratio", "hog"))
                if side in r]
        # the guard's interleaved cost; a bursty victim's steps once its hog had shrunk
        want += ["cost_p50_ratio"] if r["arm"] == "victim_guarded" else []
        want += ["victim_settled_p99_ratio"] if r["pair"].startswith("bursty") and \
            "victim" in r else []
        bad += [f"{r['pair']} {r['arm']}: no {k}" for k in want if not r.get(k)]
        if "victim" in r and "hog" in r and abs(r["victim"]["began"] - r["hog"]["began"]) > 0.05:
            bad.append(f"{r['pair']} {r['arm']}: the victim and the hog began apart")
    else:
        launcher = r["launcher"]
        if launcher["ok"] + launcher["failed"] == 0 or r["new_tenant_runs_after_s"] is None:
            bad.append(f"{r['arm']}: {r}")
if sum(1 for r in rows if "pair" not in r) != faults or not pairs:
    bad.append(f"{len(rows)} rows: {faults} fault rows and {arms} arms a pair wanted")
print("\n".join(bad) or f"{len(rows)} rows: every arm and fault arm ran")
sys.exit(1 if bad else 0)

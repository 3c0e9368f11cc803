"""elastic_doc.py FILE dry|gpu: bench/compare/elastic.py's JSON document in FILE holds every arm
BENCHMARKS.md's "Elastic partitions" reports, each with its figures; the resized claims moved
and timed it; the targets: on the simulated driver (dry) none gives a verdict ("met" null, the
rule's answer in model_met), on a GPU every one that applies is printed and must be met.
Exit 1 naming what is wrong."""
import json
import sys

doc = json.load(open(sys.argv[1]))
e, gpu = doc["elastic"], sys.argv[2] == "gpu"
arms = {a["name"]: a for a in e["arms"]}
want = ["no_split", "priority", "controller", "chunked_128", "chunked_256", "chunked_512",
        "2p_sliced", "2p_claims", "2p_mps", "2p_mps_threads", "2p_claims_controller",
        "2p_claims_controller_sliced"]
bad = [f"no arm {n}" for n in want if n not in arms]
bad += [f"{n}: did not run ({a['why']})" for n, a in arms.items() if not a["ran"]]
bad += [f"{n}: no steps or prefill" for n, a in arms.items() if a["ran"] and not (
    a["steps"] > 0 and a["step_ms"]["p99"] > 0 and a["token_ms"]["p99"] > 0 and
    a["prefill_tokens_per_s"] > 0)]
if not [n for n in arms if n.startswith("static_")] or not e["best_static"]:
    bad.append("no static split, or no best one")
for n in ("2p_claims_controller", "2p_claims_controller_sliced"):
    a = arms.get(n)
    if a and a["ran"] and not (a["resizes"] >= 1 and a["grant_ms"]["n"] >= 1 and
                               a["timeline"][0]["lat_sms"] == e["calibration"][0]["decode_sms"]):
        bad.append(f"{n}: no grant timed, or not from the smallest split ({a['timeline'][:2]})")
if doc["schema"] != "greenctx.bench.elastic/2" or doc["meta"]["simulated"] == gpu or \
        doc["meta"]["sm_count"] != e["calibration"][-1]["decode_sms"] or \
        e["model"]["hidden"] != 4096 or e["model"]["kv_heads"] != 8 or not e["target_ms"] > 0:
    bad.append(f"the document's head: {doc['schema']}, {doc['meta']}, {e['model']}")
for t in e["targets"]:
    if t["applies"]:
        verdict = ("PASS" if t["met"] else "FAIL") if gpu else "model"
        print(f"{verdict}: {t['what']}: {t['detail']}")
    if not gpu and (t["met"] is not None or ("model_met" in t) != t["applies"]):
        bad.append(f"a simulated target's verdict: {t}")
    if gpu and t["applies"] and not t["met"]:
        bad.append(f"not met: {t['what']}")
print("\n".join(bad) or f"{len(arms)} arms: every arm ran, with its figures")
sys.exit(1 if bad else 0)

"""Runs the comparisons, each library in its own process, and prints a table and the lines.
On the GPU machine, from the repository root:
    GREENCTX_LIBRARY=/path/to/libgreenctx.so python3 bench/compare/run_all.py --json out.json
--json writes the run as one JSON object (main's record; python/tests/test_compare.py checks
it). A peer that is not installed is skipped, not failed; greenctx failing fails the run.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

from common import utc_now

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = {"greenctx": "compare_greenctx.py", "greenctx-py": "compare_greenctx_python.py",
           "cuda.core": "compare_cuda_core.py", "torch": "compare_torch.py",
           "side by side": "compare_split_side_by_side.py"}
GREENCTX_ONLY = ("greenctx", "greenctx-py")
# The package's split against cuda.core's, side by side in one process, rep by rep
SPLIT_OP = "split 16, side by side"


def run(lib, reps):
    path = os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, GREENCTX_COMPARE_REPS=str(reps))
    p = subprocess.run([sys.executable, os.path.join(HERE, SCRIPTS[lib])], env=env,
                       capture_output=True, text=True, timeout=600)
    lines = []
    for line in p.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        lines.append({"lib": lib, "error": f"exit {p.returncode}: {tail}"})
    return lines


def split_ratio(rows):
    """The package's split against cuda.core's: medians and p99s, or None and why not."""
    found = {r["lib"]: r for r in rows if r.get("op") == SPLIT_OP and "p50_us" in r}
    ours, theirs = found.get("greenctx-py"), found.get("cuda.core")
    if not ours or not theirs:
        missing = [lib for lib, r in (("greenctx-py", ours), ("cuda.core", theirs)) if not r]
        return None, f"no '{SPLIT_OP}' measurement of {' and '.join(missing)}"
    return {"median": round(ours["p50_us"] / theirs["p50_us"], 3),
            "p99": round(ours["p99_us"] / theirs["p99_us"], 3),
            "reps": min(ours["reps"], theirs["reps"]),
            "greenctx_py_us": {"p50": ours["p50_us"], "p99": ours["p99_us"]},
            "cuda_core_us": {"p50": theirs["p50_us"], "p99": theirs["p99_us"]}}, None


def print_table(record, why):
    print("== versions")
    for lib in SCRIPTS:
        skipped = record["skipped"]
        note = f"skipped: {skipped[lib]}" if lib in skipped else record["versions"][lib] or "?"
        print(f"{lib:<12} {note}")
    print("\n== creation cost (us, wall clock in Python, median of reps after 5 warm-ups)")
    print(f"{'library':<12} {'operation':<44} {'p50':>10} {'p99':>10}  note")
    for r in record["rows"]:
        figures = f"{'-':>10} {'-':>10}  {r['error']}" if "error" in r else \
            f"{r['p50_us']:>10} {r['p99_us']:>10}"
        print(f"{r['lib']:<12} {r['op']:<44} {figures}")
    print("\n== what each can do on this driver")
    for r in record["capabilities"]:
        print(f"{r['lib']:<12} {r['capability']:<44} {'yes' if r['ok'] else 'NO':>4}  "
              f"{r['detail']}")
    for r in record["errors"]:
        print(f"{r['lib']}: {r['error']}")
    print("\n== the package's split against cuda.core's")
    ratio = record["python_split_vs_cuda_core"]
    if ratio:
        print(f"median {ratio['median']}x, p99 {ratio['p99']}x ({ratio['reps']} reps)")
    else:
        print(f"not measured: {why}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the run as one JSON object")
    parser.add_argument("--only", choices=["greenctx"], help="greenctx's scripts alone (CI)")
    parser.add_argument("--reps", type=int,
                        default=int(os.environ.get("GREENCTX_COMPARE_REPS", "500")),
                        help="repetitions per operation")
    args = parser.parse_args(argv)
    libs = list(GREENCTX_ONLY if args.only else SCRIPTS)
    rows = [r for lib in libs for r in run(lib, args.reps)]
    versions = {lib: None for lib in SCRIPTS}
    skipped = {lib: "not run (--only greenctx)" for lib in SCRIPTS if lib not in libs}
    machine = {}
    for r in rows:
        if "version" in r:
            versions[r["lib"]] = r["version"]
            machine.update((k, r[k]) for k in ("device", "driver_version") if k in r)
        elif "skipped" in r:
            skipped[r["lib"]] = r["skipped"]
    ratio, why = split_ratio(rows)
    record = {"date": utc_now(),
              "python": platform.python_version(), "reps": args.reps, **machine,
              "versions": versions, "skipped": skipped,
              "rows": [r for r in rows if "op" in r],
              "capabilities": [r for r in rows if "capability" in r],
              "errors": [r for r in rows if "error" in r and "op" not in r],
              "python_split_vs_cuda_core": ratio}
    if why:
        record["python_split_vs_cuda_core_missing"] = why
    print_table(record, why)
    print("\n== JSON lines")
    for r in rows:
        print(json.dumps(r))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
    # greenctx itself failing (not loading, a script dying) fails the run; a peer never does.
    return 1 if any(r["lib"] in GREENCTX_ONLY for r in record["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 20's figures against the ratios recorded beside BENCHMARKS.md (bench/results/
baseline.json).

    check_regression.py --bench BENCH.json [--compare COMPARE.txt] [--baseline FILE]
    check_regression.py --run TOOL [--library LIBGREENCTX] [--out DIR] [--baseline FILE]
    either with --write-baseline FILE: the baseline again, with this run's ratios

BENCH.json is `greenctx bench overhead --json`'s document, COMPARE.txt bench/compare/run_all.py's
output (its JSON lines). Each figure is greenctx's p50 over its twin's (the same work by hand, or
cuda.core): ratios, not times, since a slower or faster machine moves both sides. A ratio more
than the baseline's `tolerance` above the one recorded is a regression. The issue's targets are
reported as met or not, over every rep and over the quiet reps where a row has them
(bench/bench_pin.h), and fail nothing. --run runs the quick bench (and run_all.py where cuda.core
imports and --library is given), keeps their outputs in --out ($GREENCTX_GPU_OUT, else a
temporary folder) and checks them; on the simulated driver or with no driver it skips.

Exit: 0 no regression; 1 a ratio regressed; 2 an input lacks a figure the baseline names, or
cannot be read; 77 skipped (--run).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASELINE = os.path.join(ROOT, "bench", "results", "baseline.json")
SKIP = 77

# greenctx's p50 and p99 beside its twin's, in the figure's unit; quiet: the same over the
# quiet reps (a Measure, the two sides' quiet reps and of how many), None where the bench
# gives none.
Measure = namedtuple("Measure", "p50 p99 twin_p50 twin_p99 quiet", defaults=(None,))
Quiet = namedtuple("Quiet", "measure reps of_reps")


class Missing(Exception):
    """An input lacks a figure the baseline names: the message says which and where."""


def summaries(doc, mine, twin, where):
    """The two sides' summaries in doc, and their quiet reps' where doc has them for both (the
    bench names them KEY_quiet_UNIT; a bench before them, a row without them, or a side with no
    quiet rep gives none)."""
    for key in (mine, twin):
        if not isinstance(doc.get(key), dict) or "p50" not in doc[key]:
            raise Missing(f'{where} has no "{key}" summary (is the bench older than the baseline?)')
    quiet = ["{0}_quiet_{2}".format(*key.rpartition("_")) for key in (mine, twin)]
    q = None
    if all(isinstance(doc.get(k), dict) and doc[k].get("n", 0) > 0 for k in quiet):
        a, b = doc[quiet[0]], doc[quiet[1]]
        q = Quiet(Measure(a["p50"], a["p99"], b["p50"], b["p99"]), (a["n"], b["n"]),
                  doc[mine].get("n"))
    return Measure(doc[mine]["p50"], doc[mine]["p99"], doc[twin]["p50"], doc[twin]["p99"], q)


def overhead_row(op):
    """A row of the overhead table: greenctx against the raw driver calls."""
    def measure(bench, _compare):
        ops = bench.get("overhead", {}).get("ops", [])
        row = next((o for o in ops if o.get("op") == op), None)
        if row is None:
            raise Missing(f'the bench JSON\'s overhead table has no "{op}" row')
        if not row.get("valid"):
            raise Missing(f'the overhead table\'s "{op}" row was not measured: '
                          f'{row.get("note") or "no reason given"}')
        return summaries(row, "greenctx_us", "raw_driver_us", f'the overhead table\'s "{op}" row')
    return measure


def repartitioning_row(mine, twin):
    """A pair of the re-partitioning rows (bench/cache_rows.c), and of their quiet reps."""
    def measure(bench, _compare):
        rows = bench.get("overhead", {}).get("repartitioning")
        if not rows:
            raise Missing('the bench JSON has no "overhead" / "repartitioning" member')
        if not rows.get("valid"):
            raise Missing("the re-partitioning rows were not measured (the bench failed there)")
        return summaries(rows, mine, twin, "the re-partitioning rows")
    return measure


def compare_row(lib, twin, op):
    """The same operation from two libraries in bench/compare/run_all.py's output."""
    def find(compare, name):
        row = next((r for r in compare if r.get("lib") == name and r.get("op") == op), None)
        if row is None:
            raise Missing(f'the compare output has no "{op}" row of {name}')
        if "error" in row:
            raise Missing(f'the compare output\'s "{op}" row of {name} failed: {row["error"]}')
        return row

    def measure(_bench, compare):
        if compare is None:
            return None
        a, b = find(compare, lib), find(compare, twin)
        return Measure(a["p50_us"], a["p99_us"], b["p50_us"], b["p99_us"])
    return measure


# Each figure: how to measure it, and which input it comes from.
FIGURES = {
    "split": (overhead_row("split"), "bench"),
    # The barrier against its own calls by hand (3n - 1 for n parts), by part against its
    # floor (2n): each at the cost of the calls it makes.
    "layout_switch": (repartitioning_row("layout_switch_host_us",
                                         "layout_switch_barrier_by_hand_us"), "bench"),
    "layout_switch_by_part": (repartitioning_row("layout_switch_by_part_host_us",
                                                 "layout_switch_by_hand_us"), "bench"),
    "layouts_16_cold": (repartitioning_row("layouts_16x2_cold_ms_summary",
                                           "layouts_16x2_by_hand_ms"), "bench"),
    "repartition": (overhead_row("repartition"), "bench"),
    "repartition_cache": (repartitioning_row("repartition_cache_us", "repartition_no_cache_us"),
                          "bench"),
    # Side by side in one process: in their own processes the two read apart by as much as
    # the host's state moved between them.
    "python_split": (compare_row("greenctx-py", "cuda.core", "split 16, side by side"),
                     "compare"),
}


def ratio(m):
    return m.p50 / m.twin_p50 if m.twin_p50 > 0 else float("inf")


def verdicts(row, m):
    """(met, 'ratio <= 1.05' and the like) for each of the row's targets."""
    unit, out = row.get("unit", ""), []
    for key, limit in sorted(row.get("target", {}).items()):
        if key == "ratio_max":
            value, text = ratio(m), f"ratio <= {limit}"
        elif key in ("p50_max", "p99_max"):
            value, text = getattr(m, key[:3]), f"{key[:3]} <= {limit} {unit}"
        else:
            raise Missing(f'baseline row "{row["name"]}": unknown target "{key}"')
        out.append((value <= limit, text))
    return out


def met(ok):
    return "met" if ok else "not met"


def sides(m, unit):
    """greenctx's p50 and p99 over its twin's, and their ratio."""
    return (f"{m.p50:.3f} (p99 {m.p99:.3f}) {unit} / {m.twin_p50:.3f} "
            f"(p99 {m.twin_p99:.3f}) = {ratio(m):.4g}")


def check(baseline, bench, compare):
    """Prints a line per figure, then the targets met; returns (regressions, errors, measures
    by name)."""
    tolerance = baseline.get("tolerance", 0.20)
    regressions, errors, measured, missed, missed_quiet, nb_targets = [], [], {}, [], [], 0
    for row in baseline["rows"]:
        name = row["name"]
        if name not in FIGURES:
            errors.append(f'baseline row "{name}": no such figure (known: {", ".join(FIGURES)})')
            continue
        try:
            m = FIGURES[name][0](bench, compare)
            if m is None:
                print(f"{name:18} not checked: needs bench/compare/run_all.py's output (--compare)")
                continue
            every = verdicts(row, m)
            quiet = verdicts(row, m.quiet.measure) if m.quiet else every  # else the same
        except Missing as e:
            errors.append(f"{name}: {e}")
            continue
        measured[name] = m
        nb_targets += len(every)
        missed += [f"{name} {text}" for ok, text in every if not ok]
        missed_quiet += [f"{name} {text}" for ok, text in quiet if not ok]
        unit, recorded = row.get("unit", ""), row.get("ratio")
        line = f"{name:18} {sides(m, unit)}"
        if recorded is None:
            line += ", no recorded ratio yet (--write-baseline records this one)"
        else:
            change = ratio(m) / recorded - 1
            line += f", recorded {recorded:.4g} ({change:+.0%})"
            if change > tolerance:
                line += f": REGRESSED (more than {tolerance:.0%} above)"
                regressions.append(name)
        for (ok, text), (quiet_ok, _) in zip(every, quiet):
            line += f"; target {text}: {met(ok)}"
            if m.quiet:
                line += f" (quiet reps: {met(quiet_ok)})"
        print(line)
        if m.quiet:
            q = m.quiet
            print(f"{'':18} quiet reps {q.reps[0]} / {q.reps[1]} of {q.of_reps}: "
                  f"{sides(q.measure, unit)}")
    for reps, not_met in (("", missed), (" over quiet reps where a row has them", missed_quiet)):
        print(f"issue 20's targets{reps}: {nb_targets - len(not_met)} of {nb_targets} met"
              + (f"; not met: {', '.join(not_met)}" if not_met else ""))
    return regressions, errors, measured


def written_baseline(baseline, bench, compare, measured):
    source = bench.get("meta", {})
    versions = {r["lib"]: r["version"] for r in compare or [] if "version" in r}
    out = dict(baseline, rows=[])
    run = (f'{source.get("gpu")}, driver {source.get("driver")} ({source.get("driver_version")}), '
           f'{source.get("date")}, `{source.get("command")}`')
    for row in baseline["rows"]:
        m = measured.get(row["name"])
        if m:
            row = dict(row, ratio=round(ratio(m), 6), greenctx_p50=m.p50, by_hand_p50=m.twin_p50)
            row["from"] = run
            if FIGURES[row["name"]][1] == "compare":
                row["from"] += "".join(f", {lib} {v}" for lib, v in sorted(versions.items()))
        out["rows"].append(row)
    return out


def read_json(path, what, parse=json.load):
    try:
        with open(path) as f:
            return parse(f)
    except (OSError, ValueError) as e:
        raise Missing(f"{what} {path} cannot be read: {e}") from e


def json_lines(f):
    """The JSON objects among run_all.py's output lines (its table lines are not JSON)."""
    def parsed(line):
        try:
            return json.loads(line)
        except ValueError:
            return None
    return [row for row in map(parsed, f) if isinstance(row, dict)]


def run_bench(tool, out):
    """Runs the quick overhead bench into out/bench.json; a skip reason, or None."""
    if "greenctx_sim" in os.environ.get("GREENCTX_CUDA_LIBRARY", ""):
        return ("needs the real driver: GREENCTX_CUDA_LIBRARY names the simulated one, whose "
                "timings mean nothing (make test-gpu runs this check)")
    if subprocess.run([tool, "info"], capture_output=True).returncode != 0:
        return "no CUDA driver on this machine (`greenctx info` failed)"
    path = os.path.join(out, "bench.json")
    with open(path, "w") as stdout, open(os.path.join(out, "bench.err"), "w") as stderr:
        rc = subprocess.run([tool, "bench", "overhead", "--quick", "--json"], stdout=stdout,
                            stderr=stderr, timeout=600).returncode
    if rc != 0:
        raise Missing(f"`{tool} bench overhead --quick --json` exited {rc} "
                      f"(see {out}/bench.err)")
    if read_json(path, "the bench JSON").get("meta", {}).get("simulated"):
        return "needs the real driver: the bench ran on the simulated one (timings meaningless)"
    return None


def run_compare(library, out):
    """bench/compare/run_all.py into out/compare.txt; its path, or None (said why)."""
    if not library:
        print("python_split: not run: --library (libgreenctx.so) not given")
        return None
    if importlib.util.find_spec("cuda") is None or importlib.util.find_spec("cuda.core") is None:
        print(f"python_split: not run: {sys.executable} does not import cuda.core")
        return None
    path = os.path.join(out, "compare.txt")
    env = dict(os.environ, GREENCTX_LIBRARY=library,
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(ROOT, "python"),
                                                        os.environ.get("PYTHONPATH")])))
    with open(path, "w") as stdout:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compare", "run_all.py")],
                       stdout=stdout, stderr=subprocess.STDOUT, env=env, timeout=1200)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--bench", help="`greenctx bench overhead --json`'s document")
    source.add_argument("--run", metavar="TOOL", help="run the quick bench with this greenctx")
    p.add_argument("--compare", help="bench/compare/run_all.py's output (with --bench)")
    p.add_argument("--library", help="libgreenctx.so for the Python comparison (with --run)")
    p.add_argument("--out", help="where --run keeps its outputs")
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--write-baseline", metavar="FILE", help="the baseline with this run's ratios")
    args = p.parse_args()
    try:
        baseline = read_json(args.baseline, "the baseline")
        if args.run:
            out = args.out or os.environ.get("GREENCTX_GPU_OUT") or tempfile.mkdtemp(
                prefix="greenctx-regression-")
            os.makedirs(out, exist_ok=True)
            skip = run_bench(args.run, out)
            if skip:
                print(skip)
                return SKIP
            args.bench = os.path.join(out, "bench.json")
            args.compare = run_compare(args.library, out)
            print(f"outputs in {out}")
        bench = read_json(args.bench, "the bench JSON")
        if bench.get("meta", {}).get("simulated"):
            raise Missing(f"{args.bench} was measured on the simulated driver: its timings "
                          "mean nothing")
        compare = (read_json(args.compare, "the compare output", json_lines) if args.compare
                   else None)
    except Missing as e:
        print(f"check_regression: {e}", file=sys.stderr)
        return 2
    meta = bench.get("meta", {})
    print(f"{meta.get('gpu')}, driver {meta.get('driver')}, {meta.get('date')}: "
          f"`{meta.get('command')}` against {args.baseline}")
    regressions, errors, measured = check(baseline, bench, compare)
    if args.write_baseline:
        with open(args.write_baseline, "w") as f:
            json.dump(written_baseline(baseline, bench, compare, measured), f, indent=2)
            f.write("\n")
        print(f"wrote {args.write_baseline}")
    for e in errors:
        print(f"check_regression: {e}", file=sys.stderr)
    if errors:
        return 2
    if regressions:
        print(f"regressed: {', '.join(regressions)}")
        return 1
    print("no ratio regressed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

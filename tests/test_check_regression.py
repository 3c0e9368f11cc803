#!/usr/bin/env python3
"""scripts/check_regression.py on made-up inputs: a pass, a regression, a figure missing from
the bench's JSON or the comparison's output (a clear error, exit 2), a figure with no recorded
ratio yet, the simulated driver refused, the targets reported, and --write-baseline."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "check_regression.py")


def summary(p50, p99=None, n=50):
    return {"n": n, "min": p50, "p50": p50, "p99": p99 or p50 * 1.5, "max": p99 or p50 * 1.5}


def bench_doc(split=(6.15, 4.98), repartition=(21.36, 2277.71), simulated=False):
    ops = [{"op": "split", "valid": True, "greenctx_us": summary(split[0]),
            "raw_driver_us": summary(split[1])},
           {"op": "repartition", "valid": True, "greenctx_us": summary(repartition[0]),
            "raw_driver_us": summary(repartition[1])}]
    rows = {"valid": True,
            "repartition_cache_us": summary(13.18), "repartition_no_cache_us": summary(2360.61),
            "layout_switch_host_us": summary(1.25, 1.86),
            "layout_switch_by_hand_us": summary(0.72),
            "layout_switch_barrier_by_hand_us": summary(0.90),
            "layout_switch_by_part_host_us": summary(0.80, 1.10),
            "layouts_16x2_cold_ms_summary": summary(37.6), "layouts_16x2_by_hand_ms": summary(33.0)}
    return {"schema": "greenctx.bench/2",
            "meta": {"gpu": "NVIDIA H200", "driver": "13.0", "driver_version": 13000,
                     "date": "2026-12-01T00:00:00Z", "simulated": simulated,
                     "command": "greenctx bench overhead --quick --json"},
            "overhead": {"ops": ops, "repartitioning": rows}}


def baseline_doc():
    def row(name, ratio, target):
        return {"name": name, "ratio": ratio, "unit": "us", "from": "made up", "target": target}
    return {"schema": "greenctx.baseline/1", "tolerance": 0.20, "rows": [
        row("split", 1.237, {"ratio_max": 1.05}),
        row("layout_switch", None, {"p50_max": 1.0, "p99_max": 2.0}),
        row("layout_switch_by_part", None, {"p50_max": 1.0, "p99_max": 2.0}),
        row("layouts_16_cold", None, {"ratio_max": 1.1}),
        row("repartition", 0.009378, {"p50_max": 10.0}),
        row("repartition_cache", 0.005583, {"p50_max": 10.0}),
        row("python_split", 2.106, {"ratio_max": 1.5})]}


COMPARE = """== creation cost (a table line that is not JSON)
{"lib": "cuda.core", "version": "1.2.0"}
{"lib": "greenctx-py", "op": "split 16, side by side", "reps": 50, "p50_us": 13.65, "p99_us": 34.69}
{"lib": "cuda.core", "op": "split 16, side by side", "reps": 50, "p50_us": 6.48, "p99_us": 10.61}
"""


class CheckRegression(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, content):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def check(self, bench, *args, baseline=None):
        cmd = [sys.executable, SCRIPT, "--bench", self.write("bench.json", bench),
               "--baseline", self.write("baseline.json", baseline or baseline_doc()), *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def test_the_recorded_ratios_pass(self):
        rc, out, err = self.check(bench_doc())
        self.assertEqual(rc, 0, out + err)
        self.assertIn("no ratio regressed", out)
        self.assertIn("= 1.235, recorded 1.237 (-0%)", out)
        self.assertIn("python_split       not checked: needs bench/compare/run_all.py", out)
        self.assertIn("issue 20's targets: 3 of 8 met; not met: split ratio <= 1.05, "
                      "layout_switch p50 <= 1.0 us, layouts_16_cold ratio <= 1.1, "
                      "repartition p50 <= 10.0 us, repartition_cache p50 <= 10.0 us", out)

    def test_a_ratio_more_than_20_percent_above_fails(self):
        rc, out, _ = self.check(bench_doc(split=(6.15 * 1.25, 4.98)))  # 1.546: +25 %
        self.assertEqual(rc, 1, out)
        self.assertIn("split", out)
        self.assertIn("(+25%): REGRESSED (more than 20% above)", out)
        self.assertIn("regressed: split", out)

    def test_within_the_tolerance_passes(self):
        rc, out, _ = self.check(bench_doc(split=(6.15 * 1.15, 4.98)))
        self.assertEqual(rc, 0, out)
        self.assertIn("(+15%); target ratio <= 1.05: not met", out)

    def test_faster_is_no_regression(self):
        rc, out, _ = self.check(bench_doc(repartition=(8.0, 2277.71)))
        self.assertEqual(rc, 0, out)
        self.assertIn("target p50 <= 10.0 us: met", out)

    def test_a_missing_row_is_a_clear_error(self):
        doc = bench_doc()
        doc["overhead"]["ops"] = [o for o in doc["overhead"]["ops"] if o["op"] != "repartition"]
        rc, _, err = self.check(doc)
        self.assertEqual(rc, 2)
        self.assertIn('repartition: the bench JSON\'s overhead table has no "repartition" row',
                      err)

    def test_a_row_not_measured_says_why(self):
        doc = bench_doc()
        doc["overhead"]["ops"][1] = {"op": "repartition", "valid": False,
                                     "note": "skipped: 528 SMs is no legal second ratio"}
        rc, _, err = self.check(doc)
        self.assertEqual(rc, 2)
        self.assertIn('"repartition" row was not measured: skipped: 528 SMs', err)

    def test_a_missing_twin_is_a_clear_error(self):
        doc = bench_doc()
        del doc["overhead"]["repartitioning"]["layout_switch_barrier_by_hand_us"]
        rc, _, err = self.check(doc)
        self.assertEqual(rc, 2)
        self.assertIn('layout_switch: the re-partitioning rows has no '
                      '"layout_switch_barrier_by_hand_us"', err)

    def test_an_unknown_baseline_row_is_an_error(self):
        baseline = baseline_doc()
        baseline["rows"].append({"name": "teleport", "ratio": 1.0})
        rc, _, err = self.check(bench_doc(), baseline=baseline)
        self.assertEqual(rc, 2)
        self.assertIn('baseline row "teleport": no such figure', err)

    def test_no_recorded_ratio_is_reported_not_failed(self):
        rc, out, _ = self.check(bench_doc())
        self.assertEqual(rc, 0)
        self.assertIn("layout_switch      1.250 (p99 1.860) us / 0.900", out)
        self.assertIn("no recorded ratio yet", out)
        self.assertIn("target p50 <= 1.0 us: not met; target p99 <= 2.0 us: met", out)

    def test_the_switch_by_part_beside_the_same_twin(self):
        rc, out, _ = self.check(bench_doc())
        self.assertEqual(rc, 0, out)
        self.assertIn("layout_switch_by_part 0.800 (p99 1.100) us / 0.720", out)
        self.assertIn("target p50 <= 1.0 us: met; target p99 <= 2.0 us: met", out)
        doc = bench_doc()
        del doc["overhead"]["repartitioning"]["layout_switch_by_part_host_us"]
        rc, _, err = self.check(doc)
        self.assertEqual(rc, 2)
        self.assertIn('layout_switch_by_part: the re-partitioning rows has no '
                      '"layout_switch_by_part_host_us"', err)

    def test_targets_over_quiet_reps_beside_every_rep(self):
        # A switch by part of 1.40 us over every rep and 0.80 over the 1200 of 3200 reps whose
        # host check was quiet; the split's ratio over its quiet reps.
        doc = bench_doc(split=(5.10, 4.80))
        rows = doc["overhead"]["repartitioning"]
        rows["layout_switch_by_part_host_us"] = summary(1.40, 2.50, n=3200)
        rows["layout_switch_by_part_host_quiet_us"] = summary(0.80, 1.50, n=1200)
        rows["layout_switch_by_hand_quiet_us"] = summary(0.78, 1.40, n=1200)
        split = doc["overhead"]["ops"][0]
        split["greenctx_quiet_us"] = summary(4.60, n=30)
        split["raw_driver_quiet_us"] = summary(4.50, n=28)
        rc, out, _ = self.check(doc)
        self.assertEqual(rc, 0, out)
        self.assertIn("layout_switch_by_part 1.400 (p99 2.500) us / 0.720 (p99 1.080) = 1.944, "
                      "no recorded ratio yet (--write-baseline records this one); "
                      "target p50 <= 1.0 us: not met (quiet reps: met); "
                      "target p99 <= 2.0 us: not met (quiet reps: met)", out)
        self.assertIn("quiet reps 1200 / 1200 of 3200: 0.800 (p99 1.500) us / 0.780 (p99 1.400) = 1.026",
                      out)
        self.assertIn("target ratio <= 1.05: not met (quiet reps: met)", out)  # 1.0625, 1.022
        self.assertIn("quiet reps 30 / 28 of 50: 4.600", out)
        self.assertIn("issue 20's targets: 1 of 8 met; not met: split ratio <= 1.05, "
                      "layout_switch p50 <= 1.0 us, layout_switch_by_part p50 <= 1.0 us, "
                      "layout_switch_by_part p99 <= 2.0 us, layouts_16_cold ratio <= 1.1, "
                      "repartition p50 <= 10.0 us, repartition_cache p50 <= 10.0 us\n", out)
        self.assertIn("issue 20's targets over quiet reps where a row has them: 4 of 8 met; "
                      "not met: layout_switch p50 <= 1.0 us, layouts_16_cold ratio <= 1.1, "
                      "repartition p50 <= 10.0 us, repartition_cache p50 <= 10.0 us", out)

    def test_a_side_with_no_quiet_rep_gives_no_quiet_verdict(self):
        doc = bench_doc()
        rows = doc["overhead"]["repartitioning"]
        rows["layout_switch_by_part_host_quiet_us"] = summary(0.80, n=40)
        rows["layout_switch_by_hand_quiet_us"] = summary(0, n=0)
        rc, out, _ = self.check(doc)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("quiet reps:", out)
        self.assertNotIn("quiet reps 40 /", out)

    def test_the_simulated_driver_is_refused(self):
        rc, _, err = self.check(bench_doc(simulated=True))
        self.assertEqual(rc, 2)
        self.assertIn("measured on the simulated driver: its timings mean nothing", err)

    def test_the_python_split_against_cuda_core(self):
        rc, out, _ = self.check(bench_doc(), "--compare", self.write("compare.txt", COMPARE))
        self.assertEqual(rc, 0, out)
        self.assertIn("python_split       13.650", out)
        self.assertIn("= 2.106, recorded 2.106 (+0%); target ratio <= 1.5: not met", out)

    def test_a_comparison_without_cuda_core_is_a_clear_error(self):
        compare = "\n".join(l for l in COMPARE.splitlines() if '"cuda.core", "op"' not in l)
        rc, _, err = self.check(bench_doc(), "--compare", self.write("compare.txt", compare))
        self.assertEqual(rc, 2)
        self.assertIn('python_split: the compare output has no "split 16, side by side" row of cuda.core', err)

    def test_write_baseline_records_this_runs_ratios(self):
        path = os.path.join(self.dir.name, "new.json")
        rc, out, _ = self.check(bench_doc(), "--compare", self.write("compare.txt", COMPARE),
                                "--write-baseline", path)
        self.assertEqual(rc, 0, out)
        with open(path) as f:
            rows = {r["name"]: r for r in json.load(f)["rows"]}
        self.assertAlmostEqual(rows["layout_switch"]["ratio"], 1.25 / 0.90, places=5)
        self.assertIn("2026-12-01T00:00:00Z", rows["layout_switch"]["from"])
        self.assertIn("cuda.core 1.2.0", rows["python_split"]["from"])
        self.assertEqual(rows["split"]["target"], {"ratio_max": 1.05})

    def test_the_checked_in_baseline_holds_for_the_runs_it_came_from(self):
        # bench/results/baseline.json records the highest ratio of the H200 runs checked in
        # beside it (GPU calls: full runs of the overhead bench and the quick one of
        # bench.regression, each call with its one comparison): each passes against it, every
        # row checked (python_split included).
        results = os.path.join(ROOT, "bench", "results")
        with open(os.path.join(results, "baseline.json")) as f:
            baseline = json.load(f)
        calls = {"T0523": 2, "T0524": 3, "T0801": 3, "T0809": 3, "T0821": 2}  # the call's time: its runs
        runs = [(f"{c}-run{i}", f"{c}.txt") for c, n in calls.items() for i in range(1, n + 1)]
        runs += [(f"{c}-quick", f"{c}-quick.txt") for c in ("T0800", "T0809", "T0820")]
        for run, compare in runs:
            with open(os.path.join(results, f"overhead-2026-12-02{run}.json")) as f:
                bench = json.load(f)
            rc, out, err = self.check(bench, "--compare",
                                      os.path.join(results, f"compare-2026-12-02{compare}"),
                                      baseline=baseline)
            self.assertEqual(rc, 0, run + out + err)
            self.assertIn("no ratio regressed", out)
            self.assertNotIn("not checked", out)

    def test_run_skips_on_the_simulated_driver(self):
        env = dict(os.environ, GREENCTX_CUDA_LIBRARY="/x/libgreenctx_sim.so")
        p = subprocess.run([sys.executable, SCRIPT, "--run", "/nonexistent/greenctx"], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 77)
        self.assertIn("needs the real driver", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

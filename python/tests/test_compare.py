"""bench/compare/run_all.py on the simulated driver (issue 20): the greenctx-only run writes
the JSON another check reads (versions, rows, python_split_vs_cuda_core null with the reason);
a peer that is not installed is skipped, not failed; the ratio is the package's median and
p99 over cuda.core's."""
import json
import os
import runpy
import subprocess
import sys

import pytest

import greenctx
from conftest import SIM

COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                       "compare")
sys.path.insert(0, COMPARE)
import run_all  # noqa: E402

pytestmark = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


def test_greenctx_only_run_writes_the_record(sim, tmp_path):
    out = tmp_path / "compare.json"
    p = subprocess.run([sys.executable, os.path.join(COMPARE, "run_all.py"), "--only",
                        "greenctx", "--reps", "20", "--json", str(out)],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    record = json.loads(out.read_text())
    assert record["versions"] == {"greenctx": greenctx.__version__,
                                  "greenctx-py": greenctx.__version__,
                                  "cuda.core": None, "torch": None, "side by side": None}
    assert set(record["skipped"]) == {"cuda.core", "torch", "side by side"}
    assert record["device"] == greenctx.device_info(0).name
    assert record["driver_version"] == greenctx.driver_version() == 13010
    assert record["errors"] == []
    ops = {(r["lib"], r["op"]): r for r in record["rows"]}
    for lib in ("greenctx", "greenctx-py"):
        assert "error" not in ops[(lib, "split 16")], ops[(lib, "split 16")]
    for op in ("split 16", "16 SMs: context + stream", "GreenContext(num_sms=16)",
               "GreenContext.split {16, rest}", "stream on a context",
               "Stream() of a context's pool", "layout switch, 2 layouts of 2"):
        row = ops[("greenctx-py", op)]
        assert row["reps"] == 20 and 0 < row["min_us"] <= row["p50_us"] <= row["p99_us"], row
    assert record["python_split_vs_cuda_core"] is None
    assert "cuda.core" in record["python_split_vs_cuda_core_missing"]
    assert "== versions" in p.stdout and "skipped: not run (--only greenctx)" in p.stdout


def test_the_package_rows_run_with_torch_streams(sim, fake_torch, monkeypatch, capsys):
    """Where PyTorch sees CUDA, Stream() gives torch streams: the package's script closes
    them as it closes everything it makes (the H200 run's AttributeError: 'GreenStream' object
    has no attribute 'close'), and each row is measured."""
    monkeypatch.setenv("GREENCTX_COMPARE_REPS", "3")
    monkeypatch.syspath_prepend(COMPARE)
    monkeypatch.delitem(sys.modules, "common", raising=False)  # it reads the reps at import
    runpy.run_path(os.path.join(COMPARE, "compare_greenctx_python.py"), run_name="__main__")
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r for r in rows if "error" in r or r.get("ok") is False] == []
    ops = {r["op"]: r for r in rows if "op" in r}
    assert ops["Stream() of a context's pool"]["reps"] == 3
    assert len(ops) == 8, sorted(ops)


def test_the_c_rows_time_the_splits(sim):
    """The raw C library's splits ("split 16": the package's call, "{16, rest}": the one
    `greenctx bench overhead` times)."""
    p = subprocess.run([sys.executable, os.path.join(COMPARE, "compare_greenctx.py")],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, GREENCTX_COMPARE_REPS="3"))
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r for r in rows if "error" in r or r.get("ok") is False] == []
    ops = {r["op"]: r for r in rows if "op" in r}
    for op in ("split 16", "split {16, rest}"):
        assert ops[op]["reps"] == 3 and 0 < ops[op]["min_us"] <= ops[op]["p50_us"], op


@pytest.mark.parametrize("script, module", [("compare_cuda_core.py", "cuda"),
                                            ("compare_torch.py", "torch"),
                                            ("compare_split_side_by_side.py", "cuda")])
def test_a_missing_peer_is_skipped(script, module):
    """As on a machine without it: the import fails, the script says so and exits 0."""
    path = os.path.join(COMPARE, script)
    code = (f"import runpy, sys; sys.modules[{module!r}] = None; sys.path.insert(0, {COMPARE!r});"
            f" runpy.run_path({path!r}, run_name='__main__')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(lines) == 1 and lines[0]["skipped"].startswith("cannot import"), lines


def test_the_split_ratio_is_medians_and_p99s():
    """Of the two splits side by side in one process, not of each library's own process."""
    side = "split 16, side by side"
    rows = [{"lib": "greenctx-py", "op": side, "reps": 500, "p50_us": 6.0, "p99_us": 12.0},
            {"lib": "cuda.core", "op": side, "reps": 400, "p50_us": 4.0, "p99_us": 10.0},
            {"lib": "cuda.core", "op": "split 16", "reps": 400, "p50_us": 1.0, "p99_us": 1.0}]
    ratio, why = run_all.split_ratio(rows)
    assert why is None
    assert ratio == {"median": 1.5, "p99": 1.2, "reps": 400,
                     "greenctx_py_us": {"p50": 6.0, "p99": 12.0},
                     "cuda_core_us": {"p50": 4.0, "p99": 10.0}}
    ratio, why = run_all.split_ratio(rows[1:])
    assert ratio is None and why == f"no '{side}' measurement of greenctx-py"

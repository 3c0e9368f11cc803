"""tests/summary.py (make test's summary) and tests/docs_check.py (the docs test) on made-up
inputs: each must catch what it exists to catch.

    python3 tests/test_report_tools.py
"""
import contextlib
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_check  # noqa: E402
import summary  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite tests="5" failures="1" skipped="3">
 <testcase name="ok" status="run"><system-out>ok 1 a</system-out></testcase>
 <testcase name="broken" status="fail"><failure message="Failed"/>
  <system-out>line 1
FAIL: the plan gave 16 SMs, not 24</system-out></testcase>
 <testcase name="gpu" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
  <system-out>ok 1 x # SKIP needs a GPU
ok 2 y # SKIP needs a GPU
</system-out></testcase>
 <testcase name="py" status="notrun"><skipped/>
  <system-out>SKIPPED [2] test_gpu.py:12: no CUDA driver
1 skipped in 0.1s</system-out></testcase>
 <testcase name="slurm" status="notrun"><skipped/>
  <system-out>the SPANK plugin was not built
</system-out></testcase>
</testsuite>
"""


def run(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = fn(*args)
    return rc, out.getvalue()


def test_summary(tmp):
    path = os.path.join(tmp, "plain.xml")
    with open(path, "w") as f:
        f.write(JUNIT)
    rc, out = run(summary.main, [f"plain={path}", f"asan={tmp}/missing.xml"])
    assert rc == 1, out
    lines = out.splitlines()
    assert lines[-1] == "1 passed, 2 failed, 3 skipped", out
    assert "plain: 1 passed, 1 failed, 3 skipped (broken)" in lines, out
    assert any(line.startswith("asan: did not run") for line in lines), out
    for reason in ("gpu: needs a GPU", "py: no CUDA driver",
                   "slurm: the SPANK plugin was not built"):
        assert any(reason in line for line in lines), (reason, out)
    rc, out = run(summary.main, ["--run", f"plain={path}"])
    assert rc == 1 and "FAIL: the plan gave 16 SMs, not 24" in out, out
    ok = os.path.join(tmp, "ok.xml")
    with open(ok, "w") as f:
        f.write('<testsuite><testcase name="a" status="run"/></testsuite>')
    rc, out = run(summary.main, [f"tsan={ok}"])
    assert rc == 0 and out.splitlines()[-1] == "1 passed, 0 failed, 0 skipped", out


def test_docs_check(tmp):
    os.makedirs(os.path.join(tmp, "docs"))
    files = {
        "README.md": "See [run](docs/run.md#run), [gone](docs/gone.md), [web](https://x.org).\n",
        "docs/run.md": "Measured (`shared/measurements/h200.md`), fixed in issue 12.\n"
                       "Back to [the README](../README.md#top). On the lent machine.\n"
                       "[Here](#run) and [nowhere](#gone).\n\n# Run\n"
                       "The issue's targets; see `docs/run.md`, bench/gone.txt, docs/x-TRACE.svg.\n"
                       "```\ngreenctx bench --svg bench/out.svg\n```\n"
                       "pip install greenctx, or pip install greenctx-0.2.0-py3-none-any.whl\n"
                       "| a | b |\n| --- | --- |\n| short | " + "long " * 200 + "|\n"
                       "| `x | y` | z |\n| `x \\| y` | z |\n",
        "docs/chart.svg": "<svg><text>$ greenctx bench --svg /tmp/tmp.x/chart.svg</text></svg>\n",
    }
    for name, text in files.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    problems = "\n".join(docs_check.check(tmp))
    for needle in ("README.md:1: the link 'docs/gone.md' leads nowhere",
                   "docs/run.md:1: 'shared/measurements'", "docs/run.md:1: 'issue 12'",
                   "docs/run.md:2: 'lent machine'", "docs/chart.svg:1: '/tmp/'",
                   "docs/run.md:2: the link '../README.md#top' names no heading there",
                   "docs/run.md:3: the link '#gone' names no heading there",
                   "docs/run.md:6: \"The issue's\"",
                   "docs/run.md:6: 'bench/gone.txt' is no file of the tree",
                   "docs/run.md:10: 'pip install greenctx': greenctx is not on PyPI",
                   "docs/run.md:10: 'greenctx-0.2.0-py3': a wheel named with a version",
                   "docs/run.md:13: a table cell of 1001 characters",
                   "docs/run.md:14: a table row of 3 cells under a header of 2"):
        assert needle in problems, (needle, problems)
    # A link out, a file that is there, a placeholder, a command's output file: no problem.
    for fine in ("'#run'", "x.org", "'docs/run.md'", "TRACE", "bench/out.svg", "run.md:15:"):
        assert fine not in problems, (fine, problems)


def test_first_screens(tmp):
    os.makedirs(os.path.join(tmp, "include"))
    files = {"README.md": "# x\n![a chart](gone.svg)\n| | greenctx | MPS |\n",
             "BENCHMARKS.md": "# Benchmarks\n\n## Results\n",
             "CHANGELOG.md": "## 0.3.0 (today)\n",
             "include/greenctx.h": "#define GCTX_VERSION_MAJOR 0\n#define GCTX_VERSION_MINOR 4\n"
                                   "#define GCTX_VERSION_PATCH 1\n"}
    for name, text in files.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    problems = "\n".join(docs_check.first_screens(tmp))
    for needle in ("README.md: no picture", "README.md: no table", "BENCHMARKS.md: does not open",
                   "CHANGELOG.md: no '## 0.4.1' section", "CHANGELOG.md: no '## 0.1.0' section"):
        assert needle in problems, (needle, problems)
    with open(os.path.join(tmp, "README.md"), "w") as f:
        f.write("# x\n![a chart](c.svg)\n| | greenctx | MPS | MIG | PyTorch |\n")
    open(os.path.join(tmp, "c.svg"), "w").close()
    assert "README" not in "\n".join(docs_check.first_screens(tmp))


if __name__ == "__main__":
    for test in (test_summary, test_docs_check, test_first_screens):
        with tempfile.TemporaryDirectory() as tmp:
            test(tmp)
        print("ok", test.__name__)

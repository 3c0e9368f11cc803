"""The wheel on its own: copied to a fresh directory and installed into a fresh virtual
environment (from the file, nothing downloaded), with no build tree to lean on (the wheel is
built from the sdist in a temporary directory that is gone by now, scripts/build_wheel.sh)
and no GREENCTX_* or PYTHONPATH variable, it must give a pip-only user everything: the
`greenctx` command and `python -m greenctx`, the simulated driver (--sim, simulate()), `greenctx
run` with its preload, the PyTorch documentation's examples, the licence and NOTICE, the typing
marker, the headers, the man page and the completions. Its tag is a glibc baseline
(manylinux_X_Y): no bundled ELF file may need a GLIBC_ symbol version newer than X.Y (readelf),
or the wheel would be refused at load time on the distributions the tag promises. Every
command runs on a runtime directory of its own (GREENCTX_RUNTIME_DIR), never the user's.

    python3 wheel_check.py WHEEL_DIR WORKDIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

EXAMPLES = """
import sys
import greenctx
greenctx.simulate("h200@13000")
import pytorch_examples
first, second = pytorch_examples.split_a_remainder_through_a_context()
a, b = pytorch_examples.split_contexts()
got = (first.sm_count, second.sm_count, a.sm_count, b.sm_count)
assert got == (4, 4, 24, 40), got
assert a.relation(b) == greenctx.Relation.DISJOINT
assert greenctx.GreenContext.create(1, 0).sm_count == 8  # PyTorch's own tests' call
assert greenctx.library_path().startswith(sys.argv[1]), greenctx.library_path()
print("examples on the simulated H200:", got, "from", greenctx.library_path())
"""


def step(what, cmd, env, cwd, expect=0, needles=()):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    print(f"$ {' '.join(cmd)} -> {r.returncode}")
    print(r.stdout + r.stderr)
    if r.returncode != expect:
        raise SystemExit(f"FAIL: {what}: exit status {r.returncode}, expected {expect}")
    for needle in needles:
        if needle not in r.stdout + r.stderr:
            raise SystemExit(f"FAIL: {what}: the output lacks {needle!r}")
    return r.stdout


def check_glibc_baseline(wheel, native):
    """Every ELF file under native needs GLIBC_ versions no newer than the wheel tag's."""
    x, y = map(int, re.search(r"-manylinux_(\d+)_(\d+)_", os.path.basename(wheel)).groups())
    elf = 0
    for path in glob.glob(os.path.join(native, "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        elf += 1
        out = subprocess.run(["readelf", "-V", "--wide", path], check=True, capture_output=True,
                             text=True).stdout
        needs = {(int(a), int(b)) for a, b in re.findall(r"GLIBC_(\d+)\.(\d+)", out)}
        newest = max(needs, default=(2, 0))
        if newest > (x, y):
            raise SystemExit(f"FAIL: {os.path.relpath(path, native)} needs GLIBC_"
                             f"{newest[0]}.{newest[1]}, newer than the wheel's manylinux_{x}_{y}")
    if elf < 4:
        raise SystemExit(f"FAIL: {elf} ELF files under {native}, expected the tool and 3 "
                         "libraries")
    print(f"{elf} ELF files need glibc {x}.{y} at most, as the tag says")


def main(wheel_dir, workdir):
    wheels = glob.glob(os.path.join(wheel_dir, "greenctx-*-py3-none-manylinux_*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"FAIL: expected one greenctx py3-none-manylinux wheel in {wheel_dir}, "
                         f"found {wheels}")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    wheel = shutil.copy(wheels[0], workdir)
    for helper in ("pytorch_examples.py", "run_probe.py"):
        shutil.copy(os.path.join(HERE, helper), workdir)
    venv = os.path.join(workdir, "venv")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GREENCTX_") and k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["GREENCTX_RUNTIME_DIR"] = os.path.join(workdir, "runtime")  # not the user's registry
    step("a virtual environment", [sys.executable, "-m", "venv", venv], env, workdir)
    py, tool = os.path.join(venv, "bin", "python"), os.path.join(venv, "bin", "greenctx")
    step("pip install of the wheel alone",
         [py, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", wheel], env, workdir)
    site = step("site-packages", [py, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                  "['platlib'])"], env, workdir).strip()
    native = os.path.join(site, "greenctx", "_native")
    check_glibc_baseline(wheel, native)
    missing = [rel for rel in ("include/greenctx.h", "include/greenctx_claims.h",
                               "include/greenctx_controller.h", "include/greenctx.hpp",
                               "include/greenctx_sim.h", "share/man/man1/greenctx.1",
                               "share/bash-completion/completions/greenctx",
                               "share/zsh/site-functions/_greenctx")
               if not os.path.isfile(os.path.join(native, rel))]
    if missing:
        raise SystemExit(f"FAIL: the wheel lacks {missing} under greenctx/_native")

    step("the console script's plan", [tool, "--sim", "h200", "plan", "24", "40", "rest"], env,
         workdir, needles=("simulated driver: h200", "0      24             24",
                           "1      40             40", "2      rest           68"))
    step("python -m greenctx", [py, "-m", "greenctx", "--version"], env, workdir,
         needles=("greenctx ",))
    # greenctx run: the bundled preload confines an unmodified program to 16 SMs; the probe
    # fails on any other count, so a preload that was not found or not applied fails here.
    step("greenctx run on the simulated driver",
         [tool, "--sim", "h200", "run", "--sms", "16", "--", py, "run_probe.py", "16"], env,
         workdir, needles=("greenctx run: device 0: 16 of 132 SMs",
                           "the stream runs on 16 SMs"))
    step("the PyTorch documentation's examples", [py, "-c", EXAMPLES, site], env, workdir,
         needles=("examples on the simulated H200: (4, 4, 24, 40)",))
    step("licence and typing", [py, "-c", """
import importlib.metadata as m, os, greenctx
meta = m.metadata("greenctx")
assert meta["License-Expression"] == "Apache-2.0", meta["License-Expression"]
files = [str(f) for f in m.files("greenctx")]
assert any(f.endswith("licenses/LICENSE") for f in files), files
assert any(f.endswith("licenses/NOTICE") for f in files), files
assert os.path.exists(os.path.join(os.path.dirname(greenctx.__file__), "py.typed"))
print("licence", meta["License-Expression"], "NOTICE and py.typed present")
"""], env, workdir, needles=("licence Apache-2.0",))
    print("the installed wheel works on its own")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

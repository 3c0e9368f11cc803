"""`pip install <checkout>` into a fresh folder, and `pip install -e` of a copy of the checkout
into a fresh virtual environment; then each installed package on its own: it imports, uses
the C library built into it (not the build tree's), splits the simulated H200 through
greenctx.simulate(), and (editable) its `greenctx` command works. Prints how long each
install took.

    python3 install_check.py CHECKOUT WORKDIR [--no-editable]

Both builds need setuptools 77+ and CMake; this Python's setuptools when it has it (the
tests' environment does), else pip's isolated build (from PyPI).
"""
import os
import shutil
import subprocess
import sys
import time

from venv_setup import parent_site_dirs

SMOKE = """
import greenctx, sys
from greenctx import SMPartition, GreenContext
lib = greenctx.library_path()
assert lib.startswith(sys.argv[1]), lib
greenctx.simulate("h200")
(a, b), rest = SMPartition.from_device(0).split(num_sms=(24, 40), coscheduled_sm_count=8)
ctx = GreenContext(sm_partition=a)
assert (a.sm_count, b.sm_count, ctx.sm_count) == (24, 40, 24)
print("installed greenctx", greenctx.__version__, "loads", lib)
"""
# The checkout minus what builds and tests leave in it.
IGNORED = shutil.ignore_patterns(".git", "build*", "dist", "__pycache__", "_native", "*.egg-info",
                                 ".venv")


def run(cmd, **kwargs):
    print("$", " ".join(cmd), flush=True)
    start = time.monotonic()
    r = subprocess.run(cmd, **kwargs)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
    return time.monotonic() - start


def has_setuptools_77():
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


def main(checkout, workdir, editable=True):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GREENCTX_") and k not in ("PYTHONPATH",)}
    env["PIP_ROOT_USER_ACTION"] = "ignore"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["GREENCTX_RUNTIME_DIR"] = os.path.join(workdir, "runtime")  # not the user's registry

    # 1. pip install <checkout> --target: this Python builds it (setuptools 77+, CMake).
    isolation = ["--no-build-isolation"] if has_setuptools_77() else []
    target = os.path.join(workdir, "site")
    seconds = run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *isolation,
                   "--target", target, checkout], env=env)
    print(f"pip install took {seconds:.1f} s")
    run([sys.executable, "-c", SMOKE, target], env=dict(env, PYTHONPATH=target), cwd=workdir)
    if not editable:
        return 0

    # 2. pip install -e of a copy (the editable build writes into its source tree), into a
    # fresh environment that sees this Python's packages (setuptools, for the build).
    copy = os.path.join(workdir, "checkout")
    shutil.copytree(checkout, copy, ignore=IGNORED, symlinks=True)
    venv = os.path.join(workdir, "venv")
    run([sys.executable, "-m", "venv", venv], env=env)
    py = os.path.join(venv, "bin", "python")
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    with open(os.path.join(purelib, "zz_parent.pth"), "w") as f:
        f.write("\n".join(parent_site_dirs()) + "\n")
    if isolation:  # the build uses this Python's setuptools, not the older one venv bundles
        run([py, "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"], env=env)
    seconds = run([py, "-m", "pip", "install", "--quiet", "--no-deps", *isolation, "-e", copy],
                  env=env)
    print(f"pip install -e took {seconds:.1f} s")
    run([py, "-c", SMOKE, os.path.join(copy, "python", "greenctx")], env=env, cwd=workdir)
    run([os.path.join(venv, "bin", "greenctx"), "--sim", "h200", "plan", "24", "40", "rest"],
        env=env, cwd=workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], editable="--no-editable" not in sys.argv[3:]))

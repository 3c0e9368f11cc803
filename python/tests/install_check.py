"""`pip install <checkout>` into a fresh folder, then the installed package on its own: it
imports, uses the C library built into it (not the build tree's), and splits the simulated
H200. Prints how long the install took (the target: under a minute on 2 cores).

    python3 install_check.py CHECKOUT WORKDIR
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import time

SKIPPED = 77

SMOKE = """
import greenctx, os, sys
from greenctx import SMPartition, GreenContext
lib = greenctx.library_path()
assert lib.startswith(sys.argv[1]), lib
(a, b), rest = SMPartition.from_device(0).split(num_sms=(24, 40), coscheduled_sm_count=8)
ctx = GreenContext(sm_partition=a)
assert (a.sm_count, b.sm_count, ctx.sm_count) == (24, 40, 24)
print("installed greenctx", greenctx.__version__, "loads", lib)
"""


def can_build_without_isolation():
    """This Python has what the build needs (setuptools 61+ and a bdist_wheel)."""
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    if major < 61:
        return False
    if (major, minor) >= (70, 1):  # bdist_wheel is part of setuptools from 70.1
        return True
    return importlib.util.find_spec("wheel") is not None


def main(checkout, workdir):
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        print("pip is not installed: cannot check `pip install`")
        return SKIPPED
    target = os.path.join(workdir, "site")
    shutil.rmtree(target, ignore_errors=True)
    # Without isolation when this Python can build it: nothing to download.
    no_isolation = ["--no-build-isolation"] if can_build_without_isolation() else []
    start = time.monotonic()
    os.environ["PIP_ROOT_USER_ACTION"] = "ignore"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", *no_isolation,
                        "--target", target, checkout])
    seconds = time.monotonic() - start
    if r.returncode != 0:
        print(f"pip install {checkout} failed ({r.returncode})")
        return 1
    print(f"pip install took {seconds:.1f} s")
    env = {k: v for k, v in os.environ.items() if k not in ("GREENCTX_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = target
    r = subprocess.run([sys.executable, "-c", SMOKE, target], env=env, cwd=workdir)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

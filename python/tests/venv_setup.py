"""The Python tests' interpreter: a virtual environment (under the build tree) made from this
Python, that also sees this Python's own packages (PyTorch and cuda.core where they are
installed) and holds what the suites need, installed from PyPI when missing. CTest runs it
first (the python_venv fixture), so a machine without pytest gets it instead of a suite
that silently proves nothing; a failure here fails every Python test, loudly.

    python3 venv_setup.py VENV REQUIREMENT...     (e.g. pytest "setuptools>=77")
"""
import os
import site
import subprocess
import sys
import sysconfig

CHECK = r"""
import importlib.metadata as m, re, sys
missing = []
for spec in sys.argv[1:]:
    name, _, low = spec.partition(">=")
    try:
        have = m.version(name)
    except m.PackageNotFoundError:
        missing.append(spec)
        continue
    def key(v):
        return tuple(int(x) for x in re.findall(r"\d+", v)[:3])
    if low and key(have) < key(low):
        missing.append(spec)
print(" ".join(missing))
"""


def parent_site_dirs():
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    for key in ("purelib", "platlib"):
        dirs.append(sysconfig.get_paths()[key])
    return [d for i, d in enumerate(dirs) if os.path.isdir(d) and d not in dirs[:i]]


def main(venv, requirements):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        r = subprocess.run([sys.executable, "-m", "venv", venv])
        if r.returncode != 0:
            print(f"{sys.executable} -m venv failed: on Debian and Ubuntu install python3-venv "
                  f"(apt-get install python3-venv)")
            return 1
        purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                  "['purelib'])"], capture_output=True, text=True,
                                 check=True).stdout.strip()
        # After the environment's own packages: this Python's (PyTorch, cuda.core, ...).
        with open(os.path.join(purelib, "zz_greenctx_parent.pth"), "w") as f:
            f.write("\n".join(parent_site_dirs()) + "\n")
    missing = subprocess.run([py, "-c", CHECK, *requirements], capture_output=True,
                             text=True, check=True).stdout.split()
    if missing:
        print("installing from PyPI into", venv + ":", " ".join(missing), flush=True)
        r = subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--upgrade", *missing])
        if r.returncode != 0:
            print(f"pip install {' '.join(missing)} failed: the Python tests need them "
                  f"(a network to PyPI, or install them into {sys.executable})")
            return 1
    print(f"{py}: ready ({', '.join(requirements)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))

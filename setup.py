"""Builds the C library (src/*.c) into greenctx/_lib/libgreenctx.so while building the
package, with the C compiler alone ($CC, else Python's, else cc): no CMake, no CUDA toolkit.
The version comes from include/greenctx.h, so the package and the library always agree.
"""
import os
import re
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from glob import glob

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
CFLAGS = ["-std=c11", "-O2", "-fPIC", "-fvisibility=hidden", "-D_GNU_SOURCE", "-Wall",
          "-Wextra", "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "src")]
LDFLAGS = ["-shared", "-Wl,--version-script=" + os.path.join(ROOT, "src", "greenctx.map"),
           "-Wl,--no-undefined", "-Wl,-soname,libgreenctx.so", "-pthread", "-ldl"]


def version():
    with open(os.path.join(ROOT, "include", "greenctx.h")) as f:
        header = f.read()
    parts = [re.search(rf"#define GCTX_VERSION_{p} (\d+)", header).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def compiler():
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return cc.split()


def build_library(out_dir, tmp_dir):
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(tmp_dir, exist_ok=True)
    cc = compiler()
    sources = sorted(glob(os.path.join(ROOT, "src", "*.c")))

    def compile_one(src):
        obj = os.path.join(tmp_dir, os.path.basename(src)[:-2] + ".o")
        subprocess.run(cc + CFLAGS + ["-c", src, "-o", obj], check=True)
        return obj

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, sources))
    target = os.path.join(out_dir, "libgreenctx.so")
    subprocess.run(cc + objects + ["-o", target] + LDFLAGS, check=True)
    return target


class BuildPyWithLibrary(build_py):
    """build_py, then the C library into the built package's _lib/."""

    def run(self):
        super().run()
        out_dir = os.path.join(self.build_lib, "greenctx", "_lib")
        tmp_dir = os.path.join(os.path.dirname(self.build_lib), "greenctx-objects")
        self.announce(f"building libgreenctx.so from src/ with {' '.join(compiler())}", 2)
        build_library(out_dir, tmp_dir)


class BinaryDistribution(Distribution):
    """The package holds a compiled library: its wheel is tagged for this platform."""

    def has_ext_modules(self):
        return True


# Build files go to build-python/ (git-ignored), beside CMake's build directories.
os.makedirs(os.path.join(ROOT, "build-python"), exist_ok=True)
setup(version=version(), cmdclass={"build_py": BuildPyWithLibrary},
      distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(ROOT, "build-python")},
               "egg_info": {"egg_base": os.path.join(ROOT, "build-python")}})

"""Builds the native half of the package with CMake (the project's one build description) and
puts it inside the package, as `cmake --install` lays it out, under greenctx/_native/:

    bin/greenctx                    the tool (RUNPATH $ORIGIN/../lib), run by the console script
    lib/libgreenctx.so.0.MINOR      the C library the ctypes binding loads (its SONAME: one per
                                    minor before 1.0)
    lib/greenctx/libgreenctx_sim.so       the simulated driver (greenctx.simulate, --sim)
    lib/greenctx/libgreenctx_preload.so   what `greenctx run` preloads

The tool finds its two companions at <bindir>/../lib/greenctx/, as an installed tool does, so
the wheel needs nothing from the tree it was built in. The package has no Python extension:
the wheel is tagged py3-none-<platform>, the platform the manylinux tag of the newest glibc
symbol version its ELF files need (what `auditwheel show` checks; scripts/build_wheel.sh).
The version comes from include/greenctx.h, so the package and the library always agree.
"""
import os
import platform
import re
import shutil
import subprocess
from glob import glob

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "include", "greenctx.h")) as f:
        header = f.read()
    parts = [re.search(rf"#define GCTX_VERSION_{p} (\d+)", header).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def soname():
    """The library's SONAME, which the tool's NEEDED entry names: per minor before 1.0."""
    major, minor, _ = version().split(".")
    return f"libgreenctx.so.{major}.{minor}" if major == "0" else f"libgreenctx.so.{major}"


NATIVE_FILES = ("bin/greenctx", "lib/" + soname(), "lib/greenctx/libgreenctx_sim.so",
                "lib/greenctx/libgreenctx_preload.so")


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def build_native(native_dir, work_dir):
    """Configures, builds and installs the project into work_dir/stage, then copies the
    NATIVE_FILES into native_dir (files only: a wheel holds no symbolic links)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("building greenctx needs CMake 3.18+ (apt-get install cmake, or "
                           "pip install cmake)")
    build, stage = os.path.join(work_dir, "cmake"), os.path.join(work_dir, "stage")
    run([cmake, "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
         "-DGREENCTX_BUILD_TESTS=OFF", "-DGREENCTX_WERROR=OFF",
         "-DCMAKE_INSTALL_PREFIX=" + stage, "-DCMAKE_INSTALL_BINDIR=bin",
         "-DCMAKE_INSTALL_LIBDIR=lib"])
    run([cmake, "--build", build, "-j", str(os.cpu_count() or 2)])
    shutil.rmtree(stage, ignore_errors=True)
    run([cmake, "--install", build])
    shutil.rmtree(native_dir, ignore_errors=True)
    for rel in NATIVE_FILES:
        target = os.path.join(native_dir, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.realpath(os.path.join(stage, rel)), target)


def manylinux_tag(native_dir):
    """manylinux_X_Y_<arch>: X.Y the newest GLIBC_ symbol version any bundled ELF file needs
    (readelf -V), else this machine's glibc."""
    newest = (2, 17)
    try:
        for path in glob(os.path.join(native_dir, "**", "*"), recursive=True):
            if os.path.isfile(path):
                out = subprocess.run(["readelf", "-V", "--wide", path], check=True,
                                     capture_output=True, text=True).stdout
                for major, minor in re.findall(r"GLIBC_(\d+)\.(\d+)", out):
                    newest = max(newest, (int(major), int(minor)))
    except (OSError, subprocess.CalledProcessError):
        libc = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
        newest = tuple(int(x) for x in libc.split(".")[:2])
    return f"manylinux_{newest[0]}_{newest[1]}_{platform.machine()}"


class BuildPyWithNative(build_py):
    """build_py, then the native files into the built package (into the source tree's
    package for `pip install -e`, so that the editable package finds them)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            package = os.path.join(ROOT, "python", "greenctx")
        else:
            package = os.path.join(self.build_lib, "greenctx")
        build_native(os.path.join(package, "_native"),
                     os.path.join(ROOT, "build-python", "native"))


class Wheel(bdist_wheel):
    """Tagged py3-none-manylinux_X_Y_<arch>: any Python 3, no Python ABI, this platform."""

    def get_tag(self):
        return "py3", "none", manylinux_tag(os.path.join(self.bdist_dir, "greenctx", "_native"))


class BinaryDistribution(Distribution):
    """The package holds compiled files: its wheel is a platform wheel (platlib)."""

    def has_ext_modules(self):
        return True


# Build files go to build-python/ (git-ignored), beside CMake's build directories.
os.makedirs(os.path.join(ROOT, "build-python"), exist_ok=True)
setup(version=version(), cmdclass={"build_py": BuildPyWithNative, "bdist_wheel": Wheel},
      distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(ROOT, "build-python")},
               "egg_info": {"egg_base": os.path.join(ROOT, "build-python")}})

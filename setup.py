"""Builds the native half of the package with CMake (the project's one build description) and
puts it inside the package, as `cmake --install` lays it out, under greenctx/_native/:

    bin/greenctx                    the tool (RUNPATH $ORIGIN/../lib), run by the console script
    lib/libgreenctx.so.0.MINOR      the C library the ctypes binding loads (its SONAME: one per
                                    minor before 1.0)
    lib/greenctx/libgreenctx_sim.so       the simulated driver (greenctx.simulate, --sim)
    lib/greenctx/libgreenctx_preload.so   what `greenctx run` preloads
    include/                        greenctx.h, greenctx_claims.h, greenctx_controller.h,
                                    greenctx.hpp, greenctx_sim.h
    share/man/man1/greenctx.1       the man page
    share/bash-completion/completions/greenctx, share/zsh/site-functions/_greenctx

The tool finds its two companions at <bindir>/../lib/greenctx/, as an installed tool does, so
the wheel needs nothing from the tree it was built in. The package has no Python extension:
the wheel is tagged py3-none-<platform>.

The platform is a glibc baseline, not whatever this machine's glibc is: when the `ziglang`
package is importable (the build backend asks for it), the native files are compiled and
linked by `zig cc` against glibc BASELINE_GLIBC's symbols, so the wheel installs on RHEL 7/8,
Ubuntu 20.04, Debian 11 and SLES 15; the build then fails if any file needs a newer
GLIBC_ symbol version. Without zig (an offline --no-isolation build), this machine's
compiler builds them and the tag is the newest GLIBC_ version they need (readelf).
The version comes from include/greenctx.h, so the package and the library always agree.
"""
import os
import platform
import re
import shutil
import subprocess
import sys
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
                "lib/greenctx/libgreenctx_preload.so", "include/greenctx.h",
                "include/greenctx_claims.h", "include/greenctx_controller.h",
                "include/greenctx.hpp", "include/greenctx_sim.h", "share/man/man1/greenctx.1",
                "share/bash-completion/completions/greenctx", "share/zsh/site-functions/_greenctx")
# The oldest glibc the wheel runs on: manylinux2014's (CentOS 7), which every cluster
# distribution still supported has.
BASELINE_GLIBC = (2, 17)


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def zig_toolchain(work_dir):
    """CMake arguments for zig cc targeting glibc BASELINE_GLIBC (wrapper scripts: CMake takes
    a compiler as one path), or [] when the ziglang package is not importable."""
    try:
        import ziglang  # noqa: F401 - only whether it is there
    except ImportError:
        return []
    target = f"{platform.machine()}-linux-gnu.{BASELINE_GLIBC[0]}.{BASELINE_GLIBC[1]}"
    args = []
    for var, tool in (("CMAKE_C_COMPILER", f"cc -target {target}"), ("CMAKE_AR", "ar"),
                      ("CMAKE_RANLIB", "ranlib")):
        wrapper = os.path.join(work_dir, "zig-" + tool.split()[0])
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec "{sys.executable}" -m ziglang {tool} "$@"\n')
        os.chmod(wrapper, 0o755)
        args.append(f"-D{var}={wrapper}")
    return args


def build_native(native_dir, work_dir):
    """Configures, builds and installs the project into work_dir/stage, then copies the
    NATIVE_FILES into native_dir (files only: a wheel holds no symbolic links). Returns
    whether zig built them for BASELINE_GLIBC."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("building greenctx needs CMake 3.18+ (apt-get install cmake, or "
                           "pip install cmake)")
    os.makedirs(work_dir, exist_ok=True)
    toolchain = zig_toolchain(work_dir)
    # A CMake cache keeps its compiler: one build directory per toolchain.
    build = os.path.join(work_dir, "cmake-zig" if toolchain else "cmake")
    stage = os.path.join(work_dir, "stage")
    run([cmake, "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
         "-DGREENCTX_BUILD_TESTS=OFF", "-DGREENCTX_WERROR=OFF", "-DGREENCTX_SLURM=OFF",
         "-DCMAKE_INSTALL_PREFIX=" + stage, "-DCMAKE_INSTALL_BINDIR=bin",
         "-DCMAKE_INSTALL_LIBDIR=lib", *toolchain])
    run([cmake, "--build", build, "-j", str(os.cpu_count() or 2)])
    shutil.rmtree(stage, ignore_errors=True)
    run([cmake, "--install", build])
    shutil.rmtree(native_dir, ignore_errors=True)
    for rel in NATIVE_FILES:
        target = os.path.join(native_dir, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.realpath(os.path.join(stage, rel)), target)
    if toolchain:
        newest = newest_glibc(native_dir)
        if newest > BASELINE_GLIBC:
            raise RuntimeError(f"a native file needs GLIBC_{newest[0]}.{newest[1]}, newer than "
                               f"the wheel's baseline {BASELINE_GLIBC}")
    return bool(toolchain)


def newest_glibc(native_dir):
    """The newest GLIBC_ symbol version any ELF file under native_dir needs (readelf -V)."""
    newest = (2, 0)
    for path in glob(os.path.join(native_dir, "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        out = subprocess.run(["readelf", "-V", "--wide", path], check=True,
                             capture_output=True, text=True).stdout
        for major, minor in re.findall(r"GLIBC_(\d+)\.(\d+)", out):
            newest = max(newest, (int(major), int(minor)))
    return newest


def manylinux_tag(glibc):
    """manylinux_X_Y_<arch>, with its legacy alias (manylinux2014 for 2.17) for pip < 20.3."""
    arch = platform.machine()
    tag = f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"
    return tag + f".manylinux2014_{arch}" if glibc == (2, 17) else tag


class BuildPyWithNative(build_py):
    """build_py, then the native files into the built package (into the source tree's
    package for `pip install -e`, so that the editable package finds them). glibc: the
    baseline they were built for, which the wheel's tag names."""

    glibc = None

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            package = os.path.join(ROOT, "python", "greenctx")
        else:
            package = os.path.join(self.build_lib, "greenctx")
        native = os.path.join(package, "_native")
        zig = build_native(native, os.path.join(ROOT, "build-python", "native"))
        BuildPyWithNative.glibc = BASELINE_GLIBC if zig else max(newest_glibc(native), (2, 17))


class Wheel(bdist_wheel):
    """Tagged py3-none-manylinux_X_Y_<arch>: any Python 3, no Python ABI, the glibc baseline
    the native files were built for."""

    def get_tag(self):
        # An editable install's wheel is tagged before build_py runs: this machine's glibc.
        local = tuple(int(x) for x in os.confstr("CS_GNU_LIBC_VERSION").split()[-1].split(".")[:2])
        return "py3", "none", manylinux_tag(BuildPyWithNative.glibc or local)


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

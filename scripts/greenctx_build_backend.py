"""The package's PEP 517 backend: setuptools', asking for CMake from PyPI only when the
machine has no cmake (setup.py builds the native files with it), and for a wheel the ziglang
package: its `zig cc` builds them against an old glibc's symbols (setup.py's BASELINE_GLIBC),
so the wheel installs on the clusters' distributions, not only on this machine's."""
import shutil

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 - every hook setuptools has


def _cmake():
    return [] if shutil.which("cmake") else ["cmake>=3.18"]


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + _cmake() + ["ziglang"]


def get_requires_for_build_editable(config_settings=None):
    return _setuptools.get_requires_for_build_editable(config_settings) + _cmake()

"""`greenctx ...` and `python -m greenctx ...`: the package's build of the tool, exec'd in place
of this process (the same arguments, environment, signals and exit status)."""
import os
import sys

from ._capi import PACKAGED_TOOL


def main() -> None:
    if not os.access(PACKAGED_TOOL, os.X_OK):
        sys.exit(f"greenctx: the package's build of the tool is missing ({PACKAGED_TOOL}): "
                 "install greenctx with pip from its wheel (scripts/build_wheel.sh in a "
                 "checkout builds it) or from a checkout (pip install /path/to/greenctx); "
                 "greenctx is not on PyPI")
    os.execv(PACKAGED_TOOL, ["greenctx", *sys.argv[1:]])


if __name__ == "__main__":
    main()

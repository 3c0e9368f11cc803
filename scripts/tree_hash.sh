#!/usr/bin/env bash
# The sources' hash: what a GPU run's machine.txt records beside the commit, because the device
# machine's copy of the working tree can carry a .git older than its files. Run it here at a
# commit (a clean checkout) to find which commit a run's hash is.
#   scripts/tree_hash.sh          # the working tree, from the repository root
set -euo pipefail
cd "$(dirname "$0")/.."
find CMakeLists.txt Makefile include src common tools preload sim bench python slurm scripts \
    tests -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.py' -o -name '*.sh' \
    -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name 'Makefile' \) \
    -not -path '*/__pycache__/*' 2>/dev/null | LC_ALL=C sort | xargs sha256sum | sha256sum |
    cut -c1-16

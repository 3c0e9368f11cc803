#!/bin/sh
# scripts/build_wheel.sh [OUTDIR]: builds the sdist, then the wheel from that sdist (so the
# sdist is proved to build it, owing nothing to this tree's build directories), into OUTDIR
# (default dist/), and checks with auditwheel that the wheel's py3-none-manylinux tag holds for
# every bundled ELF file. zig cc builds against glibc 2.17's symbols (setup.py), so the tag is
# manylinux_2_17 whatever this machine's glibc. $PYTHON (default python3) needs build,
# auditwheel, ziglang and setuptools 77+, else they are installed into OUTDIR/.venv first.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
python=${PYTHON:-python3}
has_tools() {
    "$1" - <<'PY' 2>/dev/null
import build, auditwheel, setuptools, ziglang
assert int(setuptools.__version__.split(".")[0]) >= 77
PY
}
if ! has_tools "$python"; then
    [ -x "$out/.venv/bin/python" ] || "$python" -m venv "$out/.venv" || {
        echo "build_wheel.sh: $python -m venv failed (on Debian: apt-get install python3-venv)"
        exit 1
    }
    python=$out/.venv/bin/python
    has_tools "$python" || "$python" -m pip install --quiet --disable-pip-version-check \
        --upgrade build auditwheel ziglang "setuptools>=77" wheel
fi

rm -f "$out"/greenctx-*.tar.gz "$out"/greenctx-*.whl
# sdist, then the wheel from the unpacked sdist in a temporary directory (build's default).
"$python" -m build --no-isolation --outdir "$out" "$root"
wheel=$(ls "$out"/greenctx-*.whl)
sdist=$(ls "$out"/greenctx-*.tar.gz)
echo "built $sdist"
echo "built $wheel"

tag=${wheel##*/}
tag=${tag%.whl}
tag=${tag#greenctx-*-}  # py3-none-PLATFORM
case "$tag" in
py3-none-manylinux_*) ;;
*) echo "build_wheel.sh: the wheel is tagged $tag, not py3-none-manylinux_*"; exit 1 ;;
esac
platform=${tag#py3-none-}
platform=${platform%%.*}  # the PEP 600 tag, without its legacy alias
report=$("$python" -m auditwheel show "$wheel")
echo "$report"
# auditwheel names the most compatible tag the files allow; the wheel's must be that one.
echo "$report" | tr '\n' ' ' | tr -s ' ' | grep -q "platform tag: \"$platform\"" || {
    echo "build_wheel.sh: auditwheel does not find $wheel consistent with $platform"
    exit 1
}
echo "build_wheel.sh: $wheel is consistent with $platform"

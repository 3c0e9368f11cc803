#!/bin/sh
# install_test.sh MODE PREFIX CONSUMER_SOURCE BUILD_DIR CMAKE CC VERSION [CXX]
# After `cmake --install` into PREFIX (the install.run test), builds tests/consumer against it
# with find_package (MODE find_package) or pkg-config (MODE pkg_config) and runs the result.
# find_package also checks that the package tells the truth before 1.0: the same major.minor
# is found, an older or newer minor is refused, and the SONAME carries the minor.
set -eu
mode=$1 prefix=$2 src=$3 build=$4/$1 cmake=$5 cc=$6 version=$7 cxx=${8:-}
minor=${version%.*}
rm -rf "$build"
mkdir -p "$build"
libdir=$(ls -d "$prefix"/lib*/pkgconfig 2>/dev/null | head -n 1)
libdir=${libdir%/pkgconfig}
[ -n "$libdir" ] || { echo "FAIL: no lib*/pkgconfig under $prefix"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
case "$mode" in
find_package)
    # Installed beside the library: the documents, the simulator's header, the C++ wrapper.
    # The headers: every one of the source tree's include/ (however the API is split into
    # headers) and the simulator's.
    headers=$(for h in "$src"/../../include/*.h* "$src"/../../sim/greenctx_sim.h; do
        echo "include/${h##*/}"; done)
    # shellcheck disable=SC2086
    for f in share/doc/greenctx/LICENSE share/doc/greenctx/NOTICE share/doc/greenctx/api.md $headers \
             share/man/man1/greenctx.1 \
             share/bash-completion/completions/greenctx share/zsh/site-functions/_greenctx; do
        [ -f "$prefix/$f" ] || fail "$f is not installed"
    done
    grep -q "Apache License" "$prefix/share/doc/greenctx/LICENSE" || fail "LICENSE is not Apache-2.0"
    # Every installed artefact a user reads names the licence.
    # shellcheck disable=SC2086
    for f in $headers \
             share/man/man1/greenctx.1 "${libdir#$prefix/}/cmake/greenctx/greenctxConfig.cmake"; do
        grep -q "SPDX-License-Identifier: Apache-2.0" "$prefix/$f" || fail "$f names no licence"
    done
    [ -f "$libdir/libgreenctx.so.$version" ] || fail "no $libdir/libgreenctx.so.$version"
    [ -L "$libdir/libgreenctx.so.$minor" ] || fail "no SONAME link libgreenctx.so.$minor"
    if command -v readelf >/dev/null 2>&1; then
        readelf -d "$libdir/libgreenctx.so.$version" | grep -q "SONAME.*\[libgreenctx.so.$minor\]" \
            || fail "the SONAME is not libgreenctx.so.$minor"
    fi
    cxx_arg=
    [ -n "$cxx" ] && cxx_arg="-DCMAKE_CXX_COMPILER=$cxx"
    # shellcheck disable=SC2086
    "$cmake" -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DGREENCTX_WANT="$minor" $cxx_arg
    "$cmake" --build "$build"
    LD_LIBRARY_PATH="$libdir" "$build/consumer"
    "$build/consumer_static"
    [ ! -x "$build/consumer_cpp" ] || LD_LIBRARY_PATH="$libdir" "$build/consumer_cpp"
    # Another minor before 1.0 may have other layouts: find_package must refuse it.
    major=${version%%.*} rest=${version#*.}
    for want in "$major.$((${rest%%.*} - 1))" "$major.$((${rest%%.*} + 1))"; do
        rm -rf "$build-$want"
        if "$cmake" -S "$src" -B "$build-$want" -DCMAKE_PREFIX_PATH="$prefix" \
               -DCMAKE_C_COMPILER="$cc" -DGREENCTX_WANT="$want" >"$build-$want.log" 2>&1; then
            cat "$build-$want.log"
            fail "find_package(greenctx $want) accepted greenctx $version"
        fi
        grep -q "not compatible\|not suitable\|compatible with requested" "$build-$want.log" \
            || { cat "$build-$want.log"; fail "find_package(greenctx $want) failed for another reason"; }
        echo "refused as it should be: find_package(greenctx $want) with greenctx $version"
    done
    ;;
pkg_config)
    if ! command -v pkg-config >/dev/null 2>&1; then
        echo "pkg-config is not installed: the .pc file was not tried"
        exit 77
    fi
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    pc="$libdir/pkgconfig/greenctx.pc"
    cat "$pc"
    if pkg-config --libs --static greenctx | grep -i cuda; then
        fail "greenctx.pc links a CUDA library"
    fi
    [ "$(pkg-config --modversion greenctx)" = "$version" ] || fail "modversion"
    grep -q "Apache-2.0" "$pc" || fail "greenctx.pc names no licence"
    # shellcheck disable=SC2046
    "$cc" -o "$build/consumer" "$src/main.c" $(pkg-config --cflags --libs greenctx)
    LD_LIBRARY_PATH="$libdir" "$build/consumer"
    # shellcheck disable=SC2046
    "$cc" -o "$build/consumer_static" "$src/main.c" \
        $(pkg-config --cflags greenctx) "$libdir/libgreenctx.a" $(pkg-config --libs-only-l --static greenctx | sed 's/-lgreenctx//')
    "$build/consumer_static"
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
echo "ok: $mode"

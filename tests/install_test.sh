#!/bin/sh
# install_test.sh MODE PREFIX CONSUMER_SOURCE BUILD_DIR CMAKE CC
# After `cmake --install` into PREFIX (the install.run test), builds tests/consumer against it
# with find_package (MODE find_package) or pkg-config (MODE pkg_config) and runs the result.
set -eu
mode=$1 prefix=$2 src=$3 build=$4/$1 cmake=$5 cc=$6
rm -rf "$build"
mkdir -p "$build"
libdir=$(ls -d "$prefix"/lib*/pkgconfig 2>/dev/null | head -n 1)
libdir=${libdir%/pkgconfig}
[ -n "$libdir" ] || { echo "FAIL: no lib*/pkgconfig under $prefix"; exit 1; }
case "$mode" in
find_package)
    "$cmake" -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc"
    "$cmake" --build "$build"
    LD_LIBRARY_PATH="$libdir" "$build/consumer"
    "$build/consumer_static"
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
        echo "FAIL: greenctx.pc links a CUDA library"
        exit 1
    fi
    [ "$(pkg-config --modversion greenctx)" = "0.2.0" ] || { echo "FAIL: modversion"; exit 1; }
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

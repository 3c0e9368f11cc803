#!/bin/sh
# subproject_test.sh CASE SOURCE_DIR BUILD_DIR CMAKE CC CXX: greenctx as another project's
# dependency.
#   subproject: add_subdirectory(greenctx) configures without greenctx's tests and without
#               -Werror (a parent's newer compiler must not fail on a new warning);
#   cxx14:      greenctx.hpp under -std=c++14 stops at one #error that says it needs C++17.
set -u
case=$1 src=$2 build=$3/$1 cmake=$4 cc=$5 cxx=${6:-}
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$build"
mkdir -p "$build/parent"
case "$case" in
subproject)
    cat >"$build/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(parent LANGUAGES C)
enable_testing()
add_subdirectory("$src" greenctx)
add_executable(parent_app "$src/tests/consumer/main.c")
target_link_libraries(parent_app PRIVATE greenctx::greenctx)
CMAKE
    "$cmake" -S "$build/parent" -B "$build/out" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$build/configure.log" 2>&1 ||
        { cat "$build/configure.log"; fail "a parent project does not configure with add_subdirectory(greenctx)"; }
    grep -q "GREENCTX_BUILD_TESTS:BOOL=OFF" "$build/out/CMakeCache.txt" || fail "greenctx's tests are on in a parent project"
    grep -q "GREENCTX_WERROR:BOOL=OFF" "$build/out/CMakeCache.txt" || fail "-Werror is on in a parent project"
    [ ! -e "$build/out/greenctx/tests" ] || fail "greenctx's tests were configured in a parent project"
    grep -q '"file": ".*src/[a-z_]*\.c"' "$build/out/compile_commands.json" || fail "no greenctx source in compile_commands.json"
    grep -q -- "-Werror" "$build/out/compile_commands.json" && fail "greenctx compiles with -Werror in a parent project"
    grep -q 'parent_app' "$build/out/compile_commands.json" || grep -q 'consumer/main.c' "$build/out/compile_commands.json" ||
        fail "the parent's own program is not built"
    echo "ok: as a subproject, no tests and no -Werror"
    ;;
cxx14)
    [ -n "$cxx" ] || { echo "no C++ compiler"; exit 77; }
    printf '#include "greenctx.hpp"\nint main() { return 0; }\n' >"$build/use.cpp"
    if "$cxx" -std=c++14 -fsyntax-only -I"$src/include" "$build/use.cpp" >"$build/cxx14.log" 2>&1; then
        fail "greenctx.hpp compiled as C++14"
    fi
    cat "$build/cxx14.log"
    grep -q "greenctx.hpp needs C++17 or newer" "$build/cxx14.log" || fail "C++14 does not get the #error"
    [ "$(grep -c 'error:' "$build/cxx14.log")" -eq 1 ] || fail "C++14 gets more errors than the #error"
    "$cxx" -std=c++17 -fsyntax-only -I"$src/include" "$build/use.cpp" || fail "greenctx.hpp does not compile as C++17"
    echo "ok: C++14 is told greenctx.hpp needs C++17"
    ;;
*) fail "unknown case $case" ;;
esac

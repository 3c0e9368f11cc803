#!/bin/sh
# make_run_test.sh SOURCE_DIR BUILD_DIR: the README's `make run`, into a fresh BUILD_DIR. It
# builds only what it runs (the tool and the simulated driver, with JOBS = the machine's
# cores by default), shows info and a plan, explains their words and suggests what next.
src=$1 build=$2
failed=0
fail() { echo "FAIL: $*"; failed=1; }
command -v make >/dev/null 2>&1 || { echo "make is not installed"; exit 77; }
rm -rf "$build"
# JOBS defaults to the cores (the recipe, printed by make -n, shows the -j it builds with).
cores=$(nproc 2>/dev/null || echo 2)
make -s -C "$src" -n run RUN_BUILD="$build" | grep -q -- "--build $build -j$cores --target greenctx_tool greenctx_sim" ||
    fail "make run does not build the tool and the simulated driver alone with -j$cores"
out=$(mktemp)
trap 'rm -f "$out"; rm -rf "$build"' EXIT
make -s -C "$src" run RUN_BUILD="$build" JOBS=2 >"$out" 2>&1
status=$?
cat "$out"
[ $status -eq 0 ] || fail "make run exited $status"
for text in "device 0:" "features:" "group  asked" "What the words mean:" "locality domains" \
    "features " "granule " "unit " "rest, remainder" "Next:" "$build/tools/greenctx" "map 24 40 rest" \
    "info --sizes"; do
    grep -qF -- "$text" "$out" || fail "make run's output does not contain '$text'"
done
# The build is quiet: no make chatter, no compiler progress (its log is shown only on failure).
grep -Eq "Entering directory|Leaving directory|^\[ *[0-9]+%\]|Building C object" "$out" &&
    fail "make run's build is not quiet"
# The glossary says what the README's caveat says: work outside green contexts still runs there.
grep -qF "in the primary context, may still run there" "$out" ||
    fail "make run's glossary does not say primary-context work may run on a partition's SMs"
grep -qF "only its own green contexts run on" "$out" && fail "make run's glossary says a partition is exclusive"
[ -x "$build/tools/greenctx" ] || fail "make run did not build the tool"
ls "$build"/sim/libgreenctx_sim.so* >/dev/null 2>&1 || fail "make run did not build the simulated driver"
[ ! -e "$build/tests/test_errors" ] || fail "make run built the tests too"
[ ! -e "$build/tools/greenctx.1" ] || fail "make run built the man page too"
[ $failed -eq 0 ] && echo "ok: make run"
exit $failed

# Sourced by the tool's test scripts (tool_test.sh, plan_tool_test.sh, bench_test.sh), which
# are called as SCRIPT CASE TOOL. Gives $tool, $out and $err (temporary files), $failed, and:
#   fail TEXT...             marks the test failed
#   run STATUS ARGS...       runs the tool, prints its output, checks its exit status
#   has FILE TEXT            FILE contains TEXT
tool=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
failed=0

fail() { echo "FAIL: $*"; failed=1; }

run() {
    expected=$1
    shift
    "$tool" "$@" >"$out" 2>"$err"
    status=$?
    echo "\$ greenctx $* -> $status"
    sed 's/^/  out| /' "$out"
    sed 's/^/  err| /' "$err"
    [ "$status" -eq "$expected" ] || fail "greenctx $* exited $status, expected $expected"
}

has() { grep -qF -- "$2" "$1" || fail "$1 does not contain '$2'"; }

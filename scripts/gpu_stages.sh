# Sourced by the scripts/gpu_*.sh that run in stages (bash; $out is the log folder):
#   stage NAME TIMEOUT COMMAND...  runs it, logs to $out/NAME.log, records PASS/FAIL/SKIP
#   verdict NAME RC SECONDS        records the result of a check run otherwise
# The results accumulate in the array results, one "PASS|FAIL|SKIP NAME (N s)" line each.
results=()
verdict() {
    local v=PASS
    if [ "$2" -eq 77 ]; then
        v="SKIP (exit 77)"
    elif [ "$2" -ne 0 ]; then
        v="FAIL (exit $2$([ "$2" -eq 124 ] && echo ', timed out'))"
    fi
    results+=("$v $1 ($3 s)")
    echo "== $1: $v ($3 s)"
}
stage() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
    verdict "$name" $? $((SECONDS - t0))
    tail -n 40 "$out/$name.log"
}

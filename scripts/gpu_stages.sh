# Sourced by the scripts/gpu_*.sh that run in stages (bash; $out is the log folder):
#   machine_info [COMMAND...]      the date, the GPUs, the commit (and what COMMAND prints)
#                                  into $out/machine.txt, shown too
#   stage NAME TIMEOUT COMMAND...  runs it, logs to $out/NAME.log, records PASS/FAIL/SKIP;
#                                  a shell function runs without the timeout (timeout(1)
#                                  runs programs only)
#   verdict NAME RC SECONDS        records the result of a check run otherwise
#   passed NAME                    true when stage NAME passed
#   build_gpu LABEL                the stage `build`: build-gpu against the real driver, as
#                                  make test-gpu builds it; on failure the summary, exit 1
#   summary LABEL                  the results into $out/summary.txt, "LABEL: PASS|FAIL", and
#                                  the exit status: 1 when anything failed
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
    if declare -F "$1" >/dev/null; then
        "$@" >"$out/$name.log" 2>&1
    else
        timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
    fi
    verdict "$name" $? $((SECONDS - t0))
    tail -n 40 "$out/$name.log"
}
passed() {
    printf '%s\n' "${results[@]}" | grep -q "^PASS $1 ("
}
machine_info() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
        echo "commit: $(git log -1 --format='%H %s' 2>/dev/null) (the copy's .git: may be older)"
        echo "sources: $("$(dirname "${BASH_SOURCE[0]}")/tree_hash.sh" 2>&1)" # scripts/tree_hash.sh
        (($#)) && "$@"
    } >"$out/machine.txt" 2>&1
    cat "$out/machine.txt"
}
summary() {
    echo
    printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
    if printf '%s\n' "${results[@]}" | grep -q '^FAIL'; then
        echo "$1: FAIL" | tee -a "$out/summary.txt"
        return 1
    fi
    echo "$1: PASS" | tee -a "$out/summary.txt"
}
build_gpu() {
    stage build 600 bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DGREENCTX_TEST_DRIVER=real && cmake --build build-gpu -j$(nproc)"
    passed build || { summary "$1"; exit 1; }
}

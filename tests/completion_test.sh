#!/bin/sh
# completion_test.sh TOOL BUILD_TOOLS_DIR: the generated bash completion, loaded in bash,
# completes what the command table holds; the zsh one parses; the man page names every
# command and renders.
tool=$1 dir=$2
failed=0
fail() { echo "FAIL: $*"; failed=1; }
bash_file=$dir/greenctx.bash zsh_file=$dir/_greenctx man_file=$dir/greenctx.1
for f in "$bash_file" "$zsh_file" "$man_file"; do
    [ -s "$f" ] || { echo "FAIL: $f was not generated"; exit 1; }
done
command -v bash >/dev/null 2>&1 || { echo "bash is not installed: the completion was not loaded"; exit 77; }

# complete WORDS...: what the completion offers for the last word (may be empty). A program's
# completion is bash-completion's _command_offset, stubbed to say where the program starts.
complete() {
    bash -c '. "$1"; shift; _command_offset() { COMPREPLY=("program-from-word-$1"); }
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _greenctx; echo "${COMPREPLY[*]}"' \
        complete "$bash_file" "$@"
}
expect() { # EXPECTED WORDS...
    want=$1
    shift
    got=$(complete "$@")
    echo "$* -> $got"
    [ "$got" = "$want" ] || fail "completing '$*' gave '$got', expected '$want'"
}
expect "plan" greenctx pl
expect "--round" greenctx plan --r
expect "plan" greenctx --sim h200 pl          # --sim's value is not the command
expect "plan" greenctx -d 1 pl
expect "--sizes --sim" greenctx info --si
expect "--sms --sweep --svg --shared --sim" greenctx run --s
expect "plan" greenctx help pl
expect "-V" greenctx -V
expect "start stop status" greenctx mps st
# Only the options the table declares: no phantom -c from the help's "sh -c".
got=$(complete greenctx run -)
case " $got " in *" -c "*) fail "run offers -c, which is no option of run: $got" ;; esac
case " $got " in *" --no-inherit "*) ;; *) fail "run does not offer --no-inherit: $got" ;; esac
# Values: --round's modes, --sim's models (the simulated driver's own list), files for a file.
expect "strict down nearest up" greenctx plan --round ""
expect "nearest" greenctx run --sms 16 --round n
expect "h200 h100 a100 l4 b200" greenctx --sim ""
# --opt=VALUE, as bash splits it (COMP_WORDBREAKS has '=').
expect "up" greenctx map --round = u
expect "h100" greenctx plan --sim = h1
expect "h200 h100 a100 l4 b200" greenctx --sim =
expect "" greenctx run --sms ""          # a GROUP is the user's to write: nothing offered
files=$(mktemp -d)
touch "$files/report-one.json"
expect "$files/report-one.json" greenctx run --report "$files/report-"
rm -rf "$files"
# --device: the devices' indices and UUIDs, asked of the tool as typed (here on the simulated
# driver, two devices).
sim=$dir/../sim/libgreenctx_sim.so
if [ -r "$sim" ]; then
    export GREENCTX_CUDA_LIBRARY="$sim" GREENCTX_SIM_DEVICES=h200,a100
    u0=$("$tool" --device 0 info --query uuid --format csv,noheader 2>/dev/null)
    u1=$("$tool" --device 1 info --query uuid --format csv,noheader 2>/dev/null)
    case "$u0 $u1" in GPU-*" "GPU-*) ;; *) fail "info --query uuid gave '$u0' and '$u1'" ;; esac
    expect "0 $u0 1 $u1" "$tool" plan --device ""
    expect "$u1" "$tool" -d "$(echo "$u1" | cut -c1-8)"
    unset GREENCTX_CUDA_LIBRARY GREENCTX_SIM_DEVICES
else
    echo "no simulated driver: --device's values were not tried"
fi
# After -- (or the program's first word), the program's own completion from that word on.
expect "program-from-word-5" greenctx run --sms 16 -- ""
expect "program-from-word-5" greenctx run --sms 16 -- make -
expect "program-from-word-4" greenctx run --sms 16 ./server --po
expect "program-from-word-6" greenctx --sim h200 run --sms 16 nvidia-smi ""
expect "program-from-word-7" greenctx run --round up --sms 16 -- env ""
# Every command of the table (as the usage lists it) completes.
for c in $("$tool" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
    got=$(complete greenctx "$c")
    case " $got " in *" $c "*) ;; *) fail "the command '$c' of the usage does not complete" ;; esac
done

if command -v zsh >/dev/null 2>&1; then
    zsh -n "$zsh_file" || fail "the zsh completion does not parse"
else
    echo "zsh is not installed: the zsh completion was not parsed"
fi
head -n 1 "$zsh_file" | grep -qx '#compdef greenctx' || fail "the zsh completion has no #compdef line"

grep -q '^\.TH GREENCTX 1 ' "$man_file" || fail "the man page has no .TH line"
for c in info plan bench map run ps mps help; do
    grep -q "^\.B $c\$" "$man_file" || fail "the man page does not list $c"
    [ "$c" = help ] || grep -q "^\.SS \"greenctx $c\"" "$man_file" || fail "the man page has no section for $c"
done
grep -q 'Apache License 2.0' "$man_file" || fail "the man page names no licence"
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -man -Tutf8 -ww -z "$man_file" 2>&1)
    [ -z "$warnings" ] || fail "groff warns about the man page: $warnings"
fi
[ $failed -eq 0 ] && echo "ok: completion and man page"
exit $failed

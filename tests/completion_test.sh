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

# complete WORDS...: what the completion offers for the last word (may be empty).
complete() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _greenctx; echo "${COMPREPLY[*]}"' \
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
expect "overhead overlap" greenctx bench ove
expect "elastic" greenctx bench el
expect "--trace" greenctx bench elastic --tr
expect "--sms --shared --sweep --svg --sim" greenctx run --s
expect "plan" greenctx help pl
expect "-V" greenctx -V
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

#!/bin/bash
# A shared claims directory (GREENCTX_RUNTIME_SHARED=1, the Slurm plugin's) between two local
# users, on the simulated H200 (issue 28): what one user can't do to the other's claims, and
# root's `greenctx ps` there. Needs root (it makes two users and removes them in a trap);
# skipped otherwise. Called as: shared_registry_test.sh TOOL (GREENCTX_SIM_LIBRARY set).
tool=$1
[ "$(id -u)" -eq 0 ] || { echo "needs root: it makes two users (useradd) to share a directory"; exit 77; }
# The programs it runs under greenctx run (sleep, true, sh) are not instrumented: a sanitizer
# build's preload can't load into them. claims.trust covers the registry under the sanitizers.
[ -z "${GREENCTX_TEST_SANITIZE:-}" ] ||
    { echo "a $GREENCTX_TEST_SANITIZE build: its preload can't load into sleep, true and sh"; exit 77; }
command -v useradd >/dev/null || { echo "needs useradd"; exit 77; }
[ -n "$GREENCTX_SIM_LIBRARY" ] && [ -f "$GREENCTX_SIM_LIBRARY" ] || { echo "needs the simulator"; exit 77; }

a=gctxa$$ b=gctxb$$
work=$(mktemp -d /tmp/greenctx-shared-test.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    userdel "$a" 2>/dev/null
    userdel "$b" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -d /nonexistent "$a" && useradd -M -d /nonexistent "$b" || { echo "useradd failed"; exit 1; }

failed=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failed=1; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
regular() { find "$reg" -maxdepth 1 -type f -name "$1*"; } # the regular files named PREFIX*

S=$work/shared
mkdir -m 1777 "$S"
export GREENCTX_CUDA_LIBRARY=$GREENCTX_SIM_LIBRARY GREENCTX_SIM_DEVICES=h200
export GREENCTX_RUNTIME_DIR=$S GREENCTX_RUNTIME_SHARED=1 GREENCTX_REGISTRY_LOCK_TIMEOUT_MS=500
as() { local user=$1; shift; timeout 20 runuser -u "$user" -- "$@"; }

# The admin's setup: root's ps makes the GPU's registry, sticky and root's.
"$tool" ps >"$work/root-ps.out" 2>&1
reg=$(ls -d "$S"/gpu-* 2>/dev/null | head -1)
check "root's ps makes the registry 1777, root's" \
    '[ -n "$reg" ] && [ "$(stat -c %a:%U "$reg")" = 1777:root ] && [ "$(stat -c %a:%U "$reg/lock")" = 666:root ]'

# A user can't make a registry in a shared directory (its owner could remove the others' claims).
S2=$work/unset
mkdir -m 1777 "$S2"
as "$a" env GREENCTX_RUNTIME_DIR="$S2" "$tool" ps >"$work/a-ps2.out" 2>&1
check "a user's ps in a directory without registries is refused, saying how to set it up" \
    'grep -q "only root or the runtime directory.s owner" "$work/a-ps2.out" && grep -q "install -d -m 1777" "$work/a-ps2.out" && ! ls -d "$S2"/gpu-* >/dev/null 2>&1'
# ... and one a user made (bob's own directory there) is refused to the others.
mkdir -m 1777 "$S2/$(basename "$reg")" && chown "$b" "$S2/$(basename "$reg")"
as "$a" env GREENCTX_RUNTIME_DIR="$S2" "$tool" ps >"$work/a-ps3.out" 2>&1
check "a registry made by another user is refused" 'grep -q "is owned by uid $(id -u "$b")" "$work/a-ps3.out"'

cat >"$work/ps_check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["devices"][0]
sys.exit(0 if [c["sm_count"] for c in dev["claims"]] == [64] and dev["free_sms"] == 68 else 1)
PY
# Alice's tenant holds 64 SMs.
as "$a" "$tool" run --sms 64 -- sleep 30 >"$work/a-run.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do ls "$reg"/claim-* >/dev/null 2>&1 && break; sleep 0.1; done
claim=$(ls "$reg"/claim-* 2>/dev/null | head -1)
info=$reg/info-${claim##*/claim-}
check "alice's claim file is private, its info public" \
    '[ "$(stat -c %a:%U "$claim")" = 600:'"$a"' ] && [ "$(stat -c %a:%U "$info")" = 644:'"$a"' ]'

# Bob can neither remove it, nor open it to hold its lock, nor be granted its SMs.
as "$b" rm -f "$claim" 2>/dev/null
check "bob can't remove alice's claim" '[ -f "$claim" ]'
as "$b" flock -s "$claim" true 2>/dev/null
rc=$?
check "bob can't open alice's claim to hold it" '[ $rc -ne 0 ]'
as "$b" "$tool" ps --json >"$work/b-ps.json" 2>"$work/b-ps.err"
check "bob's ps shows alice's 64 SMs, 68 free" 'python3 "$work/ps_check.py" "$work/b-ps.json"'
as "$b" "$tool" run --sms all -- true >"$work/b-all.out" 2>&1
rc=$?
check "bob's run --sms all is refused while alice holds 64" '[ $rc -ne 0 ]'
as "$b" "$tool" run --sms rest -- true >"$work/b-64.out" 2>&1
rc=$?
check "bob's run --sms rest is granted the other 64 (the 4 left over go alone)" \
    '[ $rc -eq 0 ] && grep -q "64 of 132 SMs" "$work/b-64.out"'

# Alice's program ends, its child (which inherited the claim) lives on: bob, who can't open
# her claim, still sees it held (its lock in /proc/locks), and isn't granted its SMs.
as "$a" "$tool" run --sms 16 -- sh -c 'sleep 20 >/dev/null 2>&1 & exit 0' >"$work/a-child.out" 2>&1
as "$b" "$tool" run --sms rest -- true >"$work/b-rest.out" 2>&1
rc=$?
check "a claim whose program ended but whose child lives stays held for bob" \
    '[ $rc -eq 0 ] && grep -q "48 of 132 SMs" "$work/b-rest.out"'

# Bob's planted names: FIFOs and a directory named like claims and wants, a link where
# alice's events go, a stale claim of his whose command would be written there.
as "$b" mkfifo "$reg/claim-1-1" "$reg/want-1-1-p0-s8"
as "$b" mkdir "$reg/claim-2-2"
echo precious >"$work/victim" && chown "$a" "$work/victim"
as "$b" ln -s "$work/victim" "$reg/events-$(id -u "$a")"
as "$b" sh -c "printf 'greenctx-claim 1\npid 4242\nuid $(id -u "$b")\nuser b\ncommand x; id > $work/pwned\nlabel \nsince_ns 1\nmps 0\ngranules 0\n' >$reg/claim-4242-0; chmod 644 $reg/claim-4242-0"
start=$(date +%s)
as "$a" "$tool" ps >"$work/a-ps.out" 2>&1
rc=$?
check "alice's ps neither hangs on bob's FIFOs nor fails ($rc, $(($(date +%s) - start)) s)" '[ $rc -eq 0 ] && [ $(($(date +%s) - start)) -lt 10 ]'
check "nothing is written through bob's link" '[ "$(cat "$work/victim")" = precious ] && [ ! -e "$work/pwned" ]'
# Root's ps there too: it removes bob's stale claim and logs it, through no link.
ln -s "$work/victim" "$reg/events-0" 2>/dev/null
"$tool" ps >"$work/root-ps2.out" 2>&1
check "root's ps is safe: no link followed, the stale claim removed" \
    '[ "$(cat "$work/victim")" = precious ] && [ ! -e "$reg/claim-4242-0" ] && [ ! -L "$reg/events-0" ]'

# Alice's processes all end (killed): her claim files stay (bob can't remove them), but bob
# sees no holder in /proc/locks and no live pid, so their SMs are free to him; root's ps
# (or alice's next) removes them.
for p in $(pgrep -u "$a"); do kill -9 "$p" 2>/dev/null; done
sleep 0.3
as "$b" "$tool" ps --json >"$work/b-ps2.json" 2>"$work/b-ps2.err"
check "a stale claim of alice's is free to bob, its file left to her or root" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1]))[\"devices\"][0]; sys.exit(0 if d[\"free_sms\"] == 132 else 1)" "$work/b-ps2.json" && [ -n "$(regular claim-)" ]'
"$tool" ps >/dev/null 2>&1
check "root's ps removes the stale claims and their info files" \
    '[ -z "$(regular claim-)$(regular info-)" ]'

# Bob holds the registry lock: alice's ps gives up at the bound, naming him.
as "$b" flock "$reg/lock" sleep 20 &
pids+=($!)
sleep 0.5
as "$a" "$tool" ps >"$work/a-lock.out" 2>&1
check "a held registry lock times out naming its holder" 'grep -q "stayed locked by pid" "$work/a-lock.out"'

for f in root-ps a-ps2 a-ps3 a-run b-ps.err b-all b-64 a-child b-rest a-ps a-lock; do
    [ -f "$work/$f.out" ] && sed "s/^/  $f| /" "$work/$f.out"
    [ -f "$work/$f" ] && sed "s/^/  $f| /" "$work/$f"
done
exit $failed

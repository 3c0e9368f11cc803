#!/bin/sh
# tool_test.sh CASE TOOL: runs the greenctx tool and checks its output and exit status.
# Cases with --sim need the simulated driver (GREENCTX_CUDA_LIBRARY names it in the test's
# environment; the tool finds it in the build tree); they skip (77) without it.
. "$(dirname "$0")/tool_lib.sh"

# --sim cases: the test names the simulated driver in GREENCTX_SIM_LIBRARY.
need_sim() {
    [ -r "${GREENCTX_SIM_LIBRARY:-}" ] && return 0
    echo "needs the simulated driver (GREENCTX_SIM_LIBRARY: ${GREENCTX_SIM_LIBRARY:-unset})"
    exit 77
}

# The driver the other tests use: the simulated one when GREENCTX_CUDA_LIBRARY names it.
on_sim() { case "${GREENCTX_CUDA_LIBRARY:-}" in *greenctx_sim*) return 0 ;; esac; return 1; }

case "$1" in
sim_info)
    need_sim
    run 0 --sim h200@13000 info
    head -n 1 "$out" | grep -q "^simulated driver: h200 (driver 13.0)" ||
        fail "the first line is not the simulated-driver banner"
    has "$out" "no GPU is used"
    has "$out" "132"
    has "$out" "structured_split"
    has "$out" "needs driver 13.1, found 13.0"
    run 0 --sim h200,a100@12050 info
    has "$out" "simulated driver: h200,a100 (driver 12.5)"
    has "$out" "derived from the architecture: driver before 13.0 reports none"
    has "$out" "108"
    run 0 --sim h200,a100@13000 info --device 1
    has "$out" "device 1:"
    grep -q "device 0:" "$out" && fail "--device 1 also printed device 0"
    ;;
sim_json)
    need_sim
    run 0 --sim h200,a100@12050 info --json
    has "$err" "simulated driver"
    if ! command -v python3 >/dev/null 2>&1; then
        echo "python3 is not installed: the JSON was not parsed"
        exit 77
    fi
    python3 - "$out" <<'PY' || fail "the JSON output is not what info should print"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["simulated"] is True, doc
assert doc["driver_version"] == 12050, doc
assert doc["driver_path"].endswith(".so"), doc
d = doc["devices"]
assert [x["ordinal"] for x in d] == [0, 1], d
assert d[0]["sm_count"] == 132 and d[0]["cc"] == "9.0", d
assert d[1]["sm_count"] == 108 and d[1]["cc"] == "8.0", d
assert d[0]["sm_rules_derived"] is True, d
assert (d[1]["min_partition_sms"], d[1]["coscheduled_alignment"]) == (4, 2), d
f = doc["features"]
assert f["green_contexts"]["available"] is True, f
assert f["structured_split"] == {"available": False, "reason": "needs driver 13.1, found 12.5"}, f
assert doc["warnings"] == [], doc
print("json ok")
PY
    ;;
usage)
    run 2
    has "$err" "usage: greenctx"
    run 2 frobnicate
    has "$err" "unknown command 'frobnicate'"
    run 2 --bogus info
    run 2 --sim
    run 2 --sim @13000 info
    need_sim
    run 2 --sim h200@13k info
    run 2 --sim h200 info --device
    run 2 --sim h200 info --device x
    run 2 --sim h200 info extra
    has "$err" "unexpected argument 'extra'"
    run 2 --sim h200 plam 24
    has "$err" "unknown command 'plam'; commands: info, plan, bench, map"
    ;;
help_and_version)
    run 0 --help
    has "$out" "--sim MODEL"
    has "$out" "info"
    run 0 --version
    has "$out" "greenctx 0.3.0"
    run 0 help
    has "$out" "usage: greenctx"
    # help is a command like the others: help help is its usage, not an error.
    run 0 help help
    has "$out" "usage: greenctx [GLOBAL OPTIONS] COMMAND"
    has "$out" "Exit status: 0 done; 1 failed"
    # --json is honoured by help and by --help too: one document with the text.
    for args in "--json help" "help -j" "--json --help" "--help --json"; do
        run 0 $args
        grep -q '^{.*"schema":"greenctx.help/1","command":null,"usage":"usage: greenctx \[GLOBAL' "$out" ||
            fail "greenctx $args is not the help document"
        has "$out" '{"name":"plan","summary":"dry-run a split'
    done
    for args in "--json help plan" "plan --help --json" "-j plan -h"; do
        run 0 $args
        grep -q '"command":"plan","usage":"usage: greenctx plan ' "$out" || fail "greenctx $args is not plan's help document"
    done
    ;;
bad_device)
    need_sim
    run 1 --sim h200@13000 info --device 3
    has "$err" "device 3 does not exist: the only device is 0"
    run 1 --sim h200,a100 plan --device 2 24
    has "$err" "device 2 does not exist: valid devices are 0 to 1"
    ;;
mps_warning)
    need_sim
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
    run 0 --sim h200 info
    has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
    has "$out" "overrides green-context SM limits"
    unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
    run 0 --sim h200 info
    grep -q "MPS" "$out" && fail "MPS warning without CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
    ;;
info)
    # Whatever driver the tests use (the real one under make test-gpu): invariants only.
    "$tool" info >/dev/null 2>&1
    if [ $? -eq 1 ] && ! on_sim; then
        echo "no CUDA driver on this machine"
        exit 77
    fi
    run 0 info
    has "$out" "driver: "
    has "$out" "device 0: "
    has "$out" "green_contexts"
    if on_sim; then has "$out" "simulated driver"; else grep -q "simulated" "$out" && fail "banner on the real driver"; fi
    run 0 info --json
    command -v python3 >/dev/null 2>&1 || exit $failed
    if on_sim; then simulated=True; else simulated=False; fi
    python3 - "$out" "$simulated" <<'PY' || fail "the JSON output is not what info should print"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["simulated"] is (sys.argv[2] == "True"), doc
assert doc["driver_version"] >= 12000, doc
assert len(doc["devices"]) >= 1, doc
for d in doc["devices"]:
    assert d["sm_count"] > 0 and d["coscheduled_alignment"] > 0, d
    assert d["min_partition_sms"] >= d["coscheduled_alignment"], d
assert set(doc["features"]) >= {"green_contexts", "structured_split"}, doc
print("json ok")
PY
    ;;
device_identity)
    need_sim
    # What nvidia-smi users look for: each device's UUID and PCI bus id, the driver branch.
    run 0 --sim h200,a100@13000 info
    has "$out" "driver: CUDA 13.0 (13000), branch R580, loaded from"
    grep -Eq "^  UUID +GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$" "$out" ||
        fail "info shows no UUID as nvidia-smi prints it"
    grep -Eq "^  PCI bus id +0000:18:00.0$" "$out" || fail "device 0's PCI bus id is not 0000:18:00.0"
    grep -Eq "^  PCI bus id +0000:28:00.0$" "$out" || fail "device 1's PCI bus id is not 0000:28:00.0"
    run 0 --sim h200@12040 info
    has "$out" "branch R550"
    run 0 --sim h200@13040 info
    has "$out" "branch unknown"
    # --query FIELDS --format csv[,noheader], as nvidia-smi --query-gpu: stdout is the CSV alone.
    run 0 --sim h200,a100@13000 info --query index,name,pci.bus_id,sms,driver_branch,cuda_version
    [ "$(sed -n 1p "$out")" = "index, name, pci.bus_id, sms, driver_branch, cuda_version" ] || fail "no CSV header"
    [ "$(sed -n 2p "$out")" = "0, NVIDIA H200, 0000:18:00.0, 132, R580, 13.0" ] || fail "device 0's CSV line"
    [ "$(sed -n 3p "$out")" = "1, NVIDIA A100-SXM4-80GB, 0000:28:00.0, 108, R580, 13.0" ] || fail "device 1's CSV line"
    [ "$(wc -l <"$out")" -eq 3 ] || fail "the CSV has more than a header and two lines (a banner on stdout?)"
    has "$err" "simulated driver: h200,a100"
    run 0 --sim h200,a100 info --query uuid,driver_version --format csv,noheader
    uuid1=$(sed -n 2p "$out" | cut -d, -f1)
    grep -Eq "^GPU-[0-9a-f-]{36}, \[N/A\]$" "$out" || fail "no UUID, or driver_version is not [N/A] without NVML"
    [ "$(wc -l <"$out")" -eq 2 ] || fail "csv,noheader printed a header"
    run 0 info --help-query
    has "$out" "pci.bus_id"
    has "$out" "driver_branch"
    run 2 --sim h200 info --query index,frob
    has "$err" "--query: no field 'frob' (greenctx info --help-query lists them)"
    run 2 --sim h200 info --query index --format xml
    has "$err" "--format takes csv or csv,noheader; got 'xml'"
    run 2 --sim h200 info --format csv
    run 2 --sim h200 info --query index --json
    # The JSON has them too.
    run 0 --sim h200,a100@13000 --json info
    has "$out" '"driver_branch":"R580","nvidia_driver_version":null'
    has "$out" '"uuid":"GPU-'
    has "$out" '"pci_bus_id":"0000:28:00.0"'
    # A device chosen by UUID, by the start of one, or by PCI bus id (either domain width).
    run 0 --sim h200,a100 --device "$uuid1" info --query index --format csv,noheader
    [ "$(cat "$out")" = 1 ] || fail "--device $uuid1 is not device 1"
    run 0 --sim h200,a100 -d "$(echo "$uuid1" | cut -c1-10)" plan 24
    has "$out" "device 1: 108 SMs"
    run 0 --sim h200,a100 plan --device 00000000:28:00.0 24
    has "$out" "device 1: 108 SMs"
    run 0 --sim h200,a100 --device 0000:18:00.0 info
    has "$out" "device 0: NVIDIA H200"
    grep -q "device 1:" "$out" && fail "--device 0000:18:00.0 printed device 1"
    run 1 --sim h200,a100 --device GPU-ffffffff plan 24
    has "$err" "--device GPU-ffffffff: no device has this UUID or PCI bus id; the driver shows 2"
    run 2 --sim h200,h200 --device GPU- plan 24
    has "$err" "the UUIDs of 2 devices start with it; give more of it"
    ;;
ps_without_driver)
    need_sim
    # A login node: no libcuda (GREENCTX_CUDA_LIBRARY names a missing file), but the registry
    # a tenant on the simulated GPU wrote is listed from its files alone, the GPU by its UUID.
    GREENCTX_RUNTIME_DIR=$(mktemp -d) && export GREENCTX_RUNTIME_DIR
    run 0 ps
    has "$out" "no CUDA driver here: the claims are read from the registry alone"
    # The tenant: the tests' probe (built with the sanitizers too), holding until told.
    hold=$GREENCTX_RUNTIME_DIR/hold
    mkdir -p "$hold"
    "$tool" --sim h200 run --sms 64 --label tenant-a -- "$GREENCTX_TEST_PROBE" hold "$hold" \
        >/dev/null 2>&1 &
    tenant=$!
    for _ in $(seq 3000); do # 30 s: sanitizer builds start slowly
        [ -e "$hold/ready" ] && break
        sleep 0.01
    done
    uuid=$("$tool" --sim h200 info --query uuid --format csv,noheader 2>/dev/null)
    run 0 ps
    has "$out" "$uuid: 68 of 132 SMs free (granules 8-16), 1 claim; registry $GREENCTX_RUNTIME_DIR/gpu-$uuid"
    grep -Eq "^  [0-9]+ +[^ ]+ +64 0-7 .* tenant-a +.*run_probe hold .*$" "$out" || fail "the claim is not listed without the driver"
    grep -q "recent events:" "$out" && fail "an empty 'recent events:' heading"
    grep -q "compute processes" "$out" && fail "NVML is absent, yet processes are shown"
    run 0 ps --json
    has "$out" '"driver":false'
    has "$out" "\"device\":null,\"uuid\":\"$uuid\""
    has "$out" '"processes":null,"processes_note":"NVML (libnvidia-ml.so.1) is not installed'
    run 0 ps --device "$(echo "$uuid" | cut -c1-8)"
    has "$out" "$uuid: 68 of 132 SMs free"
    run 1 ps --device 0
    has "$err" "--device 0: without a CUDA driver devices have no numbers; give the GPU's UUID (or its start)"
    touch "$hold/go"
    wait "$tenant" 2>/dev/null
    # The tenant's end is a release (or its death): no heading without an event to show.
    run 0 --sim h200 ps
    has "$out" "132 of 132 SMs free"
    if grep -q "recent events:" "$out"; then
        grep -A1 "recent events:" "$out" | sed -n 2p | grep -q "died" || fail "an empty 'recent events:' heading"
    fi
    rm -rf "$GREENCTX_RUNTIME_DIR"
    ;;
nvml)
    need_sim
    # NVML where it loads (here a stand-in): the exact driver version and the branch it names,
    # and each GPU's compute processes beside the claims, any user's, with their memory.
    GREENCTX_RUNTIME_DIR=$(mktemp -d) && export GREENCTX_RUNTIME_DIR
    run 0 --sim h200@13010 info
    has "$out" "driver: CUDA 13.1 (13010), branch R580 580.95.05"
    run 0 --sim h200 info --query driver_version,driver_branch --format csv,noheader
    [ "$(cat "$out")" = "580.95.05, R580" ] || fail "--query driver_version,driver_branch"
    sleep 30 &
    other=$!
    for _ in $(seq 100); do # until the child has become sleep
        tr '\0' ' ' <"/proc/$other/cmdline" | grep -q "^sleep 30" && break
        sleep 0.05
    done
    export FAKE_NVML_PROCESSES="$other:2048,$$:-"
    run 0 --sim h200 ps
    has "$out" "compute processes (NVML):"
    grep -Eq "^  $other +[^ ]+ +2048 MiB  no +sleep 30$" "$out" || fail "the other process is not listed with its 2048 MiB"
    grep -Eq "^  $$ +[^ ]+ +n/a  no " "$out" || fail "memory NVML can't tell is not n/a"
    run 0 --sim h200 --json ps
    has "$out" "{\"pid\":$other,\"user\":\"$(id -un)\",\"command\":\"sleep 30\",\"memory_bytes\":2147483648,\"holds_claim\":false}"
    has "$out" '"memory_bytes":null'
    has "$out" '"processes_note":null'
    export FAKE_NVML_PROCESSES=
    run 0 --sim h200 ps
    has "$out" "compute processes (NVML): none"
    kill "$other"
    # A claim's holder among them is marked: every claim is looked at (ps once looked only at
    # a device's first 64; no simulated GPU has room for more, so the rule alone is tested).
    hold=$GREENCTX_RUNTIME_DIR/hold
    mkdir -p "$hold"
    "$tool" --sim h200 run --sms 64 -- "$GREENCTX_TEST_PROBE" hold "$hold" >/dev/null 2>&1 &
    tenant=$!
    for _ in $(seq 3000); do # 30 s: sanitizer builds start slowly
        [ -e "$hold/ready" ] && break
        sleep 0.01
    done
    export FAKE_NVML_PROCESSES="$tenant:1024"
    run 0 --sim h200 ps
    grep -Eq "^  $tenant +[^ ]+ +1024 MiB  yes " "$out" || fail "the claim's holder is not marked"
    run 0 --sim h200 --json ps
    has "$out" "\"memory_bytes\":1073741824,\"holds_claim\":true}"
    touch "$hold/go"
    wait "$tenant" || fail "the tenant failed"
    rm -rf "$GREENCTX_RUNTIME_DIR"
    ;;
no_driver)
    # GREENCTX_CUDA_LIBRARY names a missing file: no driver, and the tool says what to try.
    run 1 info
    has "$err" "no CUDA driver was found"
    has "$err" "$GREENCTX_CUDA_LIBRARY"
    has "$err" "try the simulated one: greenctx --sim h200 info"
    [ -s "$out" ] && fail "stdout is not empty"
    # The hint repeats the user's own arguments, once.
    run 1 plan --round=down 24 40 rest
    has "$err" "try the simulated one: greenctx --sim h200 plan --round=down 24 40 rest"
    [ "$(grep -c "greenctx --sim" "$err")" -eq 1 ] || fail "the simulated-driver hint is not printed once"
    ;;
options)
    need_sim
    # --x value and --x=value, shared options before or after the command.
    run 0 plan --sim h200 24 40 rest
    grep -Eq "^2 +rest +68 " "$out" || fail "plan --sim h200 (after the command) did not plan"
    run 0 plan --sim=h200@13000 --device=0 --round=down 12
    grep -Eq "^0 +12 +8 " "$out" || fail "--round=down after --sim= did not give 8"
    run 0 --device 0 --sim h200,a100 info
    grep -q "device 1:" "$out" && fail "--device 0 before the command printed device 1"
    run 0 info --sim h200,a100 --device=1
    has "$out" "device 1: NVIDIA A100"
    run 0 info --help
    has "$out" "usage: greenctx info [--device N|UUID] [--json]"
    run 0 info -h
    run 2 --sim h200 info --frob
    has "$err" "greenctx info: unknown option '--frob' (see greenctx info --help)"
    run 2 --sim h200 plan --round
    has "$err" "--round needs strict, down, nearest or up"
    run 2 --sim h200 plan --json=yes 24
    has "$err" "--json takes no value"
    run 2 plan --sim
    has "$err" "--sim needs MODEL"
    ;;
sim_refusals)
    need_sim
    # An unknown model or a malformed simulator variable: refused, with what is valid.
    run 2 --sim h20 info
    has "$err" "greenctx info: --sim h20: 'h20' is not a simulated model; valid: h200 h100 a100 l4 b200"
    run 2 plan --sim=h200,x100@13000 24
    has "$err" "'x100' is not a simulated model"
    # 13.0 typed one zero short is no driver 1.3 (cuDriverGetVersion came with 2.x).
    run 2 --sim h200@1300 info
    has "$err" "--sim: the driver version after @ is 1000 * major + 10 * minor, e.g. 13000 for 13.0 or 12050 for 12.5; got '1300'"
    export GREENCTX_CUDA_LIBRARY="$GREENCTX_SIM_LIBRARY"
    GREENCTX_SIM_DEVICES=h2000 run 2 info
    has "$err" "GREENCTX_SIM_DEVICES=h2000: 'h2000' is not a simulated model"
    GREENCTX_SIM_DRIVER_VERSION=13.0 run 2 info
    has "$err" "GREENCTX_SIM_DRIVER_VERSION=13.0: a driver version is a number like 12040"
    GREENCTX_SIM_DRIVER_VERSION=1300 run 2 info
    has "$err" "GREENCTX_SIM_DRIVER_VERSION=1300: a driver version is a number like 12040, 13000 or 13010 (1000 * major + 10 * minor, 2.0 and newer)"
    GREENCTX_SIM_FAIL=cuGreenCtxCreat:1 run 2 info
    has "$err" "GREENCTX_SIM_FAIL=cuGreenCtxCreat:1: 'cuGreenCtxCreat:1' is not ENTRY_POINT:N[:CODE]"
    GREENCTX_SIM_FAIL=cuGreenCtxCreate:1 run 0 info
    ;;
json_errors)
    need_sim
    # Under --json a refusal is also a JSON object on stdout.
    run 1 --sim h200 info --json --device 3
    has "$err" "the only device is 0"
    has "$out" '"error":{"status":"GCTX_ERROR_NO_DEVICE","message":"'
    has "$out" "the only device is 0"
    run 2 --sim h200 plan --json --round sideways 24
    has "$out" '"error":{"status":"usage","message":"--round takes strict, down, nearest or up'
    run 2 --json --sim h20 info
    has "$out" '"message":"--sim h20: '
    run 1 --sim h200 bench all --json
    has "$out" '"error":{"status":"GCTX_ERROR_UNSUPPORTED","message":"benchmarks need a GPU'
    run 1 --sim h200@13000 plan --json 12
    has "$out" '"error":'
    if command -v python3 >/dev/null 2>&1; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert set(d['error'])=={'status','message'}, d" "$out" ||
            fail "the JSON error is not one object with status and message"
    fi
    ;;
json_always)
    need_sim
    command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed: no JSON parsed"; exit 77; }
    # Under --json (or -j) stdout is one JSON document with greenctx_version and schema,
    # whatever fails and wherever it fails: before the command, in --sim, in a sub-command,
    # with no command, or with arguments that are not UTF-8.
    bad=$(printf 'x\377\376y')
    check_json() { # STATUS SCHEMA ARGS...: exit status, then the document's schema
        want_status=$1 want_schema=$2
        shift 2
        run "$want_status" "$@"
        python3 - "$out" "$want_schema" <<'PY' || fail "greenctx $*: stdout is not one $want_schema document"
import json, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")              # strict: the document is UTF-8
doc = json.loads(text)                  # exactly one document
assert text.endswith("}\n") and text.count("\n") == 1, repr(text)
assert doc["greenctx_version"] == "0.3.0", doc
assert doc["schema"] == sys.argv[2], doc
if doc["schema"] == "greenctx.error/1":
    assert set(doc["error"]) == {"status", "message"} and doc["error"]["message"], doc
PY
    }
    check_json 2 greenctx.error/1 --bogus --json
    check_json 2 greenctx.error/1 --sim h200@abc --json info
    has "$out" '"message":"--sim: the driver version after @'
    check_json 2 greenctx.error/1 --sim h200 bench overlap --bogus --json
    has "$out" '"message":"bench overlap is a script now: python3 bench/compare/overlap.py'
    check_json 2 greenctx.error/1 --json
    has "$out" '"message":"no command given; commands: info, plan, bench, map, run, ps, mps, help"'
    check_json 2 greenctx.error/1 -j
    check_json 2 greenctx.error/1 -j frobnicate
    check_json 2 greenctx.error/1 --sim h200 plan -j "$bad"
    has "$out" 'x\ufffd\ufffdy'
    check_json 2 greenctx.error/1 --sim h200 -j "$bad"
    check_json 0 greenctx.version/1 -j -V
    check_json 0 greenctx.info/1 --sim h200 -j info
    check_json 0 greenctx.info.sizes/1 --sim h200 info --sizes -j
    check_json 0 greenctx.plan/1 --sim h200 plan 24 40 rest --json
    check_json 0 greenctx.map/1 --sim h200 map 24 rest --json
    check_json 1 greenctx.error/1 --sim h200 bench overhead --json --reps 1 --victim-sms 200
    # The tenants' commands too; mps status without a daemon fails with its own document.
    GREENCTX_RUNTIME_DIR=$(mktemp -d) && export GREENCTX_RUNTIME_DIR
    check_json 0 greenctx.ps/1 --sim h200 ps --json
    check_json 1 greenctx.mps/1 --sim h200 mps status --json
    rm -rf "$GREENCTX_RUNTIME_DIR"
    ;;
short_options)
    need_sim
    run 0 -V
    has "$out" "greenctx 0.3.0 (libgreenctx 0.3.0)"
    run 0 --sim h200,a100 info -d 1
    has "$out" "device 1: NVIDIA A100"
    grep -q "device 0:" "$out" && fail "-d 1 also printed device 0"
    run 0 --sim h200 -d 0 -j plan 24
    has "$out" '"schema":"greenctx.plan/1"'
    run 2 --sim h200 plan -d x 24
    has "$err" "-d needs a device number (0, 1, ...), a UUID (GPU-..., or its start) or a PCI bus id; got 'x'"
    # help COMMAND is COMMAND --help; plan's and map's say in one line what they do.
    run 0 help plan
    cp "$out" "$out.help"
    run 0 plan --help
    cmp -s "$out" "$out.help" || fail "greenctx help plan differs from greenctx plan --help"
    rm -f "$out.help"
    [ "$(sed -n 2p "$out")" = "A dry run of a split: each group's SMs, unit and claimability, the path, the SMs left." ] ||
        fail "plan --help does not say in its second line what plan does"
    run 0 help map
    [ "$(sed -n 2p "$out")" = "Makes the split and shows the physical SMs a kernel ran on in each partition." ] ||
        fail "map --help does not say in its second line what map does"
    run 0 help
    has "$out" "usage: greenctx [GLOBAL OPTIONS] COMMAND"
    run 2 help frob
    has "$err" "help: no command 'frob'; commands: info, plan, bench, map, run, ps, mps, help"
    # bench names its benchmarks in its usage and its refusals.
    run 0 bench --help
    has "$out" "usage: greenctx bench isolation|scaling|overhead|all"
    run 2 --sim h200 bench frob
    has "$err" "unknown benchmark 'frob': isolation, scaling, overhead or all"
    run 2 --sim h200 bench
    has "$err" "which benchmark? isolation, scaling, overhead or all"
    ;;
info_sizes)
    need_sim
    # Every size the planner gives on the H200, and how many fit at once: the granule path
    # (13.0) and the structured split (13.1) agree on the counts.
    for driver in 13000 13010; do
        run 0 --sim h200@$driver info --sizes
        # the claims column: how many processes hold that many at once (16 granules of 8)
        grep -Eq '^ +8 +15 +12 +16  ' "$out" || fail "@$driver: 8 SMs: not 15 partitions, 12 left, 16 claims"
        grep -Eq '^ +16 +8 +4 +8  ' "$out" || fail "@$driver: 16 SMs: not 8 partitions, 4 left, 8 claims"
        grep -Eq '^ +24 +5 +12 +5  ' "$out" || fail "@$driver: 24 SMs: not 5, 12 and 5"
        grep -Eq '^ +64 +2 +4 +2  ' "$out" || fail "@$driver: 64 SMs: not 2, 4 and 2"
        grep -Eq '^ +128 +1 +4 +1  ' "$out" || fail "@$driver: 128 SMs: not 1, 4 and 1"
        grep -Eq '^ +12 ' "$out" && fail "@$driver: 12 SMs is listed; the H200 gives multiples of 8"
        [ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  ' "$out")" -eq 16 ] || fail "@$driver: not the 16 sizes 8..128"
    done
    has "$out" "structured"
    run 0 --sim h200@13000 info --sizes
    grep -q "structured" "$out" && fail "13.0 has no structured split"
    # What --sizes lists, plan gives: 5 partitions of 24; a sixth does not fit.
    run 0 --sim h200@13010 plan 24 24 24 24 24
    run 1 --sim h200@13010 plan 24 24 24 24 24 24
    # JSON, per device (A100: 4 to 108 SMs in steps of 2).
    run 0 --sim h200,a100@12050 info --sizes --json
    python3 - "$out" <<'PY' || fail "info --sizes --json is not what it should be"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "greenctx.info.sizes/1", doc
h200, a100 = doc["devices"]
assert [s["sm_count"] for s in h200["sizes"]] == list(range(8, 129, 8)), h200
assert [s["sm_count"] for s in a100["sizes"]] == list(range(4, 109, 2)), a100
first = a100["sizes"][0]
assert (first["max_partitions"], first["remainder_sms"], first["path"]) == (27, 0, "granules"), first
PY
    ;;
verbose)
    need_sim
    run 0 --sim h200@13010 plan 128 rest --verbose
    has "$err" "info: fallback: the structured split refused the request"
    has "$err" "on the granules path (granule 128 SMs)"
    grep -q "debug:" "$err" && fail "--verbose printed debug lines"
    GREENCTX_LOG=debug run 0 --sim h200@13010 --verbose plan 128 rest
    has "$err" "debug: cuDevSmResourceSplit -> CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION (915)"
    run 0 --sim h200 plan 24
    grep -q "greenctx\[" "$err" && fail "without --verbose the library printed diagnostics"
    GREENCTX_LOG=chatty run 2 --sim h200 plan 24
    has "$err" "greenctx plan: GREENCTX_LOG is 'chatty': set it to info"
    ;;
full_stdout)
    need_sim
    # A failed write to stdout is a failure, with a message.
    [ -w /dev/full ] || { echo "no /dev/full here"; exit 77; }
    "$tool" --sim h200 info >/dev/full 2>"$err"
    status=$?
    [ $status -eq 1 ] || fail "info >/dev/full exited $status, expected 1"
    has "$err" "greenctx info: could not write the output"
    "$tool" --help >/dev/full 2>"$err"
    [ $? -eq 1 ] || fail "--help >/dev/full did not exit 1"
    ;;
*)
    echo "unknown case $1"
    exit 2
    ;;
esac
[ $failed -eq 0 ] && echo "ok: $1"
exit $failed

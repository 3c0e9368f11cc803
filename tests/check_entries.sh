#!/bin/sh
# check_entries.sh CTEST BUILD_DIR: every CTest entry has a TIMEOUT, so a hung test fails
# instead of stalling `make test` (ctest's default is 1500 s, or none), and a claims registry
# of its own under the build tree (GREENCTX_RUNTIME_DIR), never the user's nor another entry's.
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
cd "$2" && "$1" --show-only=json-v1 | python3 -c '
import json, os, sys
tests = json.load(sys.stdin)["tests"]
def prop(t, name):
    return next((p["value"] for p in t.get("properties", []) if p["name"] == name), None)
def runtime_dir(t):
    dirs = [e.split("=", 1)[1] for e in prop(t, "ENVIRONMENT") or []
            if e.startswith("GREENCTX_RUNTIME_DIR=")]
    return dirs[-1] if dirs else None
no_timeout = [t["name"] for t in tests if not (prop(t, "TIMEOUT") or 0) > 0]
build = os.path.realpath(sys.argv[1])
dirs = {t["name"]: runtime_dir(t) for t in tests}
not_own = [n for n, d in dirs.items()
           if not d or not os.path.realpath(d).startswith(build + os.sep)
           or list(dirs.values()).count(d) > 1]
print("%d tests, %d without a timeout %s" % (len(tests), len(no_timeout), " ".join(no_timeout)))
print("%d without a runtime directory of their own under %s %s"
      % (len(not_own), build, " ".join(not_own)))
sys.exit(1 if no_timeout or not_own or not tests else 0)' "$2"

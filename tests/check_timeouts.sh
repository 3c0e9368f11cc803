#!/bin/sh
# check_timeouts.sh CTEST BUILD_DIR: every CTest entry has a TIMEOUT, so a hung test fails
# instead of stalling `make test` (ctest's default is 1500 s, or none).
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
cd "$2" && "$1" --show-only=json-v1 | python3 -c '
import json, sys
tests = json.load(sys.stdin)["tests"]
missing = [t["name"] for t in tests
           if not any(p["name"] == "TIMEOUT" and p["value"] > 0 for p in t.get("properties", []))]
print("%d tests, %d without a timeout %s" % (len(tests), len(missing), " ".join(missing)))
sys.exit(1 if missing or not tests else 0)'

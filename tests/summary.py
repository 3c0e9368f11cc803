"""The summary `make test` ends with, read from each run's CTest JUnit file (ctest
--output-junit): every failed test with the end of its output, every skipped test with its
reason (what it printed: a `# SKIP reason` line of a TAP-style test, pytest's `SKIPPED [n]
file: reason`, or its last line, as tests/skip.sh prints it), and the counts per run.

    python3 tests/summary.py [--run] NAME=JUNIT.xml...

With --run: one run's failures and its counts line. Without: the whole summary, whose last line
is `N passed, N failed, N skipped` over all runs (CI reads that line). A run whose JUnit file
is missing (its build failed, or ctest did not get to write it) counts as one failure. Exit
status 1 when anything failed.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

TAIL_LINES = 30


def skip_reason(output):
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    reasons = []
    for line in lines:
        m = re.search(r"# SKIP\s*(.*)", line) or re.match(r"SKIPPED \[\d+\] [^:]+:\d+: (.*)", line)
        if m and m.group(1) not in reasons:
            reasons.append(m.group(1))
    if reasons:
        return "; ".join(reasons)
    return lines[-1] if lines else "(it printed no reason)"


def read(path):
    """(passed, [(name, output)] failed, [(name, reason)] skipped), or None without a file."""
    if not os.path.exists(path):
        return None
    passed, failed, skipped = 0, [], []
    for case in ET.parse(path).getroot().iter("testcase"):
        output = case.findtext("system-out") or ""
        if case.find("skipped") is not None or case.get("status") == "notrun":
            skipped.append((case.get("name"), skip_reason(output)))
        elif case.find("failure") is not None or case.get("status") == "fail":
            failed.append((case.get("name"), output))
        else:
            passed += 1
    return passed, failed, skipped


def counts(p, f, s):
    return f"{p} passed, {f} failed, {s} skipped"


def main(argv):
    one_run = argv[:1] == ["--run"]
    runs = [arg.split("=", 1) for arg in (argv[1:] if one_run else argv)]
    total = [0, 0, 0]
    lines, skips = [], []
    for name, path in runs:
        result = read(path)
        if result is None:
            total[1] += 1
            lines.append(f"{name}: did not run (no {path}: its build or ctest failed; log "
                         f"beside it)")
            continue
        passed, failed, skipped = result
        if one_run:
            for test, output in failed:
                tail = output.rstrip().splitlines()[-TAIL_LINES:]
                print(f"--- {name}: {test} failed; the end of its output:")
                print("\n".join(tail))
        total[0] += passed
        total[1] += len(failed)
        total[2] += len(skipped)
        failed_names = f" ({', '.join(t for t, _ in failed)})" if failed else ""
        lines.append(f"{name}: {counts(passed, len(failed), len(skipped))}{failed_names}")
        skips += [f"  {name:5} {test}: {reason}" for test, reason in skipped]
    if one_run:
        print("\n".join(lines))
    else:
        if skips:
            print(f"skipped, and why ({len(skips)}):")
            print("\n".join(skips))
        print("\n".join(lines))
        print(counts(*total))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shared by the comparison scripts (each in its own process, run_all.py reads their lines):
timing around the calls only, and one JSON line per result on stdout: a version first (or
"skipped": why), then rows {lib, op, reps, p50_us, p99_us, min_us} and capabilities."""
import json
import os
import sys
import time

REPS = int(os.environ.get("GREENCTX_COMPARE_REPS", "50"))  # run_all.py sets it
WARMUPS = 5


def emit(**fields):
    print(json.dumps(fields), flush=True)


def percentile(sorted_values, q):
    rank = q * (len(sorted_values) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def summary(values, weights=None):
    """n, min, p50, p99, p999, max, mean: percentiles interpolated between order statistics,
    or with weights (each value counting weights[i] times) by nearest cumulative rank."""
    if not values:
        return dict.fromkeys(("n", "min", "p50", "p99", "p999", "max", "mean"), 0)
    if weights is None:
        v = sorted(values)
        return {"n": len(v), "min": v[0], "p50": percentile(v, 0.5), "p99": percentile(v, 0.99),
                "p999": percentile(v, 0.999), "max": v[-1], "mean": sum(v) / len(v)}
    pairs, total = sorted(zip(values, weights)), sum(weights)

    def at(q):
        acc = 0
        for value, weight in pairs:
            acc += weight
            if acc >= q * total:
                return value
        return pairs[-1][0]
    return {"n": total, "min": pairs[0][0], "p50": at(0.5), "p99": at(0.99), "p999": at(0.999),
            "max": pairs[-1][0], "mean": sum(v * w for v, w in pairs) / total}


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def time_op(lib, op, once, reps=None):
    """once() does the operation and returns (elapsed_ns, cleanup) where cleanup is a
    callable run outside the clock (or None)."""
    time_entries([(lib, op, once)], reps)


def time_entries(entries, reps=None):
    """Times [(lib, op, once)] rep by rep, each rep in the last one's order backwards (A B C,
    then C B A): what runs just before a call is alike for each. An op that raises gets its
    error as its row."""
    reps = reps or REPS
    samples = {(lib, op): [] for lib, op, _ in entries}
    failed = {}
    for i in range(WARMUPS + reps):
        for lib, op, once in (entries if i % 2 == 0 else entries[::-1]):
            if (lib, op) in failed:
                continue
            try:
                ns, cleanup = once()
                if cleanup:
                    cleanup()
            except Exception as e:  # the library could not do it: say so, with its own words
                failed[lib, op] = f"{type(e).__name__}: {e}"
                continue
            if i >= WARMUPS:
                samples[lib, op].append(ns / 1e3)
    for lib, op, _ in entries:
        if (lib, op) in failed:
            emit(lib=lib, op=op, error=failed[lib, op])
            continue
        s = sorted(samples[lib, op])
        emit(lib=lib, op=op, reps=reps, p50_us=round(percentile(s, 0.5), 2),
             p99_us=round(percentile(s, 0.99), 2), min_us=round(s[0], 2))


def made_by(make, cleanup=None):
    """A once() for time_op: make() on the clock, then cleanup(what it made), if any, off it."""
    def once():
        t0 = time.perf_counter_ns()
        made = make()
        ns = time.perf_counter_ns() - t0
        return ns, cleanup and (lambda: cleanup(made))
    return once


def capability(lib, name, fn):
    """fn() returns a description of what it got; an exception means the library can't."""
    try:
        emit(lib=lib, capability=name, ok=True, detail=str(fn()))
    except Exception as e:
        emit(lib=lib, capability=name, ok=False, detail=f"{type(e).__name__}: {e}")


def capabilities(lib, probe, *args):
    """The capabilities every library is asked for, in this order, each probe(its arg)."""
    for name, arg in zip(("per-group counts (16, 32)", "coscheduled count 8, three groups of 8",
                          "{16, rest} disjoint by construction"), args):
        capability(lib, name, lambda: probe(arg))


def fail(lib, message):
    emit(lib=lib, error=message)
    sys.exit(0)


def skip(lib, reason):
    """A peer library that is not installed (or can't run here): nothing to compare."""
    emit(lib=lib, skipped=reason)
    sys.exit(0)

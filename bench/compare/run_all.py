"""Runs the three comparisons, each in its own process, and prints a table, then every JSON
line (for the record). On the GPU machine, from the repository root:
    GREENCTX_LIBRARY=/path/to/libgreenctx.so python3 bench/compare/run_all.py
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["compare_greenctx.py", "compare_greenctx_python.py", "compare_cuda_core.py",
           "compare_torch.py"]


def run(script):
    path = os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))
    p = subprocess.run([sys.executable, os.path.join(HERE, script)], cwd=os.getcwd(),
                       env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True,
                       timeout=300)
    lines = []
    for line in p.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        lines.append({"lib": script, "error": f"exit {p.returncode}: {tail}"})
    return lines


def main():
    rows = [r for s in SCRIPTS for r in run(s)]
    print("== creation cost (us, wall clock in Python, median of reps after 5 warm-ups)")
    print(f"{'library':<10} {'operation':<44} {'p50':>10} {'p99':>10}  note")
    for r in rows:
        if "op" in r:
            if "error" in r:
                print(f"{r['lib']:<10} {r['op']:<44} {'-':>10} {'-':>10}  {r['error']}")
            else:
                print(f"{r['lib']:<10} {r['op']:<44} {r['p50_us']:>10} {r['p99_us']:>10}")
    print("\n== what each can do on this driver")
    for r in rows:
        if "capability" in r:
            print(f"{r['lib']:<10} {r['capability']:<44} {'yes' if r['ok'] else 'NO':>4}  "
                  f"{r['detail']}")
    for r in rows:
        if "version" in r:
            print(f"{r['lib']}: {r['version']}")
        elif "error" in r and "op" not in r:
            print(f"{r['lib']}: {r['error']}")
    print("\n== JSON lines")
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()

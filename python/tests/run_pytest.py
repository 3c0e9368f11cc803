"""CTest's entry to the Python tests: runs pytest on files of this folder and exits 77
(CTest's "skipped") when pytest is missing or every test that ran was skipped, so a run
that proved nothing never shows as passed.

    python3 run_pytest.py [pytest options] [test files of python/tests]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIPPED = 77


class Outcomes:
    def __init__(self):
        self.passed = self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1
        elif report.skipped:
            self.skipped += 1

    def pytest_collectreport(self, report):
        if report.skipped:
            self.skipped += 1


def main(argv):
    try:
        import pytest
    except ImportError:
        print("pytest is not installed (pip install pytest, or Debian's python3-pytest)")
        return SKIPPED
    args = [a if a.startswith("-") or os.path.isabs(a) else os.path.join(HERE, a)
            for a in argv]
    outcomes = Outcomes()
    rc = pytest.main(["-p", "no:cacheprovider", "--rootdir", HERE, *args], plugins=[outcomes])
    # 5: nothing collected, as when a module skips itself whole.
    if rc in (0, 5) and outcomes.passed == 0 and outcomes.skipped:
        return SKIPPED
    return int(rc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

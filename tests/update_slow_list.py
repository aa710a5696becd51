"""Rewrite tests/slow_tests.txt from a ``pytest --durations=0`` report: every test whose setup, call and
teardown together took longer than the threshold (seconds, default 0.75); tests marked slow in their
files may appear too (harmless). Listed tests the report did not time (a fast-loop run skips them) stay
listed; those it timed are decided again."""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "slow_tests.txt")


def main() -> None:
    report = sys.argv[1]
    threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 0.75
    lines = [line for line in open(LIST)]
    header = [line for line in lines if line.startswith("#")]
    listed = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    total: dict[str, float] = {}
    for line in open(report):
        m = re.match(r"\s*([\d.]+)s (?:setup|call|teardown)\s+(\S.*)$", line)
        if m:
            test = m.group(2).strip()
            total[test] = total.get(test, 0.0) + float(m.group(1))
    slow = [test for test, seconds in total.items() if seconds > threshold]
    slow += [test for test in listed if test not in total]
    with open(LIST, "w") as f:
        f.writelines(header)
        f.write("\n".join(sorted(set(slow))) + "\n")
    print(f"{len(set(slow))} tests over {threshold} s")


if __name__ == "__main__":
    main()

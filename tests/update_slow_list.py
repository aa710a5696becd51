"""Rewrite tests/slow_tests.txt from a ``pytest --durations=0`` report: every test whose call took longer
than the threshold (seconds, default 0.75); tests marked slow in their files may appear too (harmless)."""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "slow_tests.txt")


def main() -> None:
    report = sys.argv[1]
    threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 0.75
    header = [line for line in open(LIST) if line.startswith("#")]
    slow = []
    for line in open(report):
        m = re.match(r"\s*([\d.]+)s call\s+(\S.*)$", line)
        if m and float(m.group(1)) > threshold:
            slow.append(m.group(2).strip())
    with open(LIST, "w") as f:
        f.writelines(header)
        f.write("\n".join(sorted(set(slow))) + "\n")
    print(f"{len(set(slow))} tests over {threshold} s")


if __name__ == "__main__":
    main()

"""Regenerate the printed outputs in docs/examples.md by running each example as the page says.

    python docs/examples_output.py            # rewrite the blocks
    python docs/examples_output.py --check    # exit 1 when a block is stale
    python docs/examples_output.py NAME ...   # only these examples

Each output block in docs/examples.md follows a `<!-- output: NAME -->` line; NAME is a key of
EXAMPLES below, which holds the command the page documents and which lines of its stdout the page
shows (long runs are cut with a `...` line). The runs use the CPU default (eager mode) in a scratch
folder, so the files they write go to ./runs/ there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "examples.md")
MARK = re.compile(r"^<!-- output: (\S+) -->\n```text\n(.*?)^```\n", re.M | re.S)


def _head_tail(head: int, tail: int) -> Callable[[list[str]], list[str]]:
    def keep(lines: list[str]) -> list[str]:
        if len(lines) <= head + tail + 1:
            return lines
        return lines[:head] + ["..."] + (lines[-tail:] if tail else [])

    return keep


def _char_transformer(lines: list[str]) -> list[str]:
    # the first steps, the last step to the prompt, and the sample's first lines
    last = next(i for i, line in enumerate(lines) if line.startswith("validation loss")) - 1
    sample = lines.index("sample:")
    return lines[:3] + ["..."] + lines[last : sample + 3] + ["..."]


# name -> (command line after `python`, what the page shows of stdout)
EXAMPLES: dict[str, tuple[list[str], Callable[[list[str]], list[str]]]] = {
    "quickstart": (["examples/quickstart.py"], _head_tail(10**6, 0)),
    "regression": (["examples/regression.py"], _head_tail(8, 4)),
    "digits_cnn": (["examples/digits_cnn.py"], _head_tail(8, 4)),
    "char_transformer": (["examples/char_transformer.py"], _char_transformer),
    "cifar_resnet": (["-m", "torchlike", "run", "examples/cifar_resnet.py", "--steps", "5"], _head_tail(10**6, 0)),
}


def run(name: str, timeout: float = 1200) -> list[str]:
    """What ``name`` prints, run as documented from a scratch folder in the CPU default mode."""
    argv, _ = EXAMPLES[name]
    argv = [os.path.join(ROOT, a) if a.startswith("examples/") else a for a in argv]
    env = {**os.environ, "TORCHLIKE_LAZY": "0", "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run(
            [sys.executable, *argv], cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout
        )
    if proc.returncode != 0:
        raise RuntimeError(f"{name} exited with {proc.returncode}:\n{proc.stderr[-3000:]}")
    return proc.stdout.splitlines()


def shown(name: str, stdout: list[str]) -> str:
    return "\n".join(EXAMPLES[name][1](stdout)) + "\n"


def blocks(text: str) -> dict[str, str]:
    """The page's output blocks by name."""
    return {m.group(1): m.group(2) for m in MARK.finditer(text)}


def rewrite(text: str, outputs: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        body = outputs.get(m.group(1), m.group(2))
        return f"<!-- output: {m.group(1)} -->\n```text\n{body}```\n"

    return MARK.sub(one, text)


def main(argv: list[str]) -> int:
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    only = [a for a in argv if not a.startswith("-")]
    names = [n for n in blocks(text) if n in EXAMPLES and (not only or n in only)]
    outputs = {name: shown(name, run(name)) for name in names}
    new = rewrite(text, outputs)
    if "--check" in argv:
        stale = [n for n in names if outputs[n] != blocks(text)[n]]
        print("stale: " + ", ".join(stale) if stale else "docs/examples.md is current")
        return 1 if stale else 0
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(new)
    print(f"wrote {PAGE} ({len(names)} outputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

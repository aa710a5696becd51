"""The Python code blocks of README.md and docs/*.md, and how the docs tests run them.

    python docs/doc_blocks.py            # list every block: where, and how it is run

Rules (docs/index.md, "Code blocks" says the same for writers):

- every ```python block runs, each in a fresh namespace, in a scratch folder, and must not raise;
- a block that imports `torch` (`import torch`, `from torch... import`) or `torchvision` is plain
  torch code: it runs under torchlike through the import alias (as `python -m torchlike run`
  would), and compat_tests/test_docs_torch.py runs it under real torch too and compares what it
  prints; a block that imports `torchlike` runs under torchlike only;
- a block whose info string has the word `no-run` (```python no-run) is shown, not run: for
  code that needs several processes, a GPU, or files the reader has;
- a block that fails because an optional package is missing (Pillow, tensorboard, matplotlib,
  tqdm; torchvision under real torch) is skipped, naming the package.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_RUN = "no-run"
# import name -> the package to install
OPTIONAL = {"PIL": "Pillow", "tensorboard": "tensorboard", "matplotlib": "matplotlib", "tqdm": "tqdm"}
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_IMPORTS_TORCH = re.compile(r"^\s*(?:import|from)\s+(?:torch|torchvision)\b", re.M)


@dataclass(frozen=True)
class Block:
    """One fenced code block: the file (relative to the repo), its first code line, info string, code."""

    path: str
    line: int
    info: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def language(self) -> str:
        return self.info.split()[0].lower() if self.info.split() else ""

    @property
    def is_python(self) -> bool:
        return self.language in ("python", "py", "python3")

    @property
    def runs(self) -> bool:
        return self.is_python and NO_RUN not in self.info.split()

    @property
    def plain_torch(self) -> bool:
        """Whether the block is torch code (imports `torch` or `torchvision`): run through the import
        alias under torchlike, and compared against real torch."""
        return bool(_IMPORTS_TORCH.search(self.code))


def markdown_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def read_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced code blocks of one Markdown file, in order (indented code blocks are not read)."""
    blocks = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, start = m.group("fence"), i + 1
        i += 1
        while i < len(lines) and not (lines[i].lstrip().startswith(fence) and not lines[i].strip(fence[0] + " ")):
            i += 1
        code = "\n".join(line[len(m.group("indent")) :] for line in lines[start:i]) + "\n"
        blocks.append(Block(path.relative_to(root).as_posix(), start + 1, m.group("info").strip(), code))
        i += 1
    return blocks


def python_blocks(root: Path = ROOT) -> list[Block]:
    return [b for f in markdown_files(root) for b in read_blocks(f, root) if b.is_python]


def missing_optional(exc: BaseException) -> str | None:
    """The package to install when `exc` is an import of a missing optional package, else None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    if top in OPTIONAL and importlib.util.find_spec(top) is None:
        return OPTIONAL[top]
    if top == "torchvision":  # under the alias torchvision is torchlike.vision; under torch it is its own
        return "torchvision"
    return None


@contextlib.contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def run_block(block: Block, folder: Path, alias: bool) -> str:
    """Execute `block` as a script in `folder`; returns what it printed. `alias`: resolve
    `import torch` to torchlike while it runs (torchlike.compat's import alias)."""
    # Blank lines first, so tracebacks give the line number in the Markdown file.
    code = compile("\n" * (block.line - 1) + block.code, str(ROOT / block.path), "exec", dont_inherit=True)
    namespace = {"__name__": "__main__", "__file__": str(folder / "block.py")}
    out = io.StringIO()
    installed = False
    if alias:
        from torchlike import compat

        installed = not compat.is_installed()
        compat.install()
    try:
        with _in_folder(folder), contextlib.redirect_stdout(out):
            exec(code, namespace)
    finally:
        if installed:
            from torchlike import compat

            compat.uninstall()
        sys.stdout.flush()
    return out.getvalue()


def summary(stats: dict[str, list], test_name: str, what: str) -> str | None:
    """A line for pytest's terminal summary: how many doc blocks the test `test_name` ran, from the
    terminal reporter's `stats` (so it counts under pytest-xdist too)."""
    outcomes: dict[str, str] = {}
    for outcome in ("passed", "skipped", "failed"):  # a failure in any phase wins
        for report in stats.get(outcome, []):
            if f"::{test_name}[" in getattr(report, "nodeid", ""):
                outcomes[report.nodeid] = outcome
    if not outcomes:
        return None
    counts = {o: sum(v == o for v in outcomes.values()) for o in ("passed", "failed", "skipped")}
    ran = counts["passed"] + counts["failed"]
    return f"docs: {ran} code blocks {what} ({counts['passed']} passed, {counts['failed']} failed), {counts['skipped']} skipped"


if __name__ == "__main__":
    for b in python_blocks():
        how = "not run" if not b.runs else ("torch + torchlike" if b.plain_torch else "torchlike")
        print(f"{b.id:40} {how}")

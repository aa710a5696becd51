"""Every Python code block of README.md and docs/*.md runs under torchlike (docs/doc_blocks.py has the
rules: `no-run` blocks are shown only; blocks importing `torch` run through the import alias).

compat_tests/test_docs_torch.py runs the blocks that are plain torch code under real torch as well
and compares their output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))

from doc_blocks import missing_optional, python_blocks, run_block  # noqa: E402 - docs/ is not a package

BLOCKS = python_blocks()


def test_docs_have_code_blocks() -> None:
    files = {b.path for b in BLOCKS if b.runs}
    assert "README.md" in files and len(files) > 5, files


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block, tmp_path: Path) -> None:
    if not block.runs:
        pytest.skip("marked no-run")
    try:
        run_block(block, tmp_path, alias=block.plain_torch)
    except Exception as e:
        package = missing_optional(e)
        if package is None:
            raise
        pytest.skip(f"needs {package}, which is not installed")

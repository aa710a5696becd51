"""Docs code blocks that are plain torch code (they `import torch`) print the same under real torch
and under torchlike (through the import alias). tests/test_docs.py runs every block under torchlike."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))

from doc_blocks import missing_optional, python_blocks, run_block  # noqa: E402 - docs/ is not a package

from torchlike.compat import first_divergence  # noqa: E402 - after the docs path, like the import above

BLOCKS = [b for b in python_blocks() if b.runs and b.plain_torch]


def _run(block, folder: Path, alias: bool) -> str:
    folder.mkdir()
    try:
        return run_block(block, folder, alias=alias)
    except Exception as e:
        package = missing_optional(e)
        if package is None:
            raise
        pytest.skip(f"needs {package}, which is not installed")


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block_matches_torch(block, tmp_path: Path) -> None:
    expected = _run(block, tmp_path / "torch", alias=False)
    actual = _run(block, tmp_path / "torchlike", alias=True)
    divergence = first_divergence(expected, actual)
    assert divergence is None, (
        f"{block.id}: line {divergence.line}:\n  torch:     {divergence.expected}\n  torchlike: {divergence.actual}"
    )

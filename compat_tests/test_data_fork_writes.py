"""Issue 34: DataLoader workers that write into tensors give torch's batches under fork, forkserver and
spawn, with a cold and with a warm persistent compile cache, and never hang (each run is bounded)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "_fork_writes_script.py"
ROOT = Path(__file__).parent.parent
CONTEXTS = ["fork", "forkserver", "spawn"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]  # starts processes under both libraries


def _run(lib: str, contexts: list[str], cache: Path) -> list[str]:
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, str(SCRIPT), lib, *contexts], env=env, capture_output=True, text=True,
                       timeout=540)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.splitlines()


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> dict:
    lines = _run("torch", ["main", *CONTEXTS], tmp_path_factory.mktemp("torch"))
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in lines}


def _check(lines: list[str], expected: dict) -> None:
    for line in lines:
        ctx, out = line.split(" ", 1)
        assert out == expected[ctx], ctx


def test_cold_cache(tmp_path, expected):
    lines = _run("torchlike", CONTEXTS, tmp_path)  # fork first, on an empty cache
    assert [line.split(" ", 1)[0] for line in lines] == CONTEXTS
    _check(lines, expected)


def test_warm_cache_after_spawn(tmp_path, expected):
    _check(_run("torchlike", ["spawn"], tmp_path), expected)  # fills the persistent cache
    assert any(tmp_path.iterdir())
    lines = _run("torchlike", CONTEXTS, tmp_path)
    assert len(lines) == 3
    _check(lines, expected)


def test_warm_after_the_main_process_ran_the_collate(tmp_path, expected):
    # the parent's jit functions hold compiled executables for these very shapes when the workers fork
    lines = _run("torchlike", ["main", "fork", "forkserver"], tmp_path)
    assert len(lines) == 3
    _check(lines, expected)

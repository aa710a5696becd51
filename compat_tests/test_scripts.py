"""Every script of compat_tests/scripts/ runs under real torch and under torchlike with the same stdout.

This is `python -m torchlike compare` per script (torch's run kept between the eager and the lazy pass). Scripts that do not match yet are listed in
KNOWN_FAILURES (the one place for them), as strict xfails: once one matches, its test fails until
its entry is removed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path

import pytest

from torchlike.compat import RunResult, find_scripts
from torchlike.compat._compare import _env, compare_runs, resolve_options, run_command, torch_command, torchlike_command
from torchlike.compat._report import format_result

SCRIPTS_DIR = Path(__file__).parent / "scripts"


# script path relative to scripts/ -> why it does not match torch yet
KNOWN_FAILURES: dict[str, str] = {}

_SCRIPTS = [p.relative_to(SCRIPTS_DIR).as_posix() for p in find_scripts(SCRIPTS_DIR)]
_TIMEOUT = 300

pytestmark = [  # slow: runs whole scripts under torch and torchlike
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="real torch is not installed"),
    pytest.mark.slow,
]


class ScriptDiverged(AssertionError):
    """torchlike's output differs from torch's: the only failure a known failure may have."""


def _param(name: str) -> object:
    reason = KNOWN_FAILURES.get(name)
    marks = [pytest.mark.xfail(strict=True, reason=reason, raises=ScriptDiverged)] if reason else []
    return pytest.param(name, marks=marks, id=name)


def test_known_failures_exist() -> None:
    stale = sorted(set(KNOWN_FAILURES) - set(_SCRIPTS))
    assert not stale, f"KNOWN_FAILURES lists scripts that do not exist: {stale}"


# torch's run of a script is the same in the eager and the lazy pass: the first pass keeps it here, the second
# reads it (CI's time). Keyed by every script file's bytes and torch's version, so an edit runs torch again.
_CACHE = Path(tempfile.gettempdir()) / f"torchlike-torch-runs-{os.getuid() if hasattr(os, 'getuid') else 0}"


def _corpus_key() -> str:
    h = hashlib.sha256()
    for p in sorted(SCRIPTS_DIR.rglob("*.py")):
        h.update(p.relative_to(SCRIPTS_DIR).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def _torch_run(script: Path, timeout: float) -> RunResult:
    import torch

    key = hashlib.sha256(f"{_corpus_key()} {torch.__version__} {script.relative_to(SCRIPTS_DIR)}".encode())
    path = _CACHE / f"{key.hexdigest()[:24]}.json"
    try:
        cached = json.loads(path.read_text())
        return RunResult(cached["command"], cached["returncode"], cached["stdout"], cached["stderr"], 0.0)
    except (OSError, ValueError, KeyError):
        pass
    run = run_command(torch_command(str(script), ()), _env(aliased=False), timeout)
    if run.returncode == 0:  # only a clean run is kept
        _CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"command": run.command, "returncode": 0, "stdout": run.stdout,
                                   "stderr": run.stderr}))  # fmt: skip
        os.replace(tmp, path)
    return run


@pytest.mark.parametrize("name", [_param(n) for n in _SCRIPTS])
def test_script_matches_torch(name: str) -> None:
    script = SCRIPTS_DIR / name
    rtol, atol, timeout, ignore = resolve_options(str(script), None, None, _TIMEOUT, None)
    torch_run = _torch_run(script, timeout)
    torchlike_run = run_command(torchlike_command(str(script), ()), _env(aliased=True), timeout)
    result = compare_runs(str(script), (), torch_run, torchlike_run, rtol, atol, ignore)
    # The corpus must be valid torch code: a script that fails under torch is a bug in the corpus,
    # reported as a failure even for a known failure.
    if result.torch.returncode != 0:
        pytest.fail(f"{name} fails under real torch:\n{result.torch.stderr}")
    if not result.ok:
        raise ScriptDiverged(format_result(result))

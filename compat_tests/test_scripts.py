"""Every script of compat_tests/scripts/ runs under real torch and under torchlike with the same stdout.

This is `python -m torchlike compare` per script. Scripts that do not match yet are listed in
KNOWN_FAILURES (the one place for them), as strict xfails: once one matches, its test fails until
its entry is removed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from differences import skip

from torchlike.compat import compare_script, find_scripts
from torchlike.compat._report import format_result

SCRIPTS_DIR = Path(__file__).parent / "scripts"


# script path relative to scripts/ -> why it does not match torch yet
KNOWN_FAILURES: dict[str, str] = {
    "autograd/autograd_grad.py": skip("double_backward_names"),
}

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


@pytest.mark.parametrize("name", [_param(n) for n in _SCRIPTS])
def test_script_matches_torch(name: str) -> None:
    result = compare_script(SCRIPTS_DIR / name, timeout=_TIMEOUT)
    # The corpus must be valid torch code: a script that fails under torch is a bug in the corpus,
    # reported as a failure even for a known failure.
    if result.torch.returncode != 0:
        pytest.fail(f"{name} fails under real torch:\n{result.torch.stderr}")
    if not result.ok:
        raise ScriptDiverged(format_result(result))

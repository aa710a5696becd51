"""Every script of compat_tests/scripts/ runs under real torch and under torchlike with the same stdout.

This is `python -m torchlike compare` per script. Scripts that do not match yet are listed in
KNOWN_FAILURES (the one place for them), as strict xfails: once one matches, its test fails until
its entry is removed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from torchlike.compat import compare_script, find_scripts
from torchlike.compat._report import format_result

SCRIPTS_DIR = Path(__file__).parent / "scripts"

_OPTIM = "needs torch.optim (issue 7)"

# script path relative to scripts/ -> why it does not match torch yet
KNOWN_FAILURES: dict[str, str] = {
    "amp/autocast_cpu.py": "nn.Linear under torch.autocast('cpu', bfloat16) returns float32, torch bfloat16 (issue 9)",
    "autograd/autograd_grad.py": "the gradient of x ** 3 with create_graph has grad_fn PowBackward0, torch's MulBackward0",
    "compile/compile_model.py": f"{_OPTIM}; torch.compile (issue 11)",
    "data/seed004_dataset_dataloader.py": "type(t) prints <class 'torchlike._core.tensor.Tensor'>, torch <class 'torch.Tensor'>",
    "nn/mlp_classifier.py": _OPTIM,
    "nn/rnn_lstm.py": _OPTIM,
    "nn/save_load.py": "needs torch.save/torch.load (issue 10)",
    "nn/seed004_linear_regression.py": _OPTIM,
    "optim/lr_scheduler.py": _OPTIM,
    "optim/optimizers.py": _OPTIM,
    "optim/seed002_adam.py": _OPTIM,
    "tensors/comparison.py": "needs torch.sort, topk, argsort, unique (issue 3)",
    "tensors/linear_algebra.py": "needs torch.outer, einsum, inverse, det (issue 3)",
    "tensors/reductions.py": "std/var fail: _ops/reduction.py _var calls max(), shadowed by torchlike's max (issue 3)",
}

_SCRIPTS = [p.relative_to(SCRIPTS_DIR).as_posix() for p in find_scripts(SCRIPTS_DIR)]
_TIMEOUT = 300

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="real torch is not installed")


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

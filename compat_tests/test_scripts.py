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

_CORE = "tensor core not importable yet: no torchlike/__init__.py (issue 2)"
_NN = "needs torch.nn (issue 6)"
_OPTIM = "needs torch.optim (issue 7)"
_DATA = "needs torch.utils.data (issue 8)"
_SAVE = "needs torch.save/torch.load (issue 10)"

# script path relative to scripts/ -> why it does not match torch yet
KNOWN_FAILURES: dict[str, str] = {
    "autograd/accumulation_and_errors.py": _CORE,
    "autograd/autograd_grad.py": _CORE,
    "autograd/chain_rule.py": _CORE,
    "autograd/grad_modes.py": _CORE,
    "autograd/manual_regression.py": _CORE,
    "data/dataloader_workers.py": _DATA,
    "data/seed004_dataset_dataloader.py": _DATA,
    "nn/mlp_classifier.py": _NN,
    "nn/save_load.py": _SAVE,
    "nn/seed002_cnn.py": _NN,
    "nn/seed002_sequential_train.py": _NN,
    "nn/seed004_linear_regression.py": _NN,
    "optim/lr_scheduler.py": _OPTIM,
    "optim/seed002_adam.py": _OPTIM,
    "seeds/s000_broadcasting.py": _CORE,
    "seeds/s000_computation_graph.py": _CORE,
    "seeds/s001_arithmetic.py": _CORE,
    "seeds/s001_constructors.py": _CORE,
    "seeds/s001_shape_ops.py": _CORE,
    "seeds/s002_getting_started.py": _CORE,
    "seeds/s003_blitz_autograd.py": _CORE,
    "seeds/s003_blitz_cuda.py": _CORE,
    "seeds/s003_blitz_numpy_bridge.py": _CORE,
    "seeds/s003_blitz_tensors.py": _CORE,
    "seeds/s004_gradient_calc.py": _CORE,
    "seeds/s004_tensor_basics.py": _CORE,
    "tensors/comparison.py": _CORE,
    "tensors/creation.py": _CORE,
    "tensors/dtypes.py": _CORE,
    "tensors/indexing.py": _CORE,
    "tensors/linear_algebra.py": _CORE,
    "tensors/math_ops.py": _CORE,
    "tensors/random_numbers.py": _CORE,
    "tensors/reductions.py": _CORE,
    "tensors/reshaping.py": _CORE,
}

_SCRIPTS = [p.relative_to(SCRIPTS_DIR).as_posix() for p in find_scripts(SCRIPTS_DIR)]
_TIMEOUT = 300

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="real torch is not installed"
)


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

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

_NN = "needs torch.nn (issue 6)"
_OPTIM = "needs torch.optim (issue 7)"
_DATA = "needs torch.utils.data (issue 8)"
_SEED = "needs torch.manual_seed and torch's CPU random stream (issue 5)"
_POW = "Tensor ** number fails: _ops/pointwise.py _pow calls abs(), shadowed by torchlike's abs (issue 3)"

# script path relative to scripts/ -> why it does not match torch yet
KNOWN_FAILURES: dict[str, str] = {
    "amp/autocast_cpu.py": f"{_NN}; torch.autocast (issue 9)",
    "autograd/autograd_grad.py": _POW,
    "autograd/chain_rule.py": _POW,
    "autograd/manual_regression.py": _SEED,
    "compile/compile_model.py": f"{_NN}; torch.compile (issue 11)",
    "data/dataloader_workers.py": _DATA,
    "data/seed004_dataset_dataloader.py": _DATA,
    "nn/losses.py": _NN,
    "nn/mlp_classifier.py": _NN,
    "nn/module_api.py": _NN,
    "nn/rnn_lstm.py": _NN,
    "nn/save_load.py": f"{_NN}; torch.save/torch.load (issue 10)",
    "nn/seed002_cnn.py": _NN,
    "nn/seed002_sequential_train.py": f"{_NN}; torch.autograd.Variable (issue 4)",
    "nn/seed004_linear_regression.py": _NN,
    "nn/transformer_encoder.py": _NN,
    "optim/lr_scheduler.py": _OPTIM,
    "optim/optimizers.py": _OPTIM,
    "optim/seed002_adam.py": _OPTIM,
    "seeds/s000_broadcasting.py": "shapes that don't broadcast raise JAX's ValueError, not torch's RuntimeError (issue 3)",
    "seeds/s001_arithmetic.py": _POW,
    "seeds/s003_blitz_autograd.py": _SEED,
    "seeds/s003_blitz_cuda.py": "needs torch.cuda (issue 9)",
    "seeds/s003_blitz_tensors.py": _SEED,
    "seeds/s004_gradient_calc.py": "needs Tensor.zero_ (issue 3)",
    "seeds/s004_tensor_basics.py": _SEED,
    "tensors/comparison.py": "needs torch.sort, topk, argsort, unique (issue 3)",
    "tensors/linear_algebra.py": "needs torch.outer, einsum, inverse, det (issue 3)",
    "tensors/math_ops.py": "needs torch.relu (issue 3)",
    "tensors/random_numbers.py": _SEED,
    "tensors/reductions.py": "std/var fail: _ops/reduction.py _var calls max(), shadowed by torchlike's max (issue 3)",
    "tensors/reshaping.py": "needs Tensor.repeat (issue 3)",
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

"""Every in-place activation against torch, and a few other ops whose node names torch spells its own way:
the grad_fn's name (the in-place forms of elu/selu/celu, leaky_relu, threshold and rrelu record
``EluBackward1``, ``CeluBackward1``, ``LeakyReluBackward1``, ``ThresholdBackward1``,
``RreluWithNoiseBackward1``), the gradient, and the version error raised when the result is modified again
before backward (those ``...Backward1`` nodes, except threshold's, save the result)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import torchlike

X = np.array([1.5, -0.5, 0.05, -2.0, 0.0, 3.5], np.float32)

# name -> fn(lib, y): an in-place activation of the non-leaf y
FORMS: dict[str, Callable] = {
    "Tensor.relu_": lambda t, y: y.relu_(),
    "torch.relu_": lambda t, y: t.relu_(y),
    "F.relu_": lambda t, y: t.nn.functional.relu_(y),
    "F.relu(inplace)": lambda t, y: t.nn.functional.relu(y, inplace=True),
    "torch.selu_": lambda t, y: t.selu_(y),
    "F.selu(inplace)": lambda t, y: t.nn.functional.selu(y, inplace=True),
    "torch.celu_": lambda t, y: t.celu_(y, 0.7),
    "F.celu_": lambda t, y: t.nn.functional.celu_(y),
    "F.celu(inplace)": lambda t, y: t.nn.functional.celu(y, inplace=True),
    "F.elu_": lambda t, y: t.nn.functional.elu_(y, 0.5),
    "F.elu(inplace)": lambda t, y: t.nn.functional.elu(y, inplace=True),
    "F.leaky_relu_": lambda t, y: t.nn.functional.leaky_relu_(y, 0.2),
    "F.leaky_relu(inplace)": lambda t, y: t.nn.functional.leaky_relu(y, inplace=True),
    "F.hardtanh_": lambda t, y: t.nn.functional.hardtanh_(y, -0.5, 1.0),
    "F.hardtanh(inplace)": lambda t, y: t.nn.functional.hardtanh(y, inplace=True),
    "F.relu6(inplace)": lambda t, y: t.nn.functional.relu6(y, inplace=True),
    "torch.rrelu_": lambda t, y: t.rrelu_(y),
    "F.rrelu_": lambda t, y: t.nn.functional.rrelu_(y, 0.1, 0.3),
    "F.rrelu(inplace)": lambda t, y: t.nn.functional.rrelu(y, inplace=True),
    "F.rrelu_(training)": lambda t, y: t.nn.functional.rrelu_(y, training=True),
    "F.rrelu(training, inplace)": lambda t, y: t.nn.functional.rrelu(y, training=True, inplace=True),
    "F.silu(inplace)": lambda t, y: t.nn.functional.silu(y, inplace=True),
    "F.mish(inplace)": lambda t, y: t.nn.functional.mish(y, inplace=True),
    "F.hardsigmoid(inplace)": lambda t, y: t.nn.functional.hardsigmoid(y, inplace=True),
    "F.hardswish(inplace)": lambda t, y: t.nn.functional.hardswish(y, inplace=True),
    "torch.threshold_": lambda t, y: t.threshold_(y, 0.1, 2.0),
    "F.threshold_": lambda t, y: t.nn.functional.threshold_(y, 0.1, 2.0),
    "F.threshold(inplace)": lambda t, y: t.nn.functional.threshold(y, 0.1, 2.0, inplace=True),
    "nn.ReLU(inplace)": lambda t, y: t.nn.ReLU(inplace=True)(y),
    "nn.ELU(inplace)": lambda t, y: t.nn.ELU(inplace=True)(y),
    "nn.SELU(inplace)": lambda t, y: t.nn.SELU(inplace=True)(y),
    "nn.CELU(inplace)": lambda t, y: t.nn.CELU(inplace=True)(y),
    "nn.LeakyReLU(inplace)": lambda t, y: t.nn.LeakyReLU(inplace=True)(y),
    "nn.RReLU(inplace)": lambda t, y: t.nn.RReLU(inplace=True)(y),
    "nn.Threshold(inplace)": lambda t, y: t.nn.Threshold(0.1, 2.0, inplace=True)(y),
    "nn.Hardtanh(inplace)": lambda t, y: t.nn.Hardtanh(inplace=True)(y),
    "nn.SiLU(inplace)": lambda t, y: t.nn.SiLU(inplace=True)(y),
}


def _run(lib: Any, form: Callable, modify_after: bool) -> tuple:
    """(grad_fn name, returned self?, x.grad or the backward error's (type, message))."""
    lib.manual_seed(0)
    x = lib.tensor(X, requires_grad=True)
    y = x * 1.0
    r = form(lib, y)
    name = r.grad_fn.name()
    if modify_after:
        r.mul_(2.0)
    try:
        (r * lib.arange(1.0, 7.0)).sum().backward()
    except RuntimeError as e:
        return name, r is y, (type(e).__name__, str(e))
    return name, r is y, x.grad.numpy()


@pytest.mark.parametrize("modify_after", [False, True], ids=["plain", "result_modified"])
@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_inplace_activation_matches_torch(form: str, modify_after: bool) -> None:
    ref = _run(torch, FORMS[form], modify_after)
    got = _run(torchlike, FORMS[form], modify_after)
    assert got[:2] == ref[:2]
    if isinstance(ref[2], tuple):
        assert got[2] == ref[2]
    else:
        assert not isinstance(got[2], tuple), got[2]
        np.testing.assert_allclose(got[2], ref[2], rtol=1e-5, atol=1e-6)


# grad_fn names torch spells its own way (Log1P, Deg2Rad), and conj_physical_'s separate in-place node
NAMED = {
    "log1p": lambda t, y: t.log1p(y),
    "log1p_": lambda t, y: y.log1p_(),
    "special.log1p": lambda t, y: t.special.log1p(y),
    "deg2rad": lambda t, y: t.deg2rad(y),
    "deg2rad_": lambda t, y: y.deg2rad_(),
    "rad2deg": lambda t, y: y.rad2deg(),
    "rad2deg_": lambda t, y: y.rad2deg_(),
    "conj_physical_": lambda t, y: y.conj_physical_(),
    "conj_physical_complex_": lambda t, y: (y * (1 + 1j)).conj_physical_(),
}


@pytest.mark.parametrize("modify_after", [False, True], ids=["plain", "result_modified"])
@pytest.mark.parametrize("form", list(NAMED), ids=list(NAMED))
def test_grad_fn_names_match_torch(form: str, modify_after: bool) -> None:
    ref = _run(torch, NAMED[form], modify_after)
    got = _run(torchlike, NAMED[form], modify_after)
    assert got[0] == ref[0]
    if isinstance(ref[2], tuple):
        assert got[2] == ref[2]
    else:
        np.testing.assert_allclose(got[2], ref[2], rtol=1e-5, atol=1e-6)

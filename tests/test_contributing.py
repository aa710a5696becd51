"""CONTRIBUTING.md's worked examples work when followed literally: each example's table entry, taken from the
page itself, is declared under a throw-away name in the module the page names, and the generated functions are
checked (function, method, in-place forms, ``out=``, promotion, the backward node and its gradient). Declared
under its own name, the entry raises: the table already has it, and a second declaration is refused."""

from __future__ import annotations

import importlib
import os
import re

import numpy as np
import pytest

import torchlike as tl
from torchlike import _ops
from torchlike._ops import registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _entry(section: str) -> tuple[str, str]:
    """(module path named by the section, the section's first Python block) of CONTRIBUTING.md."""
    with open(os.path.join(ROOT, "CONTRIBUTING.md"), encoding="utf-8") as f:
        text = f.read()
    body = text[text.index(section):]
    body = body[: body.index("\n## ", 1)]
    module = re.search(r"`torchlike/_ops/([\w/]+)\.py`", body).group(1).replace("/", ".")
    block = re.search(r"```python\n(.*?)```", body, re.S).group(1)
    return f"torchlike._ops.{module}", block


def _declare(section: str, old: str, new: str) -> None:
    module, block = _entry(section)
    namespace = dict(vars(importlib.import_module(module)))
    exec(compile(block.replace(f"def {old}(", f"def {new}("), f"CONTRIBUTING.md ({section})", "exec"), namespace)


@pytest.fixture
def throwaway():
    # what declaring an op adds (its entry, routes, and the names it installs) is taken away again, so
    # later tests in the same process (the name index) see the package as it ships
    spaces = [tl, tl.Tensor, tl.nn.functional, tl.linalg, tl.special, tl.fft]
    before = [set(vars(space)) for space in spaces]
    routes = {k: dict(v) for k, v in _ops.ROUTES.items()}
    declared = []
    yield declared
    for name in declared:
        registry.OPS.pop(name, None)
    for space, names in zip(spaces, before):
        for name in set(vars(space)) - names:
            delattr(space, name)
    _ops.ROUTES.clear()
    _ops.ROUTES.update(routes)


def test_worked_example_1_pointwise_op(throwaway):
    _declare("## Worked example 1", "ldexp", "ldexp_example")
    throwaway.append("ldexp_example")
    torch_ns, tensor_ns = _ops.names.__wrapped__("torch"), _ops.names.__wrapped__("Tensor")
    x, e = tl.tensor([1.0, 2.0, 3.0]), tl.tensor([1, 2, 3])
    assert torch_ns["ldexp_example"](x, e).tolist() == [2.0, 8.0, 24.0]
    assert tensor_ns["ldexp_example"](x, e).tolist() == [2.0, 8.0, 24.0]
    assert torch_ns["ldexp_example"](tl.tensor([1, 2]), tl.tensor([1, 1])).dtype is tl.float32  # promote="float"
    for inplace in (tensor_ns["ldexp_example_"], torch_ns["ldexp_example_"]):
        y = x.clone()
        assert inplace(y, e) is y and y.tolist() == [2.0, 8.0, 24.0]
    out = tl.empty(3)
    assert torch_ns["ldexp_example"](x, e, out=out) is out and out.tolist() == [2.0, 8.0, 24.0]
    w = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch_ns["ldexp_example"](w, e)
    assert type(y.grad_fn).__name__ == "LdexpBackward0"
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0, 8.0])


def test_worked_example_2_functional_op(throwaway):
    _declare("## Worked example 2", "silu", "silu_example")
    throwaway.append("silu_example")
    F = _ops.names.__wrapped__("nn.functional")
    assert "silu_example" not in _ops.names.__wrapped__("torch")  # namespaces=("nn.functional",) only
    x = tl.tensor([-1.0, 0.0, 2.0])
    expected = (x * tl.sigmoid(x)).tolist()
    assert F["silu_example"](x).tolist() == expected
    y = x.clone()
    assert F["silu_example"](y, inplace=True) is y and y.tolist() == expected
    w = tl.tensor([-1.0, 0.5], requires_grad=True)
    assert type(F["silu_example"](w).grad_fn).__name__ == "SiluExampleBackward0"
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F["silu_example"](tl.tensor([1, 2]))


@pytest.mark.parametrize("section, name", [("## Worked example 1", "ldexp"), ("## Worked example 2", "silu")])
def test_following_an_example_under_its_own_name_is_refused(section, name):
    module, block = _entry(section)
    with pytest.raises(TypeError, match=f"op {name} is declared twice"):
        exec(block, dict(vars(importlib.import_module(module))))

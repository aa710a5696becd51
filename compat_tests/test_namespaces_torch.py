"""Functions the op table generates for ``nn.functional``, ``special``, ``linalg`` and ``fft`` carry torch's
signatures: the same parameter names, kinds and defaults wherever torch's function has a Python signature."""

from __future__ import annotations

import importlib
import inspect

import pytest
import torch  # noqa: F401  (imports torch's submodules)

SPACES = ["nn.functional", "special", "linalg", "fft"]


def _signature(fn: object) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a text signature
        return None


@pytest.mark.parametrize("space", SPACES)
def test_generated_functions_have_torchs_signature(space):
    ours = importlib.import_module(f"torchlike.{space}")
    theirs = importlib.import_module(f"torch.{space}")
    compared, wrong = 0, []
    for name in ours.__all__:
        fn = getattr(ours, name)
        if getattr(fn, "_op", None) is None:  # hand-written functions are checked by their own tests
            continue
        want = _signature(getattr(theirs, name))
        if want is None:
            continue
        got = inspect.signature(fn)
        shape = [(p.name, p.kind, p.default) for p in want.parameters.values()]
        if [(p.name, p.kind, p.default) for p in got.parameters.values()] != shape:
            wrong.append(f"{name}: torch {want}, torchlike {got}")
        compared += 1
    assert not wrong, "\n".join(wrong)
    if space == "nn.functional":
        assert compared >= 15  # relu, silu, hardtanh, elu, ... have Python signatures in torch


# torch's top-level in-place functions torchlike does not have, and why
_NO_TOP_LEVEL_INPLACE = {
    "as_strided_": "Tensor.as_strided_ (in-place restriding) is not implemented",
    "detach_": "torch.detach (top level) is not provided either; Tensor.detach_ is",
    "embedding_renorm_": "an internal of F.embedding(max_norm=), which torchlike does inside the op",
    "resize_as_sparse_": "sparse tensors are not supported",
}


def _top_level_inplace() -> list:
    return sorted(n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and callable(getattr(torch, n)))


def test_top_level_inplace_functions_exist():
    import torchlike

    missing = [n for n in _top_level_inplace() if n not in _NO_TOP_LEVEL_INPLACE and not hasattr(torchlike, n)]
    assert not missing, missing
    assert not [n for n in _NO_TOP_LEVEL_INPLACE if hasattr(torchlike, n)], "drop it from the list"


_UNARY_INPLACE = [n for n in _top_level_inplace() if n not in _NO_TOP_LEVEL_INPLACE]


@pytest.mark.parametrize("name", _UNARY_INPLACE)
def test_top_level_inplace_matches_torch(name):
    """torch.X_(x, ...) writes into x as torch's does and returns x (the arguments are one sample per op)."""
    import numpy as np

    import torchlike

    extra = {
        "addmv_": lambda t: (t.ones(3, 2), t.ones(2)), "clamp_": lambda t: (-0.5, 0.5), "clip_": lambda t: (-0.5, 0.5),
        "clamp_min_": lambda t: (0.1,), "clamp_max_": lambda t: (0.1,), "gcd_": lambda t: (t.tensor([4, 6, 9]),),
        "lcm_": lambda t: (t.tensor([4, 6, 9]),), "ldexp_": lambda t: (t.tensor([1.0, 2.0, 3.0]),),
        "xlogy_": lambda t: (t.tensor([0.5, 1.5, 2.5]),), "logit_": lambda t: (0.1,), "fill_": lambda t: (2.0,),
        "index_put_": lambda t: ((t.tensor([0]),), t.tensor(9.0)), "resize_as_": lambda t: (t.zeros(3),),
        "threshold_": lambda t: (0.4, -1.0), "dropout_": lambda t: (0.5, False), "alpha_dropout_": lambda t: (0.5, False),
        "feature_dropout_": lambda t: (0.5, False), "feature_alpha_dropout_": lambda t: (0.5, False),
    }  # fmt: skip
    integral = name in ("gcd_", "lcm_")
    results = []
    for t in (torch, torchlike):
        x = t.tensor([6, 8, 12]) if integral else t.tensor([0.25, 0.5, 0.75])
        args = extra[name](t) if name in extra else ()
        ret = getattr(t, name)(x, *args)
        assert ret is x
        results.append(x.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)

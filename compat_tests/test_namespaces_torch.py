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

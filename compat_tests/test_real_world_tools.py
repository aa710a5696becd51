"""Tools real scripts use around training: torch.autograd.gradcheck/gradgradcheck, torch.nn.utils.prune,
torch.profiler."""

from __future__ import annotations

import warnings

import pytest
import torch
from _harness import check_raises

import torchlike


def both(fn):  # noqa: ANN001, ANN201
    return fn(torch), fn(torchlike)


def _bad_square(t):  # noqa: ANN001, ANN202
    class BadSquare(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):  # noqa: ANN001, ANN205
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):  # noqa: ANN001, ANN205
            (a,) = ctx.saved_tensors
            return g * a  # should be 2 * g * a

    return BadSquare.apply


def test_gradcheck() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        x = t.randn(3, dtype=t.double, requires_grad=True)
        w = t.randn(2, 3, dtype=t.double, requires_grad=True)
        b = t.randn(2, dtype=t.double)
        return [
            t.autograd.gradcheck(lambda a, m: (m @ a.sin()).tanh(), (x, w)),
            t.autograd.gradgradcheck(lambda a, m: (m @ a.sin()).tanh(), (x, w)),
            t.autograd.gradcheck(t.nn.functional.linear, (t.randn(2, 3, dtype=t.double, requires_grad=True), w, b)),
            t.autograd.gradcheck(lambda a: (a * 2, a.detach()), x),
            t.autograd.gradcheck(_bad_square(t), (x,), raise_exception=False),
        ]

    ref, got = both(run)
    assert got == ref == [True, True, True, True, False]


def test_gradcheck_errors() -> None:
    def mismatch(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        return t.autograd.gradcheck(_bad_square(t), (t.randn(3, dtype=t.double, requires_grad=True),))

    check_raises(mismatch)  # GradcheckError, "Jacobian mismatch for output 0 with respect to input 0,"
    assert issubclass(torchlike.autograd.gradcheck.__globals__["GradcheckError"], RuntimeError)
    check_raises(lambda t: t.autograd.gradcheck(lambda a: a * 2, (t.ones(2),)))

    def float32_warns(t):  # noqa: ANN001, ANN202
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t.autograd.gradcheck(lambda a: a * 2, (t.ones(2, requires_grad=True),), atol=1e-2, eps=1e-3)
        return [str(x.message) for x in w]

    ref, got = both(float32_warns)
    assert got == ref


def test_gradcheck_message_matches() -> None:
    caught = []
    for t in (torch, torchlike):
        t.manual_seed(0)
        with pytest.raises(RuntimeError) as info:
            t.autograd.gradcheck(_bad_square(t), (t.randn(3, dtype=t.double, requires_grad=True),))
        caught.append(str(info.value))
    assert caught[1] == caught[0]

"""torch.autograd.gradcheck's fast mode, reentrancy and grad_output checks, compared with real torch."""

import re

import pytest
import torch

import torchlike


def _inputs(lib):
    x = lib.linspace(-1, 1, 6, dtype=lib.double).reshape(2, 3).requires_grad_()
    w = lib.linspace(0.5, 1.5, 12, dtype=lib.double).reshape(3, 4).requires_grad_()
    return x, w


def _functions(lib):
    class Cube(lib.autograd.Function):  # a wrong gradient: 2.9 a^2 for 3 a^2
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a**3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2.9 * a * a * g

    calls = [0]

    class NonDet(lib.autograd.Function):  # every other backward is off by 1e-3
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            return g * 2 + (1e-3 * calls[0] if calls[0] % 2 else 0) * g

    class NoMul(lib.autograd.Function):  # right Jacobian, but a zero grad_output gives ones
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 if bool(g.any()) else lib.ones_like(g)

    return {"cube": Cube.apply, "nondet": NonDet.apply, "nomul": NoMul.apply}


def _outcome(lib, name, **kw):
    x, w = _inputs(lib)
    fn = _functions(lib)[name] if name != "ok" else (lambda a, b: (a @ b).tanh())
    args = (x,) if name != "ok" else (x, w)
    try:
        return lib.autograd.gradcheck(fn, args, **kw)
    except Exception as e:  # noqa: BLE001 - compared below
        return (type(e).__name__, str(e))


_NUM = re.compile(r"(numerical|analytical):(-?\d\.\d+)")


def _same(name, **kw):
    ref, got = _outcome(torch, name, **kw), _outcome(torchlike, name, **kw)
    if isinstance(ref, tuple) and isinstance(got, tuple):
        # the fast mode's two projections are printed with 16 digits: the last may differ
        for (k1, a), (k2, b) in zip(_NUM.findall(ref[1]), _NUM.findall(got[1])):
            assert k1 == k2 and float(a) == pytest.approx(float(b), rel=1e-12, abs=1e-14)
        ref = (ref[0], _NUM.sub(r"\1:#", ref[1]))
        got = (got[0], _NUM.sub(r"\1:#", got[1]))
    assert ref == got
    return got


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_passes_and_fails_as_torch(fast_mode):
    assert _same("ok", fast_mode=fast_mode) is True
    err = _same("cube", fast_mode=fast_mode)
    assert err[0] == "GradcheckError" and err[1].startswith("Jacobian mismatch for output 0 with respect to input 0")
    assert _same("cube", fast_mode=fast_mode, raise_exception=False) is False


def test_fast_mode_message_recomputes_in_slow_mode():
    err = _same("cube", fast_mode=True)
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in err[1]
    assert "The max per-element difference (slow mode) is: 0.0999" in err[1]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_reentrancy_check(fast_mode):
    err = _same("nondet", fast_mode=fast_mode, atol=1e-2)
    assert err[1].startswith("Backward is not reentrant")
    assert _same("nondet", fast_mode=fast_mode, atol=1e-2, nondet_tol=1e-2) is True


@pytest.mark.parametrize("fast_mode", [False, True])
def test_backward_multiplied_by_grad_output(fast_mode):
    assert _same("nomul", fast_mode=fast_mode) == ("GradcheckError", "backward not multiplied by grad_output")


def test_gradgradcheck_fast_mode():
    def fn(lib):
        x, w = _inputs(lib)
        return lib.autograd.gradgradcheck(lambda a, b: (a.sin() @ b).pow(2), (x, w), fast_mode=True)

    assert fn(torch) is True and fn(torchlike) is True

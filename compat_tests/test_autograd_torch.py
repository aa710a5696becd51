"""Autograd under torch and torchlike: the seeds' examples, engine semantics, higher order, Functions."""

import numpy as np
import pytest
from _harness import check, check_raises

X = np.random.RandomState(0).rand(3, 4).astype(np.float32)
V = np.random.RandomState(1).rand(4).astype(np.float32)


def test_blitz_example_prints_the_same():
    import torch

    import torchlike

    outs = []
    for lib in (torch, torchlike):
        x = lib.ones(2, 2, requires_grad=True)
        y = x + 2
        z = y * y * 3
        out = z.mean()
        out.backward()
        outs.append((repr(x), repr(y), repr(z), repr(out), repr(x.grad), type(y.grad_fn).__name__))
    assert outs[0] == outs[1]


def test_requires_grad_flags_and_leaves():
    def f(t, a):
        b = t.ones(2, 2)
        c = (b * 3) / (b - 1.5)
        flags = [c.requires_grad, c.is_leaf]
        c.requires_grad_(True)
        d = (c * c).sum()
        return flags + [c.requires_grad, c.is_leaf, d.requires_grad, d.is_leaf, type(d.grad_fn).__name__]

    check(f, [X], grad=False)


@pytest.mark.parametrize("case", ["chain", "broadcast", "reuse", "views", "inplace_nonleaf", "setitem"])
def test_gradients(case):
    fns = {
        "chain": lambda t, a, v: ((a * 2 + 1).sin() * a).exp().mean(1),
        "broadcast": lambda t, a, v: (a * v - v).pow(2).sum(0),
        "reuse": lambda t, a, v: a @ v + (a @ v) * (a @ v),
        "views": lambda t, a, v: a.t()[1:3].reshape(-1) * 2,
        "inplace_nonleaf": lambda t, a, v: (a * 1).mul_(v).add_(3).sigmoid_(),
        "setitem": lambda t, a, v: _setitem(a, v),
    }
    check(fns[case], [X, V])


def _setitem(a, v):
    b = a * 1
    b[1] = v * 3
    b[:, 0] = 7.0
    return b.exp()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_conventions_at_kinks(dtype):
    data = np.array([[-1.0, 0.0, 1.0, 2.0], [2.0, 2.0, -3.0, 0.0]])

    def f(t, a):
        return (a.abs().sum(), a.clamp(0.0, 1.0).sum(), t.relu(a).sum(), a.max(), a.amax(1), t.max(a, 1).values,
                a.sqrt().nan_to_num(0.0, 0.0, 0.0).sum() if False else a.sign().sum())  # fmt: skip

    check(f, [data], dtype=dtype)


def test_double_backward_gradient_penalty():
    def f(t, a, v):
        y = (a.pow(3) * v).sum()
        (g,) = t.autograd.grad(y, a, create_graph=True)
        return (g.pow(2)).sum()

    check(f, [X, V])


def test_custom_function():
    def f(t, a, v):
        class Scale(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(x)
                ctx.k = k
                return x * k, x.sum()

            @staticmethod
            def backward(ctx, g1, g2):
                (x,) = ctx.saved_tensors
                return g1 * ctx.k + g2, None

        out, s = Scale.apply(a * v, 3.0)
        return out.tanh(), s, type(out.grad_fn).__name__

    check(f, [X, V])


def test_functional_transforms():
    from torch.autograd import functional as F_torch  # noqa: F401

    check(lambda t, a: t.autograd.functional.jacobian(lambda z: (z.sin() * z).cumsum(0), a), [V], grad=False)
    check(lambda t, a: t.autograd.functional.hessian(lambda z: (z.sin() * z).sum(), a), [V], grad=False)
    check(lambda t, a: t.autograd.functional.vjp(lambda z: z.exp() * 2, a, a), [V], grad=False)
    check(lambda t, a: t.autograd.functional.jvp(lambda z: z.exp() * 2, a, a), [V], grad=False)
    check(lambda t, a: t.autograd.functional.hvp(lambda z: (z**3).sum(), a, a), [V], grad=False)
    check(lambda t, a: t.autograd.functional.vhp(lambda z: (z**3).sum(), a, a), [V], grad=False)


def test_hooks_and_retain_grad():
    def f(t, a, v):
        a = a.detach().requires_grad_()
        b = a * v
        b.register_hook(lambda g: g * 2)
        c = b.exp()
        c.retain_grad()
        c.sum().backward()
        return a.grad, c.grad, b.retains_grad, c.retains_grad

    check(f, [X, V], grad=False)


def test_errors_match_torch():
    def twice(t, a):
        a = a.detach().requires_grad_()
        y = (a * a).sum()
        y.backward()
        y.backward()

    check_raises(twice, [X])

    def saved_modified(t, a):
        a = a.detach().requires_grad_()
        y = a.exp()
        y.add_(1)
        y.sum().backward()

    check_raises(saved_modified, [X])

    def leaf_inplace(t, a):
        a = a.detach().requires_grad_()
        a.mul_(2)

    check_raises(leaf_inplace, [X])

    def nonscalar(t, a):
        (a.detach().requires_grad_() * 2).backward()

    check_raises(nonscalar, [X])

    def no_grad_fn(t, a):
        (a * 2).sum().backward()

    check_raises(no_grad_fn, [X])

    def nonleaf_flag(t, a):
        (a.detach().requires_grad_() * 2).requires_grad_(False)

    check_raises(nonleaf_flag, [X])


def test_detach_and_data_share_memory():
    def f(t, a):
        a = a.detach().requires_grad_()
        d = a.detach()
        d.add_(1)
        with t.no_grad():
            a.data.mul_(2)
        return a.detach(), a.requires_grad, d.requires_grad, a._version, d._version

    check(f, [X], grad=False)


def test_manual_sgd_loop_matches():
    def f(t, a, v):
        w = t.zeros(4, requires_grad=True)
        losses = []
        for _ in range(5):
            loss = ((a @ w - 1.0) ** 2).mean()
            loss.backward()
            with t.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
            losses.append(loss.item())
        return w.detach(), losses

    check(f, [X, V], grad=False)


def test_complex_gradients_follow_torchs_convention():
    """torch's complex .grad is the conjugate of JAX's cotangent: leaves, complex seeds, hooks, complex
    built from real leaves, autograd.grad, custom Functions and torch.func all agree with torch."""
    import torch

    import torchlike

    def run(t):
        out = []
        a = t.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        a.abs().sum().backward()
        out.append(a.grad)
        c = t.tensor([1 + 2j, 0.5 - 1j], requires_grad=True)
        (c * (2 - 1j)).exp().backward(t.tensor([1 + 0j, 1j]))
        out.append(c.grad)
        d = t.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        seen = []
        e = d * 3
        e.register_hook(seen.append)
        (e.abs() ** 2).sum().backward()
        out += [seen[0], d.grad]
        x = t.tensor([1.0, 2.0], requires_grad=True)
        (t.complex(x, x * 2) ** 2).abs().sum().backward()
        out.append(x.grad)
        out += list(t.autograd.grad((d * d).abs().sum(), d))
        out.append(t.func.grad(lambda z: z.abs().sum())(t.tensor([1 + 2j, 3 - 1j])))
        out += list(t.func.vjp(lambda z: z * z, t.tensor([1 + 2j, 3 - 1j]))[1](t.tensor([1 + 1j, 2 + 0j])))

        class Square(t.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                (z,) = ctx.saved_tensors
                return g * 2 * z  # torch's convention would use conj(2z); the engine must pass g as torch does

        f = t.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        Square.apply(f).abs().sum().backward()
        out.append(f.grad)
        return [np.asarray(o.detach().numpy()) for o in out]

    for got, want in zip(run(torchlike), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

"""The autograd engine alone: fused vs per-node paths, caching, hooks, memory, errors."""

import gc
import weakref

import pytest

import torchlike as torch
from torchlike.autograd import engine


def _mlp_step(w1, w2, x):
    h = (x @ w1).tanh()
    return (h @ w2).pow(2).mean()


@pytest.mark.skipif(torch.lazy.enabled(), reason="lazy mode fuses the backward from the first step (test_lazy.py)")
def test_fused_path_compiles_once_per_structure(monkeypatch):
    from torchlike._core import cold_kernels

    monkeypatch.setattr(cold_kernels, "_on", False)  # the compiled policy (the cold one: test_cold_kernels.py)
    torch.manual_seed(0)
    w1 = torch.randn(4, 8, requires_grad=True)
    w2 = torch.randn(8, 2, requires_grad=True)
    x = torch.randn(5, 4)
    before = dict(engine.stats)
    grads = []
    for _ in range(5):
        w1.grad = w2.grad = None
        _mlp_step(w1, w2, x).backward()
        grads.append(w1.grad.clone())
    after = engine.stats
    # the structure's second sighting builds its fused program; a shape runs it from its third sighting
    assert after["per_node_calls"] - before.get("per_node_calls", 0) == 2
    assert after["fused_compiles"] - before.get("fused_compiles", 0) == 1
    assert after["fused_calls"] - before.get("fused_calls", 0) == 3
    for g in grads[1:]:
        assert torch.allclose(g, grads[0], atol=1e-6)


@pytest.mark.skipif(torch.lazy.enabled(), reason="lazy mode fuses the backward from the first step (test_lazy.py)")
def test_churning_shapes_compile_no_fused_backward(monkeypatch):
    """Batches padded to their longest sequence: lengths recur, but the structure has met more shapes than
    CHURN_SHAPES before any comes back a third time, so it runs per node and compiles no fused program."""
    from torchlike._core import cold_kernels

    monkeypatch.setattr(cold_kernels, "_on", False)
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    before = dict(engine.stats)
    for n in (5, 7, 5, 9, 11, 7, 13, 5, 7, 9, 5, 7):
        x = torch.randn(n, 4)
        (x @ w).sinh().cumsum(0).sum().backward()
    after = engine.stats
    assert after["fused_calls"] - before.get("fused_calls", 0) == 0
    assert after["per_node_calls"] - before.get("per_node_calls", 0) == 12
    want = torch.zeros(4, 3)
    torch.manual_seed(0)
    w2 = torch.randn(4, 3)
    for n in (5, 7, 5, 9, 11, 7, 13, 5, 7, 9, 5, 7):
        x = torch.randn(n, 4)
        want += x.t() @ ((x @ w2).cosh() * torch.arange(n, 0, -1).unsqueeze(1))  # d sum(cumsum(y)) / dy_i = n - i
    assert torch.allclose(w.grad, want, rtol=1e-5, atol=1e-5)


def test_fused_and_per_node_agree_and_accumulate():
    torch.manual_seed(1)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(3)
    total = None
    for _ in range(4):  # per-node, fused-compile, fused, fused: grads accumulate in .grad
        ((w @ x).sin().sum()).backward()
        g = torch.cos(w @ x).unsqueeze(1) * x.unsqueeze(0)
        total = g if total is None else total + g
    assert torch.allclose(w.grad, total, atol=1e-5)


def test_graph_is_freed_after_backward():
    w = torch.ones(3, requires_grad=True)
    refs = []
    for _ in range(200):
        y = (w * 2).exp().sum()
        refs.append(weakref.ref(y.grad_fn))
        y.backward()
        del y
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0


def test_no_growth_over_many_steps():
    w = torch.ones(4, requires_grad=True)
    from torchlike.autograd.graph import Node

    def count():
        gc.collect()
        return sum(isinstance(o, Node) for o in gc.get_objects())

    for _ in range(20):
        ((w * 3).sum()).backward()
    base = count()
    for _ in range(10_000):
        ((w * 3).sum()).backward()
    assert count() <= base + 2


def test_a_kept_loss_holds_no_activation_after_backward():
    """torch frees what a graph saved at backward; nodes that saved nothing (views, adds, splits)
    hold no tensor either. A training loop that keeps its losses (``losses.append(loss)``) kept
    every step's activations alive here (issue 32: 59 GiB on a GPT), and in lazy mode they became
    outputs of every step's program."""
    import jax

    w = torch.ones(64, 64, requires_grad=True)
    x = torch.ones(32, 64)
    losses = []
    arrays = []
    for _ in range(6):
        h = (x @ w).view(32, 8, 8).transpose(0, 1).reshape(8, 256)
        a, b = h.split(128, dim=1)
        loss = (a + b).tanh().sum()
        loss.backward()
        losses.append(loss)  # the graph stays reachable through loss.grad_fn
        del h, a, b, loss
        w.grad = None
        torch.lazy.mark_step() if torch.lazy.enabled() else None
        gc.collect()
        arrays.append(sum(1 for a in jax.live_arrays() if a.shape in ((32, 64), (8, 256), (8, 128), (32, 8, 8))))
    assert arrays[-1] == arrays[1], arrays
    # torch: a graph of nodes that saved nothing may run backward again, from shapes alone
    v = torch.ones(3, requires_grad=True)
    y = (v + 1).view(3, 1).sum()
    y.backward()
    y.backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0]
    # only the differentiable inputs are dropped: a dropout mask (an argument, not an input) stays
    torch.manual_seed(0)
    d = torch.ones(64, requires_grad=True)
    z = torch.nn.functional.dropout(d, 0.5).sum()
    z.backward()
    first = d.grad.clone()
    z.backward()
    assert (d.grad == 2 * first).all() and 0 < first.count_nonzero() < 64


def test_backward_twice_raises():
    w = torch.ones(3, requires_grad=True)
    y = (w * w).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    w = torch.ones(3, requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert w.grad.tolist() == [4.0, 4.0, 4.0]


def test_nonscalar_needs_gradient():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (w * 2).backward()
    (w * 2).backward(torch.ones(3))
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_inplace_on_leaf_and_saved_tensor_errors():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    y = w.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_no_grad_and_set_grad_enabled():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not (w * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2

    assert not f(w).requires_grad
    with torch.inference_mode():
        assert not (w + 1).requires_grad


def test_hooks_force_per_node_path_and_modify_grads():
    w = torch.ones(3, requires_grad=True)
    for _ in range(3):
        y = w * 2
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
    assert w.grad.tolist() == [60.0, 60.0, 60.0]


def test_autograd_grad_non_leaf_and_allow_unused():
    x = torch.ones(2, requires_grad=True)
    z = torch.ones(2, requires_grad=True)
    y = x * 3
    out = (y * y).sum()
    (gy,) = torch.autograd.grad(out, y, retain_graph=True)
    assert gy.tolist() == [6.0, 6.0]
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        torch.autograd.grad(out, [x, z], retain_graph=True)
    gx, gz = torch.autograd.grad(out, [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [18.0, 18.0]


def test_grad_fn_names_and_next_functions():
    x = torch.ones(2, requires_grad=True)
    y = x + 2
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert repr(y.grad_fn).startswith("<AddBackward0 object at 0x")
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert acc.variable is x and none is None
    assert type((x * x).mean().grad_fn).__name__ == "MeanBackward0"

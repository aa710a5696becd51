"""Guarded replay of recurring lazy steps: replayed steps give eager's results, and any change falls back.

Each test runs the same step function eagerly and lazily (with replay) and compares; the counters show that
replay actually happened (``replayed``) and where a changed step left it (``replay_misses``).
"""

import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn
from torchlike._core import lazy as L


@pytest.fixture
def lazy_on():
    old = L.enabled()
    L.set_enabled(True)
    L.reset_stats()
    try:
        yield
    finally:
        L.set_enabled(old)


def _both(make_state, step, steps):
    """``step(state, i)`` for ``steps`` steps eagerly and lazily, from the same seed: both lists of results."""
    out = []
    for lazy in (False, True):
        with torch.lazy.mode(lazy):
            torch.manual_seed(0)
            state = make_state()
            out.append([_values(step(state, i)) for i in range(steps)])
    return out


def _values(r):
    if isinstance(r, (tuple, list)):
        return [_values(x) for x in r]
    if isinstance(r, torch.Tensor):
        return (r.detach().numpy().copy(), r.dtype, r.requires_grad, r.grad_fn is not None)
    return r


def _assert_same(eager, lazy):
    assert len(eager) == len(lazy)
    for a, b in zip(eager, lazy):
        if isinstance(a, list):
            _assert_same(a, b)
        elif isinstance(a, tuple):
            np.testing.assert_allclose(b[0], a[0], rtol=1e-6, atol=1e-7)
            assert a[1:] == b[1:]
        elif isinstance(a, (int, float)) and not isinstance(a, bool):
            assert a == pytest.approx(b, rel=1e-6)
        else:  # names, dtypes, None: pytest.approx refuses non-numbers on newer pytest
            assert a == b


def _mlp():
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return model, opt, torch.randn(8, 6), torch.randint(0, 3, (8,))


def _train(state, i):
    model, opt, x, y = state
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def test_training_loop_replays_with_eager_losses(lazy_on):
    eager, lazy = _both(_mlp, _train, 10)
    _assert_same(eager, lazy)
    s = torch.lazy.stats()
    assert s["replayed"] > 0 and s["replayed_steps"] >= 5
    assert s.get("replay_misses", 0) <= 2  # the first steps differ (Adam's state is created on step 1)


def test_unsynchronised_loop_replays(lazy_on):
    torch.manual_seed(0)
    model, opt, x, y = _mlp()
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss)
    got = [v.item() for v in losses]
    with torch.lazy.mode(False):
        torch.manual_seed(0)
        state = _mlp()
        want = [_train(state, i) for i in range(8)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert torch.lazy.stats()["replayed_steps"] >= 4


def test_a_data_dependent_branch_falls_back(lazy_on):
    def make():
        return torch.randn(4, 4, requires_grad=True), torch.randn(4, 4)

    def step(state, i):
        w, x = state
        h = (x @ w).relu()
        if i % 3 == 2:  # every third step takes another path
            h = h.sin() * 3
        else:
            h = h * 2 + 1
        loss = h.sum()
        loss.backward()
        g = w.grad.clone()
        w.grad = None
        return loss, g

    eager, lazy = _both(make, step, 9)
    _assert_same(eager, lazy)
    assert torch.lazy.stats()["replay_misses"] >= 2


def test_a_new_shape_falls_back(lazy_on):
    def make():
        return nn.Linear(5, 2), [torch.randn(b, 5) for b in (4, 4, 4, 7, 7, 4, 4)]

    def step(state, i):
        model, xs = state
        out = model(xs[i]).tanh()
        out.sum().backward()
        g = model.weight.grad.clone()
        model.weight.grad = None
        return out, g

    eager, lazy = _both(make, step, 7)
    _assert_same(eager, lazy)
    assert torch.lazy.stats()["replay_misses"] >= 1


def test_a_hook_added_mid_run_is_called(lazy_on):
    calls = []

    def make():
        return torch.randn(3, 3, requires_grad=True), torch.randn(3, 3)

    def step(state, i):
        w, x = state
        h = x * w
        if i == 4:
            h.register_hook(lambda g: calls.append(1) or g * 10)
        h.exp().sum().backward()
        g = w.grad.clone()
        w.grad = None
        return g

    eager, lazy = _both(make, step, 7)
    _assert_same(eager, lazy)
    assert len(calls) == 2  # once per mode
    np.testing.assert_allclose(lazy[4][0], lazy[3][0] * 10, rtol=1e-6)


def test_requires_grad_toggled_mid_run(lazy_on):
    def make():
        return torch.randn(3, requires_grad=True), torch.randn(3)

    def step(state, i):
        w, x = state
        w.requires_grad_(i not in (3, 4))
        y = (w * x + 1).sigmoid()
        return y

    eager, lazy = _both(make, step, 7)
    _assert_same(eager, lazy)
    assert [r[2] for r in lazy] == [True, True, True, False, False, True, True]


def test_grad_mode_and_default_dtype_are_guarded(lazy_on):
    def make():
        return torch.randn(3, requires_grad=True), torch.arange(3)

    def step(state, i):
        w, n = state
        old = torch.get_default_dtype()
        if i == 4:
            torch.set_default_dtype(torch.float64)
        try:
            with torch.set_grad_enabled(i != 2):
                return w * 2, n * 1.5  # int * float: the default dtype
        finally:
            torch.set_default_dtype(old)

    eager, lazy = _both(make, step, 6)
    _assert_same(eager, lazy)
    assert lazy[2][0][2] is False and lazy[4][1][1] is torch.float64 and lazy[5][1][1] is torch.float32


def test_changing_numbers_and_baked_defaults(lazy_on):
    def make():
        return torch.randn(4), torch.randn(4)

    def step(state, i):
        a, b = state
        # alpha=1 is baked into the kernel, any other alpha is an argument; the scale changes every step
        return torch.add(a, b, alpha=[1, 2, 1, 1, 3, 1][i]) * (0.5 + i), a.clamp(min=[0.0, -0.0][i % 2])

    eager, lazy = _both(make, step, 6)
    _assert_same(eager, lazy)


def test_inplace_write_to_a_saved_tensor_raises_on_a_replayed_step(lazy_on):
    w = torch.randn(3, requires_grad=True)
    for i in range(5):
        y = w * 2
        z = y * y  # saves y
        if i == 4:
            y.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                z.sum().backward()
        else:
            z.sum().backward()
            w.grad = None
            torch.lazy.mark_step()
    assert torch.lazy.stats()["replayed"] > 0


def test_errors_raise_at_the_op_on_a_replayed_step(lazy_on):
    a = torch.ones(3, 4)
    for i in range(5):
        b = torch.ones(5) if i == 3 else torch.ones(4)
        if i == 3:
            with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of tensor b \(5\)"):
                a + b
        else:
            assert (a + b).sum().item() == 24.0
        torch.lazy.mark_step()


def test_item_between_steps_and_random_streams_match_eager(lazy_on):
    def make():
        return nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.5), nn.Linear(8, 1)), torch.randn(6, 5)

    def step(state, i):
        model, x = state
        out = model(x)
        v = out.mean().item()  # a host read inside the step
        noise = torch.randn(2)
        loss = (out * v).sum() + noise.sum()
        loss.backward()
        return loss.item(), noise, torch.rand(3)

    eager, lazy = _both(make, step, 6)
    _assert_same(eager, lazy)
    assert torch.lazy.stats()["replayed"] > 0


def test_autocast_toggled_mid_run(lazy_on):
    def make():
        return torch.randn(4, 4), torch.randn(4, 4)

    def step(state, i):
        a, b = state
        with torch.autocast("cpu", dtype=torch.float16 if i >= 5 else torch.bfloat16, enabled=i >= 2):
            r = a @ b
        return r.float(), r.dtype

    eager, lazy = _both(make, step, 7)
    _assert_same(eager, lazy)
    assert [r[1] for r in lazy] == [torch.float32] * 2 + [torch.bfloat16] * 3 + [torch.float16] * 2


def test_replay_keeps_no_nodes_alive(lazy_on):
    import gc

    from torchlike.autograd.graph import Node

    w = torch.ones(4, requires_grad=True)

    def count():
        gc.collect()
        return sum(isinstance(o, Node) for o in gc.get_objects())

    for _ in range(10):
        (w * 3).sum().backward()
        torch.lazy.mark_step()
    base = count()
    for _ in range(200):
        (w * 3).sum().backward()
        torch.lazy.mark_step()
    assert count() <= base + 2
    assert torch.lazy.stats()["replayed_steps"] >= 200


def test_donation_takes_only_unheld_leaves_an_output_can_reuse():
    import jax.numpy as jnp

    class _Gpu:  # donation is off on the CPU (XLA ignores it there): its logic is checked with a stand-in
        platform = "gpu"

    L._array_types()
    f32 = np.float32
    held = jnp.ones(3, f32)
    leaves = [jnp.ones(3, f32), held, jnp.ones((2, 2), f32), jnp.zeros(3, f32), 2.0]
    outs = [L.LazyArray.__new__(L.LazyArray) for _ in range(2)]
    for z, shape in zip(outs, [(3,), (5,)]):
        z.shape, z.dtype = shape, np.dtype("float32")
    # one node reads leaves 0, 1, 2 and 3 and makes both outputs: the (3,) output pairs with the first (3,) leaf
    # it reads, leaf 0, held by the list only; leaf 1 is held here; leaf 2 matches no output; leaf 3 would
    # match, but the one (3,) output is taken
    plan = L._donation_plan([(None, None, (~0, ~1, ~2, ~3), 0, 2, False)], leaves, (0, 1), outs)
    assert L._donatable(leaves, _Gpu(), outs, plan) == (0,)
    assert L._donatable(leaves, None, outs, plan) == ()
    # read in another order, the (3,) output pairs with leaf 1, which is held: nothing is donated
    plan = L._donation_plan([(None, None, (~1, ~0, ~3), 0, 2, False)], leaves, (0, 1), outs)
    assert L._donatable(leaves, _Gpu(), outs, plan) == ()
    assert held is leaves[1]


def test_replayed_nodes_show_eager_grad_fns(lazy_on):
    def make():
        return nn.Linear(4, 3), torch.randn(2, 4), torch.randn(2, 3, requires_grad=True), torch.randn(2, 3)

    def chain_of(t, depth=3):
        if t is None or depth == 0:
            return None
        return (t.name(), [chain_of(n, depth - 1) for n, _ in t.next_functions])

    def step(state, i):
        model, x, b, c = state
        y = model(x) * 1.01
        z = c * torch.add(y, b, alpha=2).relu() - b  # c needs no gradient: (None, MulBackward0's input)
        z.sum().backward()
        grads = [p.grad.clone() for p in (model.weight, model.bias, b)]
        for p in (model.weight, model.bias, b):
            p.grad = None
        return chain_of(z.grad_fn), grads

    eager, lazy = _both(make, step, 6)
    _assert_same(eager, lazy)
    assert torch.lazy.stats()["replayed"] > 0

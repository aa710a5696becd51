"""A recurring backward's host shortcuts (engine.py), such as the implicit root gradient made as a NumPy array. Each test changes something between recurrences that a wrong shortcut would miss."""

import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as torch
from torchlike._core import tensor as T
from torchlike.autograd import engine

pytestmark = pytest.mark.skipif(torch.lazy.enabled(), reason="eager engine paths (lazy: test_lazy.py)")


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def _grads(model: torch.nn.Module) -> list:
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("loss_fn", [lambda o: o.pow(2).sum(), lambda o: (o * 3.1).exp().mean(),
                                     lambda o: o.sum().reshape(1, 1)])  # fmt: skip
def test_implicit_root_gradient_matches_explicit_ones(loss_fn):
    model, x = _model(), torch.randn(5, 4)
    pairs = []
    for step in range(8):  # per node at first, fused from the third sighting (which run is which: the same in a pair)
        pair = []
        for implicit in (True, False):
            model.zero_grad()
            loss = loss_fn(model(x))
            # (explicitly: the JAX array the implicit gradient was before it was made a NumPy one)
            loss.backward() if implicit else loss.backward(T.make(jnp.ones(loss.shape, np.float32), loss.device))
            pair.append(_grads(model))
        pairs.append(pair)
    for a, b in pairs[:1] + pairs[2:]:  # (the second pair's implicit run is the structure's second sighting)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


def test_recurring_structure_with_a_hook_added_runs_the_hook():
    model, x = _model(), torch.randn(5, 4)
    for _ in range(4):
        model.zero_grad()
        model(x).pow(2).sum().backward()
    plain = _grads(model)
    seen = []
    model.zero_grad()
    h = model(x)
    h.register_hook(lambda g: seen.append(g.shape) or g * 2)
    h.pow(2).sum().backward()
    assert seen == [(5, 3)]
    doubled = _grads(model)
    for u, v in zip(doubled, plain):
        np.testing.assert_allclose(u, 2 * v, rtol=1e-6)
    model.zero_grad()
    model(x).pow(2).sum().backward()  # the same structure without the hook: fused again, as before
    for u, v in zip(_grads(model), plain):
        np.testing.assert_array_equal(u, v)


def test_recurring_structure_with_requires_grad_toggled():
    model, x = _model(), torch.randn(5, 4)
    first = model[0].weight
    for _ in range(4):
        model.zero_grad()
        model(x).sum().backward()
    first.requires_grad_(False)
    model.zero_grad()
    model(x).sum().backward()
    assert first.grad is None and model[2].weight.grad is not None
    first.requires_grad_(True)
    model.zero_grad()
    model(x).sum().backward()
    assert first.grad is not None


def test_recurring_structure_with_new_shapes_and_accumulation():
    model = _model()
    for n in (5, 5, 5, 7, 7, 7, 5):
        x = torch.randn(n, 4)
        model.zero_grad()
        model(x).pow(2).sum().backward()
        want = [p.grad.numpy().copy() for p in model.parameters()]
        model(x).pow(2).sum().backward()  # accumulates onto .grad: twice the gradient
        for p, w in zip(model.parameters(), want):
            np.testing.assert_allclose(p.grad.numpy(), 2 * w, rtol=1e-6)


def test_structure_keys_are_interned_and_distinct():
    w = torch.ones(3, requires_grad=True)
    a = engine._Program(engine._root_edges([(w * 2).sum()]), None)
    b = engine._Program(engine._root_edges([(w * 2).sum()]), None)
    c = engine._Program(engine._root_edges([(w * 2).mean()]), None)
    assert a.key is b.key and a.key == b.key and hash(a.key) == hash(b.key)
    assert c.key != a.key


def test_implicit_root_gradient_of_autograd_grad_and_retain_graph():
    w = torch.ones(3, requires_grad=True)
    for _ in range(4):
        y = (w * w).sum()
        (g,) = torch.autograd.grad(y, w, retain_graph=True)
        assert g.tolist() == [2.0, 2.0, 2.0]
        y.backward()
    assert w.grad.tolist() == [8.0, 8.0, 8.0]


def test_shape_signature_is_tree_leaves_order():
    import jax

    a, b = jnp.ones((2, 3)), np.zeros(4, np.float32)
    node_args = [[a, None, 2.0, [b, a]], [(1, 2), np.float64(1.5), True], None, [{"k": b}]]
    root_cts = [np.ones((), np.float32)]
    want = tuple((x.shape, x.dtype) if hasattr(x, "shape") else type(x)
                 for x in jax.tree_util.tree_leaves((node_args, root_cts)))  # fmt: skip
    assert engine._shape_sig(node_args, root_cts) == want


def test_argument_signature_kinds():
    class MyList(list):
        pass

    args = [jnp.ones(2), None, 1, True, 2.5, np.float64(1.0), np.float32(1.0), [1, 2], MyList([1]), (1, 2), "s"]
    assert engine._arg_sig(args) == (0, None, int, bool, float, np.float64, 0, 2, 1, 0, 0)


def _reference_order(root_edges: list) -> tuple[list, list]:
    """The engine's topological order as its first version computed it (a post-order with (node, done) pairs)."""
    from torchlike._core.graph import AccumulateGrad

    order, leaves, seen = [], [], set()
    stack = [(e[0], False) for e in reversed(root_edges)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                leaves.append(node)
                continue
            stack.append((node, True))
            stack.extend((m, False) for m, _ in reversed(node.edges) if id(m) not in seen)
    return order[::-1], leaves


def test_program_order_on_random_graphs():
    import random

    rng = random.Random(0)
    for _ in range(200):
        pool = [torch.randn(3).requires_grad_(True) for _ in range(rng.randint(1, 4))] + [torch.randn(3)]
        for _ in range(rng.randint(1, 25)):
            a, b = rng.choice(pool), rng.choice(pool)
            pool.append(rng.choice([lambda: a + b, lambda: a * b, lambda: a.tanh(), lambda: (a - b) * 2])())
        roots = [t.sum() for t in pool[-3:] if t.requires_grad]
        if not roots:
            continue
        edges = engine._root_edges(roots)
        prog = engine._Program(edges, [engine.edge_of(t) for t in rng.sample(pool, 2) if t.requires_grad] or None)
        order, leaves = _reference_order(edges)
        assert [id(n) for n in prog.nodes] == [id(n) for n in order]
        assert [id(n) for n in prog.leaves] == [id(n) for n in leaves]
        index = {id(n): i for i, n in enumerate(order)} | {id(n): ("l", j) for j, n in enumerate(leaves)}
        for n, (_, _, targets, _) in zip(order, prog.entries):
            want = [index[id(m)] if type(index[id(m)]) is tuple else ("n", index[id(m)], nr) for m, nr in n.edges]
            assert list(targets) == want

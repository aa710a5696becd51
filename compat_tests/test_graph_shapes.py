"""grad_fn graphs read like torch's: names and order of next_functions, including the nodes torch builds
inside linear and matmul (TBackward0 for the weight, MmBackward0 without bias, view/expand chains)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import check

import torchlike


def _tree(fn) -> object:  # noqa: ANN001
    if fn is None:
        return None
    return (fn.name(), [_tree(f) for f, _ in fn.next_functions])


def _leaf(t, *shape, grad=True, seed=0):  # noqa: ANN001, ANN202
    return t.tensor(np.random.RandomState(seed).randn(*shape).astype(np.float32), requires_grad=grad)


def _linear(t, x_shape, bias=True, transpose=False, x_grad=True, w_grad=True):  # noqa: ANN001, ANN202
    x = _leaf(t, *x_shape, grad=x_grad)
    if transpose:
        x = x.transpose(-1, -2)
    w = _leaf(t, 3, 4, grad=w_grad)
    b = _leaf(t, 3, grad=w_grad) if bias else None
    return t.nn.functional.linear(x, w, b)


_CASES = {
    "linear_2d": lambda t: _linear(t, (2, 4)),
    "linear_2d_nobias": lambda t: _linear(t, (2, 4), bias=False),
    "linear_1d": lambda t: _linear(t, (4,)),
    "linear_1d_nobias": lambda t: _linear(t, (4,), bias=False),
    "linear_3d": lambda t: _linear(t, (2, 5, 4)),
    "linear_3d_nobias": lambda t: _linear(t, (2, 5, 4), bias=False),
    "linear_3d_strided": lambda t: _linear(t, (2, 4, 5), transpose=True),
    "linear_3d_strided_nobias": lambda t: _linear(t, (2, 4, 5), bias=False, transpose=True),
    "linear_data_input": lambda t: _linear(t, (2, 4), x_grad=False),
    "linear_frozen_weight": lambda t: _linear(t, (2, 4), w_grad=False),
    "linear_nonleaf": lambda t: t.nn.functional.linear(_leaf(t, 2, 4) * 2, _leaf(t, 3, 4) * 1, _leaf(t, 3) + 0),
    "module_linear": lambda t: (t.manual_seed(0), t.nn.Linear(4, 3)(_leaf(t, 2, 4)))[1],
    "module_linear_nobias": lambda t: (t.manual_seed(0), t.nn.Linear(4, 3, bias=False)(_leaf(t, 2, 4)))[1],
    "conv2d": lambda t: (t.manual_seed(0), t.nn.Conv2d(2, 3, 3)(_leaf(t, 1, 2, 5, 5)))[1],
    "conv2d_nobias": lambda t: (t.manual_seed(0), t.nn.Conv2d(2, 3, 3, bias=False)(_leaf(t, 1, 2, 5, 5)))[1],
    "matmul_chain": lambda t: _leaf(t, 3, 4) @ _leaf(t, 4, 5, seed=1) @ _leaf(t, 5, 2, seed=2),
    "matmul_mv": lambda t: _leaf(t, 3, 4) @ _leaf(t, 4),
    "matmul_vm": lambda t: _leaf(t, 4) @ _leaf(t, 4, 3),
    "matmul_3d_2d": lambda t: _leaf(t, 2, 5, 4) @ _leaf(t, 4, 3),
    "matmul_2d_3d": lambda t: _leaf(t, 5, 4) @ _leaf(t, 2, 4, 3),
    "matmul_3d_3d": lambda t: _leaf(t, 2, 5, 4) @ _leaf(t, 2, 4, 3, seed=1),
    "matmul_4d_4d": lambda t: _leaf(t, 2, 2, 5, 4) @ _leaf(t, 2, 2, 4, 3, seed=1),
    "matmul_data_left": lambda t: _leaf(t, 2, 5, 4, grad=False) @ _leaf(t, 2, 4, 3, seed=1),
}


# A Python number is a wrapped tensor (an empty edge) where torch's schema takes a Tensor (add, mul), and a
# Scalar without an edge where it takes a Scalar (pow's exponent, clamp's bounds, a norm's order).
_CASES.update({
    "add_number": lambda t: _leaf(t, 3) + 2,
    "mul_number": lambda t: 2.5 * _leaf(t, 3),
    "pow_int": lambda t: _leaf(t, 3).pow(3),
    "pow_float": lambda t: _leaf(t, 3) ** 2.5,
    "clamp_numbers": lambda t: t.clamp(_leaf(t, 3), 0.0, 1.0),
    "clamp_max_number": lambda t: _leaf(t, 3).clamp(max=0.5),
    "vector_norm_3": lambda t: t.linalg.vector_norm(_leaf(t, 2, 3), 3),
    "vector_norm_0": lambda t: t.linalg.vector_norm(_leaf(t, 2, 3), 0),
    "norm_p": lambda t: _leaf(t, 2, 3).norm(p=1.5, dim=1),
    "dist": lambda t: t.dist(_leaf(t, 3), _leaf(t, 3, seed=1), 3),
    "cdist": lambda t: t.cdist(_leaf(t, 2, 3), _leaf(t, 4, 3, seed=1), p=1.0),
    "pdist": lambda t: t.nn.functional.pdist(_leaf(t, 4, 3), p=3),
    "renorm": lambda t: _leaf(t, 2, 3).renorm(2, 0, 1.0),
    "ldexp": lambda t: t.ldexp(_leaf(t, 3), t.tensor([1, 2, 3])),
    "ldexp_": lambda t: (_leaf(t, 3) * 1).ldexp_(t.tensor([1, 2, 3])),
})  # fmt: skip


# Arguments torch's derivative table declares non-differentiable (a condition, indices, masks) have no entry in
# next_functions; a number where torch's schema takes a Scalar (pow's base, a fill value) has none either, while a
# tensor there keeps its own (masked_fill with a tensor value). The spec declares them (defop nondiff= / scalar=).
def _ix(t):  # noqa: ANN001, ANN202
    return t.tensor([0, 2])


def _ig(t):  # noqa: ANN001, ANN202
    return t.tensor([[0, 1, 2, 0]])


def _mask(t):  # noqa: ANN001, ANN202
    return t.tensor([True, False, True, False])


_CASES.update({
    "where": lambda t: (lambda x: t.where(x > 0, x, _leaf(t, 3, 4, seed=1)))(_leaf(t, 3, 4)),
    "where_number": lambda t: (lambda x: t.where(x > 0, x, 0.0))(_leaf(t, 3, 4)),
    "index_select": lambda t: t.index_select(_leaf(t, 3, 4), 0, _ix(t)),
    "index_add": lambda t: _leaf(t, 3, 4).index_add(0, _ix(t), _leaf(t, 2, 4, seed=1)),
    "index_copy": lambda t: _leaf(t, 3, 4).index_copy(0, _ix(t), _leaf(t, 2, 4, seed=1)),
    "index_fill": lambda t: _leaf(t, 3, 4).index_fill(0, _ix(t), 1.0),
    "index_put": lambda t: _leaf(t, 3, 4).index_put((_ix(t),), _leaf(t, 2, 4, seed=1)),
    "gather": lambda t: t.gather(_leaf(t, 3, 4), 0, _ig(t)),
    "take_along_dim": lambda t: t.take_along_dim(_leaf(t, 3, 4), _ig(t), 0),
    "scatter": lambda t: _leaf(t, 3, 4).scatter(0, _ig(t), _leaf(t, 1, 4, seed=1)),
    "scatter_value": lambda t: _leaf(t, 3, 4).scatter(0, _ig(t), 1.0),
    "scatter_add": lambda t: _leaf(t, 3, 4).scatter_add(0, _ig(t), _leaf(t, 1, 4, seed=1)),
    "scatter_reduce": lambda t: _leaf(t, 3, 4).scatter_reduce(0, _ig(t), _leaf(t, 1, 4, seed=1), "sum"),
    "masked_fill": lambda t: _leaf(t, 3, 4).masked_fill(_mask(t), 0.0),
    "masked_fill_tensor": lambda t: _leaf(t, 3, 4).masked_fill(_mask(t), t.tensor(1.0)),
    "masked_scatter": lambda t: _leaf(t, 3, 4).masked_scatter(_mask(t), _leaf(t, 3, 4, seed=1)),
    "masked_select": lambda t: _leaf(t, 3, 4).masked_select(_mask(t)),
    "take": lambda t: t.take(_leaf(t, 3, 4), _ix(t)),
    "put": lambda t: _leaf(t, 3, 4).put(_ix(t), _leaf(t, 2, seed=1)),
    "embedding": lambda t: t.nn.functional.embedding(_ig(t), _leaf(t, 3, 4)),
    "pow_number_base": lambda t: t.pow(2.0, _leaf(t, 3)),
    "rpow": lambda t: 2.0 ** _leaf(t, 3),
})  # fmt: skip


@pytest.mark.parametrize("op", ["where", "index_add", "gather", "scatter", "masked_fill", "masked_scatter", "pow"])
def test_gradients_with_nondifferentiable_arguments(op: str) -> None:
    """Leaving the index/mask/condition edges out changes no gradient."""
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    y = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    fn = {
        "where": lambda t, x, y: t.where(x > 0, x, y),
        "index_add": lambda t, x, y: x.index_add(0, t.tensor([0, 2]), y[:2]),
        "gather": lambda t, x, y: t.gather(x, 1, t.tensor([[0, 1], [2, 0], [3, 3]])) * y[:, :2],
        "scatter": lambda t, x, y: x.scatter(0, t.tensor([[0, 1, 2, 0]]), y[:1]),
        "masked_fill": lambda t, x, y: x.masked_fill(y > 0, 0.5),
        "masked_scatter": lambda t, x, y: x.masked_scatter(y > 0, y * 2),
        "pow": lambda t, x, y: t.pow(2.0, x) + y,
    }[op]
    check(fn, [x, y])


# clamp's Tensor overload (a tensor bound) has an edge per bound, empty for a missing one; lerp's number weight
# and fill_'s number value are Scalars (no edge). In-place comparisons and random fills of a tensor that requires
# grad record torch's node over the overwritten tensor (and a tensor `other` / `p`), whose gradient is zero.
def _inplace(t, name, *args, seed=0):  # noqa: ANN001, ANN202
    t.manual_seed(seed)
    y = _leaf(t, 3, 4) * 1
    getattr(y, name)(*args)
    return y


def _inplace_view(t, name, *args):  # noqa: ANN001, ANN202
    t.manual_seed(0)
    y = _leaf(t, 3, 4) * 1
    getattr(y[:2], name)(*args)
    return y


_CASES.update({
    "clamp_tensor_min": lambda t: t.clamp(_leaf(t, 3), _leaf(t, 3, seed=1)),
    "clamp_tensor_max": lambda t: t.clamp(_leaf(t, 3), max=_leaf(t, 3, seed=1)),
    "clamp_tensor_both": lambda t: t.clamp(_leaf(t, 3), _leaf(t, 3, seed=1), _leaf(t, 3, seed=2) + 1),
    "clamp_data_min": lambda t: t.clamp(_leaf(t, 3), _leaf(t, 3, seed=1, grad=False)),
    "clip_tensor_max": lambda t: t.clip(_leaf(t, 3), None, _leaf(t, 3, seed=1)),
    "clamp_tensor_min_": lambda t: (_leaf(t, 3) * 1).clamp_(_leaf(t, 3, seed=1)),
    "lerp_number": lambda t: t.lerp(_leaf(t, 3), _leaf(t, 3, seed=1) * 2, 0.5),
    "fill_number": lambda t: _inplace(t, "fill_", 1.0),
    "fill_tensor": lambda t: _inplace(t, "fill_", t.tensor(1.0)),
    "fill_tensor_grad": lambda t: _inplace(t, "fill_", _leaf(t, 3).sum()),
    "zero_": lambda t: _inplace(t, "zero_"),
    **{f"{op}_number": (lambda op: lambda t: _inplace(t, op, 0.5))(op)
       for op in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_equal_", "not_equal_")},
    "eq_tensor": lambda t: _inplace(t, "eq_", _leaf(t, 3, 4, seed=1)),
    "lt_data_tensor": lambda t: _inplace(t, "lt_", _leaf(t, 4, grad=False)),
    "ge_0d_tensor": lambda t: _inplace(t, "ge_", t.tensor(0.0)),
    "gt_view": lambda t: _inplace_view(t, "gt_", 0.0),
    "normal_": lambda t: _inplace(t, "normal_"),
    "uniform_": lambda t: _inplace(t, "uniform_", -1, 1),
    "exponential_": lambda t: _inplace(t, "exponential_"),
    "cauchy_": lambda t: _inplace(t, "cauchy_"),
    "log_normal_": lambda t: _inplace(t, "log_normal_"),
    "geometric_": lambda t: _inplace(t, "geometric_", 0.3),
    "random_": lambda t: _inplace(t, "random_"),
    "random_to": lambda t: _inplace(t, "random_", 5),
    "random_from_to": lambda t: _inplace(t, "random_", 1, 5),
    "bernoulli_": lambda t: _inplace(t, "bernoulli_"),
    "bernoulli_number": lambda t: _inplace(t, "bernoulli_", 0.3),
    "bernoulli_tensor_p": lambda t: _inplace(t, "bernoulli_", _leaf(t, 3, 4, seed=1).sigmoid()),
    "bernoulli_data_p": lambda t: _inplace(t, "bernoulli_", t.full((3, 4), 0.5)),
    "normal_view": lambda t: _inplace_view(t, "normal_"),
})  # fmt: skip


@pytest.mark.parametrize("op", ["eq_", "lt_", "normal_", "bernoulli_", "random_", "gt_view", "normal_view"])
def test_overwritten_values_get_zero_gradients(op: str) -> None:
    """The nodes of in-place comparisons and random fills pass zero gradients (torch's `.grad` is zeros, not
    None), through views too; the values written are torch's."""
    p = np.random.RandomState(2).rand(3, 4).astype(np.float32)

    def fn(t, x, p):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        y = x * 1
        target = y[:2] if op.endswith("_view") else y
        name = op.removesuffix("view")
        args = {"eq_": (y * 0 + 0.5,), "lt_": (p,), "gt_": (0.0,), "bernoulli_": (p,)}.get(name, ())
        getattr(target, name if name.endswith("_") else name + "_")(*args)
        return y * 2

    check(fn, [np.random.RandomState(0).randn(3, 4).astype(np.float32), p])


# Optional weight/bias of the norms are empty edges when missing; running statistics, nll_loss's target and weight
# have no edge; cross_entropy with class indices shows torch's log_softmax inside.
def _norm_input(t):  # noqa: ANN001, ANN202
    return _leaf(t, 2, 3, 4, 4)


_CASES.update({
    "batch_norm_module": lambda t: (t.manual_seed(0), t.nn.BatchNorm2d(3)(_norm_input(t)))[1],
    "batch_norm_eval": lambda t: (t.manual_seed(0), t.nn.BatchNorm2d(3).eval()(_norm_input(t)))[1],
    "batch_norm_no_affine": lambda t: t.nn.functional.batch_norm(_norm_input(t), None, None, training=True),
    "batch_norm_weight_only": lambda t: t.nn.functional.batch_norm(_norm_input(t), t.zeros(3), t.ones(3),
                                                                   _leaf(t, 3, seed=1), None, training=True),
    "layer_norm_module": lambda t: (t.manual_seed(0), t.nn.LayerNorm(4)(_norm_input(t)))[1],
    "layer_norm_no_affine": lambda t: t.nn.functional.layer_norm(_norm_input(t), (4,)),
    "layer_norm_weight_only": lambda t: t.nn.functional.layer_norm(_norm_input(t), (4,), _leaf(t, 4, seed=1)),
    "group_norm_no_affine": lambda t: t.nn.functional.group_norm(_norm_input(t), 3),
    "group_norm_module": lambda t: (t.manual_seed(0), t.nn.GroupNorm(3, 3)(_norm_input(t)))[1],
    "nll_loss": lambda t: t.nn.functional.nll_loss(_leaf(t, 3, 5), t.tensor([1, 2, 3])),
    "nll_loss_weight": lambda t: t.nn.functional.nll_loss(_leaf(t, 3, 5), t.tensor([1, 2, 3]), t.ones(5)),
    "nll_loss_4d": lambda t: t.nn.functional.nll_loss(_leaf(t, 2, 5, 3, 2), t.zeros(2, 3, 2, dtype=t.long)),
    "cross_entropy": lambda t: t.nn.functional.cross_entropy(_leaf(t, 3, 5), t.tensor([1, 2, 3])),
    "cross_entropy_weight": lambda t: t.nn.functional.cross_entropy(_leaf(t, 3, 5), t.tensor([1, 2, 3]), t.ones(5)),
    "cross_entropy_1d": lambda t: t.nn.functional.cross_entropy(_leaf(t, 5), t.tensor(2)),
    "cross_entropy_3d": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 4), t.zeros(2, 4, dtype=t.long)),
    "cross_entropy_4d": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 4, 3), t.zeros(2, 4, 3, dtype=t.long)),
    "cross_entropy_sum": lambda t: t.nn.functional.cross_entropy(_leaf(t, 3, 5), t.tensor([1, 2, 3]), reduction="sum"),
    "cross_entropy_none": lambda t: t.nn.functional.cross_entropy(_leaf(t, 3, 5), t.tensor([1, 2, 3]),
                                                                  reduction="none"),
    "cross_entropy_weight_ignore": lambda t: t.nn.functional.cross_entropy(_leaf(t, 4, 5), t.tensor([1, 2, 3, 2]),
                                                                           t.arange(5.0) + 1, ignore_index=2),
    "cross_entropy_1d_sum": lambda t: t.nn.functional.cross_entropy(_leaf(t, 5), t.tensor(2), t.arange(5.0) + 1,
                                                                    reduction="sum"),
    "cross_entropy_3d_none": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 4), t.tensor([[0, 1, 4, 2]] * 2),
                                                                     reduction="none"),
    "cross_entropy_3d_sum": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 4), t.tensor([[0, 1, 4, 2]] * 2),
                                                                    reduction="sum"),
    "cross_entropy_4d_none": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 2, 3),
                                                                     t.tensor([[[0, 1, 4], [2, 3, 3]]] * 2),
                                                                     reduction="none"),
    "cross_entropy_5d": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 2, 3, 2), t.ones(2, 2, 3, 2, dtype=t.long)),
    "cross_entropy_5d_none": lambda t: t.nn.functional.cross_entropy(_leaf(t, 2, 5, 2, 3, 2),
                                                                     t.ones(2, 2, 3, 2, dtype=t.long), reduction="none"),
    "cross_entropy_module": lambda t: (t.manual_seed(0), t.nn.CrossEntropyLoss()(t.nn.Linear(4, 5)(_leaf(t, 3, 4)),
                                                                                 t.tensor([1, 2, 3])))[1],
})  # fmt: skip


def _mlp_loss(t):  # noqa: ANN001, ANN202
    t.manual_seed(0)
    net = t.nn.Sequential(t.nn.Linear(4, 8), t.nn.ReLU(), t.nn.Linear(8, 2))
    return t.nn.MSELoss()(net(_leaf(t, 3, 4, grad=False)), _leaf(t, 3, 2, grad=False))


_CASES["blitz_mlp_loss"] = _mlp_loss


@pytest.mark.parametrize("name", list(_CASES))
def test_graph_matches_torch(name: str) -> None:
    ref = _tree(_CASES[name](torch).grad_fn)
    got = _tree(_CASES[name](torchlike).grad_fn)
    assert got == ref


def test_shown_nodes_are_stable() -> None:
    out = _linear(torchlike, (2, 4))
    t_node = out.grad_fn.next_functions[2][0]
    assert t_node is out.grad_fn.next_functions[2][0]
    assert type(t_node).__name__ == "TBackward0"
    assert t_node.next_functions[0][0].variable is not None


def _nodes(fn, found=None) -> list:  # noqa: ANN001
    """Every node under ``fn`` (``fn`` first, depth first), leaves' AccumulateGrad left out."""
    found = [] if found is None else found
    if fn is not None and not hasattr(fn, "variable") and all(f is not fn for f in found):
        found.append(fn)
        for f, _ in fn.next_functions:
            _nodes(f, found)
    return found


_HOOK_CASES = [
    "linear_2d", "linear_2d_nobias", "linear_1d", "linear_1d_nobias", "linear_3d", "linear_3d_nobias",
    "linear_3d_strided", "linear_3d_strided_nobias", "linear_data_input", "linear_frozen_weight", "linear_nonleaf",
    "module_linear", "conv2d_nobias", "matmul_chain", "matmul_vm", "matmul_3d_2d", "matmul_2d_3d", "matmul_3d_3d",
    "matmul_4d_4d", "matmul_data_left", "cross_entropy", "cross_entropy_weight", "cross_entropy_1d",
    "cross_entropy_3d", "cross_entropy_4d", "cross_entropy_sum", "cross_entropy_none", "cross_entropy_weight_ignore",
    "cross_entropy_1d_sum", "cross_entropy_3d_none", "cross_entropy_3d_sum", "cross_entropy_4d_none", "cross_entropy_5d",
    "cross_entropy_5d_none", "cross_entropy_module",
]  # fmt: skip


@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
@pytest.mark.parametrize("name", _HOOK_CASES)
def test_hooks_on_every_shown_node(name: str, create_graph: bool) -> None:
    """torch's Node hooks on a fused op's node and on every node shown inside it (TBackward0, the mm/addmm/bmm,
    view/expand/clone/transpose chains) run in torch's engine order, see torch's gradients (one per
    next_functions entry), and what they return flows on to the inputs (with create_graph, differentiably)."""

    def run(t):  # noqa: ANN001, ANN202
        out = _CASES[name](t)
        seen, handles = [], []
        for k, node in enumerate(_nodes(out.grad_fn)):
            def pre(go, k=k, name=node.name()):  # noqa: ANN001, ANN202
                seen.append((k, name, "pre", [None if g is None else g.detach().numpy().copy() for g in go]))
                return (go[0] * (k + 2),)

            def post(gi, go, k=k, name=node.name()):  # noqa: ANN001, ANN202
                seen.append((k, name, "post", [None if g is None else g.detach().numpy().copy() for g in (*gi, *go)]))
                return tuple(None if g is None else g + k for g in gi)

            handles += [node.register_prehook(pre), node.register_hook(post)]
        inputs = [n.variable for n in _leaves(out.grad_fn)]
        loss = (out * t.arange(out.numel()).reshape(out.shape)).sum()
        if not create_graph:
            loss.backward()
            return seen, [x.grad.numpy() for x in inputs]
        grads = t.autograd.grad(loss, inputs, create_graph=True)
        for h in handles:  # (torch's shown nodes whose outputs its formulas saved would run them again)
            h.remove()
        again = t.autograd.grad(sum((g * g).sum() for g in grads if g.requires_grad), inputs, allow_unused=True,
                                materialize_grads=True) if any(g.requires_grad for g in grads) else ()  # fmt: skip
        return seen, [g.detach().numpy() for g in (*grads, *again)] + [[g.requires_grad for g in grads]]

    ref, got = run(torch), run(torchlike)
    assert [e[:3] for e in got[0]] == [e[:3] for e in ref[0]] and ref[0]
    for r, g in zip(ref[0], got[0]):
        assert [a is None for a in r[3]] == [b is None for b in g[3]], r[:3]
        for a, b in zip(r[3], g[3]):
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-4, err_msg=str(r[:3]))
    assert len(got[1]) == len(ref[1])
    for a, b in zip(ref[1], got[1]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-4)


def _leaves(fn) -> list:  # noqa: ANN001
    found = []
    for n, _ in fn.next_functions:
        if n is not None:
            found += [n] if hasattr(n, "variable") else _leaves(n)
    return list({id(n): n for n in found}.values())


@pytest.mark.parametrize("x_shape", [(2, 4), (4,), (2, 5, 4)])
def test_linear_gradients_unchanged(x_shape: tuple) -> None:
    x = np.random.RandomState(0).randn(*x_shape).astype(np.float32)
    w = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    check(lambda t, x, w: t.nn.functional.linear(x, w, w[:, 0] * 2), [x, w])
    check(lambda t, x, w: t.matmul(x, w.t()), [x, w])


# clamp with one tensor bound and one number bound: torch's parser picks one overload for both bounds, taking a 0-d
# tensor that does not require grad as a number (ClampBackward1) and raising TypeError for any other tensor there.
_CLAMP_FORMS = {
    "function": lambda t, x, b: t.clamp(x, b, 1.0),
    "function_max": lambda t, x, b: t.clamp(x, -1.0, b),
    "function_kw": lambda t, x, b: t.clamp(x, min=b, max=1.0),
    "function_kw_reversed": lambda t, x, b: t.clamp(x, max=1.0, min=b),
    "function_mixed": lambda t, x, b: t.clamp(x, b, max=1),
    "function_input_kw": lambda t, x, b: t.clamp(input=x, min=-1.0, max=b),
    "function_out": lambda t, x, b: t.clamp(x.detach(), b, 1.0, out=t.empty(3)),
    "clip": lambda t, x, b: t.clip(x, b, 1.0),
    "method": lambda t, x, b: x.clamp(b, 1.0),
    "method_max": lambda t, x, b: x.clamp(True, b),
    "method_kw": lambda t, x, b: x.clamp(min=b, max=1.0),
    "method_mixed": lambda t, x, b: x.clamp(-1.0, max=b),
    "clip_method": lambda t, x, b: x.clip(b, 1.0),
    "inplace_function": lambda t, x, b: t.clamp_(x * 1, b, 1.0),
    "inplace_function_kw": lambda t, x, b: t.clamp_(x * 1, min=b, max=1.0),
    "clip_inplace_function": lambda t, x, b: t.clip_(x * 1, -1, b),
    "inplace_method": lambda t, x, b: (x * 1).clamp_(b, 1.0),
    "inplace_method_kw": lambda t, x, b: (x * 1).clamp_(max=b, min=-1.0),
    "clip_inplace_method": lambda t, x, b: (x * 1).clip_(b, 1.0),
}
_CLAMP_BOUNDS = {
    "0d": lambda t: t.tensor(-0.25),
    "0d_int": lambda t: t.tensor(0),
    "0d_double": lambda t: t.tensor(-0.25, dtype=t.float64),
    "0d_requires_grad": lambda t: t.tensor(-0.25, requires_grad=True),
    "0d_nonleaf": lambda t: t.tensor(-0.25, requires_grad=True) * 1,
    "1d": lambda t: t.tensor([-0.25]),
    "3": lambda t: t.full((3,), -0.25),
}


@pytest.mark.parametrize("bound", list(_CLAMP_BOUNDS))
@pytest.mark.parametrize("form", list(_CLAMP_FORMS))
def test_clamp_tensor_and_number_bounds(form: str, bound: str) -> None:
    def run(t):  # noqa: ANN001, ANN202
        x = t.tensor([-2.0, 0.5, 3.0], requires_grad=True)
        try:
            y = _CLAMP_FORMS[form](t, x, _CLAMP_BOUNDS[bound](t))
        except TypeError as e:
            return "TypeError", str(e)
        grad = None
        if y.requires_grad:
            (y * t.tensor([1.0, 2.0, 3.0])).sum().backward()
            grad = x.grad.numpy()
        return _tree(y.grad_fn), str(y.dtype), y.detach().numpy(), grad

    ref, got = run(torch), run(torchlike)
    assert got[:2] == ref[:2]
    for a, b in zip(ref[2:], got[2:]):
        np.testing.assert_array_equal(b, a)


def test_cross_entropy_node_pre_hook_replaces_gradient() -> None:
    """A pre-hook on cross_entropy's node sees torch's grad_outputs, and what it returns flows on."""

    def run(t):  # noqa: ANN001, ANN202
        x = _leaf(t, 3, 5)
        loss = t.nn.functional.cross_entropy(x, t.tensor([1, 2, 3]))
        seen = []
        loss.grad_fn.register_prehook(lambda go: (seen.append(go[0].numpy().copy()), (go[0] * 2,))[1])
        loss.backward()
        return seen, x.grad.numpy()

    (ref_seen, ref_grad), (seen, grad) = run(torch), run(torchlike)
    np.testing.assert_allclose(seen, ref_seen)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-5, atol=1e-6)

"""Gradients taken with create_graph=True: which of them require grad (torch's backward formulas record only
the ops they run, so the input gradient of a linear map does not depend on that input), and their values and
second-order gradients, torch vs torchlike."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import check

import torchlike

X = np.random.RandomState(0).randn(2, 3).astype(np.float32)
W = np.random.RandomState(1).randn(3, 4).astype(np.float32)

# f(t, x, w): x requires grad, w is data (it requires grad in the `_w` variants)
_FNS = {
    "mm": lambda t, x, w: x @ w,
    "linear": lambda t, x, w: t.nn.functional.linear(x, w.t()),
    "add": lambda t, x, w: x + 1,
    "sub_rsub": lambda t, x, w: 1 - x * 2,
    "mul_const": lambda t, x, w: x * 3,
    "div_const": lambda t, x, w: x / 3,
    "mean": lambda t, x, w: x.mean(),
    "sum_dim": lambda t, x, w: x.sum(1),
    "reshape_t": lambda t, x, w: x.reshape(3, 2).t(),
    "index": lambda t, x, w: x[:, 1:],
    "cat": lambda t, x, w: t.cat([x, x * 2]),
    "mul_self": lambda t, x, w: x * x,
    "pow": lambda t, x, w: x.pow(3),
    "exp": lambda t, x, w: x.exp(),
    "tanh": lambda t, x, w: x.tanh(),
    "sigmoid": lambda t, x, w: x.sigmoid(),
    "softmax": lambda t, x, w: x.softmax(-1),
    "log_softmax": lambda t, x, w: x.log_softmax(-1),
    "mse": lambda t, x, w: t.nn.functional.mse_loss(x @ w, t.zeros(2, 4)),
    "mlp": lambda t, x, w: (x @ w).tanh() @ w.t(),
    "layer_norm": lambda t, x, w: t.nn.functional.layer_norm(x, (3,)),
    # torch selects these gradients through masks or indices of x: they require grad only through w
    "clamp": lambda t, x, w: x.clamp(-0.5, 0.5) * w[:, :3].sum(0),
    "clamp_min": lambda t, x, w: x.clamp_min(0.1),
    "max": lambda t, x, w: x.max() * w.sum(),
    "max_dim": lambda t, x, w: x.max(1)[0],
    "amin": lambda t, x, w: x.amin(1),
    "maximum": lambda t, x, w: t.maximum(x, w[:2, :3]),
    "sort": lambda t, x, w: x.sort(1)[0],
    "topk": lambda t, x, w: x.topk(2)[0],
    "median": lambda t, x, w: x.median(),
    "cummax": lambda t, x, w: x.cummax(1)[0],
    # torch's backward ops over x: they require grad whenever x does
    "relu": lambda t, x, w: x.relu(),
    "hardtanh": lambda t, x, w: t.nn.functional.hardtanh(x),
    "leaky_relu": lambda t, x, w: t.nn.functional.leaky_relu(x),
    "nll_loss": lambda t, x, w: t.nn.functional.nll_loss(x, t.tensor([0, 2])),
    "cross_entropy": lambda t, x, w: t.nn.functional.cross_entropy(x, t.tensor([0, 2])),
}


@pytest.mark.parametrize("w_grad", [False, True], ids=["w_data", "w_grad"])
@pytest.mark.parametrize("name", list(_FNS))
def test_create_graph_requires_grad(name: str, w_grad: bool) -> None:
    def f(t, x, w):  # noqa: ANN001, ANN202
        x.requires_grad_()
        w.requires_grad_(w_grad)
        out = _FNS[name](t, x, w)
        (g,) = t.autograd.grad(out.sum(), x, create_graph=True)
        return g, g.requires_grad, g.grad_fn is not None

    check(f, [X, W], grad=False)


@pytest.mark.parametrize("name", ["mm", "pow", "mul_self", "tanh", "relu", "mse", "layer_norm", "log_softmax"])
def test_second_order_requires_grad(name: str) -> None:
    """A gradient of a create_graph gradient, and autograd.functional's jvp (the double-backward trick) and
    vhp, require grad as torch's do."""

    def f(t, x, w):  # noqa: ANN001, ANN202
        x.requires_grad_()
        fn = lambda a: _FNS[name](t, a, w)  # noqa: E731
        (g,) = t.autograd.grad(fn(x).sum(), x, create_graph=True)
        (h,) = t.autograd.grad(g, x, t.ones(2, 3), create_graph=True, allow_unused=True) if g.requires_grad else (None,)
        _, j = t.autograd.functional.jvp(fn, x.detach(), t.ones(2, 3), create_graph=True)
        _, v = t.autograd.functional.vhp(lambda a: fn(a).sum(), x.detach(), t.ones(2, 3), create_graph=True)
        return None if h is None else h.requires_grad, j.requires_grad, v.requires_grad

    check(f, [X, W], grad=False)


@pytest.mark.parametrize("name", ["mm", "mlp", "tanh", "mse", "softmax"])
def test_second_order_gradients(name: str) -> None:
    def f(t, x, w):  # noqa: ANN001, ANN202
        x.requires_grad_()
        w.requires_grad_()
        (g,) = t.autograd.grad(_FNS[name](t, x, w).pow(2).sum(), x, create_graph=True)
        return t.autograd.grad(g.pow(2).sum(), (x, w), allow_unused=True, materialize_grads=True)

    check(f, [X, W], grad=False, rtol=1e-4, atol=1e-5)


def test_constant_gradient_cannot_be_differentiated_again() -> None:
    """As in torch, a gradient that does not depend on the inputs is a constant: backward through it raises."""
    for t in (torch, torchlike):
        x = t.tensor(X, requires_grad=True)
        (g,) = t.autograd.grad((x @ t.tensor(W)).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="does not require grad"):
            g.sum().backward()


def _tree(fn) -> object:  # noqa: ANN001
    if fn is None:
        return None
    return (fn.name(), [_tree(f) for f, _ in fn.next_functions])


# torch's backward formulas as recorded ops: exp's grad * result over the ExpBackward0 node, tanh_backward,
# pow's grad * (exponent * self.pow(exponent - 1)), mul's grad * other, mm's grad.mm(mat2.t())
_GRAPH_CASES = {
    "pow_int": lambda t, x, w: (x**3).sum(),
    "pow_float": lambda t, x, w: x.pow(2.5).sum(),
    "mul_self": lambda t, x, w: (x * x).sum(),
    "mul_other": lambda t, x, w: (x * w[:2, :3]).sum(),
    "exp": lambda t, x, w: x.exp().sum(),
    "tanh": lambda t, x, w: x.tanh().sum(),
    "sigmoid": lambda t, x, w: x.sigmoid().sum(),
    "mm": lambda t, x, w: (x @ w).pow(2).sum(),
    "mm_method": lambda t, x, w: x.mm(w).tanh().sum(),
    "mlp": lambda t, x, w: ((x @ w).tanh() @ w.t()).sigmoid().sum(),
    "penalty": lambda t, x, w: (x.sigmoid() * x).sum(),
}


@pytest.mark.parametrize("name", list(_GRAPH_CASES))
def test_create_graph_nodes_are_torch_formula_ops(name: str) -> None:
    def run(t):  # noqa: ANN001, ANN202
        x = t.tensor(np.abs(X) + 0.5, requires_grad=True)
        w = t.tensor(W, requires_grad=True)
        (g,) = t.autograd.grad(_GRAPH_CASES[name](t, x, w), x, create_graph=True)
        second = t.autograd.grad(g.pow(2).sum(), (x, w), allow_unused=True, materialize_grads=True)
        return _tree(g.grad_fn), g.detach().numpy(), [s.numpy() for s in second]

    (ref_tree, ref_g, ref_h), (tree, g, h) = run(torch), run(torchlike)
    assert tree == ref_tree
    np.testing.assert_allclose(g, ref_g, rtol=1e-5, atol=1e-6)
    for a, b in zip(ref_h, h):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


# Ops whose torch formulas read an input only structurally: avg pooling's, padding's and convolution's backward
# read their input (avg pooling's double backward is zeros, convolution's gives the input none without a weight
# gradient), hardswish's, smooth_l1's, huber's and prelu's double backward select through masks, max pooling's
# gathers by its indices, and the composite hinge_embedding_loss and margin_ranking_loss go through clamp_min/where.
X3 = np.random.RandomState(2).randn(2, 3, 4).astype(np.float32)
Y3 = np.random.RandomState(3).randn(2, 3, 4).astype(np.float32)
_STRUCTURAL = {
    "avg_pool1d": lambda t, x, y: t.nn.functional.avg_pool1d(x, 2),
    "avg_pool1d_ceil": lambda t, x, y: t.nn.functional.avg_pool1d(x, 3, ceil_mode=True),
    "adaptive_avg_pool1d": lambda t, x, y: t.nn.functional.adaptive_avg_pool1d(x, 2),
    "adaptive_avg_pool1d_to_1": lambda t, x, y: t.nn.functional.adaptive_avg_pool1d(x, 1),
    "avg_pool2d": lambda t, x, y: t.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda t, x, y: t.nn.functional.adaptive_avg_pool2d(x, 2),
    "adaptive_avg_pool2d_to_1": lambda t, x, y: t.nn.functional.adaptive_avg_pool2d(x, 1),
    "avg_pool3d": lambda t, x, y: t.nn.functional.avg_pool3d(x[None], 2),
    "hardswish": lambda t, x, y: t.nn.functional.hardswish(x * 3),
    "smooth_l1_loss": lambda t, x, y: t.nn.functional.smooth_l1_loss(x, y),
    "smooth_l1_loss_beta": lambda t, x, y: t.nn.functional.smooth_l1_loss(x, y, beta=0.5, reduction="sum"),
    "huber_loss": lambda t, x, y: t.nn.functional.huber_loss(x, y),
    "huber_loss_delta": lambda t, x, y: t.nn.functional.huber_loss(x, y, delta=0.5, reduction="none"),
    "max_pool1d": lambda t, x, y: t.nn.functional.max_pool1d(x, 2),
    "max_pool2d": lambda t, x, y: t.nn.functional.max_pool2d(x, 2),
    "max_pool2d_indices": lambda t, x, y: t.nn.functional.max_pool2d(x, 2, return_indices=True)[0],
    "hinge_embedding_loss": lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, t.sign(y)),
    "hinge_embedding_loss_margin": lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, t.sign(y), margin=0.5),
    "margin_ranking_loss": lambda t, x, y: t.nn.functional.margin_ranking_loss(x, y, t.sign(y)),
    "margin_ranking_loss_both": lambda t, x, y: t.nn.functional.margin_ranking_loss(x, y.requires_grad_(),
                                                                                    t.sign(y.detach())),
    "adaptive_max_pool1d": lambda t, x, y: t.nn.functional.adaptive_max_pool1d(x, 2),
    "adaptive_max_pool2d": lambda t, x, y: t.nn.functional.adaptive_max_pool2d(x, 2),
    "prelu": lambda t, x, y: t.nn.functional.prelu(x, t.tensor([0.25, 0.1, 0.3])),
    "prelu_weight_grad": lambda t, x, y: t.nn.functional.prelu(x, t.tensor([0.25], requires_grad=True)),
    "reflection_pad1d": lambda t, x, y: t.nn.functional.pad(x, (1, 1), mode="reflect"),
    "replication_pad2d": lambda t, x, y: t.nn.functional.pad(x, (1, 1, 1, 1), mode="replicate"),
    "circular_pad": lambda t, x, y: t.nn.functional.pad(x, (1, 1), mode="circular"),
    "conv1d": lambda t, x, y: t.nn.functional.conv1d(x, y[:2, :, :2], y[0, 0, :2]),
    "conv1d_of_a_view": lambda t, x, y: t.nn.functional.conv1d(x[None][0].transpose(1, 2).transpose(1, 2),
                                                                y[:2, :, :2]),
    "conv_transpose1d": lambda t, x, y: t.nn.functional.conv_transpose1d(x, y[0, :, :2, None].expand(3, 2, 2)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_STRUCTURAL))
def test_structural_formulas_requires_grad(name: str) -> None:
    """Whether the first- and second-order gradients, autograd.functional's jvp and vhp require grad, as torch's
    do; the values are torch's."""

    def f(t, x, y):  # noqa: ANN001, ANN202
        fn = lambda a: _STRUCTURAL[name](t, a, t.tensor(y.detach().numpy()))  # noqa: E731
        x.requires_grad_()
        (g,) = t.autograd.grad(fn(x).sum(), x, create_graph=True)
        h = None
        if g.requires_grad:
            (h,) = t.autograd.grad(g, x, t.ones_like(g), create_graph=True, allow_unused=True)
        xd = x.detach()
        _, j = t.autograd.functional.jvp(fn, xd, t.ones_like(xd), create_graph=True)
        _, v = t.autograd.functional.vhp(lambda a: fn(a).sum(), xd, t.ones_like(xd), create_graph=True)
        return (g, g.requires_grad, h, None if h is None else h.requires_grad, j, j.requires_grad, v,
                v.requires_grad)  # fmt: skip

    check(f, [X3, Y3], grad=False)


_NO_SECOND_DERIVATIVE = {
    "hardsigmoid": lambda t, x: t.nn.functional.hardsigmoid(x),
    "multi_margin_loss": lambda t, x: t.nn.functional.multi_margin_loss(x, t.tensor([0, 1])),
    "multilabel_margin_loss": lambda t, x: t.nn.functional.multilabel_margin_loss(x, t.tensor([[0, 1, -1],
                                                                                                 [2, -1, 0]])),
    "cdist": lambda t, x: t.cdist(x, x.detach() * 2),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_NO_SECOND_DERIVATIVE))
def test_second_derivative_torch_does_not_have_raises(name: str) -> None:
    """torch has no derivative for these backward functions: the create_graph gradient requires grad, and
    differentiating it raises torch's error."""

    def f(t, x):  # noqa: ANN001, ANN202
        x.requires_grad_()
        (g,) = t.autograd.grad(_NO_SECOND_DERIVATIVE[name](t, x).sum(), x, create_graph=True)
        try:
            t.autograd.grad(g.sum(), x)
        except (RuntimeError, NotImplementedError) as e:
            return g, g.requires_grad, type(e).__name__, str(e)
        return g, g.requires_grad

    check(f, [X], grad=False)


# torch's convolution double backward (ConvolutionBackwardBackward0) gives the input a gradient only through the
# gradient of the weight's gradient, and the weight one only through that of the input's: differentiating one of
# them alone leaves the other None (no .grad after backward), where JAX's VJP gives zeros.
_CONVS = {  # (the op, its weight taken from y): input and weight are leaves
    "conv1d": (lambda t, x, w: t.nn.functional.conv1d(x, w), lambda y: y[:2, :, :2]),
    "conv1d_bias": (lambda t, x, w: t.nn.functional.conv1d(x, w, t.ones(2)), lambda y: y[:2, :, :2]),
    "conv2d": (lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1), lambda y: y[:2, :, :2, None]),
    "conv_transpose1d": (
        lambda t, x, w: t.nn.functional.conv_transpose1d(x, w, stride=2),
        lambda y: y.transpose(0, 1)[:, :2, :2],
    ),
}


@pytest.mark.parametrize("loss", ["sum", "square"])
@pytest.mark.parametrize("name", list(_CONVS))
def test_convolution_second_order_undefined_gradients(name: str, loss: str) -> None:
    def f(t, x, y):  # noqa: ANN001, ANN202
        op, weight = _CONVS[name]
        x = (x[..., None] if name == "conv2d" else x).detach().requires_grad_()
        w = weight(y).detach().requires_grad_()
        out = op(t, x, w)
        gx, gw = t.autograd.grad(out.sum() if loss == "sum" else (out * out).sum(), (x, w), create_graph=True)
        results = [gx.grad_fn.name(), gw.grad_fn.name()]
        for g in (gx, gw):
            for inputs in ((x,), (w,), (x, w)):
                got = t.autograd.grad(g.sum(), inputs, allow_unused=True, retain_graph=True)
                results += [None if r is None else (r, r.requires_grad) for r in got]
        gx.sum().backward(retain_graph=True)
        results += [x.grad, w.grad]
        x.grad = w.grad = None
        h = t.autograd.grad((gw * gw).sum(), (x, w), create_graph=True, allow_unused=True)
        return results + [None if r is None else (r, r.requires_grad) for r in h]

    check(f, [X3, Y3], grad=False, rtol=1e-4, atol=1e-5)

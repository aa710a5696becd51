"""torch.nn.functional under torch and torchlike: activations, softmax family, losses, distances, padding,
interpolation, attention, one_hot -- values, dtypes, input gradients and grad_fn names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike

# values away from the kinks, plus exact kinks where torch's gradient convention matters
X = np.array([[-2.5, -1.0, 0.0, 0.3], [1.0, 3.0, -0.2, 6.0], [-3.0, 2.9, 0.7, -0.5]], np.float32)
P = np.array([[0.2, 0.7, 0.1, 0.9], [0.5, 0.3, 0.6, 0.05], [0.8, 0.4, 0.35, 0.5]], np.float32)


def _F(t):  # noqa: N802 - torch.nn.functional of either library
    return t.nn.functional


def _name(out) -> str:
    return type(out.grad_fn).__name__


ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "relu6": lambda F, x: F.relu6(x * 2),
    "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 1.3),
    "gelu": lambda F, x: F.gelu(x),
    "gelu-tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "silu-inplace": lambda F, x: F.silu(x * 1, inplace=True),
    "mish-inplace": lambda F, x: F.mish(x * 1, inplace=True),
    "hardsigmoid-inplace": lambda F, x: F.hardsigmoid(x * 1, inplace=True),
    "hardswish-inplace": lambda F, x: F.hardswish(x * 1, inplace=True),
    "relu-inplace": lambda F, x: F.relu(x * 1, inplace=True),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x, beta=2, threshold=3),
    "softsign": lambda F, x: F.softsign(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -1.0, 1.0),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "threshold": lambda F, x: F.threshold(x, 0.3, -1.5),
    "hardshrink": lambda F, x: F.hardshrink(x, 1.0),
    "softshrink": lambda F, x: F.softshrink(x, 1.0),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "glu": lambda F, x: F.glu(x, 1),
    "softmax": lambda F, x: F.softmax(x, 1),
    "softmax-dtype": lambda F, x: F.softmax(
        x, 0, dtype=torch.float64 if F is torch.nn.functional else torchlike.float64
    ),
    "log_softmax": lambda F, x: F.log_softmax(x, -1),
    "softmin": lambda F, x: F.softmin(x, 1),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "normalize": lambda F, x: F.normalize(x, p=2, dim=1),
    "normalize-p1": lambda F, x: F.normalize(x, p=1, dim=0),
    "rrelu-eval": lambda F, x: F.rrelu(x),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation(name: str) -> None:
    fn = ACTIVATIONS[name]
    check(lambda t, x: fn(_F(t), x), [X])
    out_t = fn(torch.nn.functional, torch.tensor(X, requires_grad=True))
    out_l = fn(torchlike.nn.functional, torchlike.tensor(X, requires_grad=True))
    assert _name(out_l) == _name(out_t)


@pytest.mark.parametrize("name", ["relu", "gelu", "softmax", "log_softmax", "hardtanh"])
def test_activation_float64(name: str) -> None:
    check(lambda t, x: ACTIVATIONS[name](_F(t), x), [X.astype(np.float64)])


def test_prelu_and_rrelu_training() -> None:
    check(lambda t, x, w: _F(t).prelu(x, w), [X, np.array([0.25], np.float32)])
    check(lambda t, x, w: _F(t).prelu(x, w), [X, np.array([0.1, 0.2, 0.3, 0.4], np.float32)])
    for t in (torch, torchlike):
        t.manual_seed(3)
    check(lambda t, x: _F(t).rrelu(x, 0.1, 0.4, training=True), [X])


def test_inplace_activations() -> None:
    def f(t, x):
        y = x * 1
        out = _F(t).leaky_relu(y, 0.5, inplace=True)
        assert out is y
        z = y * 2
        _F(t).elu_(z)
        w = z + 1
        _F(t).hardtanh(w, -0.5, 0.5, inplace=True)
        return y, z, w, _F(t).relu_(x.detach() * 1)

    check(f, [X])


def test_inplace_on_saved_tensor_raises() -> None:
    def f(t, x):
        y = t.sigmoid(x)  # saves its result
        _F(t).relu(y, inplace=True)
        y.sum().backward()

    check_raises(f, [X.copy()], match_message=False)


def test_softmax_implicit_dim_warns() -> None:
    for t in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = _F(t).softmax(t.tensor(X))
        assert "Implicit dimension choice for softmax has been deprecated" in str(w[0].message)
        assert w[0].category is UserWarning
    check(lambda t, x: _F(t).log_softmax(x), [X[0]])
    check(lambda t, x: _F(t).softmax(x), [np.stack([X, X])])
    assert out.shape == (3, 4)


def test_top_level_names() -> None:
    check(lambda t, x: (t.relu(x), t.softmax(x, 1), t.log_softmax(x, 0), t.selu(x), t.celu(x),
                        t.hardshrink(x), x.relu(), x.softmax(-1), x.log_softmax(1)), [X])  # fmt: skip


# --- losses -------------------------------------------------------------------------------------------------------

T3 = np.array([1, 0, 3])
REDS = ["mean", "sum", "none"]


def _loss_cases(red: str) -> dict:
    return {
        "mse": (lambda F, x, y: F.mse_loss(x, y, reduction=red), [X, P]),
        "l1": (lambda F, x, y: F.l1_loss(x, y, reduction=red), [X, P]),
        "smooth_l1": (lambda F, x, y: F.smooth_l1_loss(x, y, reduction=red, beta=0.5), [X, P]),
        "huber": (lambda F, x, y: F.huber_loss(x, y, reduction=red, delta=0.8), [X, P]),
        "nll": (lambda F, x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction=red), [X, T3]),
        "nll-weight-ignore": (
            lambda F, x, t, w: F.nll_loss(x, t, weight=w.detach(), ignore_index=0, reduction=red),
            [X, T3, np.array([1.0, 2.0, 0.5, 3.0], np.float32)],
        ),
        "cross_entropy": (lambda F, x, t: F.cross_entropy(x, t, reduction=red), [X, T3]),
        "cross_entropy-smooth": (
            lambda F, x, t, w: F.cross_entropy(x, t, weight=w.detach(), reduction=red, label_smoothing=0.2),
            [X, T3, np.array([1.0, 2.0, 0.5, 3.0], np.float32)],
        ),
        "cross_entropy-probs": (
            lambda F, x, p: F.cross_entropy(x, p, reduction=red, label_smoothing=0.1),
            [X, P],
        ),
        "cross_entropy-2d": (
            lambda F, x, t: F.cross_entropy(x, t, reduction=red),
            [
                np.random.RandomState(0).randn(2, 3, 2, 2).astype(np.float32),
                np.array([[[0, 1], [2, 2]], [[1, 1], [0, 2]]]),
            ],
        ),
        "bce": (lambda F, x, y: F.binary_cross_entropy(F.sigmoid(x), y, reduction=red), [X, P]),
        "bce-weight": (
            lambda F, x, y, w: F.binary_cross_entropy(x, y, weight=w.detach(), reduction=red),
            [P, P[::-1].copy(), P],
        ),
        "bce_logits": (
            lambda F, x, y, pw: F.binary_cross_entropy_with_logits(
                x, y, pos_weight=pw.detach(), reduction=red
            ),
            [X, P, np.array([1.0, 2.0, 0.5, 3.0], np.float32)],
        ),
        "kl_div": (lambda F, x, y: F.kl_div(F.log_softmax(x, 1), y, reduction=red), [X, P]),
        "kl_div-log": (lambda F, x, y: F.kl_div(x, y.log(), reduction=red, log_target=True), [X, P]),
        "poisson": (lambda F, x, y: F.poisson_nll_loss(x, y * 3, reduction=red, full=True), [X, P]),
        "poisson-nolog": (
            lambda F, x, y: F.poisson_nll_loss(x.abs(), y, log_input=False, reduction=red),
            [X, P],
        ),
        "gaussian": (lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, reduction=red), [X, P, P]),
        "gaussian-full": (
            lambda F, x, y, v: F.gaussian_nll_loss(x, y, v[:, :1], full=True, reduction=red),
            [X, P, P],
        ),
        "soft_margin": (lambda F, x: F.soft_margin_loss(x, x.sign().detach(), reduction=red), [X]),
        "multilabel_soft_margin": (
            lambda F, x, y: F.multilabel_soft_margin_loss(x, y, reduction=red),
            [X, P],
        ),
        "cosine_embedding": (
            lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.1, reduction=red),
            [X, P, np.array([1, -1, 1])],
        ),
        "margin_ranking": (
            lambda F, a, b, t: F.margin_ranking_loss(a, b, t, margin=0.2, reduction=red),
            [X[0], P[0], np.array([1.0, -1.0, 1.0, -1.0], np.float32)],
        ),
        "hinge_embedding": (
            lambda F, x, t: F.hinge_embedding_loss(x, t, margin=0.5, reduction=red),
            [X, np.sign(X)],
        ),
        "multi_margin": (lambda F, x, t: F.multi_margin_loss(x, t, p=2, margin=0.7, reduction=red), [X, T3]),
        "triplet": (
            lambda F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True, reduction=red),
            [X, P, P[::-1].copy()],
        ),
    }


@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("name", list(_loss_cases("mean")))
def test_loss(name: str, red: str) -> None:
    fn, inputs = _loss_cases(red)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda t, *a: fn(_F(t), *a), inputs)
        ta = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
        la = [torchlike.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
        assert _name(fn(torchlike.nn.functional, *la)) == _name(fn(torch.nn.functional, *ta))


def test_losses_float64() -> None:
    for name in ["mse", "cross_entropy", "bce_logits", "nll", "huber"]:
        fn, inputs = _loss_cases("mean")[name]
        check(
            lambda t, *a: fn(_F(t), *a), [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
        )


def test_kl_div_batchmean_and_legacy_reduction_args() -> None:
    check(lambda t, x, y: _F(t).kl_div(x, y, reduction="batchmean"), [X, P])
    for sa, r in [(False, None), (None, False), (True, True)]:
        check(lambda t, x, y: _F(t).mse_loss(x, y, size_average=sa, reduce=r), [X, P])
        check(lambda t, x, y: t.nn.L1Loss(size_average=sa, reduce=r)(x, y), [X, P])


def test_deprecated_size_average_warns() -> None:
    for t in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = t.nn.MSELoss(size_average=False)
        assert loss.reduction == "sum"
        assert (
            str(w[0].message)
            == "size_average and reduce args will be deprecated, please use reduction='sum' instead."
        )
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _F(t).mse_loss(t.ones(2, 1), t.ones(2))
        assert "Using a target size (torch.Size([2])) that is different to the input size" in str(
            w[0].message
        )


def test_ctc_loss() -> None:
    rng = np.random.RandomState(0)
    logits = rng.randn(6, 2, 5).astype(np.float32)
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    for red in REDS:
        check(
            lambda t, x, tg: _F(t).ctc_loss(x.log_softmax(2), tg, [6, 5], [3, 2], reduction=red),
            [logits, targets],
        )
        check(lambda t, x, tg: _F(t).ctc_loss(x, tg, [6, 5], [3, 2], reduction=red),
              [np.log(np.abs(logits) / np.abs(logits).sum(2, keepdims=True)), targets])  # fmt: skip
    check(
        lambda t, x, tg: _F(t).ctc_loss(x.log_softmax(2), tg, (2, 5), (3, 2), zero_infinity=True),
        [logits, targets],
    )
    check(lambda t, x, tg: _F(t).ctc_loss(x.log_softmax(2), tg, [6, 5], [3, 2]),
          [logits, np.array([1, 2, 2, 3, 1])])  # fmt: skip


# --- layers' functional forms ------------------------------------------------------------------------------------

IMG = np.random.RandomState(1).randn(2, 3, 5, 6).astype(np.float32)


def test_linear_grad_names() -> None:
    w, b = np.ones((5, 4), np.float32), np.ones(5, np.float32)
    for x in (X, X[0], np.stack([X, X])):
        for args in ((w, b), (w,)):
            ta = [torch.tensor(a, requires_grad=True) for a in (x, *args)]
            la = [torchlike.tensor(a, requires_grad=True) for a in (x, *args)]
            assert _name(torchlike.nn.functional.linear(*la)) == _name(torch.nn.functional.linear(*ta))
            check(lambda t, *a: _F(t).linear(*a), [x, *args])


def test_pooling_functional_with_indices() -> None:
    check(lambda t, x: _F(t).max_pool2d(x, 2, return_indices=True), [IMG])
    check(lambda t, x: _F(t).max_pool1d(x[0], 3, 2, 1, ceil_mode=True, return_indices=True), [IMG[:, :, 0]])
    check(lambda t, x: _F(t).adaptive_max_pool2d(x, (2, 4), return_indices=True), [IMG])
    check(lambda t, x: _F(t).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [IMG])
    check(lambda t, x: _F(t).lp_pool1d(x.abs(), 3, 2), [IMG[:, :, 0]])
    # ties: torch routes the gradient to the first maximum
    ones = np.ones((1, 1, 4, 4), np.float32)
    check(lambda t, x: _F(t).max_pool2d(x, 2, stride=1), [ones])
    check(lambda t, x: _F(t).max_pool2d(x, 2, stride=1, dilation=2), [ones])
    check(lambda t, x: _F(t).adaptive_max_pool2d(x, 3), [ones])


def test_dropout_functional_matches_torch_stream() -> None:
    for p in (0.0, 0.2, 0.5, 1.0):
        for t in (torch, torchlike):
            t.manual_seed(11)
        check(
            lambda t, x: (
                _F(t).dropout(x, p),
                _F(t).dropout(x, p, training=False),
                _F(t).alpha_dropout(x, p, True),
            ),
            [X],
        )
        assert np.array_equal(np.asarray(torchlike.get_rng_state()), torch.get_rng_state().numpy())
    for t in (torch, torchlike):
        t.manual_seed(5)
    check(lambda t, x: _F(t).dropout2d(x, 0.5), [IMG])
    # a transposed (non-contiguous, dense) input: torch's noise is empty_like(input), filled in memory order
    check(lambda t, x: (_F(t).dropout(x.t(), 0.5), _F(t).dropout(x[:, ::2], 0.5)), [X])
    check(lambda t, x: (_F(t).dropout1d(x[0], 0.5), _F(t).feature_alpha_dropout(x, 0.3, True)), [IMG])


def test_dropout_inplace() -> None:
    def f(t, x):
        y = x * 1
        r = _F(t).dropout(y, 0.5, inplace=True)
        assert r is y
        return y

    for t in (torch, torchlike):
        t.manual_seed(2)
    check(f, [X])


def test_pad_modes() -> None:
    check(lambda t, x: _F(t).pad(x, (1, 2)), [IMG])
    check(lambda t, x: _F(t).pad(x, (1, 2, 0, 1), value=3.0), [IMG])
    check(lambda t, x: _F(t).pad(x, (-1, 1, 1, -2)), [IMG])
    for mode in ("reflect", "replicate", "circular"):
        check(lambda t, x: _F(t).pad(x, (2, 1, 1, 2), mode=mode), [IMG])
        check(lambda t, x: _F(t).pad(x, (2, 1), mode=mode), [IMG[0]])


def test_interpolate_modes() -> None:
    x = IMG
    for kw in [dict(scale_factor=2), dict(size=(7, 4)), dict(scale_factor=0.6, mode="nearest-exact"),
               dict(scale_factor=(1.3, 0.7), mode="bilinear"), dict(size=(3, 11), mode="bilinear", align_corners=True),
               dict(scale_factor=1.6, mode="bicubic"), dict(size=(8, 8), mode="bicubic", align_corners=True),
               dict(size=(3, 4), mode="area"), dict(scale_factor=2.5, mode="bilinear", recompute_scale_factor=True)]:  # fmt: skip
        check(lambda t, x: _F(t).interpolate(x, **kw), [x])
    check(lambda t, x: _F(t).interpolate(x, scale_factor=2.3, mode="linear"), [IMG[:, :, 0]])


def test_grid_sample_affine_grid() -> None:
    rng = np.random.RandomState(0)
    grid = rng.uniform(-1.2, 1.2, size=(2, 3, 4, 2)).astype(np.float32)
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                check(lambda t, x, g: _F(t).grid_sample(x, g, mode=mode, padding_mode=pm, align_corners=ac), [IMG, grid],
                      grad=mode == "bilinear")  # fmt: skip
    theta = rng.randn(2, 2, 3).astype(np.float32)
    check(lambda t, th: _F(t).affine_grid(th, [2, 3, 4, 5], align_corners=False), [theta])


def test_unfold_fold_pixel_shuffle() -> None:
    check(lambda t, x: _F(t).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [IMG])
    cols = np.random.RandomState(2).randn(2, 12, 20).astype(np.float32)
    check(lambda t, c: _F(t).fold(c, (5, 6), 2), [cols])
    check(
        lambda t, x: _F(t).pixel_shuffle(x, 2),
        [np.random.RandomState(3).randn(1, 8, 2, 3).astype(np.float32)],
    )
    check(
        lambda t, x: _F(t).pixel_unshuffle(x, 2),
        [np.random.RandomState(3).randn(1, 2, 4, 6).astype(np.float32)],
    )


def test_distances_and_one_hot() -> None:
    check(lambda t, a, b: (_F(t).cosine_similarity(a, b), _F(t).cosine_similarity(a, b, dim=0)), [X, P])
    check(
        lambda t, a, b: (_F(t).pairwise_distance(a, b), _F(t).pairwise_distance(a, b, p=1, keepdim=True)),
        [X, P],
    )
    check(lambda t, i: (_F(t).one_hot(i), _F(t).one_hot(i, 6)), [np.array([[0, 3], [2, 1]])])


def test_embedding_functional() -> None:
    w = np.random.RandomState(0).randn(6, 3).astype(np.float32)
    idx = np.array([[0, 2, 2], [5, 1, 0]])
    check(lambda t, i, w: _F(t).embedding(i, w, padding_idx=2), [idx, w])
    check(lambda t, i, w: _F(t).embedding(i, w, scale_grad_by_freq=True), [idx, w])
    check(lambda t, i, w: _F(t).embedding_bag(i, w, mode="sum"), [idx, w])
    check(lambda t, i, w, o, ps: _F(t).embedding_bag(i, w, o, mode="sum", per_sample_weights=ps),
          [idx.reshape(-1), w, np.array([0, 4]), np.linspace(0.5, 1.5, 6).astype(np.float32)])  # fmt: skip


def test_normalization_functional() -> None:
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)

    def bn(t, x, m, v, training):
        m, v = m.detach(), v.detach()
        return _F(t).batch_norm(x, m, v, training=training, momentum=0.3), m, v

    check(lambda t, x, m, v: bn(t, x, m, v, True), [IMG, rm, rv])
    check(lambda t, x, m, v: bn(t, x, m, v, False), [IMG, rm + 0.1, rv * 2])
    check(lambda t, x: _F(t).layer_norm(x, (5, 6)), [IMG])
    check(lambda t, x: _F(t).group_norm(x, 3), [IMG])
    check(lambda t, x: _F(t).instance_norm(x), [IMG])
    check(
        lambda t, x, w: _F(t).rms_norm(x, (6,), w, eps=1e-4), [IMG, np.linspace(0.5, 2, 6).astype(np.float32)]
    )
    check(lambda t, x: _F(t).local_response_norm(x, 3), [IMG])


def test_scaled_dot_product_attention() -> None:
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(2, 2, 3, 4).astype(np.float32) for _ in range(3))
    k5 = rng.randn(2, 2, 5, 4).astype(np.float32)
    check(lambda t, q, k, v: _F(t).scaled_dot_product_attention(q, k, v), [q, k, v])
    check(
        lambda t, q, k, v: _F(t).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3), [q, k, v]
    )
    mask = rng.rand(3, 5) > 0.3
    mask[:, 0] = True
    check(lambda t, q, k, m: _F(t).scaled_dot_product_attention(q, k, k, attn_mask=m), [q, k5, mask])
    check(
        lambda t, q, k, m: _F(t).scaled_dot_product_attention(q, k, k, attn_mask=m),
        [q, k5, rng.randn(3, 5).astype(np.float32)],
    )
    for t in (torch, torchlike):
        t.manual_seed(4)
    check(lambda t, q, k, v: _F(t).scaled_dot_product_attention(q, k, v, dropout_p=0.5), [q, k, v])


def test_top_level_dropout_family() -> None:
    for t in (torch, torchlike):
        t.manual_seed(8)
    check(lambda t, x: (t.dropout(x, 0.3, True), t.feature_dropout(x.unsqueeze(-1), 0.5, True),
                        t.alpha_dropout(x, 0.2, True), t.dropout(x, 0.3, False), t.rrelu(x)), [X])  # fmt: skip
    check_raises(lambda t, x: t.dropout(x, 1.5, True), [X])


def test_unpool_pdist_channel_shuffle_multilabel_margin() -> None:
    def unpool(t, x):  # noqa: ANN001, ANN202
        o, i = _F(t).max_pool2d(x, 2, return_indices=True)
        o1, i1 = _F(t).max_pool1d(x[0], 2, return_indices=True)
        return (_F(t).max_unpool2d(o, i, 2), t.nn.MaxUnpool2d(2)(o, i, output_size=(5, 7)),
                _F(t).max_unpool1d(o1, i1, 2))  # fmt: skip

    check(unpool, [IMG])
    check(lambda t, x: (_F(t).pdist(x), _F(t).pdist(x, p=1)), [X])
    check(
        lambda t, x: (_F(t).channel_shuffle(x, 3), t.nn.ChannelShuffle(3)(x)),
        [np.random.RandomState(0).randn(1, 6, 2, 2).astype(np.float32)],
    )
    check(
        lambda t, x: (_F(t).lp_pool2d(x, float("inf"), 2), _F(t).lp_pool3d(x.abs().unsqueeze(0), 2, 2)), [IMG]
    )
    target = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2]])
    for red in REDS:
        check(lambda t, x, y: _F(t).multilabel_margin_loss(x, y, reduction=red), [X, target])
    check_raises(lambda t, x, y: _F(t).multilabel_margin_loss(x, y), [X, target[:2]])
    check_raises(
        lambda t: _F(t).max_unpool2d(
            t.zeros(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.long), 2, output_size=(9, 9)
        )
    )

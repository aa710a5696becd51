"""nn ops on their own (no torch): one table op per layer, numerics against numpy, gradients against
finite differences, and the dropout/init randomness paths."""

from __future__ import annotations

import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike._ops import registry


def _t(a: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.tensor(a, requires_grad=grad)


def _numgrad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:  # noqa: ANN001
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_layers_are_single_table_ops() -> None:
    for name in ["_linear", "_convolution", "_max_pool", "_avg_pool", "_batch_norm", "_layer_norm", "_group_norm",
                 "_rnn_layer", "_cross_entropy", "_nll_loss", "_mse_loss", "softmax", "log_softmax", "relu",
                 "embedding", "_dropout_apply", "_mha_attention", "_upsample"]:  # fmt: skip
        assert name in registry.OPS, name
    x = _t(np.ones((2, 3), np.float32), True)
    assert type(nn.Linear(3, 4)(x).grad_fn).__name__ == "AddmmBackward0"
    img = _t(np.ones((1, 1, 6, 6), np.float32), True)
    assert type(nn.Conv2d(1, 2, 3)(img).grad_fn).__name__ == "ConvolutionBackward0"
    assert type(F.max_pool2d(img, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(F.log_softmax(x, 1).grad_fn).__name__ == "LogSoftmaxBackward0"
    assert type(nn.BatchNorm2d(1)(img).grad_fn).__name__ == "NativeBatchNormBackward0"


def test_linear_and_conv_match_numpy() -> None:
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(3, 4), rng.randn(5, 4), rng.randn(5)
    np.testing.assert_allclose(F.linear(_t(x), _t(w), _t(b)).numpy(), x @ w.T + b, rtol=1e-12)
    img, k = rng.randn(1, 2, 5, 5), rng.randn(3, 2, 3, 3)
    out = F.conv2d(_t(img), _t(k), padding=1).numpy()
    padded = np.pad(img, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ref = np.zeros((1, 3, 5, 5))
    for o in range(3):
        for i in range(5):
            for j in range(5):
                ref[0, o, i, j] = (padded[0, :, i : i + 3, j : j + 3] * k[o]).sum()
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    # transposed convolution is the adjoint of convolution
    y = rng.randn(1, 3, 5, 5)
    lhs = (F.conv2d(_t(img), _t(k), padding=1).numpy() * y).sum()
    rhs = (F.conv_transpose2d(_t(y), _t(k), padding=1).numpy() * img).sum()
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.gelu(x), lambda x: F.softplus(x, 2.0), lambda x: F.log_softmax(x, 1), lambda x: F.mish(x),
        lambda x: F.layer_norm(x, (4,)), lambda x: F.normalize(x), lambda x: F.logsigmoid(x),
        lambda x: F.cross_entropy(x, torch.tensor([1, 3, 0]), label_smoothing=0.2),
        lambda x: F.smooth_l1_loss(x, torch.full((3, 4), 0.2, dtype=torch.float64), beta=0.3),
        lambda x: F.max_pool1d(x.unsqueeze(0), 2), lambda x: F.avg_pool1d(x.unsqueeze(0), 3, 1, 1),
        lambda x: F.interpolate(x.unsqueeze(0), scale_factor=1.5, mode="linear"),
    ],
)  # fmt: skip
def test_gradients_match_finite_differences(fn) -> None:  # noqa: ANN001
    rng = np.random.RandomState(1)
    x0 = rng.randn(3, 4) + 0.05
    wts = rng.uniform(0.5, 1.5, size=np.asarray(fn(_t(x0)).numpy()).shape)
    x = _t(x0, True)
    (fn(x) * _t(wts)).sum().backward()
    num = _numgrad(lambda a: float((fn(_t(a)).numpy() * wts).sum()), x0)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_torch_gradient_conventions_at_kinks() -> None:
    x = _t(np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0]), True)
    F.relu(x).sum().backward()
    assert x.grad.tolist() == [0, 0, 0, 1, 1, 1]  # relu'(0) = 0
    x.grad = None
    F.hardtanh(x, -1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0, 0, 1, 0, 0, 0]  # 0 at the bounds
    x.grad = None
    F.relu6(x).sum().backward()
    assert x.grad.tolist() == [0, 0, 0, 1, 1, 0]
    x.grad = None
    F.hardswish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 1 / 6, 0.5, 5 / 6, 1, 1])
    # max pooling: ties send the gradient to the first maximum
    y = _t(np.ones((1, 1, 4)), True)
    F.max_pool1d(y, 2, 1).sum().backward()
    assert y.grad.tolist() == [[[1, 1, 1, 0]]]


def test_dropout_uses_the_generator_and_scales() -> None:
    x = torch.ones(1000)
    torch.manual_seed(0)
    a = F.dropout(x, 0.25)
    torch.manual_seed(0)
    mask = torch.empty(1000).bernoulli_(0.75)
    assert (a == mask / np.float32(0.75)).all()
    assert F.dropout(x, 0.25, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0) == 0).all()
    m = nn.Dropout(0.5).eval()
    assert m(x) is x


def test_init_draws_from_the_generator() -> None:
    torch.manual_seed(3)
    lin = nn.Linear(6, 4)
    torch.manual_seed(3)
    w = torch.empty(4, 6).uniform_(-1 / np.sqrt(6), 1 / np.sqrt(6))
    assert lin.weight.tolist() == w.tolist()
    assert lin.weight.requires_grad and lin.weight.grad_fn is None
    e = nn.Embedding(5, 2, padding_idx=3)
    assert e.weight[3].tolist() == [0.0, 0.0]
    q = nn.init.orthogonal_(torch.empty(5, 3))
    np.testing.assert_allclose((q.t() @ q).numpy(), np.eye(3), atol=1e-5)
    t = nn.init.trunc_normal_(torch.empty(1000), a=-0.5, b=0.5)
    assert t.min().item() >= -0.5 and t.max().item() <= 0.5


def test_batchnorm_running_stats_update_formula() -> None:
    rng = np.random.RandomState(0)
    x = rng.randn(6, 3)
    bn = nn.BatchNorm1d(3, momentum=0.2).double()
    out = bn(_t(x))
    np.testing.assert_allclose(out.detach().numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.2 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.8 + 0.2 * x.var(0, ddof=1), rtol=1e-12)
    cma = nn.BatchNorm1d(3, momentum=None).double()
    cma(_t(x))
    cma(_t(x * 2))
    np.testing.assert_allclose(cma.running_mean.numpy(), (x.mean(0) + 2 * x.mean(0)) / 2, rtol=1e-12)


def test_rnn_matches_a_python_loop() -> None:
    torch.manual_seed(0)
    gru = nn.GRU(3, 4).double()
    x = np.random.RandomState(2).randn(5, 2, 3)
    out, h = gru(_t(x))
    w_ih, w_hh, b_ih, b_hh = (p.detach().numpy() for p in gru.parameters())
    hx = np.zeros((2, 4))
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    for t in range(5):
        gi, gh = x[t] @ w_ih.T + b_ih, hx @ w_hh.T + b_hh
        r, z = sig(gi[:, :4] + gh[:, :4]), sig(gi[:, 4:8] + gh[:, 4:8])
        n = np.tanh(gi[:, 8:] + r * gh[:, 8:])
        hx = (1 - z) * n + z * hx
        np.testing.assert_allclose(out[t].detach().numpy(), hx, rtol=1e-10)
    np.testing.assert_allclose(h[0].detach().numpy(), hx, rtol=1e-10)


@pytest.mark.slow
def test_packed_lstm_equals_per_sequence_runs() -> None:
    torch.manual_seed(0)
    lstm = nn.LSTM(2, 3, bidirectional=True).double()
    rng = np.random.RandomState(0)
    seqs = [rng.randn(n, 2) for n in (4, 2, 3)]
    padded = nn.utils.rnn.pad_sequence([_t(s) for s in seqs])
    packed = nn.utils.rnn.pack_padded_sequence(padded, [4, 2, 3], enforce_sorted=False)
    out, (h, _) = lstm(packed)
    unpacked, lengths = nn.utils.rnn.pad_packed_sequence(out)
    assert lengths.tolist() == [4, 2, 3]
    for i, s in enumerate(seqs):
        single, (hs, _) = lstm(_t(s[:, None]))
        np.testing.assert_allclose(
            unpacked[: len(s), i].detach().numpy(), single[:, 0].detach().numpy(), rtol=1e-10
        )
        np.testing.assert_allclose(h[:, i].detach().numpy(), hs[:, 0].detach().numpy(), rtol=1e-10)
        assert unpacked[len(s) :, i].abs().sum().item() == 0


def test_ctc_loss_of_a_trivial_alignment() -> None:
    # one frame per label, certain predictions: the loss is -log(1) = 0 and the only path is used
    lp = np.full((3, 1, 3), -30.0)
    lp[0, 0, 1] = lp[1, 0, 0] = lp[2, 0, 2] = 0.0
    loss = F.ctc_loss(_t(lp), torch.tensor([[1, 2]]), [3], [2], reduction="sum")
    assert abs(loss.item()) < 1e-6


def test_clip_grad_norm_scales_all_gradients() -> None:
    a, b = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1))
    a.grad, b.grad = torch.tensor([3.0, 0.0]), torch.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(total.item() - 5.0) < 1e-6
    np.testing.assert_allclose(a.grad.numpy(), [3 / (5 + 1e-6), 0], rtol=1e-6)
    nn.utils.clip_grad_value_([a, b], 0.1)
    assert a.grad.max().item() == pytest.approx(0.1) and b.grad.item() == pytest.approx(0.1)


def test_value_checks_do_not_break_compiled_graphs() -> None:
    """Host-side value checks (target bounds, embedding indices) are skipped inside torchlike.compile."""
    torch.manual_seed(0)
    emb = nn.Embedding(6, 4)
    head = nn.Linear(4, 3)

    def loss_fn(idx: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(head(emb(idx)), y) + F.nll_loss(F.log_softmax(head(emb(idx)), 1), y)

    idx, y = torch.tensor([1, 5, 2]), torch.tensor([0, 2, 1])
    compiled = torch.compile(loss_fn, fullgraph=True)
    np.testing.assert_allclose(compiled(idx, y).item(), loss_fn(idx, y).item(), rtol=1e-6)

"""nn.init and nn.utils under torch and torchlike: same seed -> same values; same errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from _harness import assert_same, check, check_raises

import torchlike


def _init(name: str, shape: tuple, *args, dtype: str = "float32", exact: bool = True, **kwargs) -> None:  # noqa: ANN002, ANN003
    out = []
    for t in (torch, torchlike):
        t.manual_seed(0)
        w = t.empty(shape, dtype=getattr(t, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(t.nn.init, name)(w, *args, **kwargs)
        assert r is w
        out.append((w, t.rand(2, dtype=getattr(t, dtype))))  # the stream continues at the same place
    tol = (0, 0) if exact else (None, None)
    assert_same(out[0], out[1], *tol)


INITS = [
    ("uniform_", (3, 5), -2.0, 3.0),
    ("normal_", (4, 6), 1.0, 0.5),
    ("normal_", (40,), 0.0, 2.0),
    ("constant_", (2, 3), 0.7),
    ("ones_", (3,)),
    ("zeros_", (2, 2)),
    ("eye_", (3, 5)),
    ("dirac_", (4, 2, 3, 3)),
    ("dirac_", (6, 2, 5), 2),
    ("xavier_uniform_", (5, 7)),
    ("xavier_normal_", (8, 3, 3, 3), 2.0),
    ("kaiming_uniform_", (6, 4, 3), math.sqrt(5)),
    ("kaiming_normal_", (20, 10), 0, "fan_out", "relu"),
    ("kaiming_uniform_", (0, 3)),
]


@pytest.mark.parametrize("case", INITS, ids=[f"{c[0]}{c[1]}" for c in INITS])
def test_init_bit_exact(case: tuple) -> None:
    name, shape, *args = case
    _init(name, shape, *args)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_float64_and_generators(dtype: str) -> None:
    _init("kaiming_uniform_", (7, 3), dtype=dtype)
    _init("normal_", (5, 5), 0.0, 0.02, dtype=dtype)
    out = []
    for t in (torch, torchlike):
        g = t.Generator().manual_seed(123)
        w = t.empty(3, 4, dtype=getattr(t, dtype))
        t.nn.init.uniform_(w, generator=g)
        out.append(w)
    assert_same(out[0], out[1], 0, 0)


def test_trunc_normal_and_orthogonal_and_sparse() -> None:
    _init("trunc_normal_", (50,), 0.0, 1.0, -2.0, 2.0, exact=False)  # wide interval: redrawn normals
    _init("trunc_normal_", (30,), 0.0, 1.0, -0.2, 0.3, exact=False)  # narrow interval: uniform proposals
    _init("orthogonal_", (4, 6), exact=False)
    _init("orthogonal_", (6, 2, 2), 1.5, exact=False)
    _init("sparse_", (6, 4), 0.5, exact=False)


def test_calculate_gain_and_fans() -> None:
    for nl, p in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]:  # fmt: skip
        assert torchlike.nn.init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)
    check_raises(lambda t: t.nn.init.calculate_gain("foo"))
    check_raises(lambda t: t.nn.init.calculate_gain("leaky_relu", "x"))
    check_raises(lambda t: t.nn.init.xavier_uniform_(t.empty(3)))
    check_raises(lambda t: t.nn.init.kaiming_uniform_(t.empty(3, 3), mode="fan_avg"))
    check_raises(lambda t: t.nn.init.eye_(t.empty(3)))
    check_raises(lambda t: t.nn.init.dirac_(t.empty(3, 3)))
    check_raises(lambda t: t.nn.init.orthogonal_(t.empty(3)))


def test_default_initialisation_of_every_parametrised_layer() -> None:
    def build(t):  # noqa: ANN001, ANN202
        nn = t.nn
        t.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mods = [nn.Linear(5, 3), nn.Bilinear(2, 3, 4), nn.Conv1d(2, 3, 3), nn.Conv2d(2, 4, 3, groups=2),
                    nn.Conv3d(1, 2, 2), nn.ConvTranspose1d(2, 3, 3), nn.ConvTranspose2d(4, 2, 3, groups=2),
                    nn.Embedding(5, 3, padding_idx=2), nn.EmbeddingBag(4, 2), nn.PReLU(2), nn.BatchNorm2d(3),
                    nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.RNN(3, 4, 2), nn.LSTM(2, 3, proj_size=2),
                    nn.GRU(2, 3, bidirectional=True), nn.RNNCell(2, 2), nn.LSTMCell(2, 2), nn.GRUCell(2, 2),
                    nn.MultiheadAttention(4, 2, add_bias_kv=True), nn.MultiheadAttention(4, 1, kdim=2, vdim=3),
                    nn.TransformerEncoderLayer(4, 2, 8), nn.Transformer(4, 2, 1, 1, 8)]  # fmt: skip
        return [m.state_dict() for m in mods] + [t.rand(3)]

    ref, got = build(torch), build(torchlike)
    for i, (r, g) in enumerate(zip(ref, got)):
        if isinstance(r, torch.Tensor):
            assert_same(r, g, 0, 0, path="stream after")
            continue
        assert list(r) == list(g)
        for k in r:
            assert_same(r[k], g[k], 0, 0, path=f"module {i} {k}")


# --- nn.utils -----------------------------------------------------------------------------------------------------


def _grads(t, scale: float = 1.0):  # noqa: ANN001, ANN202
    t.manual_seed(0)
    m = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.Tanh(), t.nn.Linear(4, 2))
    (m(t.randn(5, 3)) * scale).sum().backward()
    return m


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.0])
def test_clip_grad_norm(norm_type: float) -> None:
    out = []
    for t in (torch, torchlike):
        m = _grads(t, 10.0)
        total = t.nn.utils.clip_grad_norm_(m.parameters(), 0.5, norm_type=norm_type)
        out.append((total, [p.grad for p in m.parameters()]))
    assert_same(out[0], out[1])


def test_clip_grad_value_and_errors() -> None:
    out = []
    for t in (torch, torchlike):
        m = _grads(t, 10.0)
        r = t.nn.utils.clip_grad_value_(m.parameters(), 0.3)
        out.append((r, [p.grad for p in m.parameters()], t.nn.utils.clip_grad_norm_([], 1.0)))
    assert_same(out[0], out[1])

    def nonfinite(t):  # noqa: ANN001, ANN202
        p = t.nn.Parameter(t.ones(2))
        p.grad = t.tensor([float("inf"), 1.0])
        t.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)

    check_raises(nonfinite)


def test_parameters_to_vector_roundtrip() -> None:
    def f(t):  # noqa: ANN001, ANN202
        m = _grads(t)
        v = t.nn.utils.parameters_to_vector(m.parameters())
        t.nn.utils.vector_to_parameters(v * 2, m.parameters())
        return v, [p.detach() for p in m.parameters()]

    assert_same(f(torch), f(torchlike))
    check_raises(lambda t: t.nn.utils.vector_to_parameters([1.0], _grads(t).parameters()))


def test_weight_norm_and_spectral_norm() -> None:
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)

    def f(t, x):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = t.nn.utils.weight_norm(t.nn.Linear(4, 2), dim=1)
            b = t.nn.utils.parametrizations.weight_norm(t.nn.Linear(4, 2))
            c = t.nn.utils.parametrizations.spectral_norm(t.nn.Linear(4, 3))
            d = t.nn.utils.parametrizations.spectral_norm(t.nn.Conv2d(2, 3, 1))
            e = t.nn.utils.spectral_norm(t.nn.Linear(4, 3), n_power_iterations=2)
        outs = (a(x), b(x), c(x), c(x), d(x.view(3, 2, 2, 1)), c.parametrizations.weight.original, e(x), e(x),
                e.weight_u, list(e.state_dict()), repr(e.state_dict()._metadata))  # fmt: skip
        t.nn.utils.remove_spectral_norm(e)
        outs += (e.weight, [n for n, _ in e.named_parameters()])
        names = [n for n, _ in b.named_parameters()] + list(c.state_dict())
        t.nn.utils.parametrize.remove_parametrizations(b, "weight")
        t.nn.utils.remove_weight_norm(a)
        return outs + (b.weight, a.weight, type(b).__name__, names, repr(c))

    check(f, [x], grad=True)

"""Python-float hyper-parameters reach kernels as traced arguments: a loop over 50 distinct values compiles
nothing after the first call (issue 22). Values are compared with torch in compat_tests/test_reliability.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torchlike
import torchlike.nn.functional as F
from torchlike._core import cold_kernels, lazy


@pytest.fixture(autouse=True)
def _compiled_kernels(monkeypatch):
    """These tests count XLA compiles to show a value is a kernel argument: with cold kernels on, a new
    kernel would run through NumPy and compile nothing either way, so they run with the cold path off."""
    monkeypatch.setattr(cold_kernels, "_on", False)

_X = np.random.RandomState(0).uniform(-2, 2, (4, 5)).astype(np.float32)
_Y = np.random.RandomState(1).uniform(-2, 2, (4, 5)).astype(np.float32)


def _signs():
    return torchlike.tensor(np.where(_Y > 0, 1.0, -1.0).astype(np.float32))


# name -> f(x, y, v): one op with the changing value v in (0.3, 0.8) (never a special norm order or a default)
CASES = {
    "norm": lambda x, y, v: x.norm(1 + v),
    "norm_dim": lambda x, y, v: x.norm(2 + v, dim=1),
    "norm_negative": lambda x, y, v: x.norm(-v),
    "vector_norm": lambda x, y, v: torchlike.linalg.vector_norm(x, 3 * v, dim=0),
    "dist": lambda x, y, v: torchlike.dist(x, y, 1 + v),
    "cdist": lambda x, y, v: torchlike.cdist(x, y, 1 + v),
    "pdist": lambda x, y, v: torchlike.pdist(x, 1 + v),
    "renorm": lambda x, y, v: torchlike.renorm(x, 1 + v, 0, 2 * v),
    "clamp": lambda x, y, v: x.clamp(-v, v),
    "clip_min": lambda x, y, v: torchlike.clip(x, min=v),
    "threshold": lambda x, y, v: F.threshold(x, v, -v),
    "softshrink": lambda x, y, v: F.softshrink(x, v),
    "layer_norm": lambda x, y, v: F.layer_norm(x, (5,), eps=v),
    "group_norm": lambda x, y, v: F.group_norm(x.reshape(2, 2, 5), 2, eps=v),
    "instance_norm": lambda x, y, v: F.instance_norm(x.reshape(1, 4, 5), eps=v),
    "batch_norm": lambda x, y, v: F.batch_norm(x, None, None, training=True, eps=v),
    "smooth_l1_loss": lambda x, y, v: F.smooth_l1_loss(x, y, beta=v),
    "huber_loss": lambda x, y, v: F.huber_loss(x, y, delta=v),
    "cross_entropy": lambda x, y, v: F.cross_entropy(x, torchlike.tensor([1, 0, 3, 2]), label_smoothing=v),
    "poisson_nll_loss": lambda x, y, v: F.poisson_nll_loss(x.abs(), y.abs(), log_input=False, eps=v),
    "gaussian_nll_loss": lambda x, y, v: F.gaussian_nll_loss(x, y, x.abs() * 0.1, eps=v),
    "cosine_embedding_loss": lambda x, y, v: F.cosine_embedding_loss(x, y, torchlike.tensor([1, -1, 1, -1]), v - 1),
    "margin_ranking_loss": lambda x, y, v: F.margin_ranking_loss(x, y, _signs(), margin=v),
    "hinge_embedding_loss": lambda x, y, v: F.hinge_embedding_loss(x, _signs(), margin=v),
    "multi_margin_loss": lambda x, y, v: F.multi_margin_loss(x, torchlike.tensor([1, 0, 3, 2]), margin=v),
    "triplet_margin_loss": lambda x, y, v: F.triplet_margin_loss(x, y, x.flip(0), margin=v, p=1 + v, eps=v / 10),
    "pairwise_distance": lambda x, y, v: F.pairwise_distance(x, y, p=1 + v, eps=v / 10),
    "cosine_similarity": lambda x, y, v: F.cosine_similarity(x * 0.05, y, eps=v),
    "normalize": lambda x, y, v: F.normalize(x, p=1 + v, eps=v),
}


def _compiles() -> int:
    return torchlike.compile_stats()["compiles"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fifty_values_compile_once(name):
    """Forward and backward: both kernels take the value as an argument."""
    f = CASES[name]
    x = torchlike.tensor(_X, requires_grad=True)
    y = torchlike.tensor(_Y)

    def step(v):
        out = f(x, y, v).sum()
        out.backward()
        return out.item()

    results, compiled = _run_fifty(step)
    assert compiled == 0, f"{name}: new values compiled {compiled} programs"
    assert all(math.isfinite(r) for r in results)
    assert len(set(results)) > 1  # the value reached the kernel


def _run_fifty(step):
    """``step(v)`` for 50 distinct values: (results, programs compiled after the warm-up)."""
    values = [0.301 + i / 100 for i in range(50)]  # never a default (0.5), which is baked
    # warm-up: a recurring backward, and in lazy mode a recurring graph, compiles as one program on its 2nd
    # and 3rd runs (with the same value each time too)
    results = []
    for v in values[:4]:
        results.append(step(v))
        lazy._join_compiles()  # background compiles land before the next run
    before = _compiles()
    results += [step(v) for v in values[4:]]
    return results, _compiles() - before


def test_special_norm_orders_stay_exact():
    """0, 1, 2 and inf are baked (each its own program); their values are exact reductions."""
    x = torchlike.tensor(_X)
    a = np.abs(_X.astype(np.float64))
    assert x.norm(0).item() == np.count_nonzero(_X)
    assert x.norm(1).item() == pytest.approx(a.sum(), rel=1e-6)
    assert x.norm(2).item() == pytest.approx(np.sqrt((a * a).sum()), rel=1e-6)
    assert x.norm(math.inf).item() == a.max().astype(np.float32)
    assert x.norm(-math.inf).item() == a.min().astype(np.float32)
    assert x.norm(3.5).item() == pytest.approx((a**3.5).sum() ** (1 / 3.5), rel=1e-5)


def test_label_smoothing_zero_keeps_the_plain_program():
    """label_smoothing=0.0 (the default) is baked: cross_entropy then has torch's nll backward node."""
    x = torchlike.tensor(_X, requires_grad=True)
    t = torchlike.tensor([1, 0, 3, 2])
    assert F.cross_entropy(x, t).grad_fn.name() == "NllLossBackward0"
    assert F.cross_entropy(x, t, label_smoothing=0.1).grad_fn.name() == "AddBackward0"


def test_embedding_max_norm_and_norm_type_are_traced():
    idx = torchlike.tensor([0, 2, 3])

    def step(v):
        w = torchlike.tensor(_X * 3)
        return F.embedding(idx, w, max_norm=v, norm_type=1 + v).sum().item()

    results, compiled = _run_fifty(step)
    assert compiled == 0
    assert len(set(results)) == len(results)


# --- the last value-only constants, traced too: eps of the native norms and rms_norm, sdpa's scale, ... -------

_SPECIAL = np.array([[np.nan, 1, np.inf, 1, -np.inf]] * 4, np.float32)  # nan_to_num meets every replacement


def _square(x):
    return x[:, :4]


def _packed(x, v):
    seqs = [x[0], x[1, :3], x[2, :1]]
    packed = torchlike.nn.utils.rnn.pack_sequence(seqs)
    return torchlike.nn.utils.rnn.pad_packed_sequence(packed, padding_value=v)[0]


# name -> (f(x, y, v), differentiable): v runs over 50 values in (0.3, 0.8)
MORE_CASES = {
    "native_layer_norm": (lambda x, y, v: torchlike.native_layer_norm(x, (5,), None, None, v)[0], True),
    "native_group_norm": (lambda x, y, v: torchlike.native_group_norm(x.reshape(2, 2, 5), None, None, 2, 2, 5, 2, v)[0],
                          True),
    "native_batch_norm": (lambda x, y, v: torchlike.native_batch_norm(x, None, None, None, None, True, 0.1, v)[0], True),
    "native_batch_norm_eval": (lambda x, y, v: torchlike.native_batch_norm(
        x, None, None, torchlike.zeros(5), torchlike.ones(5), False, 0.1, v)[0], True),
    "rms_norm": (lambda x, y, v: F.rms_norm(x, (5,), eps=v), True),
    "sdpa_scale": (lambda x, y, v: F.scaled_dot_product_attention(x[None], y[None], x[None], scale=v), True),
    "nan_to_num": (lambda x, y, v: torchlike.nan_to_num(x * torchlike.tensor(_SPECIAL), nan=v, posinf=1 + v, neginf=-v),
                   True),
    "logit": (lambda x, y, v: torchlike.logit(x.sigmoid(), eps=v / 2), True),
    "isclose": (lambda x, y, v: torchlike.isclose(x, y, rtol=v, atol=v / 10).sum(), False),
    "allclose": (lambda x, y, v: torchlike.tensor(float(torchlike.allclose(x * 1.05, x, rtol=v - 0.3))), False),
    "histc": (lambda x, y, v: torchlike.histc(x, 10, min=-3 * v, max=3 * v) * torchlike.arange(10.0), False),
    "pinv_rtol": (lambda x, y, v: torchlike.linalg.pinv(x, rtol=v / 2), True),
    "pinv_atol": (lambda x, y, v: torchlike.linalg.pinv(x, atol=v * 2), True),
    "pinverse": (lambda x, y, v: torchlike.pinverse(x, rcond=v / 2), True),
    "matrix_rank": (lambda x, y, v: torchlike.linalg.matrix_rank(x, rtol=v / 2), False),
    "lstsq_rcond": (lambda x, y, v: torchlike.linalg.lstsq(_square(x), _square(y), rcond=v / 2).solution, True),
    "pad_sequence": (lambda x, y, v: torchlike.nn.utils.rnn.pad_sequence([x[0], x[1, :3]], padding_value=v), True),
    "pad_packed_sequence": (lambda x, y, v: _packed(x, v), True),
    "fill_diagonal_": (lambda x, y, v: (x * 1).fill_diagonal_(v), True),
    "var_correction": (lambda x, y, v: x.var(correction=v), True),
    "std_correction": (lambda x, y, v: x.std(1, correction=v * 4), True),
    "var_mean_correction": (lambda x, y, v: sum(torchlike.var_mean(x, 0, correction=v * 3)), True),
    "std_mean_correction": (lambda x, y, v: sum(torchlike.std_mean(x, correction=v * 20)), True),
    "cov_correction": (lambda x, y, v: torchlike.cov(x, correction=-_int(v)), True),
    "cov_correction_aweights": (lambda x, y, v: torchlike.cov(x, correction=-_int(v), aweights=y[0].abs()), True),
    "cov_correction_both_weights": (lambda x, y, v: torchlike.cov(
        x, correction=-_int(v), fweights=torchlike.tensor([1, 2, 0, 3, 1]), aweights=y[0].abs()), True),
    "round_decimals": (lambda x, y, v: torchlike.round(x * 1e3, decimals=_int(v) - 40), False),
    "round_decimals_half": (lambda x, y, v: (x.half() * 100).round(decimals=_int(v) - 40), False),
    "nonzero_static_fill_value": (lambda x, y, v: torchlike.nonzero_static(x > 0, size=20, fill_value=_int(v)), False),
}


def _int(v):
    """50 distinct integers from 50 values of _run_fifty, never 0 (nor 40, round's 0 after the shift)."""
    i = round((v - 0.301) * 100)
    return i + 1 if i < 39 else i + 2


@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_fifty_values_of_the_last_constants_compile_once(name):
    f, differentiable = MORE_CASES[name]
    x = torchlike.tensor(_X, requires_grad=differentiable)
    y = torchlike.tensor(_Y)

    def step(v):
        out = f(x, y, v).float().sum()
        if differentiable:
            out.backward()
        return out.item()

    results, compiled = _run_fifty(step)
    assert compiled == 0, f"{name}: new values compiled {compiled} programs"
    assert len(set(results)) > 1  # the value reached the kernel


def test_none_and_values_are_two_programs():
    """A None (sdpa's default scale, logit without eps, linalg's default tolerances) is traced apart from a
    value, and both keep working in turn."""
    x = torchlike.tensor(_X)
    p = x.sigmoid()
    outs = []
    for v in (None, 0.3, None, 0.4):
        outs.append(F.scaled_dot_product_attention(x[None], x[None], x[None], scale=v).sum().item())
        outs.append(torchlike.logit(p, eps=v).sum().item())
        outs.append(torchlike.linalg.pinv(x, rtol=v).sum().item())
    assert outs[:3] == outs[6:9]
    assert outs[3:6] != outs[9:12]


def test_clip_grad_norm_general_orders_compile_once():
    """clip_grad_norm_'s norm_type: 0, 1, 2 and inf are their own kernels; any other order is an argument."""

    def step(v):
        ps = [torchlike.zeros(4, 5, requires_grad=True), torchlike.zeros(3, requires_grad=True)]
        ps[0].grad, ps[1].grad = torchlike.tensor(_X), torchlike.tensor(_Y[0, :3])
        total = torchlike.nn.utils.clip_grad_norm_(ps, 0.5, norm_type=1 + 3 * v)
        return total.item() + ps[0].grad.sum().item()

    results, compiled = _run_fifty(step)
    assert compiled == 0, f"new norm orders compiled {compiled} programs"
    assert len(set(results)) == len(results)


_KEY_STREAM_DRAWS = {
    "uniform_": lambda t, v, g: t.uniform_(-v, v, generator=g),
    "normal_": lambda t, v, g: t.normal_(v, 2 * v, generator=g),
    "exponential_": lambda t, v, g: t.exponential_(1 + v, generator=g),
    "log_normal_": lambda t, v, g: t.log_normal_(v, v, generator=g),
    "cauchy_": lambda t, v, g: t.cauchy_(v, v, generator=g),
    "geometric_": lambda t, v, g: t.geometric_(v, generator=g),
    "bernoulli_": lambda t, v, g: t.bernoulli_(v, generator=g),
    "random_": lambda t, v, g: t.random_(int(100 * v), 100, generator=g),
}


@pytest.mark.parametrize("name", sorted(_KEY_STREAM_DRAWS))
def test_key_stream_draw_parameters_compile_once(name):
    """A CUDA generator's draws (jax.random key stream; here on the CPU): the distribution's numbers are
    arguments of one kernel, so new means, scales, probabilities or bounds compile nothing."""
    g = torchlike.Generator()
    g._cpu, g._seed, g._counter = None, 5, 0  # the CUDA generators' key stream, on the CPU
    draw = _KEY_STREAM_DRAWS[name]

    def step(v):
        t = torchlike.empty(64)
        draw(t, v, g)
        return t.sum().item()

    results, compiled = _run_fifty(step)
    assert compiled == 0, f"{name}: new values compiled {compiled} programs"
    assert len(set(results)) > 1

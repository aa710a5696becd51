"""Issue 22 (reliability), each behaviour compared with torch: per-thread modes, Python scalars as
traced arguments, bounded kernel caches, torch's checks on bad input, and safe saves."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest
import torch
from _harness import _np, assert_same, check, check_raises, compare, per_node_backward, run_both  # noqa: F401

import torchlike

LIBS = [torch, torchlike]

# --- per-thread state -------------------------------------------------------------------------------


def _modes_seen_by_new_thread(lib):
    """What a fresh thread sees while the main thread has every mode switched."""
    seen = {}

    def probe():
        seen["grad"] = lib.is_grad_enabled()
        seen["inference"] = lib.is_inference_mode_enabled()
        seen["autocast"] = lib.is_autocast_enabled("cpu")
        seen["autocast_dtype"] = str(lib.get_autocast_dtype("cpu"))
        seen["autocast_cache"] = lib.is_autocast_cache_enabled()
        seen["anomaly"] = lib.is_anomaly_enabled()  # torch: global
        seen["default_dtype"] = str(lib.get_default_dtype())  # torch: global
        a = lib.ones(2, 2)
        seen["matmul_dtype"] = str((a @ a).dtype)

    old_dtype = lib.get_default_dtype()
    lib.set_grad_enabled(False)
    lib.set_autocast_enabled("cpu", True)
    lib.set_autocast_dtype("cpu", lib.float16)
    lib.set_autocast_cache_enabled(False)
    lib.set_anomaly_enabled(True)
    lib.set_default_dtype(lib.float64)
    try:
        with lib.inference_mode():
            th = threading.Thread(target=probe)
            th.start()
            th.join()
        seen["main_grad_after"] = lib.is_grad_enabled()
        seen["main_autocast_after"] = lib.is_autocast_enabled("cpu")
    finally:
        lib.set_grad_enabled(True)
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_cache_enabled(True)
        lib.set_anomaly_enabled(False)
        lib.set_default_dtype(old_dtype)
    return seen


def test_new_thread_starts_with_torch_defaults():
    ref = _modes_seen_by_new_thread(torch)
    got = _modes_seen_by_new_thread(torchlike)
    assert got == ref


def _no_grad_in_other_thread(lib):
    """An evaluator thread sits in no_grad (and autocast) while the trainer thread records a graph."""
    entered, done = threading.Event(), threading.Event()

    def evaluator():
        with lib.no_grad(), lib.autocast("cpu", dtype=lib.bfloat16):
            entered.set()
            done.wait(10)

    th = threading.Thread(target=evaluator)
    th.start()
    entered.wait(10)
    try:
        w = lib.ones(3, 3, requires_grad=True)
        y = (w @ w).sum()
        y.backward()
        return y.dtype, w.grad
    finally:
        done.set()
        th.join()


def test_no_grad_and_autocast_in_one_thread_leave_another_alone():
    assert_same(_no_grad_in_other_thread(torch), _no_grad_in_other_thread(torchlike))


# --- Python scalars are traced arguments ------------------------------------------------------------

SCALAR_CASES = [
    ("pow_float", lambda t, x: x.abs() ** 1.2345),
    ("pow_neg_float", lambda t, x: (x.abs() + 0.5) ** -1.75),
    ("pow_square", lambda t, x: x**2),
    ("pow_sqrt", lambda t, x: x.abs() ** 0.5),
    ("pow_int7", lambda t, x: x**7),
    ("rpow", lambda t, x: 1.37**x),
    ("leaky_relu", lambda t, x: t.nn.functional.leaky_relu(x, 0.173)),
    ("elu", lambda t, x: t.nn.functional.elu(x, alpha=0.37)),
    ("celu", lambda t, x: t.nn.functional.celu(x, alpha=1.7)),
    ("softplus", lambda t, x: t.nn.functional.softplus(x, beta=1.9, threshold=1.3)),
    ("hardtanh", lambda t, x: t.nn.functional.hardtanh(x, -0.37, 0.61)),
    ("relu6", lambda t, x: t.nn.functional.relu6(x * 7)),
    ("softshrink", lambda t, x: t.nn.functional.softshrink(x, 0.27)),
    ("hardshrink", lambda t, x: t.nn.functional.hardshrink(x, 0.27)),
    ("threshold", lambda t, x: t.nn.functional.threshold(x, 0.13, -2.5)),
    ("rrelu_eval", lambda t, x: t.nn.functional.rrelu(x, 0.1, 0.3, training=False)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name,fn", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_scalar_hyperparameters_match_torch(name, fn, dtype):
    x = np.random.RandomState(0).uniform(-2, 2, (3, 4))
    # torch: celu's float64 backward rounds 1/alpha through float (gradients agree to ~1e-8)
    rtol = 1e-7 if name == "celu" and dtype == "float64" else None
    check(fn, [x], dtype=dtype, grad=dtype != "bfloat16", rtol=rtol)


def _classes(t):
    return t.tensor([1, 0, 3])


def _signs(t, x):
    return t.tensor([[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, 1.0]]).to(x.dtype)


# norms of a general order and loss hyper-parameters: traced arguments now (tests/test_reliability_scalars.py
# counts the compiles); the values and gradients must stay torch's
TRACED_CASES = [
    ("norm_p", lambda t, x, y: x.norm(1.37)),
    ("norm_neg_p", lambda t, x, y: x.norm(-1.5)),
    ("norm_p_dim", lambda t, x, y: x.norm(2.7, dim=1, keepdim=True)),
    ("norm_small_p", lambda t, x, y: (x * y).norm(0.6, dim=0)),
    ("vector_norm", lambda t, x, y: t.linalg.vector_norm(x, 3.5, dim=(0, 1))),
    ("dist", lambda t, x, y: t.dist(x, y, 3.3)),
    ("dist_int_p", lambda t, x, y: t.dist(x, y, 3)),
    ("cdist", lambda t, x, y: t.cdist(x, y, 1.7)),
    ("pdist", lambda t, x, y: (t.pdist(x, 1.7), t.pdist(x), t.pdist(y, float("inf")))),
    ("renorm", lambda t, x, y: (t.renorm(x, 1.7, 0, 1.1), t.renorm(y, 2, 1, 0.9), t.renorm(x, float("inf"), 0, 1.0))),
    ("renorm_", lambda t, x, y: (x * 1).renorm_(3.1, 1, 0.8)),
    ("cdist_p2_p1_inf", lambda t, x, y: (t.cdist(x, y), t.cdist(x, y, 1), t.cdist(x, y, float("inf")))),
    ("layer_norm_eps", lambda t, x, y: t.nn.functional.layer_norm(x * 0.01, (4,), eps=0.03)),
    ("group_norm_eps", lambda t, x, y: t.nn.functional.group_norm(x.reshape(1, 6, 2) * 0.01, 3, eps=0.02)),
    ("instance_norm_eps", lambda t, x, y: t.nn.functional.instance_norm(x.reshape(1, 3, 4) * 0.01, eps=0.04)),
    ("batch_norm_eps", lambda t, x, y: t.nn.functional.batch_norm(
        x * 0.01, t.zeros(4, dtype=x.dtype), t.ones(4, dtype=x.dtype), training=True, eps=0.05)),
    ("batch_norm_eval_eps", lambda t, x, y: t.nn.functional.batch_norm(
        x, t.full((4,), 0.1, dtype=x.dtype), t.full((4,), 0.01, dtype=x.dtype), eps=0.3)),
    ("smooth_l1", lambda t, x, y: t.nn.functional.smooth_l1_loss(x, y, beta=0.37)),
    ("huber", lambda t, x, y: t.nn.functional.huber_loss(x, y, delta=0.61, reduction="sum")),
    ("cross_entropy_ls", lambda t, x, y: t.nn.functional.cross_entropy(x, _classes(t), label_smoothing=0.15)),
    ("cross_entropy_ls_none", lambda t, x, y: t.nn.functional.cross_entropy(
        x, _classes(t), label_smoothing=0.3, reduction="none")),
    ("cross_entropy_prob_ls", lambda t, x, y: t.nn.functional.cross_entropy(
        x, y.detach().softmax(1), label_smoothing=0.2)),
    ("poisson_nll", lambda t, x, y: t.nn.functional.poisson_nll_loss(
        x.abs() + 0.1, y.detach().abs(), log_input=False, eps=0.07)),
    ("gaussian_nll", lambda t, x, y: t.nn.functional.gaussian_nll_loss(x, y, x.detach().abs() * 0.1, eps=0.05)),
    ("cosine_embedding", lambda t, x, y: t.nn.functional.cosine_embedding_loss(
        x, y, t.tensor([1, -1, -1]), margin=0.23)),
    ("margin_ranking", lambda t, x, y: t.nn.functional.margin_ranking_loss(x, y, _signs(t, x), margin=0.3)),
    ("hinge_embedding", lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, _signs(t, x), margin=0.7)),
    ("multi_margin", lambda t, x, y: t.nn.functional.multi_margin_loss(x, _classes(t), margin=0.45)),
    ("triplet", lambda t, x, y: t.nn.functional.triplet_margin_loss(x, y, x.flip(0), margin=0.8, p=1.5, eps=1e-4)),
    ("triplet_p2", lambda t, x, y: t.nn.functional.triplet_margin_loss(x, y, x.flip(0), margin=1.3)),
    ("pairwise", lambda t, x, y: t.nn.functional.pairwise_distance(x, y, p=2.5, eps=1e-3)),
    ("pairwise_p1", lambda t, x, y: t.nn.functional.pairwise_distance(x, y, 1)),
    ("cosine_similarity", lambda t, x, y: t.nn.functional.cosine_similarity(x * 0.05, y, eps=0.3)),
    ("normalize", lambda t, x, y: t.nn.functional.normalize(x, p=1.7, dim=1)),
    ("normalize_eps", lambda t, x, y: t.nn.functional.normalize(x * 0.01, p=3.5, eps=0.2)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", TRACED_CASES, ids=[c[0] for c in TRACED_CASES])
def test_traced_norms_and_loss_parameters_match_torch(name, fn, dtype):
    rng = np.random.RandomState(1)
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    check(fn, [x, y], dtype=dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_traced_norms_accumulate_half_precision_in_float_as_torch(dtype):
    x = np.random.RandomState(3).uniform(-2, 2, (3, 8))
    f = lambda t, a: (a.norm(1.5), a.norm(2.5, dim=1), t.linalg.vector_norm(a, 0.7, dim=0),  # noqa: E731
                      t.nn.functional.normalize(a, p=3.5), t.nn.functional.pairwise_distance(a, a.flip(0), 1.5))
    check(f, [x], dtype=dtype, grad=False)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 1.5, 3.25, float("inf")])
def test_embedding_renorm_matches_torch(norm_type):
    w = np.random.RandomState(2).uniform(-2, 2, (5, 4)).astype(np.float32)

    def fn(t):
        weight = t.tensor(w)
        out = t.nn.functional.embedding(t.tensor([[0, 2], [3, 0]]), weight, max_norm=1.3, norm_type=norm_type)
        return out, weight

    compare(fn, [], grad=False)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float16", "complex64"])
def test_pow_scalar_result_dtypes_match_torch(dtype):
    x = np.arange(1, 7).reshape(2, 3)
    for e in (2, 2.5, -1.5, 3.0, 0.5):
        compare(lambda t, a, e=e: a**e, [x], dtype=dtype, grad=False)


# the last value-only constants, traced now (tests/test_reliability_scalars.py counts the compiles): torch's values
# for ordinary and edge values (0, negative, inf where legal), and its errors where a value is illegal
_INF = float("inf")
_NAN = float("nan")
_EPS = (0.0, 1e-5, 0.3, 1e3, _INF)


def _mat(x):
    return x[:, :3]  # a 3x3 matrix


LAST_CASES = [
    *((f"native_layer_norm_{e}", lambda t, x, y, e=e: t.native_layer_norm(x * 0.01, (4,), None, None, e)[:2])
      for e in _EPS),
    # the output only: without weights torch drops the statistics' gradients (it keeps them with weights)
    *((f"native_group_norm_{e}", lambda t, x, y, e=e: t.native_group_norm(
        x.reshape(1, 6, 2) * 0.01, None, None, 1, 6, 2, 3, e)[0]) for e in _EPS),
    ("native_group_norm_weights", lambda t, x, y: t.native_group_norm(
        x.reshape(1, 6, 2) * 0.01, y[0].repeat(2)[:6], y[1].repeat(2)[:6], 1, 6, 2, 3, 0.02)),
    *((f"native_batch_norm_{e}", lambda t, x, y, e=e: t.native_batch_norm(
        x * 0.01, None, None, None, None, True, 0.1, e)[:2]) for e in _EPS),
    *((f"native_batch_norm_eval_{e}", lambda t, x, y, e=e: t.native_batch_norm(
        x, None, None, t.full((4,), 0.1, dtype=x.dtype), t.full((4,), 0.01, dtype=x.dtype), False, 0.1, e)[0])
      for e in _EPS),
    *((f"rms_norm_{e}", lambda t, x, y, e=e: t.nn.functional.rms_norm(x * 0.01, (4,), eps=e)) for e in (None, *_EPS)),
    *((f"sdpa_scale_{s}", lambda t, x, y, s=s: t.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 3, 4), y.reshape(1, 3, 4), x.reshape(1, 3, 4), scale=s)) for s in (None, 0.0, -0.5, 0.37, 2.0)),
    ("sdpa_scale_causal", lambda t, x, y: t.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 3, 4), y.reshape(1, 3, 4), y.reshape(1, 3, 4), is_causal=True, scale=0.7)),
    *((f"nan_to_num_{v}", lambda t, x, y, v=v: t.nan_to_num(
        x * t.tensor([[_NAN, 1.0, _INF, -_INF]], dtype=x.dtype), *v)) for v in (
        (0.0, None, None), (-1.5, 2.0, -3.0), (None, 1e30, -1e30), (_INF, -_INF, _NAN), (7, -1, 1))),
    *((f"logit_{e}", lambda t, x, y, e=e: t.logit(x.sigmoid() * 1.2 - 0.1, eps=e)) for e in (
        None, 0.0, 1e-6, 0.25, 0.7, -0.5, _NAN)),
    *((f"pinv_{a}_{r}", lambda t, x, y, a=a, r=r: t.linalg.pinv(x, atol=a, rtol=r)) for a, r in (
        (None, None), (0.0, None), (None, 0.0), (2.0, None), (None, 0.3), (0.1, 0.5), (_INF, None), (-1.0, None))),
    ("pinv_hermitian", lambda t, x, y: t.linalg.pinv(_mat(x) @ _mat(x).mT, rtol=0.05, hermitian=True)),
    *((f"pinverse_{r}", lambda t, x, y, r=r: t.pinverse(x, rcond=r)) for r in (0.0, 0.3, _INF)),
    *((f"lstsq_{r}", lambda t, x, y, r=r: t.linalg.lstsq(_mat(x), y[:, :2], rcond=r).solution) for r in (
        None, 0.0, 1e-3, -1.0)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", LAST_CASES, ids=[c[0] for c in LAST_CASES])
def test_last_traced_constants_match_torch(name, fn, dtype):
    rng = np.random.RandomState(1)
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    compare(fn, [x, y], dtype=dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_last_traced_constants_in_half_precision_match_torch(dtype):
    x = np.random.RandomState(3).uniform(-2, 2, (3, 4))
    f = lambda t, a: (t.native_layer_norm(a, (4,), None, None, 1e-3)[0],  # noqa: E731
                      t.native_batch_norm(a, None, None, None, None, True, 0.1, 0.3)[0],
                      t.nn.functional.rms_norm(a * 1e-3, (4,)), t.nn.functional.rms_norm(a, (4,), eps=0.1),
                      t.nan_to_num(a.log(), nan=1e5, neginf=-7.5), t.logit(a.sigmoid(), eps=0.1234),
                      t.nn.functional.scaled_dot_product_attention(a[None], a[None], a[None], scale=0.3))
    check(f, [x], dtype=dtype, grad=False)


@pytest.mark.parametrize("rcond", [0.3, 0.8, 2.0, _INF])
def test_lstsq_rcond_cutting_singular_values_matches_torch(rcond):
    """gelss (an SVD driver, whose cut-off torchlike's solver follows): the values. torch differentiates the
    solution as if no singular value were cut, so gradients are left out here."""
    rng = np.random.RandomState(1)
    x, y = rng.uniform(-2, 2, (3, 3)), rng.uniform(-2, 2, (3, 2))
    compare(lambda t, a, b: t.linalg.lstsq(a, b, rcond=rcond, driver="gelss")[::2], [x, y], grad=False)


@pytest.mark.parametrize("rtol,atol,equal_nan", [(0.0, 0.0, False), (0.1, 0.0, False), (0.0, 0.5, True),
                                                 (_INF, 0.0, False), (1e-5, _INF, True), (1, 1, False)])  # fmt: skip
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_isclose_tolerances_match_torch(rtol, atol, equal_nan, dtype):
    a = np.array([[0.0, 1.0, 2.0, -3.0, _NAN, _INF], [1.0, 0.0, 5.0, 100.0, 1e-9, -_INF]])
    b = np.array([[0.0, 1.05, 2.5, -3.0, _NAN, _INF], [1.0, 0.4, 7.0, 90.0, 0.0, _INF]])
    if dtype in ("int64", "bool"):
        a, b = np.nan_to_num(a, posinf=9, neginf=-9), np.nan_to_num(b, posinf=9, neginf=-9)
    compare(lambda t, p, q: (t.isclose(p, q, rtol, atol, equal_nan), t.tensor(t.allclose(p, q, rtol, atol, equal_nan)),
                             p.isclose(q, rtol=rtol, atol=atol)), [a, b], dtype=dtype, grad=False)  # fmt: skip


@pytest.mark.parametrize("lo,hi", [(0, 0), (-1, 1), (0.5, 0.5), (-2.5, 3), (1, 0), (-_INF, 1.0), (0.25, 1e30)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_range_matches_torch(lo, hi, dtype):
    x = np.random.RandomState(4).uniform(-2, 2, (20,))
    compare(lambda t, a: (t.histc(a, 7, lo, hi), a.histc(bins=3, min=lo, max=hi)), [x], dtype=dtype, grad=False)


@pytest.mark.parametrize("atol,rtol", [(None, None), (0.0, None), (None, 0.4), (1.5, None), (_INF, None),
                                       (None, -1.0)])  # fmt: skip
def test_matrix_rank_tolerances_match_torch(atol, rtol):
    x = np.random.RandomState(5).uniform(-2, 2, (2, 4, 5))
    compare(lambda t, a: (t.linalg.matrix_rank(a, atol=a.new_tensor(0.5) if atol == 1.5 else atol, rtol=rtol),
                          t.linalg.matrix_rank(a, atol=atol, rtol=rtol),
                          t.linalg.matrix_rank(a @ a.mT, atol=atol, rtol=rtol, hermitian=True)), [x], grad=False)


@pytest.mark.parametrize("value", [0, -3, 1.5, 300, -1, -1.0, 2.5e9, _INF, _NAN, True])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "int8", "bool"])
def test_pad_sequence_and_fill_diagonal_values_match_torch(value, dtype):
    x = np.arange(12.0).reshape(3, 4) % 3

    def pads(t, a):
        seqs = [a[0], a[1, :2], a[2, :1]]
        padded = t.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=value)
        packed = t.nn.utils.rnn.pack_sequence(seqs)
        return padded, t.nn.utils.rnn.pad_packed_sequence(packed, padding_value=value)[0]

    compare(pads, [x], dtype=dtype, grad=dtype.startswith("float"))
    compare(lambda t, a: (a * 1).fill_diagonal_(value), [x], dtype=dtype, grad=dtype.startswith("float"))
    compare(lambda t, a: a.clone().fill_diagonal_(value, wrap=True), [np.zeros((7, 3))], dtype=dtype, grad=False)


def _compiled_kernels(monkeypatch):
    """Tests that count compiles or flushes run with the cold path off: with it on, new kernels and shapes
    run through NumPy and compile nothing either way (tests/test_cold_kernels.py tests that path)."""
    from torchlike._core import cold_kernels

    monkeypatch.setattr(cold_kernels, "_on", False)


def test_new_float_values_compile_nothing(monkeypatch):
    """1 + i*1e-4 exponents and changing activation slopes reuse one kernel each."""
    _compiled_kernels(monkeypatch)
    x = torchlike.randn(8, 8)
    f = torchlike.nn.functional
    warm = [lambda v: x.abs() ** v, lambda v: f.leaky_relu(x, v), lambda v: f.softplus(x, beta=v),
            lambda v: f.elu(x, alpha=v), lambda v: f.hardtanh(x, -v, v)]  # fmt: skip
    for g in warm:
        g(1.2345)
    before = torchlike.compile_stats()["compiles"]
    for i in range(20):
        for g in warm:
            g(1.3 + i * 1e-4)
    assert torchlike.compile_stats()["compiles"] == before


# --- the last static scalars, traced now: std/var's and cov's correction, round's decimals, nonzero_static's
# fill_value (tests/test_reliability_scalars.py counts the compiles); values, gradients, warnings and errors


def _warned(lib, fn):
    """``fn(lib)``'s warnings, without torch's "(Triggered internally at ...)" tail, and without torchlike's
    own "has compiled 32 times" warning (it counts an op's kernels over the whole process, so whichever
    test of a worker compiles an op's 32nd kernel sees it)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return [m for m in messages if not (m.startswith("torchlike: ") and " has compiled " in m)]


# 0 and 1 (the defaults' values), fractions, divisors of 0 or below (inf/nan and torch's warning), negative,
# bools (torch reads them as 0/1), inf, NaN (torch's divisor is then 0) and a huge float
_CORRECTIONS = (0, 1, 0.5, 2, 3, 4.5, 5, 12, -1, -2.5, True, False, _INF, -_INF, _NAN, 1e300)


@pytest.mark.parametrize("correction", _CORRECTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_std_var_correction_matches_torch(correction, dtype):
    x = np.random.RandomState(6).uniform(-2, 2, (3, 4))
    c = correction

    def f(t, a):
        return (a.var(correction=c), a.std(1, correction=c), t.var(a, 0, correction=c, keepdim=True),
                t.var_mean(a, 0, correction=c), t.std_mean(a, (0, 1), correction=c, keepdim=True))  # fmt: skip

    # gradients where every divisor is positive: at a divisor of 0 torch's formula 2 * (x - mean) / 0 gives
    # +-inf, the autodiff of torchlike's sum((x - mean)**2) / 0 gives NaN (the mean's inf - inf)
    compare(f, [x], dtype=dtype, grad=bool(c < 3))
    xc = (x + 1j * x[::-1]).astype(np.complex64)
    compare(lambda t, a: (a.var(1, correction=c), t.std_mean(a, correction=c)), [xc], grad=False)
    ref, got = (_warned(lib, lambda t: f(t, t.tensor(x))) for lib in LIBS)
    assert got == ref


@pytest.mark.parametrize("correction", [0, 1, 2, 4, 5, 9, -3, True, 0.5, 2**63, -(2**63) - 1])
@pytest.mark.parametrize("weights", ["none", "fweights", "aweights", "both"])
def test_cov_correction_matches_torch(correction, weights):
    rng = np.random.RandomState(7)
    x = rng.uniform(-2, 2, (3, 5))
    fw, aw = np.array([1, 2, 0, 3, 1]), rng.uniform(0.1, 2, 5)

    def f(t, a):
        kw = {"fweights": t.tensor(fw)} if weights in ("fweights", "both") else {}
        if weights in ("aweights", "both"):
            kw["aweights"] = t.tensor(aw, dtype=a.dtype)
        return t.cov(a, correction=correction, **kw), t.cov(a[0], correction=correction, **kw)

    compare(f, [x], dtype="float64")
    compare(f, [x], dtype="float32")
    if isinstance(correction, int) and not isinstance(correction, bool) and abs(correction) < 2**63:
        ref, got = (_warned(lib, lambda t: f(t, t.tensor(x))) for lib in LIBS)
        assert got == ref


def test_cov_weights_summing_to_zero_raise_as_torch():
    x = np.random.RandomState(8).uniform(-2, 2, (2, 3))
    check_raises(lambda t, a: t.cov(a, aweights=t.zeros(3, dtype=a.dtype)), [x])
    check_raises(lambda t, a: t.cov(a, correction=0, fweights=t.zeros(3, dtype=t.int64)), [x])


# values where rounding is hard: exact halves at each scale, ties near them, huge, tiny, signed zeros, inf, NaN
_ROUND_X = np.concatenate([
    np.random.RandomState(9).uniform(-1e3, 1e3, 200), np.random.RandomState(10).uniform(-1, 1, 200),
    np.arange(-40, 40) * 0.005 + 0.0025, np.arange(-20, 20) * 5.0 + 2.5,
    [0.0, -0.0, _INF, -_INF, _NAN, 1e38, -3e38, 1.5, 2.5, 0.125, 1234567.891, 6e-8, 65504.0, 1e-30],
])  # fmt: skip


@pytest.mark.parametrize("decimals", [-400, -309, -40, -39, -10, -3, -1, 0, 1, 2, 3, 4, 7, 9, 16, 22, 23, 38, 39, 300,
                                      308, 309, 400])  # fmt: skip
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_round_decimals_matches_torch_exactly(decimals, dtype):
    """torch's nearbyint(x * 10**d) / 10**d (x / 10**-d, * 10**-d for d < 0) in its op-math dtype, bit for bit
    (signed zeros too; NaN for NaN)."""
    f = lambda t, a: (t.round(a, decimals=decimals), a.round(decimals=decimals))  # noqa: E731
    check(f, [_ROUND_X], dtype=dtype, rtol=0, atol=0, grad=False)
    (ref, _), (got, _) = run_both(f, [_ROUND_X], dtype=dtype)
    for r, g in zip(ref, got):
        r, g = _np(r), _np(g)
        np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(r) & ~np.isnan(r))  # NaN's sign aside
    # the in-place and out= forms, and the gradient (zero, torch's RoundBackward1; RoundBackward0 for 0)
    compare(lambda t, a: (a * 1).round_(decimals=decimals), [_ROUND_X[:20]], dtype=dtype)
    compare(lambda t, a: t.round(a, decimals=decimals, out=t.empty_like(a)), [_ROUND_X[:20]], dtype=dtype, grad=False)
    x = torchlike.tensor(_ROUND_X[:3], requires_grad=True)
    assert x.round(decimals=decimals).grad_fn.name() == ("RoundBackward0" if decimals == 0 else "RoundBackward1")


# (not decimals=0 on integers: torch raises for an explicit decimals=0 and not for no decimals, which torchlike
# does not tell apart)
@pytest.mark.parametrize("decimals", [1, -2, 1.5, True, None, 2**63])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32"])
def test_round_decimals_on_integers_and_bad_decimals_as_torch(decimals, dtype):
    """torch's errors; for None the registry's TypeError comes first, with its own message."""
    compare(lambda t, a: t.round(a, decimals=decimals), [np.array([-3, 0, 7, 15])], dtype=dtype, grad=False,
            match_message=decimals is not None)  # fmt: skip


@pytest.mark.parametrize("fill_value", [-1, 0, 7, -(2**63), 2**63 - 1, 2**63, 1.5, True, None])
@pytest.mark.parametrize("size", [0, 2, 5, 9])
def test_nonzero_static_fill_value_matches_torch(fill_value, size):
    x = np.array([[0, 1.5, 0], [2, 0, -3], [0, 0, 1]])

    def f(t, a):
        return (t.nonzero_static(a, size=size, fill_value=fill_value), (a > 0).nonzero_static(size=size, fill_value=fill_value),
                t.nonzero_static(a[0, 1], size=size, fill_value=fill_value),
                t.nonzero_static(a[:0], size=size, fill_value=fill_value))  # fmt: skip

    for dtype in ("float32", "int64", "bool"):
        compare(f, [x], dtype=dtype, grad=False)


@pytest.mark.parametrize("norm_type", [2.0, 1, 0, _INF, -_INF, 1.5, 3, 0.5, -1.5, 2.0001, 7, _NAN])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_clip_grad_norm_orders_match_torch(norm_type, dtype):
    """The special orders are their own kernels, any other is traced: the total norm and the scaled gradients."""
    rng = np.random.RandomState(11)
    g1, g2 = rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 1, (5,))

    def f(t, a, b):
        ps = [t.zeros(3, 4, dtype=a.dtype, requires_grad=True), t.zeros(5, dtype=a.dtype, requires_grad=True)]
        ps[0].grad, ps[1].grad = a.clone(), b.clone()
        total = t.nn.utils.clip_grad_norm_(ps, 1.3, norm_type=norm_type)
        return total, ps[0].grad, ps[1].grad, t.nn.utils.get_total_norm([a, b], norm_type)

    check(f, [g1, g2], dtype=dtype, grad=False)


# --- bounded caches -----------------------------------------------------------------------------------


@pytest.fixture
def small_cache(monkeypatch):
    from torchlike._core import kernel_cache

    _compiled_kernels(monkeypatch)
    old = kernel_cache.get_kernel_cache_size()
    torchlike.set_kernel_cache_size(6)
    yield kernel_cache
    torchlike.set_kernel_cache_size(old)


def test_kernel_tables_are_bounded(small_cache):
    from torchlike._ops.registry import OPS

    x = torchlike.ones(2, 3, 4, 5, 6, 7, 8)
    for d in range(-7, 7):
        assert x.sum(d).shape[0] in (2, 3)
    assert len(OPS["sum"].kernels) <= 6
    assert torchlike.compile_stats()["evictions"] > 0


def test_changing_shapes_flush_and_stay_correct(small_cache):
    before = torchlike.compile_stats()["flushes"]
    for n in range(1, 16):
        a = np.arange(n * 3.0).reshape(n, 3)
        got = (torchlike.tensor(a).tanh() * 2).sum(0)
        np.testing.assert_allclose(got.numpy(), (np.tanh(a) * 2).sum(0), rtol=1e-6)
    assert torchlike.compile_stats()["flushes"] > before


@pytest.mark.skipif(torchlike.lazy.enabled(), reason="lazy mode: kernels are evaluated abstractly and run inside "
                    "whole-graph programs (bounded by the lazy engine's own caches, tests/test_lazy.py)")
def test_recompiling_op_warns_naming_it(monkeypatch):
    from torchlike._core import kernel_cache

    _compiled_kernels(monkeypatch)
    monkeypatch.setattr(kernel_cache, "WARN_AFTER", kernel_cache._by_op["logaddexp"] + 4)
    monkeypatch.setattr(kernel_cache, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 7):
            torchlike.logaddexp(torchlike.ones(n, 5), torchlike.ones(n, 5))
    assert any("'logaddexp' has compiled" in str(w.message) for w in caught)


def test_set_kernel_cache_size_validates():
    with pytest.raises(ValueError):
        torchlike.set_kernel_cache_size(0)


# --- torch's checks on bad input --------------------------------------------------------------------

BAD = {
    "tensor_uint8_300": lambda t: t.tensor(300, dtype=t.uint8),
    "tensor_int8_list": lambda t: t.tensor([1, 1000], dtype=t.int8),
    "tensor_int32_big": lambda t: t.tensor(2**40, dtype=t.int32),
    "tensor_int8_nan": lambda t: t.tensor(float("nan"), dtype=t.int8),
    "tensor_int64_2_63": lambda t: t.tensor(2**63, dtype=t.int64),
    "tensor_uint8_-300": lambda t: t.tensor([-300], dtype=t.uint8),
    "full_uint8": lambda t: t.full((2,), 300, dtype=t.uint8),
    "full_int8_float": lambda t: t.full((2,), 1000.0, dtype=t.int8),
    "full_half": lambda t: t.full((2,), 1e6, dtype=t.float16),
    "full_float_1e39": lambda t: t.full((2,), 1e39, dtype=t.float32),
    "fill_uint8": lambda t: t.zeros(2, dtype=t.uint8).fill_(300),
    "fill_int16": lambda t: t.zeros(2, dtype=t.int16).fill_(-40000),
    "fill_bf16": lambda t: t.zeros(2, dtype=t.bfloat16).fill_(1e39),
    "copy_overlap": lambda t: (lambda x: x[1:].copy_(x[:-1]))(t.arange(5.0)),
    "copy_overlap_back": lambda t: (lambda x: x[:-1].copy_(x[1:]))(t.arange(5.0)),
    "copy_transpose": lambda t: (lambda x: x.copy_(x.t()))(t.ones(3, 3)),
    "copy_into_expanded": lambda t: t.ones(3).expand(3, 3).copy_(t.ones(3, 3)),
    "add_overlap": lambda t: (lambda x: x[1:].add_(x[:-1]))(t.arange(5.0)),
    "setitem_overlap": lambda t: (lambda x: x.__setitem__(slice(1, None), x[:-1]))(t.arange(5.0)),
    "unbind_inplace": lambda t: t.ones(3, 2, requires_grad=True).clone().unbind(0)[1].add_(1),
    "unbind_leaf_inplace": lambda t: t.ones(3, 2, requires_grad=True).unbind(0)[0].mul_(2),
    "split_inplace": lambda t: t.ones(3, requires_grad=True).clone().split(1)[0].mul_(2),
    "split_sizes_inplace": lambda t: t.ones(3, requires_grad=True).clone().split([1, 2])[1].mul_(2),
    "chunk_inplace": lambda t: t.ones(4, requires_grad=True).clone().chunk(2)[1].zero_(),
    "unbind_select_setitem": lambda t: t.ones(3, 2, requires_grad=True).clone().unbind(0)[1].__setitem__(0, 5.0),
    "unbind_copy": lambda t: t.ones(3, 2, requires_grad=True).clone().unbind(0)[1].copy_(t.ones(2)),
    "to_dtype_str": lambda t: t.ones(2).to(dtype="float32"),
    "to_dtype_int": lambda t: t.ones(2).to(dtype=5),
    "to_device_dtype": lambda t: t.ones(2).to(device=t.float32),
    "to_str": lambda t: t.ones(2).to("float32"),
    "svd_nan": lambda t: t.linalg.svd(t.full((3, 3), float("nan"))),
    "svd_nan_batched": lambda t: t.linalg.svd(t.stack([t.eye(3), t.full((3, 3), float("nan"))])),
    "svdvals_nan": lambda t: t.linalg.svdvals(t.full((2, 2), float("nan"))),
    "svd_legacy_nan": lambda t: t.svd(t.full((2, 2), float("nan"))),
    "histc_inf": lambda t: t.histc(t.tensor([1.0, float("inf")]), bins=4),
    "histc_nan": lambda t: t.histc(t.tensor([1.0, float("nan")]), bins=4),
    "histc_inf_min": lambda t: t.histc(t.tensor([-float("inf"), 2.0]), bins=4),
    "histc_range_inf": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=4, min=0, max=float("inf")),
    "interpolate_negative": lambda t: t.nn.functional.interpolate(t.ones(1, 1, 4), scale_factor=-1),
    "interpolate_zero_2d": lambda t: t.nn.functional.interpolate(t.ones(1, 1, 4, 4), scale_factor=(0.1, 1)),
    "interpolate_size_0": lambda t: t.nn.functional.interpolate(t.ones(1, 1, 4, 4), size=(0, 2), mode="bilinear"),
    "interpolate_3d": lambda t: t.nn.functional.interpolate(t.ones(1, 1, 2, 2, 2), scale_factor=-1, mode="trilinear"),
}


def _backward_twice(t, make):
    x = t.ones(3, requires_grad=True)
    y = make(x)
    y.backward()
    y.backward()
    return x.grad


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_as_torch(name):
    check_raises(BAD[name])


OK = {
    "tensor_uint8_-1_wraps": lambda t: t.tensor([-1, 255], dtype=t.uint8),
    "tensor_half_inf": lambda t: t.tensor(1e6, dtype=t.float16),
    "full_inf": lambda t: t.full((2,), float("inf")),
    "copy_self": lambda t: (lambda x: x.copy_(x))(t.arange(5.0)),
    "copy_same_view": lambda t: (lambda x: x.view(5).copy_(x))(t.arange(5.0)),
    "copy_strided_disjoint": lambda t: (lambda x: x[::2].copy_(x[1::2]))(t.arange(8.0)),
    "copy_column_from_row": lambda t: (lambda x: x[:, 0].copy_(x[0, :]))(t.arange(9.0).reshape(3, 3)),
    "unbind_inplace_no_grad_base": lambda t: t.ones(3, 2).unbind(0)[1].add_(1),
    "tensor_split_inplace": lambda t: t.ones(3, requires_grad=True).clone().tensor_split(3)[2].mul_(2),
    "histc_nan_in_range": lambda t: t.histc(t.tensor([1.0, float("nan")]), bins=4, min=0, max=3),
    "svd_inf": lambda t: t.linalg.svdvals(t.tensor([[1.0, 0.0], [0.0, 2.0]])),
    "backward_twice_add": lambda t: _backward_twice(t, lambda x: (x + 1).sum()),
    "backward_twice_view": lambda t: _backward_twice(t, lambda x: x.view(3, 1).sum()),
}


@pytest.mark.parametrize("name", list(OK))
def test_good_input_matches_torch(name):
    check(lambda t: OK[name](t), [], grad=False)


def test_backward_twice_with_saved_tensors_raises_as_torch():
    check_raises(lambda t: _backward_twice(t, lambda x: (x * x).sum()))
    check_raises(lambda t: _backward_twice(t, lambda x: (x * 2).sum()))


# --- save() and load() ------------------------------------------------------------------------------


def _save_through_fifo(lib, path):
    os.mkfifo(path)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(path, "rb").read()))
    reader.start()
    lib.save({"w": lib.arange(3.0)}, path)
    reader.join(10)
    import io

    return os.path.exists(path) and not os.path.isfile(path), lib.load(io.BytesIO(got[0]))["w"]


def test_save_writes_through_a_fifo(tmp_path):
    ref = _save_through_fifo(torch, str(tmp_path / "t.fifo"))
    got = _save_through_fifo(torchlike, str(tmp_path / "l.fifo"))
    assert_same(ref, got)


def test_save_to_a_device_file():
    for lib in LIBS:
        lib.save({"w": lib.ones(2)}, os.devnull)
        assert not os.path.isfile(os.devnull)


def _save_through_symlink(lib, tmp_path, name):
    target = tmp_path / f"{name}.pt"
    link = tmp_path / f"{name}.link"
    lib.save(lib.zeros(2), str(target))
    os.symlink(target, link)
    lib.save(lib.ones(2), str(link))
    return os.path.islink(link), lib.load(str(target))


def test_save_through_a_symlink_writes_its_target(tmp_path):
    assert_same(_save_through_symlink(torch, tmp_path, "t"), _save_through_symlink(torchlike, tmp_path, "l"))


def test_save_removes_stale_temp_files_of_dead_saves(tmp_path):
    import socket
    import subprocess
    import sys

    from torchlike.serialization import _temp_prefix

    target = str(tmp_path / "ck.pt")
    prefix = _temp_prefix(target)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{prefix}{dead.stdout.strip()}.abc.tmp"
    live = tmp_path / f"{prefix}{os.getppid()}.abc.tmp"
    other = tmp_path / f".other.pt.{socket.gethostname()}.{dead.stdout.strip()}.abc.tmp"
    for p in (stale, live, other):
        p.write_bytes(b"partial")
    torchlike.save(torchlike.ones(2), target)
    assert not stale.exists() and live.exists() and other.exists()
    assert sorted(os.listdir(tmp_path)) == sorted(["ck.pt", live.name, other.name])


def test_failed_save_leaves_no_temp_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "ck.pt"
    torchlike.save(torchlike.ones(2), str(target))

    class Bad:
        def __reduce__(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        torchlike.save([torchlike.zeros(2), Bad()], str(target))
    assert os.listdir(tmp_path) == ["ck.pt"]
    assert torchlike.load(str(target)).tolist() == [1.0, 1.0]


def test_save_over_a_hard_link_is_atomic_and_warns(tmp_path):
    """Documented difference: torch overwrites a hard-linked file in place; torchlike replaces it."""
    target, other = tmp_path / "a.pt", tmp_path / "b.pt"
    torchlike.save(torchlike.zeros(2), str(target))
    os.link(target, other)
    with pytest.warns(UserWarning, match="hard links"):
        torchlike.save(torchlike.ones(2), str(target))
    assert torchlike.load(str(target)).tolist() == [1.0, 1.0]
    assert torchlike.load(str(other)).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("extra", ["other/evil", "../evil", "/abs/evil", "evil"])
def test_load_rejects_entries_outside_the_archive(tmp_path, extra):
    import shutil
    import zipfile

    path = str(tmp_path / "ck.pt")
    torch.save({"a": torch.ones(2)}, path)
    shutil.copy(path, path + ".bad")
    with zipfile.ZipFile(path + ".bad", "a") as z:
        z.writestr(extra, b"x")
    check_raises(lambda t: t.load(path + ".bad", weights_only=True))


@pytest.mark.parametrize("count", [2**62, -1, 2**40, 5])
def test_load_legacy_impossible_storage_size(count):
    import io
    import struct

    buf = io.BytesIO()
    torch.save({"a": torch.arange(4.0)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    pos = raw.rfind(struct.pack("<q", 4))
    bad = raw[:pos] + struct.pack("<q", count) + raw[pos + 8 :]
    check_raises(lambda t: t.load(io.BytesIO(bad), weights_only=True))

"""Edge cases found by torch's OpInfo database (compat_tests/opinfo_harness.py), each compared with torch:
broadcasting operands, empty and 0-sample inputs, integer dtypes, torch's gradient conventions, and the
names torch keeps for old Python."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import check, check_raises, per_node_backward  # noqa: F401 - per_node_backward is autouse

import torchlike

rng = np.random.RandomState(0)
X = rng.randn(3, 5).astype(np.float32)
ROW = rng.randn(5).astype(np.float32)
IMG = rng.randn(2, 3, 5, 5).astype(np.float32)
INTS = rng.randint(-9, 9, size=(2, 3, 6, 6)).astype(np.int64)
# (interpolation, padding, align_corners): bilinear/nearest with zeros/border/reflection padding
GRID_MODES = [(0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (1, 2, True)]
NEG = np.array([-8.4784, -1.7658, -4.3228, -2.4005, -7.9506, 3.6116, 0.5, -0.5], np.float32)

CASES = [
    ("complex_broadcast", lambda t, x, r: t.complex(x, r), [X, ROW]),
    ("div_trunc_int_broadcast", lambda t, a, b: t.div(a, b, rounding_mode="trunc"),
     [np.array([[7, -7, 9]]), np.array([[2], [-3]])]),  # fmt: skip
    ("sum_to_size_empty_target", lambda t, b: (b.sum_to_size(()), b.sum_to_size([])), [np.array(True)]),
    ("combinations_none", lambda t, x: (t.combinations(x[:1], r=2), t.combinations(x[:2], r=3)), [ROW]),
    ("geqrf_empty", lambda t, x: (t.geqrf(x[:, :0]), t.geqrf(x[:0])), [X]),
    ("pad_replicate_negative", lambda t, x: (
        t.nn.functional.pad(x, (-4, 5, 0, 0), mode="replicate"),
        t.nn.functional.pad(x, (8, -1, -1, -3), mode="replicate"),
        t.nn.functional.pad(x[0], (-2, 1), mode="replicate")), [IMG]),  # fmt: skip
    ("max_pool_int", lambda t, i: (t.nn.functional.max_pool2d(i, 3, 2, padding=1),
                                   t.nn.functional.max_pool2d(i[0], 2, ceil_mode=True),
                                   t.nn.functional.max_pool3d(i, 2, return_indices=True)), [INTS]),  # fmt: skip
    ("pool_zero_batch", lambda t, x: (t.nn.functional.avg_pool1d(x[:0, :, 0], 3, 2, 1),
                                      t.nn.functional.max_pool2d(x[:0], 2),
                                      t.nn.functional.lp_pool2d(x[:0], 2, 2),
                                      t.nn.functional.avg_pool3d(x[:0, None], 2)), [IMG]),  # fmt: skip
    ("batch_norm_empty", lambda t, x: (t.nn.functional.batch_norm(x[0, 0, 0, :0], t.zeros(0), t.ones(0), training=True),
                                       t.nn.functional.batch_norm(x[0, 0, 0, :0], t.zeros(0), t.ones(0))), [IMG]),  # fmt: skip
    ("margin_ranking_int", lambda t, a, b, y: [t.nn.functional.margin_ranking_loss(a, b, y, margin=m, reduction=r)
                                               for m in (0.0, 1.0) for r in ("none", "mean", "sum")],
     [np.array([-8, 3]), np.array([6, 1]), np.array([9, -2])]),  # fmt: skip
    ("triplet_margin_int", lambda t, a, p, n: (t.nn.functional.triplet_margin_loss(a, p, n),
                                               t.nn.functional.triplet_margin_loss(a, p, n, swap=True, p=1)),
     [INTS[0, 0], INTS[0, 1], INTS[0, 2]]),  # fmt: skip
    ("cosine_embedding_int_bool", lambda t, a, b, y: (
        t.nn.functional.cosine_embedding_loss(a, b, y, margin=0.93, reduction="none"),
        t.nn.functional.cosine_embedding_loss(a > 0, b > 0, y > 0, margin=0.5)),
     [INTS[0, 0], INTS[0, 1], np.array([1, -1, 1, -1, 1, 1])]),  # fmt: skip
    ("poisson_nll_int", lambda t, a, y: [t.nn.functional.poisson_nll_loss(a, y, log_input=li, full=f, reduction="none")
                                         for li in (True, False) for f in (True, False)],
     [np.array([-8, 6, 9, 0, 1]), np.array([3, 1, 4, 2, 3])]),  # fmt: skip
    ("linear_cross_entropy", lambda t, x, w, b: (
        t.nn.functional.linear_cross_entropy(x, w, t.tensor([1, 0, 3])),
        t.nn.functional.linear_cross_entropy(x, w, t.tensor([1, 0, 3]), linear_bias=b, reduction="none",
                                             ignore_index=0, label_smoothing=0.1),
        t.nn.functional.linear_cross_entropy(x[0], w, t.tensor(2), weight=b.abs().detach(), reduction="sum"),
        t.nn.functional.linear_cross_entropy(x, w.reshape(2, 2, 5), t.tensor([[1, 0], [0, 0], [1, 1]]))),
     [X, rng.randn(4, 5).astype(np.float32), rng.randn(4).astype(np.float32)]),  # fmt: skip
    ("rdiv_div_idiv", lambda t, x: (x.__rdiv__(3.0), x.__div__(2.0), (x * 1).__idiv__(4.0),
                                    t.tensor([2, 4]).__rdiv__(3)), [ROW]),  # fmt: skip
    ("polygamma_negative", lambda t, x: [t.polygamma(n, x) for n in (0, 1, 2, 3)], [NEG]),
    ("zeta_negative_q", lambda t, s, q: t.special.zeta(s, q),
     [np.array([3.0, 3.0, 2.5, 4.0, 1.0, 3.0, 0.0, -8.0, 0.5, 1.0], np.float32),
      np.array([-8.4784, -0.5, -0.5, -3.2, -2.5, -100.5, 0.0, 0.0, 1.0, 2.0], np.float32)]),  # fmt: skip
    ("take_along_dim_negative", lambda t, x: (t.take_along_dim(x, t.tensor([[-1, 0, -5]]), 1),
                                              t.take_along_dim(x, t.tensor([[-3], [2]]), 0)), [X]),  # fmt: skip
    ("gather_scatter_empty_index", lambda t, x: (
        t.gather(x, 0, t.zeros(2, 0, dtype=t.uint8)), t.scatter(x, 0, t.zeros(2, 0, dtype=t.uint8), x),
        t.scatter_add(x, 0, t.zeros(0, dtype=t.int64), x),
        t.scatter_reduce(x, 0, t.zeros(2, 0, 3, dtype=t.int64), x, "sum")), [ROW]),  # fmt: skip
    ("scatter_reduce_bool", lambda t, x, s: [t.scatter_reduce(x, 0, t.tensor([0, 0, 1, 2, 4]), s, r, include_self=i)
                                             for r in ("sum", "prod", "amax", "amin") for i in (True, False)],
     [np.array([True, False, False, True, False]), np.array([False, False, True, True, True])]),  # fmt: skip
    ("grid_sampler_2d", lambda t, x, g: [t.grid_sampler_2d(x, g, *how) for how in GRID_MODES],
     [IMG, rng.uniform(-1.2, 1.2, size=(2, 4, 3, 2)).astype(np.float32)]),  # fmt: skip
    ("grid_sampler_3d", lambda t, x, g: [t.grid_sampler_3d(x, g, *how) for how in GRID_MODES]
                                        + [t.nn.functional.grid_sample(x, g, align_corners=False)],
     [rng.randn(2, 3, 4, 5, 3).astype(np.float32), rng.uniform(-1.2, 1.2, size=(2, 3, 2, 4, 3)).astype(np.float32)]),
    ("hash_tensor", lambda t, x, i, b: (t.hash_tensor(x), t.hash_tensor(x, 0), t.hash_tensor(x, [0, 1], keepdim=True),
                                        x.hash_tensor(1), t.hash_tensor(i, 1), t.hash_tensor(b),
                                        t.hash_tensor(x[:0], 1)), [X, INTS[0, 0], X > 0]),  # fmt: skip
    ("linalg_empty_matrices", lambda t, x: (t.linalg.inv(x[:0, :0]), t.linalg.inv_ex(x[:2, :0, None][..., :0]),
                                            t.linalg.det(x[:0, :0]), t.linalg.det(x[:2, :0, None][..., :0]),
                                            t.linalg.householder_product(x[:0, :0], x[0, :0]),
                                            t.linalg.householder_product(x.T, x[0, :0])), [X]),  # fmt: skip
    ("tensor_tolerances", lambda t, a: (t.linalg.pinv(a, rtol=t.tensor([1.0, 0.1])),
                                        t.linalg.pinv(a, atol=t.tensor(0.5), rtol=0.1),
                                        t.linalg.pinv(a[0] @ a[0].mT, atol=t.tensor(0.5), hermitian=True),
                                        t.linalg.matrix_rank(a, atol=t.tensor([2.0, 0.5]))),
     [rng.randn(2, 3, 4).astype(np.float32)]),  # fmt: skip
    ("pinv_lstsq_orthogonal_grad", lambda t, q, b: (t.linalg.pinv(q), t.linalg.lstsq(q, b).solution,
                                                    t.linalg.lstsq(q[:, :3], b, driver="gelsd").solution,
                                                    t.linalg.pinv(q[:3, :3] + q[:3, :3].mT, hermitian=True)),
     [np.linalg.qr(rng.randn(4, 4))[0].astype(np.float32), rng.randn(4, 2).astype(np.float32)]),  # fmt: skip
    ("tensordot_size1_contracted", lambda t, a, b: (t.tensordot(a, b, dims=([0, 1], [2, 0])),
                                                    t.tensordot(b, a, dims=([2], [1]))),
     [rng.randn(1, 1, 1).astype(np.float32), rng.randn(2, 1, 2).astype(np.float32)]),  # fmt: skip
]

# no gradient to compare: integer or bool results, torch has no derivative (zeta's input), or torch's backward of
# an empty scatter_reduce index raises
NO_GRAD = {"geqrf_empty", "hash_tensor", "scatter_reduce_bool", "sum_to_size_empty_target", "zeta_negative_q",
           "gather_scatter_empty_index"}


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_edge(name, fn, inputs):
    check(fn, inputs, grad=name not in NO_GRAD, rtol=1e-4, atol=1e-5)


def test_combinations_none_keeps_graph():
    names = []
    for lib in (torch, torchlike):
        x = lib.tensor([0.5], requires_grad=True)
        names.append(lib.combinations(x, r=2).grad_fn.name())
    assert names[0] == names[1] == "StackBackward0"


def test_max_unpool_grad_repeated_indices():
    """Every input reaches the output gradient at its index, also where indices repeat."""
    x = np.array([[[4.0, 4.0, 1.0]]], np.float32)
    idx = np.array([[[2, 2, 0]]])
    check(lambda t, v, i: t.nn.functional.max_unpool1d(v, i, 2), [x, idx])
    x2 = rng.randn(1, 1, 2, 2).astype(np.float32)
    idx2 = np.array([[[[3, 3], [0, 3]]]])
    check(lambda t, v, i: t.nn.functional.max_unpool2d(v, i, 2), [x2, idx2])


ERRORS = [
    ("avg_pool1d_no_channels", lambda t, x: t.nn.functional.avg_pool1d(x[:, :0, 0], 2)),
    ("avg_pool1d_unbatched_empty", lambda t, x: t.nn.functional.avg_pool1d(x[0, :0, 0], 2)),
    ("max_pool1d_no_channels", lambda t, x: t.nn.functional.max_pool1d(x[:, :0, 0], 2)),
    ("max_pool2d_no_channels", lambda t, x: t.nn.functional.max_pool2d(x[:, :0], 2)),
    ("avg_pool2d_empty_height", lambda t, x: t.nn.functional.avg_pool2d(x[:, :, :0], 2)),
    ("avg_pool3d_no_channels", lambda t, x: t.nn.functional.avg_pool3d(x[:, None, :0], 2)),
    ("max_pool3d_no_channels", lambda t, x: t.nn.functional.max_pool3d(x[:, None, :0], 2)),
    ("max_pool1d_int", lambda t, x: t.nn.functional.max_pool1d(x[0].long(), 2)),
    ("hash_tensor_empty_all", lambda t, x: t.hash_tensor(x[:0])),
    ("hash_tensor_empty_dim", lambda t, x: t.hash_tensor(x[:0], 0)),
    ("hash_tensor_mode", lambda t, x: t.hash_tensor(x, mode=1)),
    ("linear_cross_entropy_bias_shape", lambda t, x: t.nn.functional.linear_cross_entropy(
        x[0, 0], x[0, 0, :2], t.tensor([0, 1, 0, 1, 0]), linear_bias=x[0, 0, 0, :3])),
    ("linear_cross_entropy_unbatched_kdim", lambda t, x: t.nn.functional.linear_cross_entropy(
        x[0, 0, 0], x[0, :, :2], t.tensor(0))),
    ("max_pool1d_bool_indices", lambda t, x: t.nn.functional.max_pool1d(x[0] > 0, 2, return_indices=True)),
    ("max_pool3d_bool", lambda t, x: t.nn.functional.max_pool3d(x > 0, 2)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(name, fn):
    check_raises(fn, [IMG])


def test_random_draws_on_graph():
    """normal(Tensor...) and bernoulli(Tensor) are differentiable with torch's zero gradient and node names."""
    got = []
    for lib in (torch, torchlike):
        lib.manual_seed(0)
        m = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        s = lib.tensor([1.0, 0.5, 3.0], requires_grad=True)
        p = lib.tensor([0.1, 0.9, 0.5], requires_grad=True)
        outs = [lib.normal(m, 2.0), lib.normal(1.0, s), lib.normal(m, s), lib.bernoulli(p)]
        names = [o.grad_fn.name() for o in outs]
        grads = lib.autograd.grad(sum(o.sum() for o in outs), [m, s, p])
        with lib.no_grad():
            detached = lib.normal(m, s).requires_grad
        got.append((names, [o.detach().numpy() for o in outs], [g.numpy() for g in grads], detached))
    (n1, v1, g1, d1), (n2, v2, g2, d2) = got
    assert n1 == n2 == ["NormalBackward1", "NormalBackward2", "NormalBackward3", "BernoulliBackward0"]
    for a, b in zip(v1 + g1, v2 + g2):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
    assert d1 is d2 is False


def test_opinfo_harness_converts_stateless_module_arguments():
    """A parameterless torch module passed as an argument (nn.PairwiseDistance as a distance function)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import opinfo_harness as H

    ref = torch.nn.PairwiseDistance(p=1.0, keepdim=True)
    got = H._to_torchlike(ref, [])
    assert type(got) is torchlike.nn.PairwiseDistance
    assert (got.norm, got.keepdim, got.eps) == (ref.norm, ref.keepdim, ref.eps)
    a, b = rng.randn(3, 4).astype(np.float32), rng.randn(3, 4).astype(np.float32)
    np.testing.assert_allclose(got(torchlike.tensor(a), torchlike.tensor(b)).numpy(),
                               ref(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-6)  # fmt: skip
    with pytest.raises(NotImplementedError):
        H._to_torchlike(torch.nn.Linear(2, 2), [])


def test_opinfo_harness_skip_list():
    """Only op_db entries outside torch's Python API are skipped: aten operators, torch._* functions and CUDA
    jiterator kernels; public functions and Tensor dunders are counted."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import opinfo_harness as H

    ops = {o.name: o for o in H.select_ops("slice,_chunk_cat,jiterator_unary,add,__rdiv__,nn.functional.pad,"
                                           "max_pool2d_with_indices_backward,cauchy")}  # fmt: skip
    assert "aten operator" in H.internal_reason(ops["slice"])
    assert "aten operator" in H.internal_reason(ops["max_pool2d_with_indices_backward"])
    assert "private" in H.internal_reason(ops["_chunk_cat"])
    assert "jiterator" in H.internal_reason(ops["jiterator_unary"])
    for name in ("add", "__rdiv__", "nn.functional.pad", "cauchy"):
        assert H.internal_reason(ops[name]) is None, name

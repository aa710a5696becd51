"""torch.masked against torch: values, dtypes, gradients and errors, with full, broadcast, non-bool and
fully-masked-out masks."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check, check_raises, compare

rng = np.random.RandomState(0)
X = rng.randn(3, 4).astype(np.float32)
X[0, 1] = X[0, 3]  # a tie, for amax/amin/argmax gradients and indices
X64 = rng.randn(2, 3, 4)
XI = rng.randint(-5, 6, size=(3, 4)).astype(np.int64)
M = rng.rand(3, 4) > 0.4
M[1] = False  # a fully masked-out row
M[2] = True
M_ROW = np.array([True, False, True, True])  # broadcast over rows
M_INT = M.astype(np.int64)  # any dtype, converted to bool

REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var", "std"]
REDUCE_KW = [{}, {"dim": 1}, {"dim": (0, -1), "keepdim": True}]


def _masked(name, **kw):
    def fn(t, x, m=None):
        return getattr(t.masked, name)(x, **kw, mask=m)

    return fn


@pytest.mark.parametrize("kw", REDUCE_KW, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(name, kw):
    compare(_masked(name, **kw), [X, M])


@pytest.mark.parametrize("name", REDUCTIONS + ["norm", "argmax", "argmin", "median"])
def test_reductions_broadcast_nonbool_and_no_mask(name):
    kw = {} if name in ("argmax", "argmin", "median") else {"dim": 1}
    compare(_masked(name, **kw), [X, M_ROW])
    compare(_masked(name, **kw), [X, M_INT])
    compare(_masked(name, **kw), [X])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": 1, "dtype": "int64"}], ids=str)
def test_argmax_argmin(name, kw):
    # torch: the index comes back in the input's dtype unless dtype is given
    def fn(t, x, m):
        k = dict(kw, dtype=getattr(t, kw["dtype"])) if "dtype" in kw else kw
        return getattr(t.masked, name)(x, **k, mask=m)

    check(fn, [X, M], grad=False)
    check(fn, [XI, M], grad=False)


@pytest.mark.parametrize("kw", [{"ord": 2.0}, {"ord": 1, "dim": 1}, {"ord": float("inf"), "dim": 0},
                                {"ord": float("-inf"), "dim": 1}, {"ord": 0, "dim": 1, "keepdim": True}], ids=str)  # fmt: skip
def test_norm(kw):
    # NOTE: torch leaves .grad None for ord=0 (an undefined gradient); torchlike's vector_norm gives zeros
    compare(_masked("norm", **kw), [X, M], grad=kw["ord"] != 0)


@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": 1, "keepdim": True}], ids=str)
def test_median(kw):
    check(_masked("median", **kw), [X, M])
    check(_masked("median", **{**kw, "dim": 1}), [XI, M_ROW], grad=False)


@pytest.mark.parametrize("kw", [{"unbiased": False}, {"correction": 0}, {"correction": 2, "dim": 1},
                                {"dim": 1, "keepdim": True, "unbiased": True}], ids=str)  # fmt: skip
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_corrections(name, kw):
    compare(_masked(name, **kw), [X, M])


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalisations(name, dim):
    compare(_masked(name, dim=dim), [X, M])
    compare(_masked(name, dim=dim), [X, M_ROW])


@pytest.mark.parametrize("kw", [{"ord": 2.0, "dim": 1}, {"ord": 1, "dim": 0}, {"ord": float("inf"), "dim": 1, "eps": 0.5}],
                         ids=str)  # fmt: skip
def test_normalize(kw):
    compare(_masked("normalize", **kw), [X, M])
    compare(_masked("normalize", **kw), [X])


def test_logaddexp():
    check(lambda t, x, y, m: t.masked.logaddexp(x, y, input_mask=m, other_mask=~m), [X, X[::-1].copy(), M])
    check(lambda t, x, y, m: t.masked.logaddexp(x, y, input_mask=m), [X, X[::-1].copy(), M])
    # float32 results widened to float64: compared at float32's tolerance
    check(lambda t, x, y: t.masked.logaddexp(x, y, dtype=t.float64), [X, X[::-1].copy()], rtol=1e-6, atol=1e-6)


def test_dtypes():
    ints = [XI, M]
    check(lambda t, x, m: (t.masked.sum(x, mask=m), t.masked.prod(x, 1, mask=m)), [XI.astype(np.int32), M], grad=False)
    check(lambda t, x, m: t.masked.sum(x, 1, mask=m), [M.astype(np.uint8), M], grad=False)
    check(lambda t, x, m: (t.masked.amax(x, 1, mask=m), t.masked.amin(x, 0, mask=m)), ints, grad=False)
    check(lambda t, x, m: t.masked.amax(x, 1, mask=m), [XI.astype(np.uint8), M], grad=False)
    check(lambda t, x, m: (t.masked.cumsum(x, 1, mask=m), t.masked.cumprod(x, 0, mask=m)), ints, grad=False)
    check(lambda t, x, m: (t.masked.var(x, 1, mask=m), t.masked.std(x, mask=m)), ints, grad=False)
    check(lambda t, x, m: t.masked.logsumexp(x, 1, mask=m), ints, grad=False)
    check(lambda t, x, m: t.masked.sum(x, 1, dtype=t.float64, mask=m), [X, M])
    check(lambda t, x, m: t.masked.mean(x, 0, dtype=t.float64, mask=m), [XI, M], grad=False)
    check(lambda t, x, m: t.masked.softmax(x, 1, dtype=t.float64, mask=m), [X, M])
    check(lambda t, x, m: t.masked.var(x, (0, 2), mask=m), [X64, M])


def test_zero_dim_and_three_dim():
    check(lambda t, x, m: (t.masked.sum(x, mask=m), t.masked.amax(x, mask=m), t.masked.mean(x, mask=m)),
          [np.array(1.5, np.float32), np.array(True)])  # fmt: skip
    # NOTE: a fully masked-out 0-dim softmax is nan in torch, 1 in torchlike (_ops.nn.activation's 0-dim shortcut)
    check(lambda t, x, m: t.masked.softmax(x, -1, mask=m), [np.ones((), np.float32), np.array(True)])
    m3 = rng.rand(2, 3, 4) > 0.5
    check(lambda t, x, m: (t.masked.sum(x, (0, 2), mask=m), t.masked.mean(x, (2, 0), keepdim=True, mask=m)), [X64, m3])
    check(lambda t, x, m: t.masked.norm(x, 2, (1, 2), mask=m), [X64, m3])


def test_errors():
    check_raises(lambda t, x, m: t.masked.sum(x, (1, 1), mask=m), [X, M])
    check_raises(lambda t, x, m: t.masked.sum(x, 2, mask=m), [X, M])
    check_raises(lambda t, x, m: t.masked.amax(x, -3, mask=m), [X, M])
    check_raises(lambda t, x, m: t.masked.sum(x, 0, mask=m), [X, M[None]])
    check_raises(lambda t, x, m: t.masked.sum(x, 0, mask=m), [X, M[:, :3]], match_message=False)
    check_raises(lambda t, x, m: t.masked.mean(x, mask=m), [XI, M])
    check_raises(lambda t, x, m: t.masked.mean(x, dtype=t.int32, mask=m), [X, M])
    check_raises(lambda t, x, m: t.masked.median(x, 1, mask=m), [XI, M])
    check_raises(lambda t, x, m: t.masked.amax(x, mask=m), [M, M])
    check_raises(lambda t, x, m: t.masked.var(x, unbiased=True, correction=1, mask=m), [X, M])
    check_raises(lambda t, x, m: t.masked.norm(x, float("-inf"), mask=m), [XI, M])
    check_raises(lambda t, x, m: t.masked.softmax(x, 2, mask=m), [X, M])


def test_namespace():
    import torch

    import torchlike

    funcs = set(torch.masked.__all__) - {"MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor"}
    assert funcs <= set(torchlike.masked.__all__)
    with pytest.raises(AttributeError, match="torchlike does not provide torch.masked.MaskedTensor yet"):
        torchlike.masked.MaskedTensor  # noqa: B018

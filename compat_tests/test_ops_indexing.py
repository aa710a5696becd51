"""Indexing against torch: __getitem__/__setitem__ (basic, advanced, masks, mixes), index_*/gather/scatter
families, masked ops, and the value-dependent ops (nonzero, unique, bincount, histc, searchsorted)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _harness import check, check_raises

rng = np.random.RandomState(0)
X = rng.randn(2, 3, 4)
A = rng.randn(3, 4)
V = rng.randn(5)
I = np.arange(24).reshape(2, 3, 4)


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _quiet(fn):
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)

    return run


# --- __getitem__ -------------------------------------------------------------------------------------

GET = [
    "[0]", "[-1]", "[:, 1]", "[..., 2]", "[None]", "[:, None, 1:3]", "[1:]", "[::2]", "[:, ::2, 1::2]", "[:, -7:-1]",
    "[1:2, 0, None, 2:0]", "[0, 1, 2]", "[...]", "[()]", "[:, :]", "[[1, 0]]", "[[1, 0], [2, 1]]",
    "[:, [1, 0], [2, 3]]", "[:, [1, 0], :, None]", "[[0, 1], :, [1, 2]]", "[0, :, [1, 2]]", "[[0, 1], 1]",
    "[..., [1, 2]]", "[None, [1], None, 1]", "[x > 0.5]", "[x[..., 0] > 0]", "[:, x[0, :, 0] > 0]",
    "[1, x[0, :, 0] > 0]", "[x[:, 0, 0] > 0, 1]", "[[[0], [1]], [[0, 1, 2]]]", "[t.tensor([1, 0])]",
    "[t.tensor([[1], [0]]), 1:, t.tensor([0, 1])]", "[True]", "[False]", "[True, [0, 1]]", "[[0, 1], :, True]",
    "[None, ..., None]", "[t.tensor(1)]", "[:, t.tensor(2)]", "[t.tensor(True)]", "[t.tensor(False), 1]",
    "[t.tensor([True, False])]", "[[True, False]]", "[t.tensor([1, 0], dtype=t.int32)]", "[np.array([1, 0])]",
    "[np.int64(1)]", "[t.tensor([], dtype=t.long)]", "[[]]", "[[0, 1], ...]", "[..., 1, ...]", "[[0, -1, 0]]",
    "[[1, slice(None)]]", "[(0, 1)]", "[[0, 1],]", "[:, :, t.tensor([[0, 1], [2, 3]])]",
]  # fmt: skip


@pytest.mark.parametrize("key", GET)
def test_getitem(key):
    def fn(t, x):
        out = eval("x" + key, {"x": x, "t": t, "np": np})
        return out, _name(out), out.is_contiguous(), out.stride() if out._base is not None else None

    check(_quiet(fn), [X], grad=key in ("[:, [1, 0], [2, 3]]", "[x > 0.5]", "[1:2, 0, None, 2:0]", "[[0, 1], [1, 0]]"))


def test_getitem_int_and_bool_tensors():
    check(_quiet(lambda t, i: (i[i > 5], i[:, [2, 0]], i[1, ..., [0, 3]], i[t.tensor([[1]])], i[i[:, 0, 0] > 0],
                               (i > 3)[0, [1, 2]], (i > 3)[i > 10])), [I])  # fmt: skip


GET_ERRORS = [
    "[2]", "[0, 3]", "[None, 0, 7]", "[..., 9]", "[0, ..., 9]", "[:, :, :, 0]", "[::-1]", "[:, ::-2]", "[::0]", "[[2]]",
    "[0, [0, 5]]", "[[0, 1], [0, 3]]", "[:, :, [4]]", "[:, [0, 1], [0, 7]]", "[1.5]", "[t.tensor([1.0])]",
    "[t.tensor(1.0)]", "[x > 0, 1, 1]", "[t.tensor([True, False, True])]", "['a']", "[[0, 1], [0, 1, 2]]",
    "[:, :, -5]", "[t.tensor([[True]])]", "[x[0, 0] > 0]", "[0, 0, 0, 0]", "[{1: 2}]", "[t.tensor([-3])]",
    "[t.tensor(5)]", "[[0, -3]]",
]  # fmt: skip


@pytest.mark.parametrize("key", GET_ERRORS)
def test_getitem_errors(key):
    check_raises(_quiet(lambda t, x: eval("x" + key, {"x": x, "t": t})), [X])


def test_non_tuple_sequence_warns():
    import torch

    import torchlike

    for lib in (torch, torchlike):
        x = lib.zeros(2, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert tuple(x[[0, slice(None)]].shape) == (3,)
        assert any("non-tuple sequence" in str(m.message) for m in w), lib


# --- __setitem__ -------------------------------------------------------------------------------------

SET = [
    ("[0]", "5."), ("[:, 1]", "0"), ("[..., ::2]", "t.tensor([1., 2.], dtype=t.float64)"), ("[[1, 0]]", "-1"),
    ("[[0, 1], [1, 2]]", "t.tensor([9., 8., 7., 6.], dtype=t.float64)"), ("[x > 0.5]", "-1."),
    ("[x > 0.5]", "t.tensor([7.], dtype=t.float32)"), ("[:, [0, 2], 1:3]", "t.ones(2, 2, 1, dtype=t.float64)"),
    ("[0, :, [1, 2]]", "t.ones(1, 3, 2, dtype=t.float64)"), ("[None, 0]", "t.tensor(3)"), ("[True]", "2."),
    ("[False]", "2."), ("[...]", "t.tensor([1., 2., 3., 4.])"), ("[...]", "3"), ("[:]", "3"), ("[1, 2, 3]", "t.tensor(7.5)"),
    ("[:, x[0, :, 0] > 0]", "t.tensor([1., 2., 3., 4.], dtype=t.float64)"), ("[0]", "t.tensor([[1], [2], [3]])"),
    ("[1:, 1:, 1:]", "t.ones(1, 1, 1, 1, 3)"), ("[[0, 0], [1, 1]]", "t.arange(8.).reshape(2, 4).double()"),
    ("[t.tensor(1)]", "3."), ("[t.tensor(True)]", "3."), ("[0, 0]", "np.float64(2.5)"), ("[0, 0]", "np.int64(2)"),
    ("[:, 1]", "[1, 2, 3, 4]"), ("[0, 0]", "np.array([1., 2., 3., 4.])"), ("[0]", "None"), ("[:, 1]", "t.ones(3)"),
    ("[[0, 1]]", "t.ones(2, 2)"), ("[x > 0.5]", "t.ones(3)"), ("[0]", "t.ones(2, 3, 4)"), ("[5]", "1."),
    ("[[5]]", "1."), ("[0]", "'a'"), ("[:, :, [0, 9]]", "0"), ("[[0, 1]]", "t.ones(3, 4)"), ("[::-1]", "1."),
]  # fmt: skip


def _set(key, value, dtype, grad):
    def fn(t, x):
        if grad:
            x = x * 1
        else:
            x = x.detach().clone()
        if dtype:
            x = x.to(getattr(t, dtype))
        exec("x" + key + " = " + value, {"x": x, "t": t, "np": np})
        return (x, _name(x)) if grad else x

    return fn


def _torch_raises(fn, inputs):
    import torch

    try:
        _quiet(fn)(torch, *[torch.tensor(x) for x in inputs])
    except Exception:  # noqa: BLE001 - any exception means the case is an error case
        return True
    return False


# every key on float tensors; gradients and integer casting on the first ones (each case compiles kernels)
SET_CASES = [("float", k, v) for k, v in SET] + [(m, k, v) for m in ("grad", "int") for k, v in SET[:14]]


@pytest.mark.parametrize("mode,key,value", SET_CASES, ids=[f"{m}-{k}={v}" for m, k, v in SET_CASES])
def test_setitem(mode, key, value):
    fn = _set(key, value, "int64" if mode == "int" else None, mode == "grad")
    if _torch_raises(fn, [X]):
        check_raises(_quiet(fn), [X])
    else:
        check(_quiet(fn), [X], grad=mode == "grad")


def test_setitem_value_gradients_and_names():
    def fn(t, x, a):
        b = t.zeros(2, 3, 4, dtype=t.float64)
        b[:, 1] = a[0] * 2
        b[[0, 1], 0, [1, 1]] = a[1, :2]
        b[b > 100] = a[2, 0]
        c = x * 1
        c[...] = a[0, 0]
        d = x * 1
        d[:] = x.flip(0)
        return b, c, d, _name(b), _name(c), _name(d)

    check(fn, [X, A])


SCALAR_RANGE = [("int8", "300"), ("int8", "1e20"), ("int8", "float('nan')"), ("uint8", "-1"), ("uint8", "-256"),
                ("int32", "2**31"), ("float32", "1e300"), ("float16", "1e300"), ("bool", "2.5"), ("int64", "2**70"),
                ("int16", "1+2j"), ("float64", "1+0j"), ("int64", "-2.7")]  # fmt: skip


@pytest.mark.parametrize("dtype,value", SCALAR_RANGE)
def test_setitem_scalar_conversion(dtype, value):
    fn = _set("[0]", value, dtype, False)
    if _torch_raises(fn, [V]):
        check_raises(fn, [V])
    else:
        check(fn, [V], grad=False)


def test_setitem_leaf_errors():
    check_raises(lambda t, x: x.requires_grad_().__setitem__(0, 1.0), [X])
    check_raises(lambda t, x: x.requires_grad_().__setitem__((Ellipsis,), 1.0), [X])
    check_raises(lambda t, x: x.requires_grad_().__setitem__([0], 1.0), [X])


# --- index_* ---------------------------------------------------------------------------------------

J = np.array([2, 0])
OPS = [
    (
        "index_select",
        lambda t, a, j: (
            t.index_select(a, 0, j),
            a.index_select(1, j),
            a.t().index_select(0, j),
            _name(a.index_select(0, j)),
        ),
        [A, J],
        True,
    ),  # fmt: skip
    ("index_select_0d", lambda t, a, j: t.tensor(2.0, dtype=t.float64).index_select(0, j[:1] * 0), [A, J], False),
    (
        "index_add",
        lambda t, a, j: (
            a.index_add(0, j, a[:2]),
            t.index_add(a, 1, j, a[:, :2], alpha=2),
            _name(a.index_add(0, j, a[:2])),
        ),
        [A, J],
        True,
    ),  # fmt: skip
    ("index_add_dup", lambda t, a: a.index_add(0, t.tensor([1, 1, 1]), a), [A], True),
    (
        "index_copy",
        lambda t, a, j: (
            a.index_copy(0, j, a[:2] * 2),
            t.index_copy(a, 1, j, a[:, 2:]),
            _name(a.index_copy(0, j, a[:2])),
        ),
        [A, J],
        True,
    ),  # fmt: skip
    (
        "index_fill",
        lambda t, a, j: (
            a.index_fill(1, j, -1.0),
            t.index_fill(a, 0, j, t.tensor(3.0, dtype=t.float64)),
            _name(a.index_fill(1, j, 0.0)),
        ),
        [A, J],
        True,
    ),  # fmt: skip
    (
        "index_put",
        lambda t, a, j: (
            a.index_put((j,), a[0]),
            a.index_put((j, j), t.tensor(5.0, dtype=t.float64)),
            t.index_put(a, (j,), a[:2], accumulate=True),
            a.index_put((t.tensor([1, 1]),), a[:2], accumulate=True),
            _name(a.index_put((j,), a[0])),
        ),
        [A, J],
        True,
    ),  # fmt: skip
    ("index_put_mask", lambda t, a: a.index_put((a > 0,), t.tensor(0.0, dtype=t.float64)), [A], True),
    (
        "gather",
        lambda t, a: (
            t.gather(a, 1, t.tensor([[0, 0], [1, 0], [3, 2]])),
            a.gather(0, t.tensor([[2, 1, 0, 1]], dtype=t.int32)),
            a.t().gather(1, t.tensor([[0], [2], [1], [1]])),
            _name(a.gather(1, t.tensor([[0]]))),
        ),
        [A],
        True,
    ),  # fmt: skip
    ("gather_0d", lambda t: t.tensor(3.0).gather(0, t.tensor(0)), [], False),
    (
        "scatter_src",
        lambda t, a: (
            a.scatter(1, t.tensor([[0, 1], [2, 3], [1, 0]]), a[:, :2] * 10),
            t.scatter(a, 0, t.tensor([[2, 0, 1, 1]]), a[:1]),
            _name(a.scatter(1, t.tensor([[0]]), a)),
        ),
        [A],
        True,
    ),  # fmt: skip
    (
        "scatter_value",
        lambda t, a: (
            a.scatter(1, t.tensor([[0], [3], [1]]), 5.0),
            t.scatter(a, 0, t.tensor([[1, 2]]), value=-2),
            _name(a.scatter(1, t.tensor([[0]]), 1.0)),
        ),
        [A],
        True,
    ),  # fmt: skip
    (
        "scatter_reduce_arg",
        lambda t, a: (
            a.scatter(1, t.tensor([[0, 0], [1, 1], [2, 2]]), a, reduce="add"),
            a.scatter(1, t.tensor([[0], [1], [2]]), 2.0, reduce="multiply"),
        ),
        [A],
        False,
    ),  # fmt: skip
    (
        "scatter_add",
        lambda t, a: (
            a.scatter_add(1, t.tensor([[0, 0], [1, 1], [3, 0]]), a[:, :2]),
            t.scatter_add(a, 0, t.tensor([[1, 1, 1, 1]]), a[1:2]),
            _name(a.scatter_add(0, t.tensor([[0]]), a)),
        ),
        [A],
        True,
    ),  # fmt: skip
    (
        "index_int",
        lambda t, i: (
            i.index_select(2, t.tensor([3, 1])),
            i.gather(2, t.tensor([[[1]]])),
            i.scatter_add(2, t.tensor([[[0, 0]]]), i),
            i.index_add(1, t.tensor([0]), i[:, :1], alpha=3),
            i.index_fill(0, t.tensor([1]), 7),
            i.scatter(2, t.tensor([[[0]]]), 9),
        ),
        [I],
        False,
    ),  # fmt: skip
]


@pytest.mark.parametrize("name,fn,inputs,grad", OPS, ids=[o[0] for o in OPS])
def test_index_ops(name, fn, inputs, grad):
    check(fn, inputs, grad=grad)


IDX = np.array([[0, 1, 0, 1], [2, 2, 2, 0], [0, 0, 1, 1]])
SR = np.array([[1.0, 2.0, 0.0, 3.0], [4.0, -1.0, 0.0, 0.0], [2.0, 2.0, 5.0, 1.0]])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    check(lambda t, a, s, i: (a.scatter_reduce(1, i, s, reduce, include_self=include_self),
                              _name(a.scatter_reduce(1, i, s, reduce))), [SR[:, :3].copy(), SR, IDX])  # fmt: skip


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce):
    check(lambda t, a, s: (a.index_reduce(0, t.tensor([0, 2, 0]), s, reduce), a.index_reduce(1, t.tensor([3, 3, 1, 0]), s[:3],
                           reduce, include_self=False), _name(a.index_reduce(0, t.tensor([1, 1, 1]), s, reduce))), [SR[:, :4].copy(), SR])  # fmt: skip


def test_put():
    check(lambda t, a: (a.put(t.tensor([0, 5, -1]), t.tensor([1.0, 2.0, 3.0], dtype=t.float64)),
                        a.put(t.tensor([[1, 1]]), a[0, :2], accumulate=True), (a * 1).put_(t.tensor([2]), a[1, :1]),
                        _name(a.put(t.tensor([0]), a[0, :1]))), [A])  # fmt: skip
    check_raises(lambda t, a: a.put(t.tensor([12]), a[0, :1]), [A])
    check_raises(lambda t, a: a.put(t.tensor([1, 2]), a[0, :1]), [A])


def test_scatter_reduce_max_min_aliases():
    # torch accepts 'max'/'min' in the forward (its backward refuses them)
    check(lambda t, a, s, i: (a.scatter_reduce(1, i, s, "max"), a.scatter_reduce(1, i, s, "min", include_self=False)),
          [SR[:, :3].copy(), SR, IDX], grad=False)  # fmt: skip


def test_scatter_reduce_int():
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        check(lambda t, a, i: (a.scatter_reduce(0, i, a, reduce), a.scatter_reduce(0, i, a, reduce, include_self=False)),
              [I[0] - 5, IDX % 2])  # fmt: skip


def test_inplace_index_ops():
    def fn(t, a):
        b = a * 1
        b.index_add_(0, t.tensor([0, 0]), a[:2])
        b.index_copy_(1, t.tensor([3]), a[:, :1])
        b.index_fill_(0, t.tensor([2]), 1.5)
        b.scatter_(1, t.tensor([[0], [1], [2]]), 7.0)
        b.scatter_add_(0, t.tensor([[1, 1, 1, 1]]), a[:1])
        b.index_put_((t.tensor([1]), t.tensor([2])), t.tensor(-3.0, dtype=t.float64))
        b.masked_scatter_(a > 0, a * 10)
        b.masked_fill_(a < -1, 0.0)
        b.scatter_reduce_(0, t.tensor([[0, 1, 2, 0]]), a[2:], "amax")
        return b, _name(b)

    check(fn, [A])


def test_masked_ops():
    check(lambda t, a, x: (t.masked_select(a, a > 0), a.masked_select(t.tensor([True, False, True, False])),
                           x.masked_select(a > 0), a.masked_scatter(a > 0, a * 10), a.masked_scatter(t.tensor([False, True, True, False]), x[0, :3]),
                           _name(a.masked_select(a > 0)), _name(a.masked_scatter(a > 0, a))), [A, X])  # fmt: skip


# --- value-dependent shapes ---------------------------------------------------------------------------

U = np.array([[3, 1, 2, 1], [3, 1, 2, 1], [0, 5, 5, 0]])


def test_nonzero_argwhere():
    check(lambda t, u, a: (t.nonzero(u), u.nonzero(as_tuple=True), t.argwhere(a > 0), t.nonzero(t.tensor(2.0)),
                           t.nonzero(t.tensor(0)), t.nonzero(t.tensor(1), as_tuple=True), t.where(u > 2),
                           t.nonzero(t.zeros(0, 3)), (a > 0).nonzero()), [U, A])  # fmt: skip


def test_unique():
    check(lambda t, u: (t.unique(u), u.unique(return_inverse=True), t.unique(u, return_counts=True),
                        t.unique(u, sorted=False, return_inverse=True, return_counts=True), t.unique(u, dim=0),
                        t.unique(u, dim=1, return_inverse=True, return_counts=True), t.unique(u.float()),
                        t.unique(u > 1)), [U])  # fmt: skip


def test_unique_consecutive():
    check(lambda t, u: (t.unique_consecutive(u), u.unique_consecutive(return_inverse=True, return_counts=True),
                        t.unique_consecutive(u, dim=0), t.unique_consecutive(u, return_counts=True, dim=1),
                        t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1, 2]))), [U])  # fmt: skip


def test_unique_gradless():
    check(
        lambda t, a: (t.unique(a.detach().round()), t.unique(a, return_counts=True)[0].requires_grad), [A], grad=False
    )


def test_bincount_histc():
    w = np.array([0.5, 1.0, 2.0, 0.25, 4.0])
    check(lambda t, w: (t.bincount(t.tensor([0, 1, 1, 3, 1])), t.bincount(t.tensor([0, 1, 1, 3, 1]), w),
                        t.bincount(t.tensor([2]), minlength=5), t.bincount(t.tensor([], dtype=t.long)),
                        t.tensor([1, 1, 2]).bincount(w[:3].float()),
                        t.histc(w), t.histc(w.float(), bins=4, min=0, max=2), w.histc(3, 1, 1), t.histc(t.tensor([1.0, 1.0]), 3)),
          [w], grad=False)  # fmt: skip


def test_searchsorted_bucketize():
    seq = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    vals = np.array([[3.0, 6.0, 9.0], [0.0, 10.0, 5.0]])
    check(lambda t, s, v: (t.searchsorted(s, v), t.searchsorted(s, v, right=True), t.searchsorted(s, 5.0, side="right"),
                           t.searchsorted(s, v, out_int32=True), t.searchsorted(t.stack([s, s * 2]), v),
                           t.searchsorted(s.flip(0), v, sorter=t.tensor([4, 3, 2, 1, 0])), t.bucketize(v, s),
                           t.bucketize(v, s, right=True), t.bucketize(4, s), t.bucketize(v, s, out_int32=True),
                           t.searchsorted(s, t.tensor([2, 7]))), [seq, vals], grad=False)  # fmt: skip


# --- errors -------------------------------------------------------------------------------------------

ERRORS = [
    ("index_select_2d_index", lambda t, a: a.index_select(0, t.tensor([[0]])), [A]),
    ("index_select_float_index", lambda t, a: a.index_select(0, t.tensor([0.0])), [A]),
    ("index_select_range", lambda t, a: a.index_select(0, t.tensor([3])), [A]),
    ("index_select_dim", lambda t, a: a.index_select(2, t.tensor([0])), [A]),
    ("index_add_dtype", lambda t, a: a.index_add(0, t.tensor([0]), a[:1].float()), [A]),
    ("index_add_count", lambda t, a: a.index_add(0, t.tensor([0, 1]), a[:1]), [A]),
    ("index_add_range", lambda t, a: a.index_add(0, t.tensor([5]), a[:1]), [A]),
    ("index_copy_count", lambda t, a: a.index_copy(0, t.tensor([0, 1]), a[:1]), [A]),
    ("index_fill_tensor", lambda t, a: a.index_fill(0, t.tensor([0]), t.ones(2)), [A]),
    ("index_put_too_many", lambda t, a: a.index_put((t.tensor([0]),) * 3, t.tensor(1.0)), [A]),
    ("index_put_dtype", lambda t, a: a.index_put((t.tensor([0]),), t.ones(4)), [A]),
    ("index_put_shape", lambda t, a: a.index_put((t.tensor([0, 1]),), t.ones(3, 4, dtype=t.float64)), [A]),
    ("index_put_shape_ones", lambda t, a: a.index_put((t.tensor([0, 1]),), t.ones(1, 2, dtype=t.float64)), [A]),
    ("gather_dtype", lambda t, a: a.gather(0, t.tensor([[0]], dtype=t.int16)), [A]),
    ("gather_negative", lambda t, a: a.gather(0, t.tensor([[-1]])), [A]),
    ("scatter_dtype_index", lambda t, a: a.scatter_add(0, t.tensor([[0]], dtype=t.int16), a), [A]),
    ("index_select_negative", lambda t, a: a.index_select(0, t.tensor([-1])), [A]),
    ("index_add_negative", lambda t, a: a.index_add(0, t.tensor([-1]), a[:1]), [A]),
    ("index_add_dtype_index", lambda t, a: a.index_add(0, t.tensor([0], dtype=t.int16), a[:1]), [A]),
    ("index_add_2d", lambda t, a: a.index_add(0, t.tensor([[0]]), a[:1]), [A]),
    ("index_add_slice", lambda t, a: a.index_add(0, t.tensor([0]), a[:1, :2]), [A]),
    ("index_copy_negative", lambda t, a: a.index_copy(0, t.tensor([-1]), a[:1]), [A]),
    ("index_copy_dtype", lambda t, a: a.index_copy(0, t.tensor([0], dtype=t.int32), a[:1]), [A]),
    ("index_copy_2d", lambda t, a: a.index_copy(0, t.tensor([[0]]), a[:1]), [A]),
    ("index_fill_dtype", lambda t, a: a.index_fill(0, t.tensor([0], dtype=t.int32), 2.0), [A]),
    ("index_fill_range", lambda t, a: a.index_fill(0, t.tensor([5]), 2.0), [A]),
    ("index_fill_2d", lambda t, a: a.index_fill(0, t.tensor([[0]]), 2.0), [A]),
    ("bincount_bool", lambda t: t.bincount(t.tensor([True])), []),
    ("gather_ndim", lambda t, a: a.gather(0, t.tensor([0])), [A]),
    ("gather_size", lambda t, a: a.gather(0, t.tensor([[0, 0, 0, 0, 0]])), [A]),
    ("gather_range", lambda t, a: a.gather(1, t.tensor([[4]])), [A]),
    ("gather_dim", lambda t, a: a.gather(2, t.tensor([[0]])), [A]),
    ("scatter_dtype", lambda t, a: a.scatter(0, t.tensor([[0]]), a.float()), [A]),
    ("scatter_range", lambda t, a: a.scatter(0, t.tensor([[3]]), a), [A]),
    ("scatter_size", lambda t, a: a.scatter(1, t.tensor([[0, 0, 0, 0, 0]]), a), [A]),
    ("scatter_reduce_name", lambda t, a: a.scatter(0, t.tensor([[0]]), a, reduce="max"), [A]),
    ("scatter_reduce_bad", lambda t, a: a.scatter_reduce(0, t.tensor([[0]]), a, "foo"), [A]),
    ("scatter_add_dtype", lambda t, a: a.scatter_add(0, t.tensor([[0]]), a.float()), [A]),
    ("masked_select_dtype", lambda t, a: a.masked_select(t.tensor([1, 0, 1, 0])), [A]),
    ("masked_select_shape", lambda t, a: a.masked_select(t.tensor([True, False])), [A]),
    ("masked_scatter_few", lambda t, a: a.masked_scatter(a > -10, a[0]), [A]),
    ("masked_scatter_dtype", lambda t, a: a.masked_scatter(a > 0, a.float()), [A]),
    ("bincount_2d", lambda t: t.bincount(t.tensor([[1]])), []),
    ("bincount_neg", lambda t: t.bincount(t.tensor([-1])), []),
    ("bincount_float", lambda t: t.bincount(t.tensor([1.0])), []),
    ("histc_int", lambda t: t.histc(t.tensor([1, 2])), []),
    ("histc_range", lambda t, a: t.histc(a, 4, 3, 1), [A]),
    ("searchsorted_side", lambda t, v: t.searchsorted(v, v, right=True, side="left"), [V]),
    ("searchsorted_shape", lambda t, a: t.searchsorted(a, a[:2]), [A]),
    ("bucketize_2d", lambda t, a: t.bucketize(a, a), [A]),
    ("take_along_dim_dtype", lambda t, a: t.take_along_dim(a, t.tensor([[0]], dtype=t.int32), 0), [A]),
    ("repeat_interleave_2d", lambda t, a: a.repeat_interleave(t.tensor([[1]]), dim=0), [A]),
]


@pytest.mark.parametrize("fn,inputs", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_index_errors(fn, inputs):
    check_raises(fn, inputs)


def test_index_copy_slice_shape_error():
    # torch's message numbers the slice dims in its own way; compare the type only
    check_raises(lambda t, a: a.index_copy(1, t.tensor([0]), a[:1]), [A], match_message=False)

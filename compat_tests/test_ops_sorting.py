"""sort, argsort, msort, topk and kthvalue against torch: values, indices (torch's tie order), dtypes,
0-dim/empty/transposed inputs, gradients to the selected elements, out= and errors.

Equal values: torch's stable sort, kthvalue (its own quickselect) and CPU topk (libstdc++'s partial_sort /
nth_element / sort) fix their order and torchlike matches them; torch's unstable sort orders ties by
x86-simd-sort, so those calls run on tie-free rows here."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import (
    check,
    check_raises,
    compare,
    per_node_backward,  # noqa: F401 - autouse fixture: imported to apply here
)

NAN = np.nan


# distinct values (any algorithm gives one order), and rows full of ties, NaN and signed zeros
DISTINCT = np.array([[0.5, -2.0, 3.5, 1.25, -0.75], [4.0, 2.5, -1.5, 0.0, 1.0], [-3.0, 5.5, 2.0, -0.5, 0.25],
                     [1.5, -1.0, 0.75, 3.0, -2.5], [2.25, 0.125, -4.0, 6.0, 1.75]])  # fmt: skip
# one NaN per row: still tie-free
DISTINCT_NAN = np.where(np.eye(5)[::-1] > 0, NAN, DISTINCT)
TIES = np.array([[1.0, 3.0, 3.0, 1.0, 2.0], [5.0, 4.0, 5.0, 4.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0],
                 [NAN, 1.0, NAN, -0.0, 0.0], [0.0, -0.0, 1.0, -0.0, NAN]])  # fmt: skip

CASES = {
    "sort": ["t.sort(x)", "x.sort(0)", "t.sort(x, 1, True)", "x.sort(dim=-1, descending=True)"],
    "sort_stable": ["t.sort(x, stable=True)", "x.sort(dim=0, descending=True, stable=True)"],
    "argsort": ["t.argsort(x)", "x.argsort(0, True)"],
    "argsort_stable": ["t.argsort(x, dim=1, descending=True, stable=True)", "x.argsort(stable=True, dim=0)"],
    "msort": ["t.msort(x)"],
    "topk": ["t.topk(x, 2)", "x.topk(3, 0)", "t.topk(x, 2, largest=False)", "x.topk(1, dim=1, sorted=False)",
             "t.topk(x, 0)"],
    "kthvalue": ["t.kthvalue(x, 2)", "x.kthvalue(3, 0, True)"],
}  # fmt: skip
TIE_SAFE = {"sort_stable", "argsort_stable", "kthvalue", "msort"}  # msort is stable in torch for 5 rows too


def _fn(expr):
    return eval(f"lambda t, x: {expr}")  # noqa: S307 - test table of call expressions


def _as(x, dtype):
    if dtype == "bool":
        return x > 0
    if dtype == "int64":
        return np.where(np.isfinite(x), x * 4, 9).astype(dtype)
    return x if dtype == "bfloat16" else x.astype(dtype)


ALL = [(n, e, "float32") for n, es in CASES.items() for e in es]
ALL += [
    (n, es[0], dt)
    for n, es in CASES.items()
    for dt in ("float64", "int64", "bool", "float16", "bfloat16")
    if n != "kthvalue" or dt in ("int64", "bool")
]  # (each kthvalue kernel is a slow-compiling loop)


@pytest.mark.parametrize("name,expr,dtype", ALL, ids=[f"{e}-{d}" for _, e, d in ALL])
def test_sorting(name, expr, dtype):
    kw = {"dtype": "bfloat16"} if dtype == "bfloat16" else {}
    grad = dtype in ("float32", "float64")
    compare(_fn(expr), [_as(DISTINCT, dtype)], grad=grad, **kw)
    if dtype in ("float32", "float64"):  # same kernels, NaN as the largest value
        compare(_fn(expr), [_as(DISTINCT_NAN, dtype)], grad=grad, **kw)
    if name in TIE_SAFE:
        compare(_fn(expr), [_as(TIES, dtype)], grad=grad, **kw)


@pytest.mark.parametrize("name", list(CASES))
def test_sorting_edge_shapes(name):
    f = _fn(CASES[name][0])
    x = (TIES if name in TIE_SAFE else DISTINCT).astype("float32")
    compare(lambda t, x: f(t, x.t()), [x])  # non-contiguous; the square shape reuses the kernels
    compare(lambda t, x: f(t, x[1, 1]), [x])
    compare(lambda t, x: f(t, x[:0]), [x], grad=False)


def test_kthvalue_ties_match_torch_quickselect():
    """kthvalue's index among equal values is what torch's quickselect leaves at k (not the stable order)."""
    rng = np.random.RandomState(0)
    x = rng.randint(0, 4, (6, 33)).astype("float64")
    x[1, ::5] = NAN
    check(lambda t, x: [t.kthvalue(x, k, 1) for k in (1, 2, 9, 17, 30, 33)], [x])  # k is not a compile key


@pytest.mark.parametrize("kind", ["ties", "nan", "int", "distinct"])
def test_topk_index_order_matches_torch(kind):
    """Among equal values, with NaN, and for sorted=False, the indices are the ones torch's CPU algorithms
    leave (partial_sort when k * 64 <= n, else nth_element + sort), for both selection paths."""
    rng = np.random.RandomState({"ties": 0, "nan": 1, "int": 2, "distinct": 3}[kind])
    x = rng.randint(0, 4, (3, 130)).astype("float32") if kind != "distinct" else rng.randn(3, 130).astype("float32")
    if kind == "nan":
        x[rng.rand(3, 130) < 0.2] = NAN
    if kind == "int":
        x = x.astype("int64")
    calls = [(k, largest, srt) for k in (1, 2, 3, 40, 129, 130) for largest in (True, False) for srt in (True, False)]
    check(lambda t, x: [t.topk(x, k, largest=largest, sorted=srt) for k, largest, srt in calls]
          + [x.t().topk(2, dim=0, sorted=False), t.topk(x[:, :17], 9, largest=False)], [x], grad=kind != "int")  # fmt: skip


def test_stable_sort_long_rows():
    """Long rows with many ties, ascending and descending, NaN and -0.0: the stable order is fixed."""
    rng = np.random.RandomState(1)
    x = rng.randint(0, 5, (3, 70)).astype("float32")
    x[0, 3::7] = NAN
    x[2, ::3] = -0.0
    check(lambda t, x: (t.sort(x, stable=True), x.sort(descending=True, stable=True),
                        t.argsort(x, dim=0, stable=True)), [x])  # fmt: skip
    check(lambda t, x: (x.sort(stable=True), x.argsort(descending=True, stable=True)), [x.astype("int64")])


def test_nan_and_signed_zero_order():
    """NaN is the largest value and -0.0 == 0.0 (TIES has both; kernels reused from test_sorting)."""
    check(lambda t, x: (x.sort(stable=True), t.kthvalue(x, 2)), [np.where(TIES == 0, -0.0, TIES).astype("float32")])


def test_gradients_to_selected_elements():
    x = DISTINCT.astype("float64")
    check(lambda t, x: (x.sort(1)[0] * x.sort(0)[0], x.topk(2, 0)[0], t.msort(x)), [x])
    check(lambda t, x: (x.kthvalue(2)[0], x.sort(dim=1, stable=True)[0]), [TIES.astype("float32")])


def test_out_and_return_types():
    def fn(t, x):
        x = x.detach()
        a = t.sort(x, 1, out=(t.empty(0), t.empty(0, dtype=t.long)))
        b = t.topk(x, 2, out=(t.empty(0), t.empty(0, dtype=t.long)))
        c = t.kthvalue(x, 2, out=(t.empty(0), t.empty(0, dtype=t.long)))
        d = t.msort(x, out=t.empty(0))
        return a, b, c, d, t.sort(x), x.topk(1)

    check(fn, [DISTINCT.astype("float32")])


def test_grad_fn_names():
    import torchlike

    for expr in ("x.sort()[0]", "x.topk(2)[0]", "x.kthvalue(2)[0]", "t.msort(x)"):
        names = []
        for lib in (torch, torchlike):
            x = lib.tensor(DISTINCT.astype("float32"), requires_grad=True)
            names.append(type(_fn(expr)(lib, x).grad_fn).__name__)
        assert names[0] == names[1], (expr, names)


ERRORS = {
    "sort_dim": "x.sort(2)",
    "argsort_dim": "t.argsort(x, -3)",
    "topk_k_large": "x.topk(6)",
    "topk_k_negative": "x.topk(-1)",
    "topk_dim": "x.topk(1, 2)",
    "topk_bool": "(x > 0).topk(1)",
    "kthvalue_k0": "x.kthvalue(0)",
    "kthvalue_k_large": "x.kthvalue(6, 0)",
    "kthvalue_bool": "(x > 0).kthvalue(1)",
    "kthvalue_dim": "x.kthvalue(1, 2)",
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    check_raises(_fn(ERRORS[case]), [DISTINCT.astype("float32")])

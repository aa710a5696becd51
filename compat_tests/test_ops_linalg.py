"""Linear algebra against torch: products, einsum/tensordot, cross, cdist, torch.linalg (norms, inverses,
solvers, decompositions), legacy names; values, dtypes, gradients, grad_fn names and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike

rng = np.random.RandomState(0)
A = rng.randn(3, 4)
B = rng.randn(4, 5)
V = rng.randn(4)
W = rng.randn(3)
M = rng.randn(3, 3) + 3 * np.eye(3)  # well conditioned
SPD = M @ M.T + np.eye(3)
BM = rng.randn(2, 3, 3) + 3 * np.eye(3)
BA = rng.randn(2, 3, 4)
BB = rng.randn(2, 4, 5)
I = np.arange(12).reshape(3, 4)


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _quiet(fn):
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)

    return run


PRODUCTS = [
    (
        "matmul",
        lambda t, a, b, v: (a @ b, t.matmul(a, v), t.matmul(v, b), a.t() @ a, _name(a @ b), _name(t.matmul(v, b))),
        [A, B, V],
    ),
    (
        "matmul_batched",
        lambda t, x, y, b: (x @ y, t.matmul(x, b), t.matmul(b[:3, :4], x.transpose(1, 2)), x[0] @ y, _name(x @ y)),
        [BA, BB, B],
    ),  # fmt: skip
    (
        "mm_bmm_mv_dot",
        lambda t, a, b, x, y, v: (
            t.mm(a, b),
            t.bmm(x, y),
            t.mv(a, v),
            t.dot(v, v),
            a.t().mm(a[:, :2]),
            _name(t.bmm(x, y)),
            _name(t.mv(a, v)),
        ),
        [A, B, BA, BB, V],
    ),  # fmt: skip
    (
        "vdot_inner_outer",
        lambda t, a, v, w: (
            t.vdot(v, v),
            t.inner(v, v),
            t.inner(a, a),
            t.inner(a, t.tensor(2.0, dtype=t.float64)),
            t.outer(v, w),
            t.ger(w, v),
            v.outer(w),
            _name(t.outer(v, w)),
            _name(t.vdot(v, v)),
        ),
        [A, V, W],
    ),  # fmt: skip
    (
        "addmm",
        lambda t, a, b, v: (
            t.addmm(b[0], a, b),
            t.addmm(b[:3], a, b, beta=0.5, alpha=2),
            a.addmm(a, b[:, :4], beta=0),
            _name(t.addmm(b[0], a, b)),
        ),
        [A, B, V],
    ),  # fmt: skip
    (
        "addmv_addr",
        lambda t, a, v, w: (
            t.addmv(w, a, v),
            t.addmv(w, a, v, beta=2, alpha=-1),
            t.addr(a, w, v),
            a.addr(w, v, beta=0.5),
            _name(t.addmv(w, a, v)),
            _name(t.addr(a, w, v)),
        ),
        [A, V, W],
    ),  # fmt: skip
    (
        "baddbmm_addbmm",
        lambda t, x, y, a, b: (
            t.baddbmm(x @ y, x, y),
            t.baddbmm(b[:1], x, y, alpha=0.5),
            t.addbmm(b[:3], x, y),
            t.addbmm(b[0], x, y, beta=0),
            _name(t.baddbmm(x @ y, x, y)),
            _name(t.addbmm(b[:3], x, y)),
        ),
        [BA, BB, A, B],
    ),  # fmt: skip
    (
        "einsum",
        lambda t, a, b, v, m: (
            t.einsum("ij,jk->ik", a, b),
            t.einsum("ij,jk", [a, b]),
            t.einsum("ij->", a),
            t.einsum("ii->i", m),
            t.einsum("i,j->ij", v, v),
            t.einsum("...j,j", a, v),
            t.einsum("bij,bjk->bik", a[None], b[None]),
            t.einsum(a, [0, 1], b, [1, 2], [0, 2]),
            t.einsum("ij,ij->i", a, a),
        ),
        [A, B, V, M],
    ),  # fmt: skip
    (
        "tensordot",
        lambda t, a, b, x: (
            t.tensordot(a, b, 1),
            t.tensordot(a, a, dims=([1], [1])),
            t.tensordot(x, x.permute(1, 2, 0), dims=2),
            t.tensordot(x, b, dims=([2], [0])),
            t.tensordot(a, a, 0).shape,
        ),
        [A, B, BA],
    ),  # fmt: skip
    (
        "cross",
        lambda t, a, m: (
            t.linalg.cross(a[:, :3], a[:, 1:]),
            t.cross(m, m.flip(0), dim=0),
            t.linalg.cross(m, m[:1]),
            m.cross(m.t(), dim=1),
            _name(t.linalg.cross(m, m)),
        ),
        [A, M],
    ),  # fmt: skip
    (
        "cdist",
        lambda t, a, b: (
            t.cdist(a, a[:2]),
            t.cdist(a, a, p=1),
            t.cdist(a, a[:2], p=0),
            t.cdist(a, a, p=float("inf")),
            t.cdist(a, a[1:], p=3.0),
            t.cdist(a[None], a[None, :2]),
            _name(t.cdist(a, a)),
        ),
        [A, B],
    ),  # fmt: skip
    (
        "multi_dot_vecdot",
        lambda t, a, b, v: (
            t.linalg.multi_dot([a, b, b.t()]),
            t.linalg.multi_dot([v, a.t(), a]),
            t.linalg.vecdot(a, a),
            t.linalg.matmul(a, b),
            t.linalg.diagonal(a[None]),
            t.chain_matmul(a, b),
        ),
        [A, B, V],
    ),  # fmt: skip
]


@pytest.mark.parametrize("fn,inputs", [p[1:] for p in PRODUCTS], ids=[p[0] for p in PRODUCTS])
def test_products(fn, inputs):
    check(_quiet(fn), inputs)


def test_products_float32_and_int():
    f = A.astype(np.float32)
    check(lambda t, a: (a @ a.t(), t.addmm(a[:, :3], a, a.t()), t.einsum("ij,kj->ik", a, a), t.cdist(a, a), t.outer(a[0], a[1])),
          [f], grad=False)  # fmt: skip
    check(lambda t, i: (i @ i.t(), t.mm(i, i.t()), t.dot(i[0], i[1]), t.outer(i[0], i[1]), t.einsum("ij->j", i),
                        t.addmm(i[:, :3], i, i.t()), t.kron(i, i[:1])), [I])  # fmt: skip


def test_cdist_gradient_at_zero_distance():
    # torch: the gradient of a zero distance is 0 (not NaN) for every p
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
    for p in (2.0, 1.0, 3.0, float("inf"), 0.5):
        check(lambda t, a: t.cdist(a, a, p=p), [x])


# --- norms -----------------------------------------------------------------------------------------------

Z = np.array([[0.0, 0.0], [3.0, -4.0]])


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf")])
def test_vector_norm(ord):
    # ord=0: torch's backward gives no gradient, so the inputs' .grad stay None (check compares that)
    check(lambda t, a, z: (t.linalg.vector_norm(a, ord), t.linalg.vector_norm(a, ord, dim=1), t.linalg.vector_norm(a, ord, (0, 1), True),
                           t.linalg.vector_norm(z, ord, dim=1), _name(t.linalg.vector_norm(a, ord))), [A, Z])  # fmt: skip


def _order0_backward(lib, form):
    """What backward through an order-0 norm gives: .grad (None in torch), autograd.grad's answers, the node."""
    x = lib.tensor([[1.0, 0.0, -2.0], [0.0, 3.0, 0.5]], requires_grad=True)
    y = form(lib, x)
    node = (y.grad_fn.name(), [type(f).__name__ for f, _ in y.grad_fn.next_functions], y.requires_grad)
    y.sum().backward()
    plain = x.grad
    mixed = lib.autograd.grad((form(lib, x) + x * 2.0).sum(), x)[0].numpy()  # other paths still give gradients
    try:
        lib.autograd.grad(form(lib, x).sum(), x)
        unused = None
    except RuntimeError as e:
        unused = str(e)
    allowed = lib.autograd.grad(form(lib, x).sum(), x, allow_unused=True)
    zeros = lib.autograd.grad(form(lib, x).sum(), x, materialize_grads=True)[0].numpy()
    return node, plain, mixed, unused, allowed, zeros


@pytest.mark.parametrize("form", [
    lambda t, x: t.linalg.vector_norm(x, 0),
    lambda t, x: t.linalg.vector_norm(x, 0.0, dim=1, keepdim=True),
    lambda t, x: t.linalg.vector_norm(x.double(), 0, dim=(0, 1)),
    lambda t, x: t.linalg.norm(x.flatten(), 0),
    lambda t, x: x.norm(p=0),
    lambda t, x: t.norm(x, 0, dim=0),
], ids=["vector_norm", "dim_keepdim", "float64", "linalg.norm", "Tensor.norm", "torch.norm_dim"])  # fmt: skip
def test_order0_norm_has_no_gradient(form):
    (r_node, r_plain, r_mixed, r_unused, r_allowed, r_zeros) = _order0_backward(torch, form)
    (g_node, g_plain, g_mixed, g_unused, g_allowed, g_zeros) = _order0_backward(torchlike, form)
    assert r_plain is None and g_plain is None
    assert g_node == r_node
    np.testing.assert_array_equal(g_mixed, r_mixed)
    assert g_unused == r_unused
    assert r_allowed == (None,) and g_allowed == (None,)
    np.testing.assert_array_equal(g_zeros, r_zeros)


def test_vector_norm_ties_and_dtype():
    x = np.array([[1.0, -3.0, 3.0], [2.0, 0.0, -2.0]])
    check(lambda t, x: (t.linalg.vector_norm(x, float("inf")), t.linalg.vector_norm(x, float("inf"), 1),
                        t.linalg.vector_norm(x.float(), dtype=t.float64)), [x], rtol=1e-6, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")])
def test_matrix_norm(ord):
    check(
        lambda t, a, x: (
            t.linalg.matrix_norm(a, ord),
            t.linalg.matrix_norm(x, ord, keepdim=True),
            t.linalg.matrix_norm(x, ord, dim=(0, 2)),
            t.linalg.norm(a, ord),
            _name(t.linalg.matrix_norm(a, ord)),
        ),
        [A, BA],
        rtol=1e-8,
        atol=1e-8,
        grad=ord in ("fro", "nuc", 2, 1),
    )  # one gradient check per code path


def test_norm_variants():
    check(lambda t, a, x, v: (t.linalg.norm(a), t.linalg.norm(v, 3), t.linalg.norm(x, dim=(1, 2)), t.linalg.norm(a, dim=1),
                              t.norm(a), t.norm(a, dim=1), t.norm(a, p=1), t.norm(x, "fro", (1, 2)), t.norm(a, "nuc"), a.norm(),
                              a.norm(2, 0, True), t.norm(v, float("inf")), _name(t.norm(a))), [A, BA, V], rtol=1e-8, atol=1e-8)  # fmt: skip


def test_norm_gradient_at_zero():
    check(lambda t, z: (t.linalg.vector_norm(z[0]), t.norm(z[0]), t.linalg.norm(z, dim=1), z[0].norm(1)), [Z])


# --- inverses, determinants, solvers --------------------------------------------------------------------


def test_inv_det_slogdet():
    check(lambda t, m, b: (t.linalg.inv(m), t.inverse(b), m.inverse(), t.linalg.inv_ex(m), t.linalg.det(m), t.det(b), m.det(),
                           t.linalg.slogdet(m), t.slogdet(-m), m.slogdet(), t.logdet(m), t.logdet(-m), _name(t.linalg.inv(m)),
                           _name(t.linalg.det(m)), _name(t.linalg.slogdet(m)[1]), _name(t.logdet(m))), [M, BM], grad=False,
          rtol=1e-8, atol=1e-8)  # fmt: skip
    check(lambda t, m: (t.linalg.inv(m), t.linalg.det(m), t.linalg.slogdet(m), t.logdet(m)), [M], rtol=1e-8, atol=1e-8)


def test_det_of_singular_matrix_gradient():
    check(
        lambda t, m: (t.linalg.det(m), t.linalg.slogdet(m)[0]),
        [np.array([[1.0, 2.0], [2.0, 4.0]])],
        rtol=1e-8,
        atol=1e-8,
    )


def test_solve():
    check(lambda t, m, b, w: (t.linalg.solve(m, w), t.linalg.solve(m, m[:, :2]), t.linalg.solve(b, w), t.linalg.solve(b, b),
                              t.linalg.solve(m, m[:2], left=False), t.linalg.solve_ex(m, w), _name(t.linalg.solve(m, w)),
                              t.linalg.solve_triangular(m.triu(), m[:, :2], upper=True),
                              t.linalg.solve_triangular(m.tril(), m[:2], upper=False, left=False, unitriangular=True)),
          [M, BM, W], grad=False, rtol=1e-8, atol=1e-8)  # fmt: skip
    check(lambda t, m, w: (t.linalg.solve(m, w), t.linalg.solve_triangular(m.triu(), m[:, :2], upper=True)), [M, W],
          rtol=1e-8, atol=1e-8)  # fmt: skip


def test_cholesky():
    check(_quiet(lambda t, s: (t.linalg.cholesky(s), t.linalg.cholesky(s, upper=True), t.linalg.cholesky_ex(s), t.cholesky(s),
                               t.cholesky(s, upper=True), t.cholesky_solve(s[:, :2], t.linalg.cholesky(s)),
                               t.cholesky_inverse(t.linalg.cholesky(s)), _name(t.linalg.cholesky(s)), _name(t.cholesky(s)))),
          [SPD], grad=False, rtol=1e-8, atol=1e-8)  # fmt: skip
    check(
        lambda t, s: (t.linalg.cholesky(s), t.cholesky_solve(s[:, :2], t.linalg.cholesky(s))),
        [SPD],
        rtol=1e-8,
        atol=1e-8,
    )


# --- decompositions (gauge-free checks for the gradients) -------------------------------------------------


def test_qr():
    check(_quiet(lambda t, a, m: (t.linalg.qr(a.t()), t.linalg.qr(a, mode="complete"), t.linalg.qr(m.detach(), mode="r")[1], t.qr(a.t()),
                                  _name(t.linalg.qr(a)[0]))), [A, M], rtol=1e-8, atol=1e-8)  # fmt: skip


def test_svd_values():
    check(lambda t, a, x: (t.linalg.svd(a), t.linalg.svd(a, full_matrices=False), t.svd(a), t.svd(x), t.linalg.svdvals(x),
                           t.svd(a, compute_uv=False)), [A, BA], grad=False, rtol=1e-8, atol=1e-8)  # fmt: skip


def test_svd_gradients():
    # gauge-invariant functions of the factors
    check(lambda t, a: (t.linalg.svdvals(a), (lambda u, s, vh: (u * s) @ vh)(*t.linalg.svd(a, full_matrices=False)),
                        (lambda r: r.U.abs() + r.Vh.abs().sum())(t.linalg.svd(a, full_matrices=False)), _name(t.linalg.svdvals(a))),
          [A], rtol=1e-7, atol=1e-7)  # fmt: skip


def test_eigh():
    s = SPD + np.diag([0.0, 1.0, 2.0])
    check(lambda t, s: (t.linalg.eigh(s), t.linalg.eigvalsh(s), t.linalg.eigh(s, UPLO="U").eigenvalues,
                        (lambda r: (r.eigenvectors * r.eigenvectors).sum(0))(t.linalg.eigh(s)), _name(t.linalg.eigvalsh(s))),
          [s], rtol=1e-7, atol=1e-7, grad=False)  # fmt: skip
    check(
        lambda t, s: (t.linalg.eigvalsh(s), (lambda r: r.eigenvectors.abs())(t.linalg.eigh(s))),
        [s],
        rtol=1e-7,
        atol=1e-7,
    )


def test_eigh_uses_one_triangle():
    x = SPD + np.triu(np.ones((3, 3)), 1)
    check(lambda t, x: (t.linalg.eigvalsh(x), t.linalg.eigvalsh(x, "U"), t.linalg.cholesky(x)), [x], grad=False)


def test_pinv_lstsq_rank_power():
    check(lambda t, a, m: (t.linalg.pinv(a), t.linalg.pinv(m @ m.t(), hermitian=True), t.pinverse(a),
                           t.linalg.lstsq(a.t(), m[:, :2].repeat(2, 1)[:4]).solution, t.linalg.lstsq(m, m),
                           t.linalg.lstsq(a.t(), a.t()[:, :2], driver="gelsd"), t.linalg.matrix_rank(a), t.linalg.matrix_rank(m @ m.t(), hermitian=True),
                           t.linalg.matrix_rank(t.ones(3, 3, dtype=t.float64)), t.linalg.matrix_rank(a, atol=1.0, rtol=0.0),
                           t.linalg.matrix_power(m, 2), t.linalg.matrix_power(m, 0), t.linalg.matrix_power(m, 1), t.linalg.matrix_power(m, 5),
                           t.linalg.matrix_power(m, -3), t.matrix_power(m, 3), _name(t.linalg.pinv(a)), _name(t.linalg.matrix_power(m, 2)),
                           _name(t.linalg.lstsq(m, m).solution), t.linalg.matrix_exp(m * 0.1)), [A, M], grad=False, rtol=1e-7, atol=1e-7)  # fmt: skip
    check(lambda t, a, m: (t.linalg.pinv(a), t.linalg.lstsq(a.t(), a.t()[:, :2], driver="gelsd"), t.linalg.matrix_power(m, -3)),
          [A, M], rtol=1e-7, atol=1e-7)  # fmt: skip


# --- errors ----------------------------------------------------------------------------------------------

ERRORS = [
    ("matmul_0d", lambda t, a: t.matmul(a, t.tensor(2.0)), [A]),
    ("matmul_shapes", lambda t, a: a @ a, [A]),
    ("matmul_vec", lambda t, a, w: a @ w, [A, W]),
    ("matmul_dtype", lambda t, a: a @ a.t().float(), [A]),
    ("mm_1d", lambda t, v: t.mm(v, v), [V]),
    ("bmm_2d", lambda t, a: t.bmm(a, a), [A]),
    ("bmm_shapes", lambda t, x: t.bmm(x, x), [BA]),
    ("mv_shapes", lambda t, a: t.mv(a, a[0, :3]), [A]),
    ("dot_2d", lambda t, a: t.dot(a, a), [A]),
    ("dot_sizes", lambda t, v: t.dot(v, v[:2]), [V]),
    ("dot_dtype", lambda t, v: t.dot(v, v.float()), [V]),
    ("vdot_dtype", lambda t, v: t.vdot(v, v.float()), [V]),
    ("mm_bool", lambda t, a: t.mm(a > 0, a.t() > 0), [A]),
    ("inner_shapes", lambda t, a, b: t.inner(a, b), [A, B]),
    ("inner_dtype", lambda t, a: t.inner(a, a.float()), [A]),
    ("outer_2d", lambda t, a, v: t.outer(a, v), [A, V]),
    ("addmm_dtype", lambda t, a, b: t.addmm(b[0].float(), a, b), [A, B]),
    ("addmm_mat_dtype", lambda t, a, b: t.addmm(b[0], a.float(), b), [A, B]),
    ("addmm_shape", lambda t, a, b: t.addmm(b[:2], a, b), [A, B]),
    ("addmv_dtype", lambda t, a, v, w: t.addmv(w, a, v.float()), [A, V, W]),
    ("baddbmm_shape", lambda t, x, y, a: t.baddbmm(a, x, y), [BA, BB, A]),
    ("einsum_few", lambda t, a: t.einsum("ij,jk->ik", a), [A]),
    ("einsum_size", lambda t, a: t.einsum("ij,jk->ik", a, a), [A]),
    ("einsum_output", lambda t, a: t.einsum("ij->k", a), [A]),
    ("einsum_dtype", lambda t, a, b: t.einsum("ij,jk", a, b.float()), [A, B]),
    ("einsum_ndim", lambda t, a: t.einsum("ijk->i", a), [A]),
    ("tensordot_dtype", lambda t, a, b: t.tensordot(a, b.float(), 1), [A, B]),
    ("tensordot_sizes", lambda t, a, b: t.tensordot(a, b, ([1], [1])), [A, B]),
    ("cross_len", lambda t, a: t.linalg.cross(a, a), [A]),
    ("cross_ndim", lambda t, a: t.linalg.cross(a[:, :3], a[0, 1:]), [A]),
    ("cdist_1d", lambda t, v: t.cdist(v, v), [V]),
    ("cdist_cols", lambda t, a, b: t.cdist(a, b), [A, B]),
    ("cdist_p", lambda t, a: t.cdist(a, a, p=-1.0), [A]),
    ("cdist_int", lambda t, a: t.cdist(a.long(), a.long()), [A]),
    ("cdist_dtype", lambda t, a: t.cdist(a, a.float()), [A]),
    ("inv_singular", lambda t: t.linalg.inv(t.zeros(3, 3)), []),
    ("inv_singular_batch", lambda t: t.linalg.inv(t.ones(2, 3, 3)), []),
    ("inv_square", lambda t, a: t.linalg.inv(a), [A]),
    ("inv_1d", lambda t, v: t.linalg.inv(v), [V]),
    ("inv_int", lambda t, m: t.linalg.inv(m.long()), [M]),
    ("inv_ex_check", lambda t: t.linalg.inv_ex(t.zeros(2, 2), check_errors=True), []),
    ("det_square", lambda t, a: t.linalg.det(a), [A]),
    ("det_int", lambda t, m: t.det(m.int()), [M]),
    ("cholesky_npd", lambda t: t.linalg.cholesky(-t.eye(3)), []),
    ("cholesky_npd2", lambda t: t.linalg.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]])), []),
    ("cholesky_batch", lambda t, s: t.linalg.cholesky(t.stack([t.tensor(s), -t.tensor(s)])), [SPD]),
    ("solve_singular", lambda t: t.linalg.solve(t.zeros(3, 3), t.ones(3)), []),
    ("solve_shapes", lambda t: t.linalg.solve(t.eye(3), t.ones(4)), []),
    ("qr_mode", lambda t, a: t.linalg.qr(a, mode="foo"), [A]),
    ("svd_1d", lambda t, v: t.linalg.svd(v), [V]),
    ("eigh_square", lambda t, a: t.linalg.eigh(a), [A]),
    ("eigh_uplo", lambda t, m: t.linalg.eigh(m, UPLO="X"), [M]),
    ("matrix_power_square", lambda t, a: t.linalg.matrix_power(a, 2), [A]),
    ("matrix_power_1d", lambda t, v: t.linalg.matrix_power(v, 2), [V]),
    ("matrix_power_singular", lambda t: t.linalg.matrix_power(t.zeros(2, 2), -1), []),
    ("norm_ord_3d", lambda t, x: t.linalg.norm(x, 2), [BA]),
    ("matrix_norm_dim", lambda t, a: t.linalg.norm(a, "fro", dim=0), [A]),
    ("matrix_norm_ord", lambda t, a: t.linalg.matrix_norm(a, "foo"), [A]),
    ("matrix_norm_ord_num", lambda t, a: t.linalg.matrix_norm(a, 3), [A]),
    ("matrix_norm_1d", lambda t, v: t.linalg.matrix_norm(v), [V]),
    ("vector_norm_int", lambda t, a: t.linalg.vector_norm(a.long()), [A]),
    ("vector_norm_empty_inf", lambda t: t.linalg.vector_norm(t.zeros(0), float("inf")), []),
    ("vector_norm_narrowing", lambda t, a: t.linalg.vector_norm(a, dtype=t.float32), [A]),
    ("pinv_1d", lambda t, v: t.linalg.pinv(v), [V]),
    ("lstsq_rows", lambda t, a, b: t.linalg.lstsq(a, b), [A, B]),
    ("lstsq_driver", lambda t, a: t.linalg.lstsq(a, a, driver="foo"), [A]),
]


@pytest.mark.parametrize("fn,inputs", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_linalg_errors(fn, inputs):
    check_raises(_quiet(fn), inputs)


def test_linalg_namespace():
    import torch

    import torchlike

    names = ["cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex", "lstsq", "matmul",
             "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
             "solve_ex", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]  # fmt: skip
    for n in names:
        assert hasattr(torch.linalg, n) and hasattr(torchlike.linalg, n), n
    assert torchlike.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    assert issubclass(torchlike.linalg.LinAlgError, RuntimeError)


def test_geqrf_and_householder_product():
    # LAPACK's compact QR and its reflectors' product: values (incl. zero signs), gradients, errors
    tall = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10], [1, 1, 1]])
    done = np.array([[1.0, 2], [0, 3], [0, 0]])  # an already-reduced column: tau = 0
    check(lambda t, a, z: (t.geqrf(a), a.geqrf().tau, t.geqrf(z), t.geqrf(a[None].expand(2, 4, 3) * 2)),
          [tall, done], grad=False, rtol=1e-10, atol=1e-10)  # fmt: skip
    check(lambda t, a, tau: (t.linalg.householder_product(a, tau), t.orgqr(a, tau[:2]), a.orgqr(tau)),
          [tall / 10, np.array([1.2, 0.7, 1.9])], rtol=1e-10, atol=1e-10)  # fmt: skip
    check(lambda t, a: t.linalg.householder_product(*t.geqrf(a)), [tall], grad=False, rtol=1e-10, atol=1e-10)
    for bad in ("t.geqrf(t.ones(3))", "t.geqrf(t.ones(2, 2, dtype=t.long))",
                "t.linalg.householder_product(t.ones(3, 4), t.ones(2))",
                "t.linalg.householder_product(t.ones(4, 3), t.ones(4))",
                "t.linalg.householder_product(t.ones(4, 3), t.ones(1, 2))"):  # fmt: skip
        check_raises(eval(f"lambda t: {bad}"))  # noqa: S307
    check_raises(lambda t, a: t.geqrf(a)[0].sum().backward(), [tall])


@pytest.mark.parametrize("case", ["square", "wide", "tall", "cayley", "householder_wide", "matrix_exp_tall", "no_trivialization"])
def test_orthogonal_parametrization(case):
    shape, orth_map = {"square": ((4, 4), None), "wide": ((3, 5), None), "tall": ((5, 3), None),
                       "cayley": ((4, 4), "cayley"), "householder_wide": ((3, 5), "householder"),
                       "matrix_exp_tall": ((5, 3), "matrix_exp"), "no_trivialization": ((3, 3), "householder")}[case]  # fmt: skip

    def run(t, x):
        t.manual_seed(0)
        lin = t.nn.Linear(shape[1], shape[0]).double()
        t.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=orth_map,
                                               use_trivialization=case != "no_trivialization")  # fmt: skip
        y = lin(x)
        with t.no_grad():
            lin.weight = t.eye(*shape, dtype=t.float64)
        return lin.parametrizations.weight.original, y, lin.weight

    check(run, [np.linspace(-1, 1, 2 * shape[1]).reshape(2, shape[1])], rtol=1e-8, atol=1e-9)


def test_orthogonal_parametrization_errors():
    P = "t.nn.utils.parametrizations.orthogonal"
    for bad in (f"{P}(t.nn.Linear(2, 2), orthogonal_map='svd')", f"{P}(t.nn.Linear(2, 2), 'nope')",
                f"{P}(t.nn.Linear(2, 2), 'bias')",
                f"{P}(t.nn.Linear(2, 2, dtype=t.complex64), orthogonal_map='householder')"):  # fmt: skip
        check_raises(eval(f"lambda t: {bad}"))  # noqa: S307


def test_einsum_grad_fn_names():
    """torch's einsum ends with a permute, a sum, a bmm-and-view or a product: its grad_fn says which."""
    eqs = [("ij,jk->ik", 2), ("ij->ji", 1), ("ij->", 1), ("ii->i", 1), ("ii", 1), ("ij->i", 1), ("ij", 1),
           ("ij,ij->ij", 2), ("ij,kl->ijkl", 2), ("ij,kl->", 2), ("ij,ij,ij->ij", 3), ("ij,jj,jk", 3), ("...i,...i", 2)]  # fmt: skip

    def names(t, x):
        return [t.einsum(eq, *[x] * n).grad_fn.name() for eq, n in eqs]

    ref = names(torch, torch.ones(3, 3, requires_grad=True))
    got = names(torchlike, torchlike.ones(3, 3, requires_grad=True))
    assert got == ref


def test_cholesky_inverse_gradient_covers_the_whole_input():
    """torch differentiates (L L^H)^-1 in all of L: the upper triangle gets a gradient too."""
    L = np.tril(np.arange(1.0, 10.0).reshape(3, 3)) + 3 * np.eye(3)
    check(lambda t, m: (t.cholesky_inverse(m) * t.arange(9.0, dtype=t.float64).view(3, 3), t.cholesky_inverse(m.t(), upper=True)),
          [L])  # fmt: skip

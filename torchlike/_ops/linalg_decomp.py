"""torch.linalg: norms, inverses, determinants, solvers and decompositions (public at ``torchlike.linalg``),
plus torch's legacy top-level names (det, logdet, inverse, cholesky, qr, svd, ...).

Like torch, the ``*_ex`` ops return an ``info`` tensor and the plain ops raise ``LinAlgError`` from it;
the checks read ``info`` on the host, so they need concrete (non-traced) inputs.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import dtype as D
from .._core.tensor import Tensor, wrap_dim
from .._core import graph
from . import registry, return_types
from ._common import _vector_norm_impl, dims, special_ord
from .linalg import matmul
from .registry import OptRawTensor, OptScalar, RawTensor, ScalarOrStatic, TensorArg, defop, expose


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch's class is named ``_LinAlgError`` too)."""


LinAlgError = expose("linalg", "LinAlgError")(_LinAlgError)


def _rt(name: str, fields: tuple) -> type:
    """A torch.return_types-style named tuple (looked up in return_types when that module defines it)."""
    existing = getattr(return_types, name, None)
    if existing is not None:
        return existing
    from collections import namedtuple

    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    return cls


_SVD = _rt("linalg_svd", ("U", "S", "Vh"))
_SVD_OLD = _rt("svd", ("U", "S", "V"))
_QR = _rt("linalg_qr", ("Q", "R"))
_QR_OLD = _rt("qr", ("Q", "R"))
_EIGH = _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))
_SLOGDET = _rt("linalg_slogdet", ("sign", "logabsdet"))
_SLOGDET_OLD = _rt("slogdet", ("sign", "logabsdet"))
_INV_EX = _rt("linalg_inv_ex", ("inverse", "info"))
_CHOL_EX = _rt("linalg_cholesky_ex", ("L", "info"))
_SOLVE_EX = _rt("linalg_solve_ex", ("result", "info"))
_LSTSQ = _rt("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


# --- argument checks ------------------------------------------------------------------------------------


def _float_input(name: str, t: Tensor) -> None:
    if not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {D.cpp_name(t._dtype)}")


def _matrix_input(name: str, t: Tensor, square: bool = True) -> None:
    if t.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and t._shape[-1] != t._shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {t._shape[-2]} by {t._shape[-1]} matrices"
        )
    _float_input(name, t)


def _square_check(name: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        _matrix_input(name, dyn[0])

    return check


def _raise_info(name: str, info: Tensor, message: Any) -> None:
    """torch's LinAlgError for the first failing batch element of a factorization's ``info``."""
    host = np.asarray(info._data()).reshape(-1) if info.numel() else np.zeros(0)
    bad = np.flatnonzero(host)
    if bad.size:
        prefix = f"(Batch element {bad[0]}): " if info.dim() else ""
        raise _LinAlgError(f"{name}: {prefix}{message(int(host[bad[0]]))}")


def _first_zero(diag: Any) -> Any:
    """1-based position of the first zero on the last axis (0 when there is none)."""
    zero = diag == 0
    if diag.shape[-1] == 0:  # 0x0 matrices factor without error
        return jnp.zeros(diag.shape[:-1], jnp.int32)
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


# --- inverse, det, solve ---------------------------------------------------------------------------------


@defop(promote=None, method=False, grad_name="LinalgInvExBackward0", check=_square_check("linalg.inv_ex"), out=True,
       returns=_INV_EX)  # fmt: skip
def _inv_ex(A: RawTensor) -> Any:
    lu, _, _ = lax.linalg.lu(lax.stop_gradient(A))
    info = _first_zero(jnp.diagonal(lu, 0, -2, -1))
    return jnp.linalg.inv(A), info


@expose("linalg")
def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    res = _inv_ex(A, out=out)
    if check_errors:
        _raise_info("linalg.inv_ex", res[1], _singular_message)
    return res


def _singular_message(i: int) -> str:
    return (
        f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."
    )


@expose("linalg")
def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    _matrix_input("linalg.inv", A)
    res = _inv_ex(A)
    _raise_info("linalg.inv", res[1], _singular_message)
    return _finish(res[0], out)


def _finish(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


@expose("torch")
def inverse(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return inv(input, out=out)


@jax.custom_vjp
def _det(A: Any) -> Any:
    return jnp.linalg.det(A)


def _det_fwd(A: Any) -> Any:
    d = jnp.linalg.det(A)
    return d, (A, d)


def _det_bwd(res: Any, g: Any) -> Any:
    # torch: the gradient at an exactly singular matrix is 0 (its LU solve leaves the zero right-hand side)
    A, d = res
    if A.size == 0:  # 0x0 matrices: det is the constant 1 (JAX's det vjp indexes the empty matrix)
        return (jnp.zeros_like(A),)
    grad = jax.vjp(jnp.linalg.det, A)[1](g)[0]
    return (jnp.where((d == 0)[..., None, None], 0, grad),)


_det.defvjp(_det_fwd, _det_bwd)


@defop(promote=None, method=False, grad_name="LinalgDetBackward0", check=_square_check("linalg.det"), out=True)
def _linalg_det(A: RawTensor) -> Any:
    return _det(A)


@expose("torch")
@expose("linalg")
def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _linalg_det(A, out=out)


@jax.custom_vjp
def _logabsdet(A: Any) -> Any:
    return jnp.linalg.slogdet(A)[1]


def _logabsdet_fwd(A: Any) -> Any:
    return _logabsdet(A), A


def _logabsdet_bwd(A: Any, g: Any) -> Any:
    # the sign has no gradient; a zero cotangent must not meet a singular matrix's inf/NaN
    grad = jax.vjp(lambda a: jnp.linalg.slogdet(a)[1], A)[1](g)[0]
    return (jnp.where((g == 0)[..., None, None], 0, grad),)


_logabsdet.defvjp(_logabsdet_fwd, _logabsdet_bwd)


@defop(promote=None, method=False, grad_name="LinalgSlogdetBackward0", check=_square_check("linalg.slogdet"),
       returns=_SLOGDET)  # fmt: skip
def _linalg_slogdet(A: RawTensor) -> Any:
    sign = lax.stop_gradient(jnp.linalg.slogdet(A)[0])
    return sign.astype(A.dtype), _logabsdet(A)


@expose("linalg", "slogdet")
def linalg_slogdet(A: Tensor, *, out: Any = None) -> Any:
    res = _linalg_slogdet(A)
    if out is not None:
        for o, r in zip(out, res):
            registry.copy_to_out(r, o)
        return _SLOGDET(*out)
    return res


@expose("torch")
def slogdet(input: Tensor) -> Any:
    return _SLOGDET_OLD(*_linalg_slogdet(input))


@defop(promote=None, method=True, grad_name="WhereBackward0", check=_square_check("linalg.det"))
def logdet(input: RawTensor) -> Any:
    sign, logabs = jnp.linalg.slogdet(input)
    return jnp.where(sign < 0, jnp.nan, logabs).astype(input.dtype)


def _solve_shapes(A: Tensor, B: Tensor, left: bool) -> bool:
    """Whether B is a (batch of) vector(s), torch's rule; checks the shapes."""
    _matrix_input("linalg.solve", A)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B._shape) == tuple(A._shape[:-1]))
    n = A._shape[-1]
    if vector:
        if B._shape[-1] != n:
            raise RuntimeError(
                f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {B._shape[-1]}x1)"
            )
    else:
        k = B._shape[-2] if left else B._shape[-1]
        if k != n:
            rows, cols = (B._shape[-2], B._shape[-1]) if left else (B._shape[-2], B._shape[-1])
            eq = "AX = B" if left else "XA = B"
            raise RuntimeError(
                f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {rows}x{cols})"
            )
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{D.cpp_name(A._dtype)} and B of type {D.cpp_name(B._dtype)} instead")  # fmt: skip
    return vector


@defop(promote=None, method=False, grad_name="LinalgSolveExBackward0", returns=_SOLVE_EX)
def _solve_ex(A: RawTensor, B: RawTensor, left: bool, vector: bool) -> Any:
    lu, _, _ = lax.linalg.lu(lax.stop_gradient(A))
    info = _first_zero(jnp.diagonal(lu, 0, -2, -1))
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return jnp.swapaxes(_solve(jnp.swapaxes(A, -1, -2), jnp.swapaxes(B, -1, -2), False), -1, -2), info
    return _solve(A, B, vector), info


def _solve(A: Any, B: Any, vector: bool) -> Any:
    if vector:
        batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-1])
        Ab = jnp.broadcast_to(A, batch + A.shape[-2:])
        Bb = jnp.broadcast_to(B, batch + B.shape[-1:])
        return jnp.linalg.solve(Ab, Bb[..., None])[..., 0]
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return jnp.linalg.solve(jnp.broadcast_to(A, batch + A.shape[-2:]), jnp.broadcast_to(B, batch + B.shape[-2:]))


@expose("linalg")
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: Any = None) -> Any:
    vector = _solve_shapes(A, B, left)
    res = _solve_ex(A, B, bool(left), vector)
    if check_errors:
        _raise_info(
            "torch.linalg.solve_ex", res[1], lambda i: "The solver failed because the input matrix is singular."
        )
    return res


@expose("linalg")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    vector = _solve_shapes(A, B, left)
    res = _solve_ex(A, B, bool(left), vector)
    if res[1].numel() and np.asarray(res[1]._data()).any():
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    return _finish(res[0], out)


def _tri_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A, B = dyn[:2]
    _matrix_input("linalg.solve_triangular", A)
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{D.cpp_name(A._dtype)} and B of type {D.cpp_name(B._dtype)} instead")  # fmt: skip


@defop(promote=None, method=False, grad_name="LinalgSolveTriangularBackward0", check=_tri_check, out=True)
def _solve_triangular(A: RawTensor, B: RawTensor, upper: bool, left: bool, unitriangular: bool) -> Any:
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = jnp.broadcast_to(A, batch + A.shape[-2:])
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    return lax.linalg.triangular_solve(A, B, left_side=left, lower=not upper, unit_diagonal=unitriangular)


@expose("linalg")
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out: Tensor | None = None) -> Tensor:  # fmt: skip
    return _solve_triangular(A, B, bool(upper), bool(left), bool(unitriangular), out=out)


# --- cholesky ------------------------------------------------------------------------------------------


def _lower_sym(A: Any, upper: bool) -> Any:
    """The Hermitian matrix torch factors, read from one triangle of A; its gradient flows back
    symmetrically, (G + G^H) / 2, as torch's backward formulas produce."""
    At = jnp.swapaxes(A, -1, -2).conj()
    tri = At if upper else A
    value = jnp.tril(tri) + jnp.swapaxes(jnp.tril(tri, -1), -1, -2).conj()
    sym = (A + At) / 2
    return sym + lax.stop_gradient(value - sym)


@defop(promote=None, method=False, grad_name="LinalgCholeskyExBackward0", check=_square_check("linalg.cholesky_ex"),
       returns=_CHOL_EX)  # fmt: skip
def _cholesky_ex(A: RawTensor, upper: bool) -> Any:
    L = lax.linalg.cholesky(_lower_sym(A, upper), symmetrize_input=False)
    bad = jnp.isnan(jnp.diagonal(L, 0, -2, -1)).any(-1)
    info = jnp.where(bad, -1, 0).astype(jnp.int32)  # the failing order is found on the host when needed
    L = jnp.tril(L)
    return (jnp.swapaxes(L, -1, -2).conj() if upper else L), info


def _leading_order(A: np.ndarray) -> int:
    """The order of the first leading minor of A (lower triangle) that is not positive-definite."""
    low = np.tril(A)
    S = low + np.tril(A, -1).T.conj()
    for k in range(1, S.shape[-1] + 1):
        try:
            np.linalg.cholesky(S[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return S.shape[-1]


def _chol_info(A: Tensor, info: Tensor, upper: bool) -> Tensor:
    """torch's info: the order of the failing leading minor (computed on the host, only on failure)."""
    host = np.asarray(info._data())
    if not host.any():
        return info
    mats = A._host()
    if upper:
        mats = np.swapaxes(mats, -1, -2).conj()
    flat_m = mats.reshape((-1,) + mats.shape[-2:])
    orders = np.array([_leading_order(m) if b else 0 for m, b in zip(flat_m, host.reshape(-1))], np.int32)
    from .._core import tensor as T

    return T.make_on(jnp.asarray(orders.reshape(host.shape)), info.device)


@expose("linalg")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    L, info = _cholesky_ex(A, bool(upper))
    info = _chol_info(A, info, bool(upper))
    if check_errors:
        _raise_info("linalg.cholesky_ex", info, _pd_message)
    return _CHOL_EX(L, info)


def _pd_message(i: int) -> str:
    return (
        "The factorization could not be completed because the input is not positive-definite (the leading minor of "
        f"order {i} is not positive-definite)."
    )


@expose("linalg", "cholesky")
def linalg_cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    _matrix_input("linalg.cholesky", A)
    L, info = _cholesky_ex(A, bool(upper))
    _raise_info("linalg.cholesky", _chol_info(A, info, bool(upper)), _pd_message)
    return _finish(L, out)


@defop(promote=None, method=False, grad_name="CholeskyBackward0", check=_square_check("cholesky"))
def _cholesky_legacy(A: RawTensor, upper: bool) -> Any:
    L = jnp.tril(lax.linalg.cholesky(_lower_sym(A, False), symmetrize_input=False))
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


_CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch release.\n"
    "L = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for all "
    "valid (symmetric positive definite) inputs."
)


@expose("torch")
def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    warnings.warn(_CHOLESKY_WARNING, UserWarning, stacklevel=2)
    L = _cholesky_legacy(input, bool(upper))
    info = _chol_info(input, _cholesky_ex(input, False)[1], False) if bool(np.isnan(L._host()).any()) else None
    if info is not None:
        _raise_info("linalg.cholesky", info, _pd_message)
    return _finish(L, out)


@defop(promote=None, grad_name="CholeskySolveBackward0", out=True)
def cholesky_solve(input: RawTensor, input2: RawTensor, upper: bool = False) -> Any:
    if input.ndim < 2 or input2.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead")
    L = jnp.swapaxes(input2, -1, -2).conj() if upper else input2
    batch = jnp.broadcast_shapes(input.shape[:-2], L.shape[:-2])
    L = jnp.broadcast_to(L, batch + L.shape[-2:])
    B = jnp.broadcast_to(input, batch + input.shape[-2:])
    y = lax.linalg.triangular_solve(L, B, left_side=True, lower=True)
    return lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)


@jax.custom_jvp
def _cholesky_inverse_lower(L: Any) -> Any:
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    y = lax.linalg.triangular_solve(L, eye, left_side=True, lower=True)
    return lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)


@_cholesky_inverse_lower.defjvp
def _cholesky_inverse_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch differentiates (L L^H)^-1 in the whole input L (its gradient is -inv (G + G^H) inv L, also
    # above the diagonal); the solves only read the lower triangle
    (L,), (dL,) = primals, tangents
    inv = _cholesky_inverse_lower(L)
    dLLh = dL @ jnp.swapaxes(L, -1, -2).conj()
    return inv, -inv @ (dLLh + jnp.swapaxes(dLLh, -1, -2).conj()) @ inv


@defop(promote=None, grad_name="CholeskyInverseBackward0", out=True)
def cholesky_inverse(input: RawTensor, upper: bool = False) -> Any:
    return _cholesky_inverse_lower(jnp.swapaxes(input, -1, -2).conj() if upper else input)


# --- QR, SVD, eigh ------------------------------------------------------------------------------------------


def _qr_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    mode = static[0]
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    _matrix_input("linalg.qr", dyn[0], square=False)


@defop(promote=None, method=False, grad_name="LinalgQrBackward0", check=_qr_check, returns=_QR)
def _linalg_qr(A: RawTensor, mode: str) -> Any:
    if mode == "r":
        r = jnp.linalg.qr(A, mode="r")
        return jnp.zeros((0,), A.dtype), r
    return tuple(jnp.linalg.qr(A, mode="complete" if mode == "complete" else "reduced"))


@expose("linalg", "qr")
def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    res = _linalg_qr(A, mode)
    if out is not None:
        for o, r in zip(out, res):
            registry.copy_to_out(r, o)
        return _QR(*out)
    return res


# --- Householder QR in LAPACK's compact form (geqrf) and its reflectors' product (orgqr) -------------------


def _geqrf_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    if x.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f"\"geqrf_{x.device.type}\" not implemented for '{D.cpp_name(x.dtype)}'")


def _reflector(col: Any, j: Any, rows: Any) -> tuple:
    """LAPACK's larfg on ``col[j:]``: (v with v[j] = 1 and zeros above, tau, beta)."""
    alpha = jnp.take(col, j, axis=-1)
    rest = jnp.where(rows > j, col, 0)
    xnorm = jnp.sqrt(jnp.sum(jnp.abs(rest) ** 2, axis=-1))
    a_re = jnp.real(alpha)
    beta = -jnp.where(a_re < 0, -1.0, 1.0) * jnp.sqrt(jnp.abs(alpha) ** 2 + xnorm**2)
    keep = (xnorm == 0) & (jnp.imag(alpha) == 0)  # already reduced: H = I
    safe_beta = jnp.where(keep, 1.0, beta)
    tau = jnp.where(keep, 0, (safe_beta - alpha) / safe_beta).astype(col.dtype)
    scale = jnp.where(keep, 1, 1 / jnp.where(keep, 1, alpha - safe_beta)).astype(col.dtype)
    v = jnp.where(rows == j, 1, rest * scale[..., None]).astype(col.dtype)
    return v, tau, jnp.where(keep, alpha, beta).astype(col.dtype)


@jax.custom_vjp
def _geqrf_impl(a: Any) -> tuple:
    m, n = a.shape[-2:]
    rows, cols = jnp.arange(m), jnp.arange(n)

    def step(j: Any, carry: tuple) -> tuple:
        a, taus = carry
        v, tau, beta = _reflector(jnp.take(a, j, axis=-1), j, rows)
        # H^H applied to the trailing columns: C - conj(tau) v (v^H C)
        w = jnp.where(cols > j, jnp.einsum("...m,...mn->...n", jnp.conj(v), a), 0)
        a = a - jnp.conj(tau)[..., None, None] * v[..., :, None] * w[..., None, :]
        col = jnp.where(rows == j, beta[..., None], jnp.where(rows > j, v, jnp.take(a, j, axis=-1)))
        a = jnp.where(cols == j, col[..., :, None], a)
        return a, taus.at[..., j].set(tau)

    taus = jnp.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    if min(m, n) == 0:  # NOTE: the loop body is traced even for zero steps, and take() on an empty axis fails
        return a, taus
    return lax.fori_loop(0, min(m, n), step, (a, taus))


def _geqrf_fwd(a: Any) -> tuple:
    return _geqrf_impl(a), None


def _geqrf_bwd(res: Any, g: Any) -> tuple:
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf_impl.defvjp(_geqrf_fwd, _geqrf_bwd)
_GEQRF = _rt("geqrf", ("a", "tau"))


@defop(promote=None, grad_name="GeqrfBackward0", check=_geqrf_check, returns=_GEQRF)
def geqrf(input: RawTensor) -> Any:
    """torch.geqrf: R above the diagonal, the Householder vectors below it, and their scales tau."""
    return _geqrf_impl(input)


def _householder_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A, tau = dyn
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to {tau.dim()} "
            f"and input.ndim is equal to {A.dim()}"
        )


@defop(promote="default", namespaces=("torch", "Tensor", "linalg:householder_product"),
       grad_name="LinalgHouseholderProductBackward0", check=_householder_check, out=True)  # fmt: skip
def orgqr(input: TensorArg, tau: TensorArg) -> Any:
    """torch.linalg.householder_product: the first n columns of H_1 ... H_k (H_i = I - tau_i v_i v_i^H)."""
    m, n = input.shape[-2:]
    rows, cols = jnp.arange(m), jnp.arange(n)
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=input.dtype), input.shape)

    def step(t: Any, q: Any) -> Any:  # LAPACK's orgqr order: reflectors last to first, column i set last
        i = tau.shape[-1] - 1 - t
        v = jnp.where(rows == i, 1, jnp.where(rows > i, jnp.take(input, i, axis=-1), 0)).astype(input.dtype)
        t_i = jnp.take(tau, i, axis=-1)
        w = jnp.einsum("...m,...mn->...n", jnp.conj(v), q)
        q = jnp.where(cols > i, q + v[..., :, None] * (-t_i[..., None] * w)[..., None, :], q)
        col = jnp.where(rows < i, 0, jnp.where(rows == i, 1 - t_i[..., None], -t_i[..., None] * v))
        return jnp.where(cols == i, col[..., :, None], q)

    if tau.shape[-1] == 0:  # no reflectors (the loop body is traced even for zero steps)
        return q
    return lax.fori_loop(0, tau.shape[-1], step, q)


_QR_WARNING = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"
)


@expose("torch")
def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    warnings.warn(_QR_WARNING, UserWarning, stacklevel=2)
    return _QR_OLD(*_linalg_qr(input, "reduced" if some else "complete"))


def _svd_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _matrix_input("linalg.svd", dyn[0], square=False)


@defop(promote=None, method=False, grad_name="LinalgSvdBackward0", check=_svd_check, returns=_SVD)
def _linalg_svd(A: RawTensor, full_matrices: bool) -> Any:
    return tuple(jnp.linalg.svd(A, full_matrices=full_matrices))


def _svd_nan_check(A: Tensor) -> None:
    """torch's LAPACK error for a NaN input (an inf gives NaNs without one, as in torch)."""
    if not (A._dtype.is_floating_point or A._dtype.is_complex) or A.numel() == 0:
        return
    bad = np.asarray(_has_nan_per_matrix(A._data()))
    if bad.any():
        where = f"(Batch element {int(np.argmax(bad.reshape(-1)))}): " if A.dim() > 2 else ""
        raise _LinAlgError(
            f"linalg.svd: {where}The algorithm failed to converge because the input matrix contained non-finite values."
        )


@jax.jit
def _has_nan_per_matrix(a: Any) -> Any:
    return jnp.isnan(a).any(axis=(-2, -1))


@expose("linalg", "svd")
def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: Any = None) -> Any:
    res = _linalg_svd(A, bool(full_matrices))
    _svd_nan_check(A)
    if out is not None:
        for o, r in zip(out, res):
            registry.copy_to_out(r, o)
        return _SVD(*out)
    return res


@expose("torch")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """torch.svd (legacy): returns V, not Vh; with compute_uv=False, U and V are zero-filled."""
    U, S, Vh = _linalg_svd(input, not some)
    _svd_nan_check(input)
    if not compute_uv:
        from .creation import zeros

        m, n = input._shape[-2], input._shape[-1]
        batch = tuple(input._shape[:-2])
        return _SVD_OLD(
            zeros(batch + (m, m), dtype=input._dtype), S.detach(), zeros(batch + (n, n), dtype=input._dtype)
        )
    return _SVD_OLD(U, S, Vh.mH)


@defop(promote=None, method=False, grad_name="LinalgSvdBackward0", check=_svd_check, out=True)
def _svdvals(A: RawTensor) -> Any:
    return jnp.linalg.svd(A, compute_uv=False)


@expose("linalg")
def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    res = _svdvals(A, out=out)
    _svd_nan_check(A)
    return res


def _eigh_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _matrix_input("linalg.eigh", dyn[0])
    if static[0] not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {static[0]}")


def _eigh(A: Any, uplo: str) -> tuple:
    v, w = lax.linalg.eigh(_lower_sym(A, uplo == "U"), lower=True, symmetrize_input=False)
    return v, w


@defop(promote=None, method=False, grad_name="LinalgEighBackward0", check=_eigh_check, returns=_EIGH)
def _linalg_eigh(A: RawTensor, UPLO: str) -> Any:
    v, w = _eigh(A, UPLO)
    return w, v


@expose("linalg")
def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    res = _linalg_eigh(A, UPLO)
    if out is not None:
        for o, r in zip(out, res):
            registry.copy_to_out(r, o)
        return _EIGH(*out)
    return res


@defop(promote=None, method=False, grad_name="LinalgEighBackward0", check=_eigh_check, out=True)
def _eigvalsh(A: RawTensor, UPLO: str) -> Any:
    return _eigh(A, UPLO)[1]


@expose("linalg")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    return _eigvalsh(A, UPLO, out=out)


# --- pinv, lstsq, rank, power ---------------------------------------------------------------------------


def _pinv_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A = dyn[0]
    if A.dim() < 2 or not (A._dtype.is_floating_point or A._dtype.is_complex):
        raise RuntimeError(
            f"linalg.pinv({D.cpp_name(A._dtype)}{{{list(A._shape)}}}): expected a tensor with 2 or more dimensions of "
            "float, double, cfloat or cdouble types"
        )


def _tolerances(S: Any, m: int, n: int, atol: Any, rtol: Any) -> Any:
    """torch's cutoff: max(atol, rtol * largest singular value); rtol defaults to eps*max(m, n) when
    atol is not given (0 when it is)."""
    eps = jnp.finfo(S.dtype).eps
    smax = jnp.max(S, -1, keepdims=True) if S.shape[-1] else jnp.zeros(S.shape[:-1] + (1,), S.dtype)
    a = 0.0 if atol is None else atol
    r = (eps * max(m, n) if atol is None else 0.0) if rtol is None else rtol
    a, r = (v[..., None] if isinstance(v, jax.Array) else v for v in (a, r))  # tensor tolerances: one per matrix
    return jnp.maximum(a, r * smax)


@defop(promote=None, method=False, grad_name="LinalgPinvBackward0", check=_pinv_check, out=True)
def _pinv(A: RawTensor, atol: OptScalar, rtol: OptScalar, hermitian: bool) -> Any:
    return _pinv_body(A, _real(atol, A), _real(rtol, A), hermitian)


def _real(tol: Any, A: Any) -> Any:
    """A traced Python-number tolerance in A's real dtype (as torch converts it); None stays None."""
    return None if tol is None else jnp.asarray(tol, jnp.finfo(A.dtype).dtype)


@defop(promote=None, method=False, grad_name="LinalgPinvBackward0", check=_pinv_check, out=True)
def _pinv_tensor_tol(A: RawTensor, atol: OptRawTensor, rtol: OptRawTensor, hermitian: bool) -> Any:
    """linalg.pinv with tensor-valued tolerances (broadcast over the batch of matrices)."""
    return _pinv_body(A, atol, rtol, hermitian)


def _pinv_body(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    return _pinv_with_torch_grad(A, _pinv_value(lax.stop_gradient(A), atol, rtol, hermitian))


def _mH(x: Any) -> Any:
    return jnp.swapaxes(x, -1, -2).conj()


@jax.custom_vjp
def _pinv_with_torch_grad(A: Any, P: Any) -> Any:
    """``P`` (pinv(A), computed without a gradient), differentiated as torch's pinv_backward: a closed form in
    A and P, where the SVD's own vjp divides by gaps between singular values (NaN-prone for orthogonal A)."""
    return P


def _pinv_fwd(A: Any, P: Any) -> tuple:
    return P, (A, P)


def _pinv_bwd(res: tuple, g: Any) -> tuple:
    A, P = res
    m, n = A.shape[-2:]
    Ph, gh = _mH(P), _mH(g)
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        gA = -_mH(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    else:
        K = P @ gh
        PhK = Ph @ K
        gA = -_mH(K @ P) + PhK - (PhK @ P) @ A + (gh - A @ K) @ P @ Ph
    return gA, jnp.zeros_like(P)


_pinv_with_torch_grad.defvjp(_pinv_fwd, _pinv_bwd)


def _pinv_value(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    m, n = A.shape[-2:]
    if hermitian:
        v, w = lax.linalg.eigh(_lower_sym(A, False), lower=True, symmetrize_input=False)
        tol = _tolerances(jnp.abs(w), m, n, atol, rtol)
        keep = jnp.abs(w) > tol
        winv = jnp.where(keep, 1 / jnp.where(keep, w, 1), 0)
        return (v * winv[..., None, :]) @ jnp.swapaxes(v, -1, -2).conj()
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    tol = _tolerances(S, m, n, atol, rtol)
    keep = S > tol
    sinv = jnp.where(keep, 1 / jnp.where(keep, S, 1), 0)
    return jnp.swapaxes(Vh, -1, -2).conj() @ (sinv[..., :, None] * jnp.swapaxes(U, -1, -2).conj())


@expose("linalg")
def pinv(
    A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, out: Tensor | None = None
) -> Tensor:
    tensor_tol, atol, rtol = _tolerance_args(atol, rtol)
    return (_pinv_tensor_tol if tensor_tol else _pinv)(A, atol, rtol, bool(hermitian), out=out)


def _tolerance_args(atol: Any, rtol: Any) -> tuple:
    """(tensor-valued?, atol, rtol): Python floats (traced kernel arguments), or both as tensors (or None)."""
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        from .creation import tensor

        return True, *(v if v is None or isinstance(v, Tensor) else tensor(float(v)) for v in (atol, rtol))
    return False, None if atol is None else float(atol), None if rtol is None else float(rtol)


@expose("torch")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return _pinv(input, None, float(rcond), False)


def _lstsq_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A, B = dyn[:2]
    _float_input("torch.linalg.lstsq", A)
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A._dtype is not B._dtype:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
            f"{D.cpp_name(A._dtype)} and other's dtype {D.cpp_name(B._dtype)}"
        )
    vector = B.dim() == A.dim() - 1
    if A._shape[-2] != B._shape[-1 if vector else -2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if vector
            else "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
        )  # fmt: skip
    if static[0] not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")


@defop(promote=None, method=False, grad_name="LinalgLstsqBackward0", check=_lstsq_check, returns=_LSTSQ)
def _lstsq(A: RawTensor, B: RawTensor, rcond: OptScalar, driver: str) -> Any:
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    m, n = A.shape[-2:]
    batch = jnp.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    Ab = jnp.broadcast_to(A, batch + A.shape[-2:])
    Bb = jnp.broadcast_to(Bm, batch + Bm.shape[-2:])
    U, S, Vh = jnp.linalg.svd(lax.stop_gradient(Ab), full_matrices=False)
    rel = jnp.finfo(A.dtype).eps * max(m, n) if rcond is None else _real(rcond, A)
    cutoff = rel * jnp.max(S, -1, keepdims=True)
    keep = S > cutoff
    sinv = jnp.where(keep, 1 / jnp.where(keep, S, 1), 0)
    # torch differentiates the solution as pinv(A) @ B, with pinv's closed-form backward
    X = _pinv_with_torch_grad(Ab, _mH(Vh) @ (sinv[..., :, None] * _mH(U))) @ Bb
    # what each LAPACK driver reports: gelsy no residuals or singular values, gels no rank either
    rank = jnp.sum(lax.stop_gradient(keep), -1).astype(jnp.int64) if driver != "gels" else jnp.zeros((0,), jnp.int64)
    if m > n and driver != "gelsy":
        residuals = jnp.sum(jnp.abs(Ab @ X - Bb) ** 2, -2)
    else:
        residuals = jnp.zeros((0,), A.dtype)
    sv = lax.stop_gradient(S) if driver in ("gelsd", "gelss") else jnp.zeros((0,), A.dtype)
    return (X[..., 0] if vector else X), residuals, rank, sv


@expose("linalg")
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Any:
    """torch.linalg.lstsq, solved through the SVD for every driver (same solutions for full-rank inputs)."""
    res = _lstsq(A, B, None if rcond is None else float(rcond), driver or "gelsy")
    residuals = res.residuals
    if residuals.numel() and res.rank.numel() and bool((res.rank._host() < A._shape[-1]).any()):
        from .creation import empty

        residuals = empty(0, dtype=A._dtype)
    # torch: the singular values are not differentiable outputs
    return _LSTSQ(res.solution, residuals, res.rank, res.singular_values.detach())


def _rank_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A = dyn[0]
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    _float_input("linalg.matrix_rank", A)


@defop(promote=None, method=False, differentiable=False, check=_rank_check, out=True)
def _matrix_rank(A: RawTensor, atol: OptScalar, rtol: OptScalar, hermitian: bool) -> Any:
    return _matrix_rank_body(A, _real(atol, A), _real(rtol, A), hermitian)


@defop(promote=None, method=False, differentiable=False, check=_rank_check, out=True)
def _matrix_rank_tensor_tol(A: RawTensor, atol: OptRawTensor, rtol: OptRawTensor, hermitian: bool) -> Any:
    """linalg.matrix_rank with tensor-valued tolerances (broadcast over the batch of matrices)."""
    return _matrix_rank_body(A, atol, rtol, hermitian)


def _matrix_rank_body(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    m, n = A.shape[-2:]
    if hermitian:
        S = jnp.abs(lax.linalg.eigh(_lower_sym(A, False), lower=True, symmetrize_input=False)[1])
    else:
        S = jnp.linalg.svd(A, compute_uv=False)
    tol = _tolerances(S, m, n, atol, rtol)
    return jnp.sum(S > tol, -1).astype(jnp.int64)


@expose("linalg")
def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                out: Tensor | None = None) -> Tensor:  # fmt: skip
    tensor_tol, atol, rtol = _tolerance_args(atol, rtol)
    return (_matrix_rank_tensor_tol if tensor_tol else _matrix_rank)(A, atol, rtol, bool(hermitian), out=out)


@expose("torch")
@expose("linalg")
def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """torch's binary powering with matmul (so the graph, and grad_fn names, are torch's)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are {A._shape[-2]} by "
            f"{A._shape[-1]} matrices"
        )
    n = int(n)
    if n == 0:
        from .creation import eye

        I = eye(A._shape[-1], dtype=A._dtype, device=A.device).expand(A._shape)
        return _finish(A.clone().copy_(I), out)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 1:
        return _finish(a.clone(), out)
    if n == 2:
        return _finish(matmul(a, a), out)
    if n == 3:
        return _finish(matmul(matmul(a, a), a), out)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            if n == 0:
                return _finish(z.clone() if result is None else matmul(result, z), out)
            result = z if result is None else matmul(result, z)
    return _finish(result, out)


@defop(promote=None, namespaces=("torch", "Tensor", "linalg"), grad_name="LinalgMatrixExpBackward0",
       check=_square_check("linalg.matrix_exp"))  # fmt: skip
def matrix_exp(A: RawTensor) -> Any:
    return jax.scipy.linalg.expm(A)


# --- norms ------------------------------------------------------------------------------------------------


def _norm_dims(dim: Any, ndim: int) -> tuple | None:
    if dim is None:
        return None
    return dims(tuple(dim) if isinstance(dim, (list, tuple)) else int(dim), ndim)


def _vector_norm_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, ord = dyn
    if static[2] is None:
        _float_input("linalg.vector_norm", x)
    dim = static[0]
    if x.numel() == 0 and (ord < 0 or math.isinf(ord)) and (dim is None or any(
            x._shape[d] == 0 for d in (_norm_dims(dim, x.dim()) or ()))):  # fmt: skip
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {_fmt_ord(ord)} norm on an empty tensor because the operation "
            "does not have an identity"
        )
    dt = static[2]
    if dt is not None and D.promote_types(x._dtype, dt) is not dt:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({D.cpp_name(x._dtype)}) should be convertible without "
            f"narrowing to the specified dtype ({D.cpp_name(dt)})"
        )


def _vector_norm_name(static: tuple, dyn: tuple) -> str:
    return "LinalgVectorNormBackward0"


@defop(promote=None, method=False, grad_name=_vector_norm_name, check=_vector_norm_check, out=True, out_dtype="exact",
       bake=special_ord)  # fmt: skip
def _vector_norm(x: RawTensor, ord: ScalarOrStatic, dim: Any, keepdim: bool, dtype: Any) -> Any:
    if dtype is not None:
        x = x.astype(dtype.np)
    elif not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{D.cpp_name(D.from_numpy_dtype(x.dtype))}"
        )
    axes = _norm_dims(dim, x.ndim)
    if x.ndim == 0:
        axes = None
    out = _vector_norm_impl(x, ord, axes, keepdim)
    if keepdim and axes is None and x.ndim:
        out = out.reshape((1,) * x.ndim)
    return out.real if jnp.iscomplexobj(out) else out


def _static_dim(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim


@expose("linalg")
def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:  # fmt: skip
    if isinstance(ord, Tensor):
        ord = ord.item()
    dt = D.to_dtype(dtype) if dtype is not None else None
    if dt is not None and not (x._dtype.is_floating_point or x._dtype.is_complex):
        _float_input("linalg.vector_norm", x)
    result = _vector_norm(x, float(ord), _static_dim(dim), bool(keepdim), dt, out=out)
    if ord == 0:  # torch: the order-0 norm (a count) has an undefined gradient, so x.grad stays None
        graph.undefined_gradient(result)
    return result


def _matrix_dims(name: str, A: Tensor, dim: Any) -> tuple:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(
            f"{name}: dim must be a 2-tuple. Got {dim if not isinstance(dim, (tuple, list)) else ' '.join(map(str, dim))}"
        )
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _check_norm_out(name: str, A: Tensor, dtype: Any, out: Tensor | None) -> None:
    """torch's matrix and linalg norms want ``out`` in exactly the result's dtype."""
    if out is None or not (A._dtype.is_floating_point or A._dtype.is_complex):
        return
    want = D.to_dtype(dtype) if dtype is not None else A._dtype.to_real()
    if out._dtype is not want:
        raise RuntimeError(f"{name} expected out tensor dtype {D.cpp_name(want)} but got: {D.cpp_name(out._dtype)}")


@expose("linalg")
def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:  # fmt: skip
    from .reduction import amax, amin
    from .reduction import sum as _sum

    d0, d1 = _matrix_dims("linalg.matrix_norm", A, dim)
    _check_norm_out("linalg.matrix_norm", A, dtype, out)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        _float_input("linalg.matrix_norm", A)
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype, out=out)
        x = A if dtype is None else A.to(dtype)
        sv = svdvals(x.movedim((d0, d1), (-2, -1)))
        r = _sum(sv, -1)
        return _finish(_keep(r, keepdim, d0, d1), out)
    ord = float(ord)
    if ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt_ord(ord)} not supported.")
    _float_input("linalg.matrix_norm", A)
    x = A if dtype is None else A.to(dtype)
    if abs(ord) == 2:
        sv = svdvals(x.movedim((d0, d1), (-2, -1)))
        r = amax(sv, -1) if ord > 0 else amin(sv, -1)
        return _finish(_keep(r, keepdim, d0, d1), out)
    # 1: max column sum; inf: max row sum
    red, over = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if not keepdim and red < over:
        over -= 1
    s = _sum(x.abs(), red, keepdim=keepdim)
    r = amax(s, over, keepdim=keepdim) if ord > 0 else amin(s, over, keepdim=keepdim)
    return _finish(r, out)


def _fmt_ord(ord: float) -> str:
    return str(int(ord)) if ord.is_integer() else str(ord)


def _keep(r: Tensor, keepdim: bool, d0: int, d1: int) -> Tensor:
    if not keepdim:
        return r
    for d in sorted((d0, d1)):
        r = r.unsqueeze(d)
    return r


@expose("linalg", "norm")
def linalg_norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:  # fmt: skip
    _check_norm_out("linalg.norm", A, dtype, out)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)


@expose("torch")
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Tensor | None = None,
         dtype: Any = None) -> Tensor:  # fmt: skip
    """torch.norm (deprecated in torch): vector norms, or 'fro'/'nuc' matrix norms."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if p == "nuc":
            return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype, out=out)
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype, out=out)


def _norm_method(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return norm(self, p, dim, keepdim, dtype=dtype)


def _det_method(self: Tensor) -> Tensor:
    return det(self)



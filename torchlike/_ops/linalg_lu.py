"""torch.linalg's LU, LDL and eigen-decompositions and the helpers around them: lu_factor(_ex), lu, lu_unpack,
lu_solve, ldl_factor(_ex), ldl_solve, eig, eigvals, cond, tensorinv, tensorsolve, vander, triangular_solve,
ormqr, svd_lowrank, pca_lowrank (public at ``torchlike.linalg`` and, for the legacy names, ``torchlike``).

Pivots are LAPACK's (1-based, int32), as torch returns them. LDL runs LAPACK's ``sytrf``/``sytrs`` (through
SciPy) on the host, so it has no gradient and needs concrete inputs, as torch has no gradient for it either.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import dtype as D
from .._core.tensor import Tensor, wrap_dim
from . import registry, return_types
from .linalg_decomp import _float_input, _matrix_input, _raise_info, _rt
from .registry import RawTensor, TensorArg, defop, expose


_LU_FACTOR = _rt("linalg_lu_factor", ("LU", "pivots"))
_LU_FACTOR_EX = _rt("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU = _rt("linalg_lu", ("P", "L", "U"))
_LU_UNPACK = _rt("lu_unpack", ("P", "L", "U"))
_LDL = _rt("linalg_ldl_factor", ("LD", "pivots"))
_LDL_EX = _rt("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_EIG = getattr(return_types, "linalg_eig")
_TRI = _rt("triangular_solve", ("solution", "cloned_coefficient"))
for _cls in (_LU_FACTOR, _LU_FACTOR_EX, _LU, _LU_UNPACK, _LDL, _LDL_EX, _TRI):
    setattr(return_types, _cls.__name__, _cls)


# --- LU ----------------------------------------------------------------------------------------------------


def _lu_check(name: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        _matrix_input(name, dyn[0], square=False)
        if not static[0]:
            raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")

    return check


def _lu_core(A: Any) -> tuple:
    lu, piv, _ = lax.linalg.lu(A)
    k = min(A.shape[-2], A.shape[-1])
    diag = jnp.diagonal(lu, 0, -2, -1)[..., :k]
    zero = diag == 0
    info = jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)
    return lu, (piv[..., :k] + 1).astype(jnp.int32), info


@defop("_lu_factor_ex", promote=None, method=False, grad_name="LinalgLuFactorExBackward0",
       check=_lu_check("linalg.lu_factor_ex"), returns=_LU_FACTOR_EX)  # fmt: skip
def _lu_factor_ex(A: RawTensor, pivot: bool) -> Any:
    return _lu_core(A)


@expose("linalg")
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: Any = None) -> Any:
    """torch.linalg.lu_factor_ex: LAPACK's getrf (partial pivoting); ``info`` > 0 marks an exactly singular U."""
    res = _lu_factor_ex(A, pivot)
    if check_errors:
        _raise_info("linalg.lu_factor_ex", res[2], _singular_u)
    return _finish_tuple(res, out, _LU_FACTOR_EX)


def _singular_u(i: int) -> str:
    return f"The factorization could not be completed because the input is not invertible: U[{i},{i}] is zero."


@expose("linalg")
def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """torch.linalg.lu_factor: :func:`lu_factor_ex` that raises on a singular input, as torch does."""
    res = _lu_factor_ex(A, pivot)
    if A.dim() >= 2 and A.shape[-1] == A.shape[-2]:
        _raise_info("linalg.lu_factor", res[2], lambda i: (
            f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want "
            "to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"))
    return _finish_tuple(res[:2], out, _LU_FACTOR)


def _finish_tuple(res: tuple, out: Any, cls: type) -> Any:
    if out is None:
        return cls(*res)
    for r, o in zip(res, out):
        registry.copy_to_out(r, o)
    return cls(*out)


def _permutation(pivots: Any, m: int) -> Any:
    """The permutation ``perm`` with ``A[perm] = L @ U`` from LAPACK's 1-based row swaps."""
    batch = pivots.shape[:-1]
    perm = jnp.broadcast_to(jnp.arange(m, dtype=jnp.int32), batch + (m,))
    for i in range(pivots.shape[-1]):
        j = pivots[..., i] - 1
        pi = perm[..., i]
        pj = jnp.take_along_axis(perm, j[..., None], -1)[..., 0]
        perm = perm.at[..., i].set(pj)
        perm = jnp.where(jnp.arange(m) == j[..., None], pi[..., None], perm)
    return perm


def _unpack(LU: Any, pivots: Any, unpack_data: bool, unpack_pivots: bool) -> tuple:
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    if unpack_data:
        L = jnp.tril(LU[..., :, :k], -1) + jnp.eye(m, k, dtype=LU.dtype)
        U = jnp.triu(LU[..., :k, :])
    else:
        L = jnp.zeros((0,), LU.dtype)
        U = jnp.zeros((0,), LU.dtype)
    if unpack_pivots:
        perm = _permutation(pivots, m)
        P = jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=LU.dtype), -1, -2)
    else:
        P = jnp.zeros((0,), LU.dtype)
    return P, L, U


@defop("_linalg_lu", promote=None, method=False, grad_name="LinalgLuBackward0", check=_lu_check("linalg.lu"),
       returns=_LU)  # fmt: skip
def _linalg_lu(A: RawTensor, pivot: bool) -> Any:
    lu, piv, _ = _lu_core(A)
    return _unpack(lu, piv, True, True)


@expose("linalg", "lu")
def linalg_lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """torch.linalg.lu: ``P, L, U`` with ``A = P @ L @ U``."""
    P, L, U = _linalg_lu(A, pivot)
    return _finish_tuple((P.detach(), L, U), out, _LU)  # torch: P is not differentiable


def _unpack_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    LU, piv = dyn
    if LU.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU.shape)} instead")  # fmt: skip
    if piv._dtype is not D.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")


@defop("_lu_unpack", promote=None, method=False, grad_name="LuUnpackBackward0", check=_unpack_check,
       returns=_LU_UNPACK)  # fmt: skip
def _lu_unpack(LU_data: RawTensor, LU_pivots: RawTensor, unpack_data: bool, unpack_pivots: bool) -> Any:
    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


@expose("torch")
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *,
              out: Any = None) -> Any:  # fmt: skip
    """torch.lu_unpack: ``P, L, U`` from :func:`linalg.lu_factor`'s output (empty tensors for what is not unpacked)."""
    P, L, U = _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    return _finish_tuple((P.detach(), L, U), out, _LU_UNPACK)  # torch: P is not differentiable


def _tri(M: Any, B: Any, lower: bool, unit: bool, trans: bool) -> Any:
    return lax.linalg.triangular_solve(M, B, left_side=True, lower=lower, transpose_a=trans, conjugate_a=trans,
                                       unit_diagonal=unit)  # fmt: skip


def _lu_solve_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    LU, piv, B = dyn
    _matrix_input("linalg.lu_solve", LU)
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    left = static[0]
    if left and B.shape[-2] != LU.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({LU.shape[-2]}x{LU.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")  # fmt: skip
    if not left and B.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B "
                           f"({LU.shape[-2]}x{LU.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")  # fmt: skip
    if LU._dtype is not B._dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{D.cpp_name(LU._dtype)} and B of type {D.cpp_name(B._dtype)} instead")  # fmt: skip


def _lu_solve_left(LU: Any, perm: Any, B: Any, adjoint: bool) -> Any:
    if not adjoint:
        PB = jnp.take_along_axis(B, perm[..., :, None], -2)
        Y = _tri(LU, PB, True, True, False)
        return _tri(LU, Y, False, False, False)
    Y = _tri(LU, B, False, False, True)
    Z = _tri(LU, Y, True, True, True)
    inv = jnp.argsort(perm, -1)
    return jnp.take_along_axis(Z, inv[..., :, None], -2)


@defop("_linalg_lu_solve", promote=None, method=False, grad_name="LinalgLuSolveBackward0", check=_lu_solve_check)
def _linalg_lu_solve(LU: RawTensor, pivots: RawTensor, B: RawTensor, left: bool, adjoint: bool) -> Any:
    batch = jnp.broadcast_shapes(LU.shape[:-2], B.shape[:-2], pivots.shape[:-1])
    LU = jnp.broadcast_to(LU, batch + LU.shape[-2:])
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    perm = jnp.broadcast_to(_permutation(pivots, LU.shape[-1]), batch + (LU.shape[-1],))
    if left:
        return _lu_solve_left(LU, perm, B, adjoint)
    # X A = B  <=>  A^H X^H = B^H
    Xh = _lu_solve_left(LU, perm, jnp.conj(jnp.swapaxes(B, -1, -2)), not adjoint)
    return jnp.conj(jnp.swapaxes(Xh, -1, -2))


@expose("linalg", "lu_solve")
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
                    out: Tensor | None = None) -> Tensor:  # fmt: skip
    """torch.linalg.lu_solve: solve ``A X = B`` (or ``X A = B``, or with ``A^H``) from :func:`lu_factor`."""
    result = _linalg_lu_solve(LU, pivots, B, left, adjoint)
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


@expose("torch")
def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.lu_solve (deprecated in torch): :func:`linalg.lu_solve` with the arguments reordered."""
    return linalg_lu_solve(LU_data, LU_pivots, b, out=out)


@expose("torch")
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """torch.lu (deprecated in torch): :func:`linalg.lu_factor_ex`, with ``info`` when ``get_infos``."""
    res = _lu_factor_ex(A, pivot)
    if not get_infos:
        _raise_info("torch.linalg.lu_factor_ex", res[2], _singular_u)
    return tuple(res) if get_infos else (res[0], res[1])


# --- LDL (LAPACK sytrf/hetrf on the host) ------------------------------------------------------------------


def _lapack(name: str, dtype: Any) -> Any:
    from scipy.linalg import lapack

    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[np.dtype(dtype).type]
    return getattr(lapack, prefix + name)


def _ldl_host(A: np.ndarray, hermitian: bool) -> tuple:
    name = "hetrf" if hermitian and np.iscomplexobj(A) else "sytrf"
    fn = _lapack(name, A.dtype)
    batch = A.shape[:-2]
    n = A.shape[-1]
    flat = A.reshape((-1, n, n))
    LD = np.empty_like(flat)
    piv = np.empty((flat.shape[0], n), np.int32)
    info = np.empty(flat.shape[0], np.int32)
    for i, a in enumerate(flat):
        ld, p, inf = fn(a, lower=1)[:3]
        LD[i] = np.tril(ld)
        piv[i] = p
        info[i] = inf
    return LD.reshape(A.shape), piv.reshape(batch + (n,)), info.reshape(batch)


@defop("_ldl_factor_ex", promote=None, method=False, differentiable=False, check=lambda c, d, s: _matrix_input(
    "torch.linalg.ldl_factor_ex", d[0]), returns=_LDL_EX)  # fmt: skip
def _ldl_factor_ex(A: RawTensor, hermitian: bool) -> Any:
    n = A.shape[-1]
    shapes = (jax.ShapeDtypeStruct(A.shape, A.dtype), jax.ShapeDtypeStruct(A.shape[:-1], jnp.int32),
              jax.ShapeDtypeStruct(A.shape[:-2], jnp.int32))  # fmt: skip
    if A.size == 0:
        return A, jnp.zeros(A.shape[:-2] + (n,), jnp.int32), jnp.zeros(A.shape[:-2], jnp.int32)
    return jax.pure_callback(lambda a: _ldl_host(np.asarray(a), hermitian), shapes, A)


@expose("linalg")
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    """torch.linalg.ldl_factor_ex: LAPACK's Bunch-Kaufman LDL^T (``sytrf``; ``hetrf`` when ``hermitian``)."""
    res = _ldl_factor_ex(A, hermitian)
    if check_errors:
        _raise_info("torch.linalg.ldl_factor_ex", res[2], lambda i: f"The factorization could not be completed "
                    f"because the input is not invertible: D[{i},{i}] is zero.")  # fmt: skip
    return _finish_tuple(res, out, _LDL_EX)


@expose("linalg")
def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> Any:
    """torch.linalg.ldl_factor: :func:`ldl_factor_ex` that raises on a non-zero ``info``."""
    res = _ldl_factor_ex(A, hermitian)
    _raise_info("torch.linalg.ldl_factor", res[2], lambda i: f"The factorization could not be completed because "
                f"the input is not invertible: D[{i},{i}] is zero.")  # fmt: skip
    return _finish_tuple(res[:2], out, _LDL)


def _ldl_solve_host(LD: np.ndarray, piv: np.ndarray, B: np.ndarray, hermitian: bool) -> np.ndarray:
    name = "hetrs" if hermitian and np.iscomplexobj(LD) else "sytrs"
    fn = _lapack(name, LD.dtype)
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2], piv.shape[:-1])
    LD = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    B = np.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    out = np.empty_like(B)
    for i in range(B.shape[0]):
        out[i] = fn(LD[i], piv[i], B[i], lower=1)[0]
    return out.reshape(batch + B.shape[-2:])


def _ldl_solve_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    LD, piv, B = dyn
    _matrix_input("torch.linalg.ldl_solve", LD)
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, but it has "
                           f"{B.dim()} dimensions instead")  # fmt: skip
    if piv._dtype is not D.int32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {D.cpp_name(piv._dtype)}")
    if LD._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD and B to have the same dtype, but found LD of type "
                           f"{D.cpp_name(LD._dtype)} and B of type {D.cpp_name(B._dtype)} instead")  # fmt: skip


@defop("_ldl_solve", promote=None, method=False, differentiable=False, check=_ldl_solve_check)
def _ldl_solve(LD: RawTensor, pivots: RawTensor, B: RawTensor, hermitian: bool) -> Any:
    batch = jnp.broadcast_shapes(LD.shape[:-2], B.shape[:-2], pivots.shape[:-1])
    shape = jax.ShapeDtypeStruct(batch + B.shape[-2:], B.dtype)
    if math.prod(shape.shape) == 0:
        return jnp.zeros(shape.shape, B.dtype)
    return jax.pure_callback(lambda a, p, b: _ldl_solve_host(np.asarray(a), np.asarray(p), np.asarray(b), hermitian),
                             shape, LD, pivots, B)  # fmt: skip


@expose("linalg")
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out: Tensor | None = None) -> Tensor:
    """torch.linalg.ldl_solve: solve ``A X = B`` from :func:`ldl_factor`'s output (LAPACK's ``sytrs``)."""
    result = _ldl_solve(LD, pivots, B, hermitian)
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


# --- eig, eigvals ------------------------------------------------------------------------------------------


def _eig_check(name: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        _matrix_input(name, dyn[0])
        host = np.asarray(dyn[0]._data())
        if not np.isfinite(host).all():
            raise RuntimeError(f"{name}: input tensor should not contain infs or NaNs.")

    return check


def _complex_of(dt: Any) -> Any:
    return jnp.complex64 if dt in (jnp.float32, jnp.complex64) else jnp.complex128


@defop("_linalg_eig", promote=None, method=False, grad_name="LinalgEigBackward0", check=_eig_check("linalg.eig"),
       returns=_EIG)  # fmt: skip
def _linalg_eig(A: RawTensor) -> Any:
    w, v = jnp.linalg.eig(A)
    ct = _complex_of(A.dtype)
    return w.astype(ct), v.astype(ct)


@expose("linalg", "eig")
def linalg_eig(A: Tensor, *, out: Any = None) -> Any:
    """torch.linalg.eig: LAPACK's geev; eigenvectors have unit norm (their phase is LAPACK's, as in torch)."""
    return _finish_tuple(_linalg_eig(A), out, _EIG)


@defop("_linalg_eigvals", promote=None, method=False, grad_name="LinalgEigBackward0",
       check=_eig_check("linalg.eigvals"))  # fmt: skip
def _linalg_eigvals(A: RawTensor) -> Any:
    return jnp.linalg.eigvals(A).astype(_complex_of(A.dtype))


@expose("linalg")
def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    result = _linalg_eigvals(A)
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


# --- cond, tensorinv, tensorsolve, vander --------------------------------------------------------------------


def _cond_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A = dyn[0]
    p = static[0]
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    _float_input("linalg.cond", A)
    if p not in (None, 2, -2) and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")  # fmt: skip
    if p not in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")


def _mnorm(A: Any, p: Any) -> Any:
    a = jnp.abs(A)
    if p == "fro":
        return jnp.sqrt((a * a).sum((-2, -1)))
    if p == "nuc":
        return jnp.linalg.svd(A, compute_uv=False).sum(-1)
    if p in (1, -1):
        s = a.sum(-2)
        return s.max(-1) if p == 1 else s.min(-1)
    s = a.sum(-1)
    return s.max(-1) if p == math.inf else s.min(-1)


@defop(promote=None, namespaces=("torch", "linalg"), grad_name="DivBackward0", check=_cond_check, out=True)
def cond(A: RawTensor, p: Any = None) -> Any:
    if p in (None, 2, -2):
        s = jnp.linalg.svd(A, compute_uv=False)
        if s.shape[-1] == 0:
            return jnp.zeros(s.shape[:-1], s.dtype)
        r = s[..., 0] / s[..., -1]
        return r if p != -2 else s[..., -1] / s[..., 0]
    real = jnp.finfo(A.dtype).dtype
    if A.shape[-1] == 0:
        return jnp.zeros(A.shape[:-2], real)
    lu, _, _ = lax.linalg.lu(lax.stop_gradient(A))
    singular = (jnp.diagonal(lu, 0, -2, -1) == 0).any(-1)
    inv = jnp.linalg.inv(jnp.where(singular[..., None, None], jnp.eye(A.shape[-1], dtype=A.dtype), A))
    res = _mnorm(A, p) * _mnorm(inv, p)
    return jnp.where(singular, jnp.inf, res).astype(real)


@expose("linalg")
def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """torch.linalg.tensorinv: the inverse of ``A`` seen as a matrix of its first ``ind`` and remaining dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(left), math.prod(right)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")  # fmt: skip
    from .linalg_decomp import inv

    result = inv(A.reshape(rows, cols)).reshape(right + left)
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


@expose("linalg")
def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Tensor | None = None) -> Tensor:
    """torch.linalg.tensorsolve: the ``X`` with ``tensordot(A, X, X.ndim) == B``."""
    from .linalg_decomp import solve

    if dims is not None:
        nd = A.dim()
        dims = [wrap_dim(d, nd) for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        A = A.permute(rest + dims)
    nb = B.dim()
    result_shape = tuple(A.shape)[nb:]
    n = math.prod(result_shape)
    if math.prod(tuple(A.shape)[:nb]) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {math.prod(tuple(A.shape)[:nb])}")  # fmt: skip
    result = solve(A.reshape(B.numel(), n), B.reshape(B.numel())).reshape(result_shape)
    if out is None:
        return result
    registry.copy_to_out(result, out)
    return out


def _vander_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    N = static[0]
    n = N if N is not None else (x.shape[-1] if x.dim() else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x._dtype is D.bool:
        raise RuntimeError('"cumprod_cpu" not implemented for \'Bool\'')


@defop("_linalg_vander", promote=None, method=False, grad_name="CumprodBackward0", check=_vander_check)
def _linalg_vander(x: RawTensor, N: Any) -> Any:
    x = x if x.ndim else x.reshape(1)
    n = x.shape[-1] if N is None else N
    ones = jnp.ones(x.shape + (1,), x.dtype)
    if n <= 1:
        return ones[..., :n]
    if jnp.issubdtype(x.dtype, jnp.integer):
        x = x.astype(jnp.int64)
        ones = ones.astype(jnp.int64)
    powers = jnp.cumprod(jnp.broadcast_to(x[..., None], x.shape + (n - 1,)), -1)
    return jnp.concatenate([ones, powers], -1)


@expose("linalg")
def vander(x: Tensor, N: int | None = None) -> Tensor:
    """torch.linalg.vander: columns ``x**0, x**1, ..., x**(N-1)`` (increasing powers, unlike torch.vander)."""
    return _linalg_vander(x, N)


# --- triangular_solve, ormqr ------------------------------------------------------------------------------


def _trisolve_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    b, A = dyn
    if b.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{b.dim()} dimensions instead")  # fmt: skip
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.triangular_solve: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")  # fmt: skip
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"torch.triangular_solve: Incompatible matrix sizes for triangular_solve: each A matrix "
                           f"is {A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} by "
                           f"{b.shape[-1]}")  # fmt: skip
    if b._dtype is not A._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but got b.dtype = {D.cpp_name(b._dtype)} "
                           f"and A.dtype = {D.cpp_name(A._dtype)}")  # fmt: skip
    _float_input("torch.triangular_solve", A)


@defop(promote=None, grad_name="TriangularSolveBackward0", check=_trisolve_check, returns=_TRI)
def triangular_solve(input: RawTensor, A: RawTensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:  # fmt: skip
    batch = jnp.broadcast_shapes(input.shape[:-2], A.shape[:-2])
    Ab = jnp.broadcast_to(A, batch + A.shape[-2:])
    b = jnp.broadcast_to(input, batch + input.shape[-2:])
    M = jnp.triu(Ab) if upper else jnp.tril(Ab)
    x = lax.linalg.triangular_solve(M, b, left_side=True, lower=not upper, transpose_a=transpose,
                                    unit_diagonal=unitriangular)  # fmt: skip
    return x, Ab


def _ormqr_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    A, tau, C = dyn
    if A.dim() < 2 or C.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    left = static[0]
    m = C.shape[-2] if left else C.shape[-1]
    if A.shape[-2] != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    if tau.shape[-1] > A.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if left and tau.shape[-1] != min(C.shape[-2], A.shape[-1]):
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])")


@defop(promote="default", grad_name="OrmqrBackward0", check=_ormqr_check, out=True)
def ormqr(input: TensorArg, input2: TensorArg, input3: TensorArg, left: bool = True, transpose: bool = False) -> Any:
    A, tau, C = input, input2, input3
    m = A.shape[-2]
    k = tau.shape[-1]
    Q = jnp.broadcast_to(jnp.eye(m, dtype=A.dtype), A.shape[:-2] + (m, m))
    for i in range(k):  # Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H
        v = jnp.where(jnp.arange(m) < i, 0, jnp.where(jnp.arange(m) == i, 1, A[..., :, i]))
        H = jnp.eye(m, dtype=A.dtype) - tau[..., i, None, None] * v[..., :, None] * jnp.conj(v[..., None, :])
        Q = Q @ H
    if transpose:
        Q = jnp.conj(jnp.swapaxes(Q, -1, -2))
    return Q @ C if left else C @ Q


# --- randomized low-rank SVD and PCA (torch's Algorithm 5.1 of Halko et al.; same random draws) ----------


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    from .linalg_decomp import linalg_qr
    from .random import randn

    dt = A.dtype if (A.dtype.is_floating_point or A.dtype.is_complex) else D.get_default_dtype()
    R = randn(A.shape[-1], q, dtype=dt, device=A.device)
    X = A.matmul(R)
    if M is not None:
        X = X - M.matmul(R)
    Q = linalg_qr(X).Q
    for _ in range(niter):
        X = A.mH.matmul(Q)
        if M is not None:
            X = X - M.mH.matmul(Q)
        Q = linalg_qr(X).Q
        X = A.matmul(Q)
        if M is not None:
            X = X - M.matmul(Q)
        Q = linalg_qr(X).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None, niter: int | None, M: Tensor | None) -> tuple:
    from .linalg_decomp import linalg_svd

    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


@expose("torch")
def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None) -> tuple:
    """torch.svd_lowrank: randomized SVD (Halko et al., Algorithm 5.1), drawing from torchlike's generator exactly
    as torch draws from its own, so seeded results agree."""
    return _svd_lowrank(A, q, niter, M)


@expose("torch")
def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> tuple:
    """torch.pca_lowrank: :func:`svd_lowrank` of the column-centred ``A``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)



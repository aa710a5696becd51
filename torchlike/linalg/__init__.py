"""torch.linalg: re-exports; the implementations live in ``torchlike._ops.linalg`` and ``_ops.linalg_decomp``."""

from .._core.tensor import Tensor
from .._ops.linalg import linalg_cross as cross
from .._ops.linalg import matmul, multi_dot, vecdot
from .._ops.linalg_decomp import (
    LinAlgError,
    cholesky_ex,
    det,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    pinv,
    solve,
    solve_ex,
    solve_triangular,
    svdvals,
    vector_norm,
)  # fmt: skip
from .._ops.linalg_decomp import linalg_cholesky as cholesky
from .._ops.linalg_decomp import orgqr as householder_product
from .._ops.linalg_decomp import linalg_norm as norm
from .._ops.linalg_decomp import linalg_qr as qr
from .._ops.linalg_decomp import linalg_slogdet as slogdet
from .._ops.linalg_decomp import linalg_svd as svd
from .._ops.linalg_lu import (
    cond,
    eigvals,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu_factor,
    lu_factor_ex,
    tensorinv,
    tensorsolve,
    vander,
)  # fmt: skip
from .._ops.linalg_lu import linalg_eig as eig
from .._ops.linalg_lu import linalg_lu as lu
from .._ops.linalg_lu import linalg_lu_solve as lu_solve
from .._ops.views import diagonal as _diagonal

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "tensorinv", "tensorsolve", "vander",
    "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]  # fmt: skip


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: ``A.diagonal`` with matrix-batch defaults."""
    return _diagonal(A, offset, dim1, dim2)


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)

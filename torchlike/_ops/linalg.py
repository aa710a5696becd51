"""Products: matmul, mm, bmm, mv, dot, vdot, inner, outer, add*mm, einsum, tensordot, cross, cdist (the
decompositions of torch.linalg live in ``linalg_decomp``)."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from .._core import buckets
from .._core import dtype as D
from .._core.tensor import Tensor, wrap_dim
from .._core.graph import show_as
from . import registry
from ._common import _broadcast_shape, special_ord
from .registry import RawTensor, Scalar, ScalarOrStatic, TensorArg, TensorList, defop, expose

_CROSS = (("input", "other"), ("other", "input"))
_CROSS2 = (("input", "mat2"), ("mat2", "input"))


def _same_dtype(a: Any, b: Any, what: str) -> None:
    if a.dtype != b.dtype:
        da, db = D.from_numpy_dtype(a.dtype), D.from_numpy_dtype(b.dtype)
        if what == "dot":
            raise RuntimeError(
                f"dot : expected both vectors to have same dtype, but found {D.cpp_name(da)} and {D.cpp_name(db)}"
            )
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {D.c_type(da)} != {D.c_type(db)}")


# torch's nodes inside matmul (inputs: 0 self, 1 other); see autograd.graph.show_as
show_as("matmul_vm", [("MmBackward0", [("UnsqueezeBackward0", [0]), 1])])
show_as("matmul_folded", [("MmBackward0", [("ViewBackward0", [0]), 1])])
show_as("matmul_batched", [("BmmBackward0", [("ViewBackward0", [("ExpandBackward0", [0])]),
                                              ("ViewBackward0", [("ExpandBackward0", [1])])])])  # fmt: skip
show_as("matmul_mb", [("TransposeBackward0", [("UnsafeViewBackward0", [("MmBackward0", [
    ("UnsafeViewBackward0", [("CloneBackward0", [("TransposeBackward0", [1])])]), ("TBackward0", [0])])])])])


def _matmul_name(static: tuple, dyn: tuple) -> str:
    x, y = dyn[0], dyn[1]
    a, b = x.dim(), y.dim()
    if a == 1 and b == 1:
        return "DotBackward0"
    if a == 2 and b == 1:
        return "MvBackward0"
    if a == 1 and b == 2:
        return "SqueezeBackward4@matmul_vm"
    if a == 2 and b == 2:
        return "MmBackward0"
    if a <= 2 < b:
        return "CloneBackward0@matmul_mb" if a == 2 and b == 3 and y.is_contiguous() else "CloneBackward0"
    if b == 2 and x.is_contiguous():
        return "UnsafeViewBackward0@matmul_folded"
    if a == b and x._shape[:-2] == y._shape[:-2] and x.is_contiguous() and y.is_contiguous():
        return "UnsafeViewBackward0@matmul_batched"
    return "UnsafeViewBackward0"


def _check_matmul(a: Any, b: Any) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    _same_dtype(a, b, "dot" if a.ndim == 1 and b.ndim == 1 else "mm")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same "
                f"number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
            )
        if a.ndim <= 2 and b.ndim <= 2:
            ra = a.shape if a.ndim == 2 else (1,) + a.shape
            rb = b.shape if b.ndim == 2 else b.shape + (1,)
            if a.ndim == 2 and b.ndim == 1:
                raise RuntimeError(
                    f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})"
                )
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ra[0]}x{ra[1]} and {rb[0]}x{rb[1]})")
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0] if a.ndim > 2 else 1}, "
            f"{k_a}] but got: [{b.shape[0] if b.ndim > 2 else 1}, {k_b}]."
        )


def _bool_kernel(a: Any, b: Any) -> None:
    if a.dtype == jnp.bool_ or b.dtype == jnp.bool_:
        kernel = "dot" if a.ndim == 1 and b.ndim == 1 else ("addmv_impl_cpu" if b.ndim == 1 and a.ndim == 2 else
                                                             "addmm_impl_cpu_")  # fmt: skip
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


@defop(promote=None, namespaces=("torch", "Tensor", "linalg"), out=True, grad_name=_matmul_name, saves=_CROSS,
       pad=buckets.matrix_product)
def matmul(input: RawTensor, other: RawTensor) -> Any:
    _check_matmul(input, other)
    _bool_kernel(input, other)
    return jnp.matmul(input, other)


@defop(promote=None, out=True, grad_name="MmBackward0", saves=_CROSS2, pad=buckets.matrix_product)
def mm(input: RawTensor, mat2: RawTensor) -> Any:
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul(input, mat2)
    _bool_kernel(input, mat2)
    return jnp.matmul(input, mat2)


@defop(promote=None, out=True, grad_name="BmmBackward0", saves=_CROSS2)
def bmm(input: RawTensor, mat2: RawTensor) -> Any:
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype(input, mat2, "mm")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, {input.shape[2]}] "
            f"but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    return jnp.matmul(input, mat2)


@defop(promote=None, out=True, grad_name="MvBackward0")
def mv(input: RawTensor, vec: RawTensor) -> Any:
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec)
    _bool_kernel(input, vec)
    return jnp.matmul(input, vec)


@defop(promote=None, out=True, grad_name="DotBackward0")
def dot(input: RawTensor, tensor: RawTensor) -> Any:
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    _check_matmul(input, tensor)
    _bool_kernel(input, tensor)
    return jnp.dot(input, tensor)


def _vdot_check(a: Any, b: Any, name: str) -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    _same_dtype(a, b, "dot")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same "
            f"number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
        )


@defop(promote=None, out=True)
def vdot(input: RawTensor, other: RawTensor) -> Any:
    _vdot_check(input, other, "vdot")
    return jnp.vdot(input, other)


def _same_inputs(a: Any, b: Any) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")


def _inner_name(static: tuple, dyn: tuple) -> str:
    return "MulBackward0" if dyn[0].dim() == 0 or dyn[1].dim() == 0 else "ViewBackward0"


@defop(promote=None, out=True, grad_name=_inner_name)
def inner(input: RawTensor, other: RawTensor) -> Any:
    if input.ndim == 0 or other.ndim == 0:
        return (input * other) if input.dtype == other.dtype else _mul_promoted(input, other)
    _same_inputs(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(input.shape)} and "
            f"{list(other.shape)}"
        )
    return jnp.inner(input, other)


def _mul_promoted(a: Any, b: Any) -> Any:
    dt = jnp.promote_types(a.dtype, b.dtype)
    return a.astype(dt) * b.astype(dt)


def _outer_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    for name, t in zip(("self", "vec2"), dyn):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")


@defop(out=True, grad_name="MulBackward0", check=_outer_check, aliases=("ger",))
def outer(input: TensorArg, vec2: TensorArg) -> Any:
    return jnp.outer(input, vec2)


def _addmm_dtypes(input: Any, m1: Any, m2: Any) -> None:
    if m1.dtype != m2.dtype:
        da, db = D.from_numpy_dtype(m1.dtype), D.from_numpy_dtype(m2.dtype)
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {D.cpp_name(da)} and {D.cpp_name(db)}")
    if input.dtype != m2.dtype:
        da, db = D.from_numpy_dtype(input.dtype), D.from_numpy_dtype(m2.dtype)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {D.cpp_name(da)} and {D.cpp_name(db)}")


def _no_bool(name: str, x: Any) -> None:
    if x.dtype == jnp.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _scaled_sum(input: Any, prod: Any, beta: Any, alpha: Any) -> Any:
    # torch: beta == 0 ignores input (NaN/inf in it do not propagate)
    shaped = jnp.broadcast_to(input, prod.shape)
    scaled = jnp.where(beta == 0, jnp.zeros_like(shaped), shaped * jnp.asarray(beta, shaped.dtype))
    return (scaled + prod * jnp.asarray(alpha, prod.dtype)).astype(prod.dtype)


def _expand_error(src: tuple, dst: tuple) -> None:
    lead = len(dst) - len(src)
    for i, s in enumerate(src):
        if s != 1 and (lead + i < 0 or s != dst[lead + i]):
            raise RuntimeError(
                f"The expanded size of the tensor ({dst[lead + i]}) must match the existing size ({s}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {list(dst)}.  Tensor sizes: {list(src)}"
            )


@defop(promote=None, inplace=True, out=True)
def addmm(input: RawTensor, mat1: RawTensor, mat2: RawTensor, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
    if mat1.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " + f"{mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix, got " + f"{mat2.ndim}-D tensor")
    _no_bool("addmm_impl_cpu_", mat1)
    _addmm_dtypes(input, mat1, mat2)
    _check_matmul(mat1, mat2)
    _expand_error(input.shape, (mat1.shape[0], mat2.shape[1]))
    return _scaled_sum(input, jnp.matmul(mat1, mat2), beta, alpha)


@defop(inplace_in=("Tensor", "torch"), promote=None, inplace=True, out=True)
def addmv(input: RawTensor, mat: RawTensor, vec: RawTensor, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if not (input.dtype == mat.dtype == vec.dtype):
        names = [D.cpp_name(D.from_numpy_dtype(x.dtype)) for x in (input, mat, vec)]
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {names[0]}, {names[1]}, and {names[2]}"
        )
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")  # fmt: skip
    _expand_error(input.shape, (mat.shape[0],))
    return _scaled_sum(input, jnp.matmul(mat, vec), beta, alpha)


@defop(promote=None, inplace=True, out=True)
def addr(input: RawTensor, vec1: RawTensor, vec2: RawTensor, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1
            else f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D"
        )  # fmt: skip
    dt = jnp.promote_types(jnp.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    _expand_error(input.shape, (vec1.shape[0], vec2.shape[0]))
    prod = jnp.outer(vec1, vec2).astype(dt)
    if dt == jnp.bool_:
        return (input & (beta != 0)) | (prod & (alpha != 0))
    return _scaled_sum(input.astype(dt), prod, beta, alpha)


def _batch_check(b1: Any, b2: Any) -> None:
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b1.shape[0]}, {b1.shape[2]}] but got: "
            f"[{b2.shape[0]}, {b2.shape[1]}]."
        )


@defop(promote=None, inplace=True, out=True)
def baddbmm(input: RawTensor, batch1: RawTensor, batch2: RawTensor, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
    _batch_check(batch1, batch2)
    _expand_error(input.shape, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    if input.dtype != batch1.dtype and batch1.dtype == batch2.dtype:
        names = [D.c_type(D.from_numpy_dtype(x.dtype)) for x in (input, batch1, batch2)]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, "
                           f"batch2: {names[2]}")  # fmt: skip
    _same_dtype(batch1, batch2, "mm")
    return _scaled_sum(input, jnp.matmul(batch1, batch2), beta, alpha)


@defop(promote=None, inplace=True, out=True)
def addbmm(input: RawTensor, batch1: RawTensor, batch2: RawTensor, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
    _batch_check(batch1, batch2)
    _expand_error(input.shape, (batch1.shape[1], batch2.shape[2]))
    _same_dtype(batch1, batch2, "mm")
    return _scaled_sum(input, jnp.einsum("bij,bjk->ik", batch1, batch2), beta, alpha)


# --- einsum / tensordot ------------------------------------------------------------------------------


def _einsum_name(static: tuple, dyn: tuple) -> str:
    """The node torch's einsum ends with: one operand is permuted (PermuteBackward0) or summed
    (SumBackward1); several end with a bmm-and-view (ViewBackward0) when any label is summed, else with
    a product (MulBackward0)."""
    lhs, arrow, rhs = static[0].partition("->")
    terms = [t.replace("...", "") for t in lhs.split(",")]
    labels = "".join(terms)
    if not arrow:  # implicit output: the labels that appear once
        rhs = "".join(lab for lab in set(labels) if labels.count(lab) == 1)
    summed = set(labels) - set(rhs.replace("...", ""))
    if len(terms) == 1:
        return "SumBackward1" if summed else "PermuteBackward0"
    return "ViewBackward0" if summed else "MulBackward0"


@defop(promote=None, method=False, grad_name=_einsum_name)
def _einsum(operands: TensorList, equation: str) -> Any:
    dts = {o.dtype for o in operands}
    if len(dts) > 1:
        names = [D.cpp_name(D.from_numpy_dtype(o.dtype)) for o in operands]
        raise RuntimeError(f"expected scalar type {names[0]} but found {next(n for n in names if n != names[0])}")
    return jnp.einsum(equation, *operands, precision="highest")


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args: tuple) -> tuple:
    """einsum(op0, sub0, op1, sub1, ..., [sub_out]) -> (equation, operands)."""
    out = None
    if len(args) % 2 == 1:
        out, args = args[-1], args[:-1]
    ops, subs = list(args[0::2]), list(args[1::2])

    def letters(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    eq = ",".join(letters(s) for s in subs)
    if out is not None:
        eq += "->" + letters(out)
    return eq, ops


def _einsum_validate(equation: str, operands: list) -> None:
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    sizes: dict = {}
    for k, (term, op) in enumerate(zip(terms, operands)):
        labels = term.replace("...", "")
        ell = "..." in term
        if (len(labels) != op.dim() and not ell) or len(labels) > op.dim():
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(labels)}) "
                + ("is more than" if ell else "does not match")
                + f" the number of dimensions ({op.dim()}) for operand {k}"
                + ("" if ell else " and no ellipsis was given")
            )
        before, _, after = term.partition("...")
        dims = list(zip(before, op._shape[: len(before)])) + list(zip(after, op._shape[op.dim() - len(after) :]))
        for lab, n in dims:
            prev = sizes.get(lab)
            if prev is not None and prev != n and n != 1 and prev != 1:
                raise RuntimeError(
                    f"einsum(): subscript {lab} has size {n} for operand {k} which does not broadcast with previously "
                    f"seen size {prev}"
                )
            if prev is None or prev == 1:
                sizes[lab] = n
    for lab in rhs.replace("...", ""):
        if lab not in lhs:
            raise RuntimeError(
                f"einsum(): output subscript {lab} does not appear in the equation for any input operand"
            )


@expose("torch")
def einsum(*args: Any) -> Any:
    """torch.einsum(equation, *operands) (operands may be one list) or the sublist form."""
    if not args:
        raise RuntimeError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    _einsum_validate(equation, operands)
    if registry.autocast is not None and operands:
        operands = _autocast_list(_einsum._op, operands, equation.replace(" ", ""))
    return _einsum(operands, equation.replace(" ", ""))


def _autocast_list(op: Any, operands: list, *static: Any) -> list:
    """Autocast's cast of a tensor list (the table casts only tensor arguments it promotes)."""
    promo = [(t._dtype, D.RANK_DIMMED if t._shape else D.RANK_DIM0) for t in operands]
    adj = registry.autocast(op, operands[0].device.type, None, promo, static)
    if adj is None:
        return operands
    target = adj[0]
    return [t.to(target) if t._dtype.is_floating_point and t._dtype is not D.float64 else t for t in operands]


def _tensordot_dims(a: Any, b: Any, dims: Any) -> tuple:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return tuple(range(a.dim() - dims, a.dim())), tuple(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two lists, "
            f"but got dims={dims}"
        )
    da, db = dims
    da = (da,) if isinstance(da, int) else tuple(da)
    db = (db,) if isinstance(db, int) else tuple(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return da, db


@defop(promote=None, method=False, grad_name="ViewBackward0", out=True)
def _tensordot(a: RawTensor, b: RawTensor, dims_a: tuple, dims_b: tuple) -> Any:
    _same_inputs(a, b)
    for x, y in zip(dims_a, dims_b):
        # torch: a size-1 contracted dimension broadcasts (the other side is summed over it first)
        if b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(axis=x, keepdims=True)
        elif a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(axis=y, keepdims=True)
        elif a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and second has "
                f"size {b.shape[y]} in dim {y}"
            )
    return jnp.tensordot(a, b, (dims_a, dims_b), precision="highest")


@expose("torch")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    da, db = _tensordot_dims(a, b, dims)
    da = tuple(wrap_dim(d, a.dim()) for d in da)
    db = tuple(wrap_dim(d, b.dim()) for d in db)
    return _tensordot(a, b, da, db, out=out)


# --- cross ----------------------------------------------------------------------------------------------


@defop(out=True, method=False, grad_name="LinalgCrossBackward0")
def _linalg_cross(input: TensorArg, other: TensorArg, dim: int) -> Any:
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and {other.shape[d]}"
        )
    a, b = jnp.broadcast_arrays(input, other)
    return jnp.cross(a, b, axis=d)


@expose("linalg", "cross")
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    return _linalg_cross(input, other, dim, out=out)


@expose("torch")
def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out: Tensor | None = None) -> Tensor:
    if dim is None:
        import warnings

        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly "
            "or simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of "
            "linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        shape = _broadcast(tuple(input._shape), tuple(other._shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _linalg_cross(input, other, dim, out=out)


def _broadcast(a: tuple, b: tuple) -> tuple:
    return _broadcast_shape(a, b)


# --- cdist ----------------------------------------------------------------------------------------------


def _cdist_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x1, x2, p = dyn
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: {x2._shape[-1]}")
    if not x1._dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {D.cpp_name(x1._dtype)}")
    if not x2._dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {D.cpp_name(x2._dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._dtype is not x2._dtype:
        raise RuntimeError(f"expected scalar type {D.cpp_name(x1._dtype)} but found {D.cpp_name(x2._dtype)}")


def _pnorm_last(diff: Any, p: Any) -> Any:
    """p-norm over the last axis with torch's gradients (0 where the norm is 0; inf: every tie gets all).
    ``p`` is a Python number (0, 1, 2, inf) or a traced general order."""
    a = jnp.abs(diff)
    sgn = jax.lax.stop_gradient(jnp.sign(diff))
    absd = diff * sgn  # |diff| whose derivative is sign(diff) (0 at 0, as torch)
    if not isinstance(p, (int, float)):
        p, inv = p.astype(diff.dtype), (1 / p).astype(diff.dtype)  # 1/p rounds as torch's double 1.0 / p
    elif p == 0:
        return jax.lax.stop_gradient(jnp.sum(a != 0, -1).astype(diff.dtype))
    elif p == 1:
        return jnp.sum(absd, -1)
    elif math.isinf(p):
        m = jax.lax.stop_gradient(jnp.max(a, -1) if p > 0 else jnp.min(a, -1))
        tie = jax.lax.stop_gradient(a == m[..., None])
        return m + jnp.sum(jnp.where(tie, absd - jax.lax.stop_gradient(absd), 0), -1)
    pos = a > 0
    s = jnp.sum(jnp.where(pos, jnp.where(pos, absd, 1) ** p, 0), -1)
    nz = s > 0
    safe = jnp.where(nz, s, 1)
    return jnp.where(nz, safe ** (1.0 / p if isinstance(p, (int, float)) else inv), 0)


@defop(promote=None, out=False, grad_name="CdistBackward0", check=_cdist_check, bake=special_ord)
def cdist(x1: RawTensor, x2: RawTensor, p: ScalarOrStatic = 2.0, compute_mode: str | None = None) -> Any:
    batch = jnp.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    a = jnp.broadcast_to(x1, batch + x1.shape[-2:])
    b = jnp.broadcast_to(x2, batch + x2.shape[-2:])
    diff = a[..., :, None, :] - b[..., None, :, :]
    if not isinstance(p, (int, float)) or p != 2:
        return _pnorm_last(diff, p)
    s = jnp.sum(diff * diff, -1)
    nz = s > 0
    return jnp.where(nz, jnp.sqrt(jnp.where(nz, s, 1)), 0)


# --- small compositions -------------------------------------------------------------------------------------


@expose("linalg")
def multi_dot(tensors: Any, *, out: Tensor | None = None) -> Tensor:
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_1d, last_1d = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_1d:
        ts[0] = ts[0].unsqueeze(0)
    if last_1d:
        ts[-1] = ts[-1].unsqueeze(1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            which = "first" if i == 0 else ("last" if i == len(ts) - 1 else None)
            if which:
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    result = ts[0]
    for t in ts[1:]:
        result = mm(result, t)
    if first_1d and last_1d:
        result = result.reshape(())
    elif first_1d:
        result = result.squeeze(0)
    elif last_1d:
        result = result.squeeze(1)
    if out is not None:
        from .registry import copy_to_out

        copy_to_out(result, out)
        return out
    return result


@expose("linalg")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    from .reduction import sum as _sum

    return _sum(x.conj() * y if x.is_complex() else x * y, dim, out=out)


@expose("torch")
def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    import warnings

    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use torch.linalg.multi_dot "
        "instead, which accepts a list of two or more tensors rather than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices, out=out)



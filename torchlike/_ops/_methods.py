"""The one table of Tensor methods that no op entry generates (as JAX's ``_array_methods``): methods whose
``self`` is not the op's first argument, conversions, the method-only forms of hand-written functions,
in-place forms with torch quirks, properties and the operators. The installer (``_ops.names("Tensor")``)
reads it after the table's generated methods, so an entry here wins."""

from __future__ import annotations

from typing import Any

from .._core import dtype as D
from .._core.tensor import Tensor
from . import (
    complex,
    creation,
    fft,
    indexing,
    indexing_ops,
    joining,
    legacy_types,
    linalg,
    linalg_decomp,
    linalg_lu,
    numerics,
    pointwise,
    reduction,
    shape,
    sorting,
    special,
    tensor_misc,
    views,
)  # fmt: skip
from ._common import inplace_variant

P, V = pointwise, views


def _swap(fn: Any) -> Any:
    def r(self: Tensor, other: Any) -> Any:
        return fn(other, self)

    return r


def _rdiv(self: Tensor, other: Any) -> Tensor:
    return P.reciprocal(self) * other  # torch: other / self is computed as reciprocal(self) * other


def _invert(self: Tensor) -> Tensor:
    return P.logical_not(self) if self._dtype is D.bool else P.bitwise_not(self)


TENSOR_METHODS: dict[str, Any] = {
    # spectral
    "stft": fft.stft, "istft": fft.istft,
    # complex views and flags
    "conj": complex.conj, "resolve_conj": complex.resolve_conj, "is_conj": complex.is_conj,
    "resolve_neg": tensor_misc.resolve_neg, "is_neg": tensor_misc.is_neg,
    # conversions and placement
    "contiguous": shape.contiguous, "to": shape.to, "type": legacy_types.type_, "type_as": shape.type_as,
    "float": shape._conversion(D.float32), "double": shape._conversion(D.float64),
    "half": shape._conversion(D.float16), "bfloat16": shape._conversion(D.bfloat16),
    "int": shape._conversion(D.int32), "long": shape._conversion(D.int64), "short": shape._conversion(D.int16),
    "char": shape._conversion(D.int8), "byte": shape._conversion(D.uint8), "bool": shape._conversion(D.bool),
    "cfloat": shape._conversion(D.complex64), "cdouble": shape._conversion(D.complex128), "chalf": tensor_misc.chalf,
    "cpu": shape._cpu, "cuda": shape._cuda,
    "pin_memory": lambda self, device=None: shape._pin_memory(self), "is_pinned": lambda self, device=None: False,
    "jax": lambda self: self._data(),
    # creation from a tensor
    "new_zeros": creation._new_method(0, "new_zeros"), "new_ones": creation._new_method(1, "new_ones"),
    "new_empty": creation._new_method(0, "new_empty"), "new_full": creation.new_full,
    "new_tensor": creation.new_tensor, "new_empty_strided": tensor_misc.new_empty_strided, "new": creation.new,
    # indexing and writing
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
    "copy_": indexing.copy_, "fill_": indexing.fill_, "zero_": indexing.zero_,
    "index_put": indexing_ops.index_put, "index_put_": indexing_ops.index_put_,
    "scatter": indexing_ops.scatter, "scatter_": inplace_variant(indexing_ops.scatter, "scatter_"),
    "masked_select": indexing_ops.masked_select, "masked_scatter": indexing_ops.masked_scatter,
    "masked_scatter_": indexing_ops.masked_scatter_, "nonzero": indexing_ops.nonzero,
    "argwhere": indexing_ops.argwhere, "unique": indexing_ops.unique,
    "unique_consecutive": indexing_ops.unique_consecutive, "bincount": indexing_ops.bincount,
    "where": lambda self, condition, other: P.where(condition, self, other),
    # shape
    "broadcast_to": joining.broadcast_to, "flip": shape._flip_method, "roll": shape.roll, "rot90": shape.rot90,
    "fliplr": shape.fliplr, "flipud": shape.flipud, "repeat": shape.repeat, "tile": shape._tile_method,
    "repeat_interleave": shape.repeat_interleave, "ravel": shape.ravel, "take_along_dim": shape.take_along_dim,
    "fill_diagonal_": shape.fill_diagonal_, "resize_": tensor_misc.resize_, "resize_as_": tensor_misc.resize_as_,
    "sum_to_size": tensor_misc.sum_to_size, "unsafe_split": tensor_misc.unsafe_split,
    "unsafe_chunk": tensor_misc.unsafe_chunk, "unsafe_split_with_sizes": tensor_misc.unsafe_split_with_sizes,
    # views: method forms and the in-place views (the tensor takes the new geometry)
    "view_as": V.view_as, "reshape_as": V.reshape_as, "expand_as": V.expand_as, "flatten": V.flatten,
    "unflatten": V.unflatten, "unbind": V.unbind, "split": V.split, "chunk": V.chunk,
    "tensor_split": V.tensor_split, "hsplit": V.hsplit, "vsplit": V.vsplit, "dsplit": V.dsplit,
    "swapaxes": V.swapaxes, "swapdims": V.swapaxes, "moveaxis": V.movedim, "split_with_sizes": V.split_with_sizes,
    "squeeze_": V._inplace_view(V.squeeze, V._squeeze_inplace_name),
    "unsqueeze_": V._inplace_view(V.unsqueeze, "UnsqueezeBackward1"),
    "transpose_": V._inplace_view(V.transpose, "TransposeBackward1"),
    "swapaxes_": V._inplace_view(V.transpose, "TransposeBackward1"),
    "swapdims_": V._inplace_view(V.transpose, "TransposeBackward1"), "t_": V._t_inplace,
    # reductions, sorting, statistics
    "max": reduction.max, "min": reduction.min, "var": reduction.var, "std": reduction.std,
    "median": reduction.median, "nanmedian": reduction.nanmedian, "topk": sorting.topk,
    "quantile": numerics.quantile, "nanquantile": numerics.nanquantile, "histogram": numerics.histogram,
    # pointwise forms with torch quirks
    "positive": P.positive, "isclose": P.isclose, "allclose": P.allclose, "equal": P.equal,
    "float_power_": P.float_power_, "clamp_min": P.clamp_min, "clamp_max": P.clamp_max,
    "clamp": P._clamp_method, "clip": P._clip_method, "clamp_": P.clamp_, "clip_": P.clip_, "clamp_min_": P.clamp_min_, "clamp_max_": P.clamp_max_,
    "asinh_": P.asinh_, "arcsinh_": P.asinh_, "acosh_": P.acosh_, "arccosh_": P.acosh_,
    "atanh_": P.atanh_, "arctanh_": P.atanh_,
    "polygamma": special._polygamma_method, "polygamma_": special._polygamma_inplace,
    # linear algebra
    "cross": linalg.cross, "lu": linalg_lu.lu, "lu_solve": linalg_lu.lu_solve, "det": linalg_decomp._det_method,
    "slogdet": linalg_decomp.slogdet, "inverse": linalg_decomp.inverse, "cholesky": linalg_decomp.cholesky,
    "qr": linalg_decomp.qr, "svd": linalg_decomp.svd, "matrix_power": linalg_decomp.matrix_power,
    "cholesky_inverse": linalg_decomp.cholesky_inverse, "pinverse": linalg_decomp.pinverse,
    "norm": linalg_decomp._norm_method,
}  # fmt: skip

TENSOR_PROPERTIES: dict[str, Any] = {"T": V._T, "mT": V._mT, "H": V._H, "mH": V._mH}


def operators() -> dict[str, Any]:
    """The operators, made after the table's in-place methods exist (``__iadd__`` is ``Tensor.add_``)."""
    return {
        "__add__": P.add, "__radd__": P.add, "__iadd__": Tensor.add_,
        "__sub__": P.sub, "__rsub__": P.rsub, "__isub__": Tensor.sub_,
        "__mul__": P.mul, "__rmul__": P.mul, "__imul__": Tensor.mul_,
        "__truediv__": P.div, "__rtruediv__": _rdiv, "__itruediv__": Tensor.div_,
        "__div__": P.div, "__rdiv__": _rdiv, "__idiv__": Tensor.div_,  # torch keeps Python 2's names too
        "__floordiv__": P.floor_divide, "__rfloordiv__": _swap(P.floor_divide), "__ifloordiv__": Tensor.floor_divide_,
        "__mod__": P.remainder, "__rmod__": _swap(P.remainder), "__imod__": Tensor.remainder_,
        "__pow__": P.pow, "__rpow__": _swap(P.pow), "__ipow__": Tensor.pow_,
        "__matmul__": linalg.matmul, "__rmatmul__": _swap(linalg.matmul),
        "__neg__": P.neg, "__pos__": lambda self: self, "__abs__": P.abs, "__invert__": _invert,
        "__and__": P.bitwise_and, "__rand__": P.bitwise_and, "__iand__": Tensor.bitwise_and_,
        "__or__": P.bitwise_or, "__ror__": P.bitwise_or, "__ior__": Tensor.bitwise_or_,
        "__xor__": P.bitwise_xor, "__rxor__": P.bitwise_xor, "__ixor__": Tensor.bitwise_xor_,
        "__lshift__": P.bitwise_left_shift, "__rlshift__": _swap(P.bitwise_left_shift),
        "__ilshift__": Tensor.bitwise_left_shift_,
        "__rshift__": P.bitwise_right_shift, "__rrshift__": _swap(P.bitwise_right_shift),
        "__irshift__": Tensor.bitwise_right_shift_,
        "__eq__": P.eq, "__ne__": P.ne, "__lt__": P.lt, "__le__": P.le, "__gt__": P.gt, "__ge__": P.ge,
    }  # fmt: skip

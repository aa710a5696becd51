"""Tensor methods of torch's long tail: the ``*_copy`` forms of the views, unsafe_split/unsafe_chunk,
resize_/resize_as_, sum_to_size, nonzero_static, as_strided_scatter, resolve_neg, chalf,
new_empty_strided, empty_permuted."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor
from .._core import grad_mode
from . import registry
from .registry import OptScalar, RawTensor, TensorArg, defop, expose


# --- the *_copy forms: the view, then a copy (torch's functionalization uses them) --------------------------


def _copy_of(view_name: str) -> Callable:
    def copy(input: Tensor, *args: Any, out: Tensor | None = None, **kwargs: Any) -> Any:
        view = getattr(Tensor, view_name) if view_name != "alias" else (lambda x: x.view_as(x))
        result = view(input, *args, **kwargs)
        result = tuple(r.clone() for r in result) if isinstance(result, (tuple, list)) else result.clone()
        if out is None:
            return result
        if isinstance(result, tuple):
            for r, o in zip(result, out):
                registry.copy_to_out(r, o)
            return out
        registry.copy_to_out(result, out)
        return out

    copy.__name__ = copy.__qualname__ = view_name + "_copy"
    copy.__doc__ = f"torch.{view_name}_copy: :meth:`Tensor.{view_name}` as a new tensor, not a view."
    return copy


# narrow_copy is a table op (shape.py): torch.narrow_copy and Tensor.narrow_copy run the same kernel
_VIEWS_WITH_COPY = ("alias", "as_strided", "detach", "diagonal", "expand", "permute", "select", "split",
                    "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view",
                    "view_as_real", "view_as_complex")  # fmt: skip
for _v in _VIEWS_WITH_COPY:
    globals()[_v + "_copy"] = expose("torch")(_copy_of(_v))


@expose("torch")
def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    """torch.slice_copy: ``input[..., start:end:step]`` along ``dim``, copied."""
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return input[tuple(index)].clone()


# --- unsafe_split / unsafe_chunk ----------------------------------------------------------------------------


@expose("torch")
def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple:
    """torch.unsafe_split: :func:`split` (torch skips its view checks; the values are the same)."""
    return tensor.split(split_size, dim)


@expose("torch")
def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    return input.split(list(split_sizes), dim)


@expose("torch")
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """torch.unsafe_chunk: :func:`chunk` (torch skips its view checks; the values are the same)."""
    return input.chunk(chunks, dim)


# --- resize_, resize_as_ -------------------------------------------------------------------------------------


def resize_(self: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Tensor.resize_: keep the first elements in row-major order; new elements are zero (torch leaves them
    uninitialised)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    if self.requires_grad and grad_mode._state.enabled:
        raise RuntimeError("cannot resize variables that require grad")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    if size == tuple(self._shape):
        return self
    flat = self._data().reshape(-1)
    n = math.prod(size)
    if n <= flat.shape[0]:
        new = flat[:n]
    else:
        new = jnp.concatenate([flat, jnp.zeros(n - flat.shape[0], flat.dtype)])
    self._resize_to(new.reshape(size))
    return self


@expose("torch")
def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    return resize_(self, tuple(the_template.shape))


# --- sum_to_size -------------------------------------------------------------------------------------------


def _sum_to_size_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    shape, size = tuple(dyn[0]._shape), static[0]
    ok = len(size) <= len(shape) and all(
        s == t or s == 1 for s, t in zip(size[::-1], shape[::-1])
    )
    if not ok:
        raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                           f"{{[{', '.join(map(str, shape))}]}}.")  # fmt: skip


@defop("_sum_to_size", promote=None, method=False, grad_name="SumToSizeBackward0", check=_sum_to_size_check)
def _sum_to_size(input: RawTensor, size: tuple) -> Any:
    lead = input.ndim - len(size)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, (s, t) in enumerate(zip(size, input.shape[lead:])) if s == 1 and t != 1
    )
    if not axes and size:  # torch: an empty target size always sums (0-dim bool -> int64)
        return input
    x = input
    if x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.integer):
        x = x.astype(jnp.int64)  # torch: integral sums are int64
    return x.sum(axis=axes, keepdims=True).reshape(size)


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Tensor.sum_to_size: sum the broadcast dimensions away so the result has ``size``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return _sum_to_size(self, tuple(int(s) for s in size))


# --- nonzero_static, as_strided_scatter -------------------------------------------------------------------


def _nonzero_static_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    fill = dyn[1]
    if not isinstance(fill, int) or isinstance(fill, bool):
        raise TypeError(f"nonzero_static(): argument 'fill_value' must be int, not {type(fill).__name__}")
    if not -(2**63) <= fill < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if static[0] < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")


@defop(promote=None, out=True, differentiable=False, check=_nonzero_static_check)
def nonzero_static(input: RawTensor, *, size: int, fill_value: OptScalar = -1) -> Any:
    """``fill_value`` is a traced int64: the rows past the count of nonzeros take it."""
    x = input if input.ndim else input.reshape(1)
    idx = jnp.nonzero(x, size=size)
    if not idx:
        return jnp.zeros((size, 0), jnp.int64)
    out = jnp.stack(idx, -1).astype(jnp.int64)
    out = jnp.where(jnp.arange(size)[:, None] < jnp.count_nonzero(x), out, jnp.asarray(fill_value, jnp.int64))
    return out if input.ndim else out[:, :0]


def _scatter_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, src = dyn
    size, stride, offset = static
    if tuple(src._shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._shape)}, "
                           f"slice size = {list(size)}")  # fmt: skip
    last = (offset or 0) + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    if last >= max(x.numel(), 1) and x.numel():
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset or 0}, "
                           "requiring a storage size beyond the tensor")  # fmt: skip


@defop(promote="default", out=True, check=_scatter_check)
def as_strided_scatter(input: TensorArg, src: TensorArg, size: tuple, stride: tuple, storage_offset: Any = None) -> Any:
    grids = np.meshgrid(*[np.arange(s) for s in size], indexing="ij")
    flat_idx = (storage_offset or 0) + sum(g * st for g, st in zip(grids, stride)) if size else np.asarray(
        storage_offset or 0
    )
    flat = input.reshape(-1).at[np.asarray(flat_idx).reshape(-1)].set(src.reshape(-1))
    return flat.reshape(input.shape)


# --- negative bit, complex32, empty variants ---------------------------------------------------------------


@expose("torch")
def is_neg(input: Tensor) -> bool:
    """torch.is_neg: always False (torchlike has no lazy negation bit)."""
    return False


@expose("torch")
def resolve_neg(input: Tensor) -> Tensor:
    """torch.resolve_neg: ``input`` itself (torchlike has no lazy negation bit to resolve)."""
    return input


def chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    raise TypeError("torchlike does not provide torch.complex32 (Tensor.chalf) yet: JAX has no 32-bit complex type")


def new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                      layout: Any = None, device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Tensor.new_empty_strided: like :meth:`new_empty` (zero-filled; the strides are not kept)."""
    from .creation import empty_strided

    return empty_strided(size, stride, dtype=dtype if dtype is not None else self._dtype,
                         device=device if device is not None else self.device, requires_grad=requires_grad)  # fmt: skip


@expose("torch")
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """torch.empty_permuted: an empty (zero-filled) tensor of ``size``; the memory layout is not kept."""
    from .creation import empty

    size = tuple(int(s) for s in size)
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError(f"Dimension out of range (expected to be in range of [-{len(size)}, {len(size) - 1}], "
                           f"but got {max(physical_layout)})")  # fmt: skip
    return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)



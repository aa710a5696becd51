"""Shape ops that copy: cat, stack, clone, contiguous, and dtype/device conversion (``to``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import device as _device
from .._core import dtype as D
from .._core.size import Size
from .._core.tensor import Tensor, wrap_dim
from . import registry
from ._common import _BY_TYPE_NAME, _broadcast_shape, _to_dtype, convert, dims, type_name  # noqa: F401
from .registry import RawTensor, Scalar, TensorArg, TensorList, defop, expose


def _cat_check(tensors: list, dim: int) -> tuple:
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # torch skips legacy empty 1-D tensors of shape (0,)
    real = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not real:
        return tensors, 0
    ref = real[0]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    (d,) = dims(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if t.ndim == 1 and t.shape[0] == 0:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {ref.shape[k]} but got size "
                    f"{t.shape[k]} for tensor number {i} in the list."
                )
    return real, d


@defop(method=False, out=True, saves=(), aliases=("concat", "concatenate"))
def cat(tensors: TensorList, dim: int = 0) -> Any:
    real, d = _cat_check(tensors, dim)
    return jnp.concatenate(real, axis=d)


@defop(method=False, out=True, saves=())
def stack(tensors: TensorList, dim: int = 0) -> Any:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got [{', '.join(map(str, tensors[0].shape))}] at "
                f"entry 0 and [{', '.join(map(str, t.shape))}] at entry {i}"
            )
    (d,) = dims(dim, tensors[0].ndim + 1)
    return jnp.stack(tensors, axis=d)


@defop(promote=None, saves=())
def clone(input: RawTensor, *, memory_format: Any = None) -> Any:
    return jnp.copy(input)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    from .._core import layout

    for fmt, rank in ((layout.channels_last, 4), (layout.channels_last_3d, 5)):
        if memory_format is fmt and self.dim() != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {fmt} format")
    return self if self.is_contiguous() else clone(self)


_movers: dict = {}


def _mover(jdev: Any) -> Any:
    m = _movers.get(jdev)
    if m is None:
        m = _movers[jdev] = lambda x: jax.device_put(x, jdev)
    return m


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
)


def _to_type_error(name: str, value: Any) -> TypeError:
    kind = "torch.dtype" if isinstance(value, D.dtype) else type(value).__name__
    return TypeError(
        f"to() received an invalid combination of arguments - got ({name}={kind}, ), but expected one of:\n"
        + _TO_SIGNATURES
    )


def _parse_to(args: tuple, kwargs: dict) -> tuple:
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise _to_type_error("dtype", dtype)
    if device is not None and not isinstance(device, (str, _device.device, int)) or isinstance(device, bool):
        raise _to_type_error("device", device)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected {tuple(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a._dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, _device.device, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            continue  # non_blocking / copy positional
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return device, dtype, copy


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(dtype) / to(device) / to(device, dtype) / to(other); returns self when nothing changes."""
    device, dtype, copy = _parse_to(args, dict(kwargs))
    try:
        dev = _device.canonical(device) if device is not None else self.device
    except RuntimeError:
        if isinstance(device, str):  # torch's message for a string that is no device (``to("float32")``)
            raise RuntimeError(f"Invalid device string: '{device}'") from None
        raise
    dt = D.to_dtype(dtype) if dtype is not None else self._dtype
    out = self
    if dt is not self._dtype:
        out = _to_dtype(out, dt)
    if dev != self.device:
        out = move(out, dev)
    if out is self and copy:
        out = clone(self)
    return out


def move(t: Tensor, dev: _device.device) -> Tensor:
    """Copy ``t`` to another device (differentiable: ToCopyBackward0)."""
    jdev = _device.jax_device(dev)
    out = registry.apply_pure("ToCopyBackward0", _mover(jdev), [t], device=dev)
    return out


def _conversion(dt: D.dtype) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return self if self._dtype is dt else _to_dtype(self, dt)

    return method


def _cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "cpu")


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    return to(self, _device.device("cuda", device) if isinstance(device, int) else (device or "cuda"))


def _pin_memory(self: Tensor) -> Tensor:
    """A copy of a CPU tensor (JAX manages host transfers itself: torchlike has no page-locked memory,
    so ``is_pinned()`` stays False)."""
    if not _device.cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{type_name(self)}' only dense CPU tensors can be pinned")
    return clone(self)


# torchlike runs on JAX's CPU and CUDA backends only
Tensor.is_xpu = property(lambda self: False)
Tensor.is_mps = property(lambda self: False)


# --- reordering: flip, roll, rot90 ------------------------------------------------------------------


def _dim_list(dims_: Any) -> tuple:
    if isinstance(dims_, (int, np.integer)):
        return (int(dims_),)
    return tuple(int(d) for d in dims_)


@defop(promote=None, method=False, grad_name="FlipBackward0", saves=())
def _flip(input: RawTensor, dims: tuple) -> Any:
    axes = _norm_dims(dims, input.ndim)
    return jnp.flip(input, axes) if axes else input


def _norm_dims(d: tuple, ndim: int) -> tuple:
    return dims(d, ndim) or ()


@expose("torch")
def flip(input: Tensor, dims: Any) -> Tensor:
    return _flip(input, _dim_list(dims))


def _flip_method(self: Tensor, *dims_: Any) -> Tensor:
    if len(dims_) == 1 and isinstance(dims_[0], (tuple, list)):
        dims_ = dims_[0]
    return _flip(self, _dim_list(dims_))


@expose("torch")
def fliplr(input: Tensor) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@expose("torch")
def flipud(input: Tensor) -> Tensor:
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@defop(promote=None, method=False, grad_name="RollBackward0", saves=())
def _roll(input: RawTensor, shifts: tuple, dims: Any) -> Any:
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return jnp.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = tuple(wrap_dim(a, input.ndim) for a in dims)
    if input.size == 0:
        return input
    return jnp.roll(input, shifts, axes)


@expose("torch")
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    return _roll(input, _dim_list(shifts), None if dims is None else _dim_list(dims))


@defop(promote=None, method=False, grad_name="Rot90Backward0", saves=())
def _rot90(input: RawTensor, k: int, dims: tuple) -> Any:
    d = dims
    if len(d) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(d)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    n = input.ndim
    wrap_dim(d[0], n), wrap_dim(d[1], n)
    if d[0] == d[1] or abs(d[0] - d[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d[0]} and dim1 = {d[1]}")
    return jnp.rot90(input, k, (d[0] % n, d[1] % n))


@expose("torch")
def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    return _rot90(input, int(k), _dim_list(dims))


# --- repeating ----------------------------------------------------------------------------------------


def _sizes(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    return tuple(int(a) for a in args)


@defop(promote=None, method=False, grad_name="RepeatBackward0", saves=())
def _repeat(input: RawTensor, repeats: tuple) -> Any:
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(repeats) - input.ndim) + tuple(input.shape)
    out = tuple(a * b for a, b in zip(shape, repeats))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return jnp.tile(input.reshape(shape), repeats)


def repeat(self: Tensor, *sizes: Any) -> Tensor:
    """Tensor.repeat(*sizes)."""
    return _repeat(self, _sizes(sizes))


@expose("torch")
def tile(input: Tensor, dims: Any) -> Tensor:
    d = _sizes((dims,)) if not isinstance(dims, int) else (dims,)
    if len(d) < input.dim():
        d = (1,) * (input.dim() - len(d)) + d
    return _repeat(input, d)


def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    return tile(self, _sizes(dims))


@defop(promote=None, method=False, grad_name="ViewBackward0", saves=())
def _repeat_interleave_int(input: RawTensor, repeats: int, dim: int) -> Any:
    return jnp.repeat(input, repeats, axis=dim)


@expose("torch")
def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """torch.repeat_interleave(input, repeats, dim) and repeat_interleave(repeats)."""
    from .creation import tensor as _tensor
    from .indexing_ops import index_select

    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        reps = input
        counts = _repeat_counts(reps, None)
        return _tensor(np.repeat(np.arange(len(counts)), counts), dtype=reps._dtype, device=reps.device)
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    d = wrap_dim(dim, input.dim())
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.dim() <= 1:
        repeats = repeats.item()
    if isinstance(repeats, (int, np.integer)):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        return _repeat_interleave_int(input, int(repeats), d)
    counts = _repeat_counts(repeats, input._shape[d])
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError("allocated size does not match required size")
    idx = _tensor(np.repeat(np.arange(len(counts)), counts), device=input.device)
    return index_select(input, d, idx)


def _repeat_counts(repeats: Any, n: int | None) -> np.ndarray:
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats._dtype not in (D.int32, D.int64):
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = repeats._host()
    if n is not None and len(counts) != n:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = {len(counts)} and "
            f"input.size(0) = {n}"
        )
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return counts


# --- triangles and diagonals ----------------------------------------------------------------------


def _tri_check(name: str, x: Any) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@defop(promote=None, inplace=True, out=True, saves=())
def tril(input: RawTensor, diagonal: int = 0) -> Any:
    _tri_check("tril", input)
    return jnp.tril(input, diagonal)


@defop(promote=None, inplace=True, out=True, saves=())
def triu(input: RawTensor, diagonal: int = 0) -> Any:
    _tri_check("triu", input)
    return jnp.triu(input, diagonal)


def _embed(x: Any, offset: int, d1: int, d2: int) -> Any:
    """x's last dim placed on the ``offset`` diagonal of new dims (d1, d2) (torch.diag_embed)."""
    n = x.shape[-1] + abs(offset)
    eye = jnp.eye(n, n, offset, dtype=bool)
    r = jnp.arange(n)[:, None] if offset >= 0 else jnp.arange(n)[None, :]
    idx = jnp.clip(jnp.broadcast_to(r, (n, n)), 0, max(x.shape[-1] - 1, 0))
    vals = x[..., idx] if x.shape[-1] else jnp.zeros(x.shape[:-1] + (n, n), x.dtype)
    out = jnp.where(eye, vals, jnp.zeros((), x.dtype))
    nd = out.ndim
    rest = [i for i in range(nd) if i not in (d1, d2)]
    perm = [0] * nd
    for src, dst in zip(range(nd - 2), rest):
        perm[dst] = src
    perm[d1], perm[d2] = nd - 2, nd - 1
    return jnp.transpose(out, perm)


@defop(promote=None, saves=())
def diag_embed(input: RawTensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    nd = input.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _embed(input, offset, d1, d2)


def _diag_name(static: tuple, dyn: tuple) -> str:
    return "DiagEmbedBackward0" if dyn[0].dim() == 1 else "DiagonalBackward0_copy"


@defop(promote=None, out=True, grad_name=_diag_name, saves=())
def diag(input: RawTensor, diagonal: int = 0) -> Any:
    if input.ndim == 1:
        return _embed(input, diagonal, 0, 1)
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return jnp.diagonal(input, diagonal)


@defop(promote=None, grad_name="DiagEmbedBackward0", saves=())
def diagflat(input: RawTensor, offset: int = 0) -> Any:
    return _embed(input.reshape(-1), offset, 0, 1)


@defop(promote=None, saves=())
def trace(input: RawTensor) -> Any:
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    dt = input.dtype
    if jnp.issubdtype(dt, jnp.integer) or dt == jnp.bool_:
        dt = jnp.int64
    return jnp.trace(input).astype(dt)


@defop(out=True, grad_name="UnsafeViewBackward0", saves=())
def kron(input: TensorArg, other: TensorArg) -> Any:
    if input.dtype == jnp.bool_:  # JAX multiplies no bools: the product of bools is their logical and
        return jnp.kron(input.astype(jnp.uint8), other.astype(jnp.uint8)).astype(jnp.bool_)
    return jnp.kron(input, other)


# --- copies of views ----------------------------------------------------------------------------------


@defop(promote=None, out=True, saves=())
def narrow_copy(input: RawTensor, dim: int, start: int, length: int) -> Any:
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if length < 0 or start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return jax.lax.slice_in_dim(input, start, start + length, axis=d)


@expose("torch")
def ravel(input: Tensor) -> Tensor:
    from .views import view

    return view(contiguous(input), -1)


# --- take ---------------------------------------------------------------------------------------------


def _take_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, idx = dyn
    if idx._dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {D.cpp_name(idx._dtype)}")
    n = x.numel()
    if idx.numel():
        host = idx._host()
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            if n == 0:
                raise IndexError("take(): tried to take from an empty tensor")
            raise IndexError(f"out of range: tried to access index {bad[0]} on a tensor of {n} elements.")


@defop(promote=None, out=True, check=_take_check, saves=("index",), nondiff=("index",))
def take(input: RawTensor, index: RawTensor) -> Any:
    return jnp.take(input.reshape(-1), index, mode="wrap") if input.size else jnp.zeros(index.shape, input.dtype)


@expose("torch")
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *, out: Tensor | None = None) -> Tensor:
    from .indexing_ops import gather

    if indices._dtype is not D.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {D.cpp_name(indices._dtype)}"
        )
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1), out=out)
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = wrap_dim(dim, input.dim())
    shape_i = list(input._shape)
    shape_x = list(indices._shape)
    shape_i[d] = shape_x[d] = 1
    b = _broadcast_shape(tuple(shape_i), tuple(shape_x))
    bi, bx = list(b), list(b)
    bi[d] = input._shape[d]
    bx[d] = indices._shape[d]
    n = input._shape[d]
    if n and indices.numel() and bool((indices < 0).any()):  # torch: with dim given, index -1 is the last one
        indices = indices + n * ((indices < 0) & (indices >= -n)).long()
    return gather(input.expand(bi), d, indices.expand(bx), out=out)


# --- *_scatter: the functional inverses of views ---------------------------------------------------------


def _scatter_shape_check(src: Any, want: tuple) -> None:
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size = "
            f"{list(want)}"
        )


@defop(promote=None, out=True, saves=())
def slice_scatter(input: RawTensor, src: RawTensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Any:  # fmt: skip
    d = wrap_dim(dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    _scatter_shape_check(src, input[key].shape)
    return input.at[key].set(src.astype(input.dtype))


@defop(promote=None, out=True, saves=())
def select_scatter(input: RawTensor, src: RawTensor, dim: int, index: int) -> Any:
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    key = (slice(None),) * d + (index % n,)
    _scatter_shape_check(src, input[key].shape)
    return input.at[key].set(src.astype(input.dtype))


@defop(promote=None, out=True, saves=())
def diagonal_scatter(input: RawTensor, src: RawTensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    diag = jnp.diagonal(input, offset, d1, d2)
    _scatter_shape_check(src, diag.shape)
    rows = jnp.arange(diag.shape[-1]) + max(-offset, 0)
    cols = jnp.arange(diag.shape[-1]) + max(offset, 0)
    moved = jnp.moveaxis(input, (d1, d2), (-2, -1))
    moved = moved.at[..., rows, cols].set(src.astype(input.dtype))
    return jnp.moveaxis(moved, (-2, -1), (d1, d2))


@defop(promote=None, method=False, grad_name="FillBackward2", saves=())
def _fill_diagonal(input: RawTensor, fill_value: Scalar, wrap: bool) -> Any:
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = np.cumprod((1,) + input.shape[::-1])[:-1][::-1]
    step = int(sum(strides))
    n = input.size
    if input.ndim == 2 and not wrap:
        n = min(n, input.shape[1] * min(input.shape[0], input.shape[1]))
    flat = input.reshape(-1)
    idx = np.arange(0, n, step) if input.ndim > 2 or not wrap else _wrapped_diag(input.shape)
    return flat.at[idx].set(jnp.asarray(fill_value).astype(input.dtype)).reshape(input.shape)


def _wrapped_diag(shape: tuple) -> np.ndarray:
    rows, cols = shape
    idx = [r * cols + (r % (cols + 1)) for r in range(rows) if r % (cols + 1) < cols]
    return np.asarray(idx, np.int64)


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    from .._core import grad_mode, graph

    if isinstance(fill_value, Tensor):  # torch reads a one-element tensor as its number
        fill_value = fill_value.item()
    if D.overflows(fill_value, self._dtype):
        raise D.overflow_error(self._dtype)
    if grad_mode._state.enabled and (self._rg or self._base_t is not None):
        graph.check_inplace(self)
    graph.commit_inplace(self, _fill_diagonal(self, fill_value, bool(wrap)))
    return self


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, other._dtype)



"""View ops: results share memory with their input, with torch's strides and grad_fn names."""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core import grad_mode, graph
from .._core import views as V
from .._core.size import Size
from .._core.tensor import Tensor, row_major, wrap_dim
from . import registry
from .registry import defview, expose


def _ints(args: Sequence[Any], fname: str = "view") -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    out = []
    for a in args:
        if isinstance(a, Tensor):
            a = a.__index__()
        elif not isinstance(a, int) or isinstance(a, bool):
            if hasattr(a, "__index__") and not isinstance(a, (float, bool)):
                a = a.__index__()
            else:
                raise TypeError(
                    f"{fname}(): argument 'size' (position 1) must be tuple of ints, but found element of type {type(a).__name__} at pos 0"
                )
        out.append(a)
    return tuple(out)


def infer_size(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 in ``shape`` against ``numel`` (torch's infer_size)."""
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape [{', '.join(map(str, shape))}]")
        else:
            known *= s
    if infer is not None:
        if known == 0 or numel % known != 0:
            if known == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of {numel} elements into shape [{', '.join(map(str, shape))}] because the "
                    "unspecified dimension size -1 can be any value and is ambiguous"
                )
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def _reshape_step(t: Tensor, shape: tuple) -> tuple | None:
    sh, st, off = t._geometry()
    if t._view is None and not t._buf.np_strides and sh:  # a whole row-major tensor: torch's computeStride gives
        return ("reshape", (shape,), (), shape, row_major(shape), off)  # the new shape's row-major strides
    new_st = V.view_strides(sh, st, shape) if sh else (1,) * len(shape)
    if new_st is None:
        return None
    return ("reshape", (shape,), (), shape, new_st, off)


@defview(function=False, grad_name="ViewBackward0")
def view(input: Tensor, *shape: Any) -> Any:
    """Tensor.view(*shape) or Tensor.view(dtype)."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(input, shape[0])
    shape = infer_size(_ints(shape), input.numel())
    step = _reshape_step(input, shape)
    if step is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead."
        )
    return step


def _view_dtype(input: Tensor, dt: D.dtype) -> Any:
    if dt is input._dtype:
        out = registry.make_view_of(input, ("reshape", (tuple(input._shape),), (), *input._geometry()), "ViewBackward0")
        out._base_t = None
        return out
    old, new = input._dtype.itemsize, dt.itemsize
    sh, st, off = input._geometry()
    if old == new:
        out = registry.make_view_of(input, ("bitcast", (dt.np,), (), sh, st, off), "ViewBackward0")
        out._dtype = dt
        out._base_t = None  # torch: a dtype view is not an autograd view (no ._base)
        return out
    what = f"to view {D.cpp_name(input._dtype)} as {D.cpp_name(dt)} (different element sizes)"
    if not sh:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if st[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
    if old > new:  # each element splits into `r` trailing ones
        r = old // new
        shape = sh[:-1] + (sh[-1] * r,)
        stride = tuple(s * r for s in st[:-1]) + (1,)
        steps = [
            ("bitcast", (dt.np,), (), sh + (r,), st + (1,), off),
            ("reshape", (shape,), (), shape, stride, off * r),
        ]
    else:
        r = new // old
        for name, v in (("size(-1)", sh[-1]), ("storage_offset()", off)):
            if v % r:
                raise RuntimeError(f"self.{name} must be divisible by {r} {what}, but got {v}")
        for i, s in enumerate(st[:-1]):
            if s % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
        shape = sh[:-1] + (sh[-1] // r,)
        stride = tuple(s // r for s in st[:-1]) + (1,)
        split = sh[:-1] + (sh[-1] // r, r)
        steps = [
            ("reshape", (split,), (), split, st[:-1] + (r, 1), off),
            ("bitcast", (dt.np,), (), shape, stride, off // r),
        ]
    # torch: a view between element sizes is not differentiable
    from .._core import tensor as T

    view = input._view
    for kind, static, dyn, shp, strd, o in steps:
        view = (
            V.View(((kind, static),), dyn, shp, strd, o) if view is None else view.then(kind, static, dyn, shp, strd, o)
        )
    out = T.make_view(input, view)
    out._dtype = dt
    out._base_t = None
    return out


@registry.defop(promote=None, method=False, grad_name="UnsafeViewBackward0")
def _reshape_copy(input: registry.RawTensor, shape: tuple) -> Any:
    return input.reshape(shape)


@defview(grad_name="ViewBackward0")
def reshape(input: Tensor, *shape: Any) -> Any:
    shape = infer_size(_ints(shape, "reshape"), input.numel())
    step = _reshape_step(input, shape)
    if step is None:
        return _reshape_copy(input, shape)
    return step


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, other._shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other._shape)


def _squeeze_name(args: tuple, kwargs: dict) -> str:
    dim = args[0] if args else kwargs.get("dim")
    if dim is None:
        return "SqueezeBackward0"
    return "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1"


@defview(grad_name=_squeeze_name)
def squeeze(input: Tensor, dim: Any = None) -> Any:
    sh, st, off = input._geometry()
    nd = len(sh)
    if dim is None:
        dims = {i for i, s in enumerate(sh) if s == 1}
    else:
        dims = {wrap_dim(d, nd) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        dims = {d for d in dims if nd and sh[d] == 1}
    shape = tuple(s for i, s in enumerate(sh) if i not in dims)
    stride = tuple(s for i, s in enumerate(st) if i not in dims)
    return ("reshape", (shape,), (), shape, stride, off)


@defview(grad_name="UnsqueezeBackward0")
def unsqueeze(input: Tensor, dim: int) -> Any:
    sh, st, off = input._geometry()
    d = wrap_dim(dim, len(sh) + 1)
    new_st = st[d] * sh[d] if d < len(sh) else 1
    shape = sh[:d] + (1,) + sh[d:]
    return ("reshape", (shape,), (), shape, st[:d] + (new_st,) + st[d:], off)


def _permute_spec(input: Tensor, perm: tuple) -> tuple:
    sh, st, off = input._geometry()
    return ("permute", (perm,), (), tuple(sh[p] for p in perm), tuple(st[p] for p in perm), off)


@defview(grad_name="PermuteBackward0")
def permute(input: Tensor, *dims: Any) -> Any:
    dims = _ints(dims, "permute")
    nd = input.dim()
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
            f"ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
        )
    perm = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(perm)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute_spec(input, perm)


@defview(grad_name="TransposeBackward0")
def transpose(input: Tensor, dim0: int, dim1: int) -> Any:
    nd = input.dim()
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    perm = list(range(nd))
    if nd:  # a 0-dim tensor accepts dims 0 and -1, and transposes to itself
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return _permute_spec(input, tuple(perm))


@defview(grad_name="TBackward0")
def t(input: Tensor) -> Any:
    nd = input.dim()
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _permute_spec(input, tuple(reversed(range(nd))))


@defview(grad_name="PermuteBackward0")
def movedim(input: Tensor, source: Any, destination: Any) -> Any:
    nd = input.dim()
    if isinstance(source, int) != isinstance(destination, int):
        raise TypeError(
            f"movedim() received an invalid combination of arguments - got ({type(source).__name__}, "
            f"{type(destination).__name__}), but expected one of:"
        )
    src = [wrap_dim(d, nd) for d in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [wrap_dim(d, nd) for d in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same number of "
            f"dims as destination ({dst} dims)"
        )
    for name, ds, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [d for d in range(nd) if d not in src]
    perm = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = tuple(p if p is not None else next(it) for p in perm)
    return _permute_spec(input, perm)


@defview(function=False, grad_name="ExpandBackward0")
def expand(input: Tensor, *sizes: Any, implicit: bool = False) -> Any:
    sizes = _ints(sizes, "expand")
    sh, st, off = input._geometry()
    if len(sizes) < len(sh):
        raise RuntimeError(
            f"expand({input.type()}{{[{', '.join(map(str, sh))}]}}, size=[{', '.join(map(str, sizes))}]): the number "
            f"of sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({len(sh)})"
        )
    lead = len(sizes) - len(sh)
    shape, stride = [], []
    for i in reversed(range(len(sizes))):  # torch checks from the last dimension
        s = sizes[i]
        j = i - lead
        if j < 0:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}"
                )
            shape.append(s)
            stride.append(0)
            continue
        if s == -1:
            s = sh[j]
        if sh[j] == s:
            shape.append(s)
            stride.append(st[j])
        elif sh[j] == 1:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({sh[j]}) at non-singleton "
                f"dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  Tensor sizes: [{', '.join(map(str, sh))}]"
            )
    shape.reverse()
    stride.reverse()
    return ("expand", (tuple(shape),), (), tuple(shape), tuple(stride), off)


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other._shape)


def slice_spec(input: Tensor, dim: int, start: int, size: int, step: int) -> tuple:
    sh, st, off = input._geometry()
    sh = tuple(sh)  # plain tuples: Size arithmetic is slow
    shape = sh[:dim] + (size,) + sh[dim + 1 :]
    stride = st[:dim] + (st[dim] * step,) + st[dim + 1 :]
    return ("slice", (dim, size, step), (start,), shape, stride, off + start * st[dim])


def select_spec(input: Tensor, dim: int, index: int) -> tuple:
    sh, st, off = input._geometry()
    sh = tuple(sh)
    return ("select", (dim,), (index,), sh[:dim] + sh[dim + 1 :], st[:dim] + st[dim + 1 :], off + index * st[dim])


@defview(grad_name="SliceBackward0")
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Any:
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0 or start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_spec(input, d, start, length, 1)


@defview(grad_name="SelectBackward0")
def select(input: Tensor, dim: int, index: Any) -> Any:
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    index = int(index)
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size [{', '.join(map(str, input._shape))}] at "
            f"dimension {d}"
        )
    return select_spec(input, d, index % n if n else index)


@defview(grad_name="DiagonalBackward0")
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    sh, st, off = input._geometry()
    nd = len(sh)
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        n = max(min(sh[d1], sh[d2] - offset), 0)
        new_off = off + offset * st[d2] if n else off
    else:
        n = max(min(sh[d1] + offset, sh[d2]), 0)
        new_off = off - offset * st[d1] if n else off
    rest = [i for i in range(nd) if i not in (d1, d2)]
    shape = tuple(sh[i] for i in rest) + (n,)
    stride = tuple(st[i] for i in rest) + (st[d1] + st[d2],)
    return ("diagonal", (offset, d1, d2), (), shape, stride, new_off)


@defview(grad_name="AsStridedBackward0")
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Any:
    size, stride = tuple(size), tuple(stride)
    off = input.storage_offset() if storage_offset is None else storage_offset
    if all(n > 0 for n in size) and len(size) == len(stride):
        base = input if input._base_t is None else input._base_t
        need = off + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        have = base.numel() + (base.storage_offset() if base._view is not None else 0)
        if need > have:
            item = input._dtype.itemsize
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and itemsize {item} "
                f"requiring a storage size of {need * item} are out of bounds for storage of size {have * item}"
            )
    spec = ("as_strided", (size, stride, off), (), size, stride, off)
    if input._view is None:
        return spec
    # as_strided addresses the whole storage: read straight from the base buffer.
    from .._core import tensor as T

    out = T.make_view(input._base_t, V.View(((spec[0], spec[1]),), (), size, stride, off))
    if input._rg and grad_mode._state.enabled:
        # torch: the gradient reaches the storage elements the input covers, and only those
        kernel = _through_storage(input._geometry(), (size, stride, off))
        graph.record_view(input, out, kernel, (), "AsStridedBackward0")
    return out


_storage_reads: dict = {}


def _storage_index(shape: tuple, stride: tuple, offset: int) -> np.ndarray:
    idx = np.array(offset, dtype=np.int64)
    for n, s in zip(shape, stride):
        idx = idx[..., None] + np.arange(n, dtype=np.int64) * s
    return idx


def _through_storage(in_geometry: tuple, out_geometry: tuple) -> Any:
    """``as_strided`` of a view as a function of the view's values: place them in their storage
    positions (the rest is constant for the gradient, so zeros) and read the new geometry."""
    key = (tuple(map(tuple, in_geometry[:2])), in_geometry[2], tuple(map(tuple, out_geometry[:2])), out_geometry[2])
    k = _storage_reads.get(key)
    if k is None:
        src, dst = _storage_index(*in_geometry).reshape(-1), _storage_index(*out_geometry)
        n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1

        def read(x: Any) -> Any:
            return jnp.zeros((n,), x.dtype).at[src].set(x.reshape(-1))[dst]

        if len(_storage_reads) > 256:
            _storage_reads.clear()
        k = _storage_reads[key] = jax.jit(read)
    return k


@defview(function=False, grad_name="UnfoldBackward0")
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Any:
    sh, st, off = input._geometry()
    nd = len(sh)
    d = wrap_dim(dimension, nd) if nd else 0
    n = sh[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    if nd == 0:
        return ("reshape", ((size,),), (), (size,), (1,), off)
    # The JAX step reads windows from the (contiguous) input array; the torch geometry is absolute.
    rel = V.contiguous_strides(sh)
    shape = sh[:d] + (count,) + sh[d + 1 :] + (size,)
    rel_stride = rel[:d] + (rel[d] * step,) + rel[d + 1 :] + (rel[d],)
    stride = st[:d] + (st[d] * step,) + st[d + 1 :] + (st[d],)
    return ("as_strided", (shape, rel_stride, 0), (), shape, stride, off)


@expose("torch")
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    sh = input._shape
    return reshape(input, sh[:s] + (math.prod(sh[s : e + 1]),) + sh[e + 1 :])


@expose("torch")
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    nd = input.dim()
    d = wrap_dim(dim, nd)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise RuntimeError(
            f"unflatten: Provided sizes [{', '.join(map(str, sizes))}] don't multiply up to the size of dim {dim} "
            f"({n}) in the input tensor"
        )
    sizes = infer_size(sizes, n)
    return view(input, input._shape[:d] + sizes + input._shape[d + 1 :])


@expose("torch")
def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.dim())
    return _multi_output(
        [registry.make_view_of(input, select_spec(input, d, i), "UnbindBackward0") for i in range(input._shape[d])],
        "Unbind",
    )


def _multi_output(views: list, name: str) -> tuple:
    """Mark the views of a multi-output view op made in grad mode: torch refuses in-place writes to them
    (``graph.check_inplace``)."""
    if grad_mode._state.enabled:
        for i, v in enumerate(views):
            v._multi_view = (name, i)
    return tuple(views)


@expose("torch")
def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    d = wrap_dim(dim, tensor.dim())
    n = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0 or (size == 0 and n != 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), "
                f"but got split_sizes={sizes}"
            )
    out, start = [], 0
    gname = "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0"
    for s in sizes:
        out.append(registry.make_view_of(tensor, slice_spec(tensor, d, start, s, 1), gname))
        start += s
    return _multi_output(out, gname[: -len("Backward0")])


@expose("torch")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, [0] * chunks if n == 0 else 1, d) if n == 0 else split(input, 1, d)
    return split(input, size, d)


@expose("torch")
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [i * q + min(i, r) for i in range(k + 1)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        b = max(a, b)
        out.append(registry.make_view_of(input, slice_spec(input, d, a, b - a, 1), "SliceBackward0"))
    return tuple(out)


def _np_split(name: str, input: Tensor, sections: Any, dim: int, min_dim: int) -> tuple:
    if input.dim() < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with {input.dim()} "
            "dimensions!"
        )
    if isinstance(sections, int):
        n = input._shape[dim]
        if sections == 0 or n % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {n} is not "
                f"divisible by the split_size {sections}!"
            )
    return tensor_split(input, sections, dim)


@expose("torch")
def hsplit(input: Tensor, sections: Any) -> tuple:
    return _np_split("hsplit", input, sections, 1 if input.dim() > 1 else 0, 1)


@expose("torch")
def vsplit(input: Tensor, sections: Any) -> tuple:
    return _np_split("vsplit", input, sections, 0, 2)


@expose("torch")
def dsplit(input: Tensor, sections: Any) -> tuple:
    return _np_split("dsplit", input, sections, 2, 3)


@expose("torch")
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(input, axis0, axis1)


def _mT(self: Tensor, name: str = "mT") -> Tensor:
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.{name} is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return transpose(self, -2, -1)


def _mH(self: Tensor) -> Tensor:
    return _mT(self, "mH")


_warned_T: set = set()


def _T(self: Tensor) -> Tensor:
    n = self.dim()
    if n != 2 and n != 0 and "nd" not in _warned_T:
        _warned_T.add("nd")
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
            "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
            "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    if n == 0 and "0d" not in _warned_T:
        _warned_T.add("0d")
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
    return permute(self, tuple(reversed(range(n))))


def _H(self: Tensor) -> Tensor:
    n = self.dim()
    if n not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if n > 2 else "")
        )
    return permute(self, tuple(reversed(range(n))))


swapdims = swapaxes
expose("torch", "swapdims")(swapdims)


@expose("torch")
def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    return movedim(input, source, destination)


# --- in-place view ops: the tensor itself takes the new geometry -----------------------------------------


def _become_view(self: Tensor, spec: tuple, gname: str) -> Tensor:
    """Give ``self`` the geometry (and autograd history) of a view of itself, as torch's ``x.t_()``."""
    from .._core import grad_mode, graph

    if grad_mode._state.enabled and self._rg:
        graph.check_inplace(self)
    new = registry.make_view_of(self, spec, gname)
    self._view = new._view
    self._shape = new._shape
    self._cache = self._cache_src = None
    if new._node is not None:
        self._node, self._out_nr, self._node_v = new._node, new._out_nr, new._node_v
    return self


def _inplace_view(fn: Any, name: Any) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        spec = fn.__wrapped__(self, *args, **kwargs)
        gname = name(args, kwargs) if callable(name) else name
        return _become_view(self, spec, gname)

    return method


def _squeeze_inplace_name(args: tuple, kwargs: dict) -> str:
    dim = args[0] if args else kwargs.get("dim")
    if dim is None:
        return "SqueezeBackward3"
    return "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"


def _t_inplace(self: Tensor) -> Tensor:
    return _become_view(self, t.__wrapped__(self), "TBackward1")


def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    return split(self, list(split_sizes), dim)


@registry.expose("linalg", "diagonal")
def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: ``A.diagonal`` with matrix-batch defaults."""
    return diagonal(A, offset, dim1, dim2)

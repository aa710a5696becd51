"""``Tensor.__getitem__`` / ``__setitem__`` with torch's rules, and ``copy_`` / ``fill_`` / ``zero_``.

As in torch, a key is applied in two stages: integers, slices, None and Ellipsis become views
(select/slice/unsqueeze, recorded for autograd); what is left (integer tensors, sequences, bool
masks, Python bools) is advanced indexing over that view, with numpy's placement of the indexed
dimensions. Bool masks are turned into integer indices on the host (the result shape depends on
their values), so they cannot be used inside traced code.

Integer positions are dynamic kernel arguments (``x[i]`` in a loop compiles once); slice
bounds are resolved in Python so output shapes are static.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import cold_kernels, grad_mode, graph
from .._core import dtype as D
from .._core import tensor as T
from .._core import views as V
from .._core.tensor import Tensor
from . import registry
from ._common import _to_dtype, check_overlap, convert, type_name
from .registry import RawTensor, TensorList, TensorOrScalar, defop, expose
from .views import select_spec, slice_spec

_SEQ_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result"
)
_BAD_INDEX = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})"
_INT_TYPES = (int, np.integer)
_BOOL_TYPES = (bool, np.bool_)


def _shape_str(shape: Any) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _as_tuple(key: Any) -> tuple:
    """torch's treatSequenceAsTuple: a short list holding slices/None/Ellipsis/sequences is a tuple."""
    if type(key) is tuple:
        return key
    if type(key) is list and len(key) < 32:
        for k in key:
            if k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, slice, np.ndarray)):
                warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
                return tuple(key)
    return (key,)


def _count_dims(key: tuple) -> int:
    n = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, _BOOL_TYPES):
            continue
        if isinstance(k, Tensor):
            n += k.dim() if k._dtype is D.bool or k._dtype is D.uint8 else 1
        else:
            n += 1
    return n


def _slice_bounds(s: slice, n: int) -> tuple:
    step = 1 if s.step is None else int(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else int(s.start)
    stop = n if s.stop is None else int(s.stop)
    if start < 0:
        start = max(start + n, 0)
    if stop < 0:
        stop = max(stop + n, 0)
    start = min(start, n)
    stop = min(max(stop, start), n)
    return start, (stop - start + step - 1) // step, step


def _unsqueeze_spec(t: Tensor, d: int) -> tuple:
    sh, st, off = t._geometry()
    sh = tuple(sh)
    new_st = st[d] * sh[d] if d < len(sh) else 1
    shape = sh[:d] + (1,) + sh[d:]
    return ("reshape", (shape,), (), shape, st[:d] + (new_st,) + st[d:], off)


def _view(t: Tensor, spec: tuple, name: str, record: bool) -> Tensor:
    if record:
        return registry.make_view_of(t, spec, name)
    view = t._view
    kind, static, dyn, shape, stride, offset = spec
    new = V.View(((kind, static),), dyn, shape, stride, offset) if view is None else view.then(*spec)
    return T.make_view(t, new)


def _select(t: Tensor, dim: int, index: int, real_dim: int, record: bool) -> Tensor:
    n = t._shape[dim]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {n}")
    return _view(t, select_spec(t, dim, index % n), "SelectBackward0", record)


def _to_index_tensor(k: Any, device: Any) -> Tensor:
    from . import creation

    t = creation.tensor(k, device=device)
    if t.numel() == 0 and t._dtype.is_floating_point:  # torch: x[[]] indexes with an empty long tensor
        t = t.long()
    return t


def _first_slice(t: Tensor, k: slice, record: bool, always_view: bool) -> Tensor:
    """``_basic`` for a key that is one slice (``t`` has a dim): the view of the first dim it takes."""
    n = t._shape[0]
    start, size, step = _slice_bounds(k, n)
    if always_view or not (start == 0 and size == n and step == 1):
        return _view(t, slice_spec(t, 0, start, size, step), "SliceBackward0", record)
    return t


def _basic(self: Tensor, key: tuple, record: bool, single_slice_view: bool) -> tuple[Tensor, list]:
    """Apply the view part of ``key``. Returns the view and the advanced entries left, each
    ``(dim, index)`` where ``index`` is a Tensor or a Python bool, addressing dims of the view."""
    ndim = self.dim()
    used = _count_dims(key)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    t = self
    dim = 0
    advanced = []
    for real_dim, k in enumerate(key):
        if k is Ellipsis:
            dim += ndim - used
        elif k is None:
            t = _view(t, _unsqueeze_spec(t, dim), "UnsqueezeBackward0", record)
            dim += 1
        elif isinstance(k, _BOOL_TYPES):
            t = _view(t, _unsqueeze_spec(t, dim), "UnsqueezeBackward0", record)
            advanced.append((dim, bool(k)))
            dim += 1
        elif isinstance(k, _INT_TYPES):
            t = _select(t, dim, int(k), real_dim, record)
        elif isinstance(k, slice):
            start, size, step = _slice_bounds(k, t._shape[dim])
            if single_slice_view or not (start == 0 and size == t._shape[dim] and step == 1):
                t = _view(t, slice_spec(t, dim, start, size, step), "SliceBackward0", record)
            dim += 1
        else:
            if not isinstance(k, Tensor):
                if isinstance(k, str):
                    raise TypeError("new(): invalid data type 'str'")
                if not isinstance(k, (list, tuple, np.ndarray, range)):
                    raise IndexError(_BAD_INDEX.format(type(k).__name__))
                k = _to_index_tensor(list(k) if isinstance(k, range) else k, self.device)  # torch: a sequence
            if k.dim() == 0 and not (k._dtype.is_floating_point or k._dtype.is_complex):
                if k._dtype is D.bool or k._dtype is D.uint8:
                    t = _view(t, _unsqueeze_spec(t, dim), "UnsqueezeBackward0", record)
                    advanced.append((dim, bool(k.item())))
                    dim += 1
                else:
                    t = _select(t, dim, int(k.item()), real_dim, record)
                continue
            advanced.append((dim, k))
            dim += k.dim() if k._dtype is D.bool or k._dtype is D.uint8 else 1
    return t, advanced


_BOOL_INDEX = {True: np.zeros(1, np.int64), False: np.zeros(0, np.int64)}


def _advanced(t: Tensor, advanced: list) -> tuple:
    """Torch's checks of the advanced part of a key, then the static key structure (per dim of
    ``t``: ("s",) for a full slice, ("a", i) for index array i, ("a", i, "+") where every index is known to be
    non-negative) and the index arrays."""
    for _, idx in advanced:
        if isinstance(idx, Tensor) and (idx._dtype.is_floating_point or idx._dtype.is_complex):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    key: list = [("s",)] * t.dim()
    arrays: list = []
    dims: list = []
    for dim, idx in advanced:
        if isinstance(idx, bool):
            key[dim] = ("a", len(arrays))
            arrays.append(_BOOL_INDEX[idx])
            dims.append(dim)
            continue
        if idx._dtype is D.bool or idx._dtype is D.uint8:
            if idx._dtype is D.uint8:
                warnings.warn(
                    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                    UserWarning,
                    stacklevel=4,
                )
            mask = idx._host()
            for i, n in enumerate(mask.shape):
                if n != t._shape[dim + i]:
                    raise IndexError(
                        f"The shape of the mask {_shape_str(mask.shape)} at index {i} does not match the shape of "
                        f"the indexed tensor {_shape_str(t._shape)} at index {dim + i}"
                    )
            for j, nz in enumerate(np.nonzero(mask)):
                key[dim + j] = ("a", len(arrays))
                arrays.append(nz)
                dims.append(dim + j)
            continue
        key[dim] = ("a", len(arrays))
        arrays.append(idx)
        dims.append(dim)
    shapes = [tuple(a.shape) for a in arrays]
    try:
        bshape = shapes[0] if len(shapes) == 1 else np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(_shape_str(s) for s in shapes)
        ) from None
    if _check_bounds(t, arrays, dims, bshape):
        key = [k if k[0] == "s" else ("a", k[1], "+") for k in key]  # (see _index_pad)
    while key and key[-1] == ("s",):
        key.pop()
    return tuple(key), arrays, dims, bshape


def _bounds(idx: Any) -> tuple:
    """(min, max) of an index tensor, cached on it while its array is unchanged."""
    if not isinstance(idx, Tensor):
        return (idx.min(), idx.max()) if idx.size else (0, 0)
    arr = idx._data()
    cached = idx.__dict__.get("_index_bounds")
    if cached is not None and cached[0] is arr:
        return cached[1]
    host = np.asarray(arr)
    b = (int(host.min()), int(host.max())) if host.size else (0, 0)
    idx.__dict__["_index_bounds"] = (arr, b)
    return b


def _check_bounds(t: Tensor, arrays: list, dims: list, bshape: tuple) -> bool:
    """Torch's IndexError for an index out of range (on the CPU, where the values are read anyway). Returns
    whether every index is known to be non-negative: only then may a padded call pad the indexed axes."""
    if t._buf.device.type != "cpu":
        return False  # torch checks on the device asynchronously; JAX clamps
    bad = False
    nonneg = True
    for a, d in zip(arrays, dims):
        lo, hi = _bounds(a)
        n = t._shape[d]
        if hi >= n or lo < -n:
            bad = True
        nonneg = nonneg and lo >= 0
    if not bad:
        return nonneg
    # torch reports the first bad element of the broadcast index, numbering the indexed dims
    hosts = [np.broadcast_to(a._host() if isinstance(a, Tensor) else a, bshape).reshape(-1) for a in arrays]
    sizes = [t._shape[d] for d in dims]
    bad_at = [np.flatnonzero((h >= n) | (h < -n)) for h, n in zip(hosts, sizes)]
    first = min(b[0] for b in bad_at if b.size)
    j = next(j for j, b in enumerate(bad_at) if b.size and b[0] == first)
    raise IndexError(f"index {hosts[j][first]} is out of bounds for dimension {j} with size {sizes[j]}")


def _result_shape(t: Tensor, dims: list, bshape: tuple) -> tuple:
    """numpy's advanced-indexing shape: the broadcast index shape replaces the indexed dims where
    they are adjacent, else goes first."""
    shape = tuple(t._shape)
    ds = sorted(set(dims))
    if ds == list(range(ds[0], ds[-1] + 1)):
        return shape[: ds[0]] + tuple(bshape) + shape[ds[-1] + 1 :]
    return tuple(bshape) + tuple(s for i, s in enumerate(shape) if i not in ds)


def _thaw(key: tuple, indices: list) -> tuple:
    return tuple(slice(None) if k[0] == "s" else indices[k[1]] for k in key)


def _index_pad(static: tuple, shapes: tuple) -> tuple:
    """The index tensors padded with index 0: the extra rows gather ``input``'s first and are sliced off, and
    the backward's scatter adds their zero cotangents to a sum that starts at +0.0, which changes no bit.
    An input axis indexed by non-negative indices only is padded too (its padded positions are never read,
    and the backward's are sliced off); a negative index counts from the axis' end, which padding moves."""
    if shapes[0] is None or any(s is None for s in shapes[1:]):
        return (None,) * len(shapes)
    indexed = {d: 0 for d, k in enumerate(static[0]) if len(k) == 3}
    return (indexed or None,) + tuple({a: 0 for a in range(len(s))} for s in shapes[1:])


_index_pad.exact = True  # (buckets: a fixed off-class size may run exact instead)


@defop(promote=None, method=False, grad_name="IndexBackward0", saves=("indices",), pad=_index_pad)
def _index(input: RawTensor, indices: TensorList, key: tuple) -> Any:
    return input[_thaw(key, indices)]


@defop(promote=None, method=False, grad_name="IndexPutBackward0", saves=("indices",), nondiff=("indices",))
def _index_put(input: RawTensor, indices: TensorList, values: TensorOrScalar, key: tuple, accumulate: bool) -> Any:
    k = _thaw(key, indices)
    v = jnp.asarray(values).astype(input.dtype)
    if accumulate:
        if input.dtype == jnp.bool_:
            return input.at[k].max(v)
        return input.at[k].add(v)
    return input.at[k].set(v)


def _index_tensors(arrays: list, device: Any) -> list:
    # (a mask's nonzero positions: ``jnp.asarray`` would compile a copy for each count of them)
    return [a if isinstance(a, Tensor) else T.make_on(cold_kernels.to_array(np.asarray(a), copy=False), device)
            for a in arrays]


_INT_INDEX = (D.int64, D.int32)


def getitem(self: Tensor, key: Any) -> Tensor:
    if type(key) is Tensor and key._dtype in _INT_INDEX and key._shape and self._shape:
        # fast path for x[idx]: one integer index tensor on the first dim
        nonneg = _check_bounds(self, [key], [0], tuple(key._shape))
        return _index(self, [key], (("a", 0, "+") if nonneg else ("a", 0),))
    if type(key) is slice and self._shape:
        return _first_slice(self, key, self._rg and grad_mode._state.enabled, True)
    key = _as_tuple(key)
    record = self._rg and grad_mode._state.enabled
    t, advanced = _basic(self, key, record, single_slice_view=len(key) == 1)
    if not advanced:
        if t is self:  # x[...] or x[:, :]: torch returns an alias
            return registry.make_view_of(
                self, ("reshape", (tuple(self._shape),), (), *self._geometry()), "AliasBackward0"
            )
        return t
    k, arrays, _, _ = _advanced(t, advanced)
    return _index(t, _index_tensors(arrays, t.device), k)


# --- writing -------------------------------------------------------------------------------------

_CPP_SCALAR = {
    D.uint8: "uint8_t", D.int8: "int8_t", D.int16: "int16_t", D.int32: "int", D.int64: "int64_t",
    D.float32: "float", D.float64: "double", D.float16: "double", D.bfloat16: "double",
}  # fmt: skip


def _tensor_type(t: Tensor) -> str:
    return type_name(t)


def _scalar_value(self: Tensor, value: Any) -> Any:
    """torch's valueToTensor: Python numbers become values of ``self``'s dtype (range-checked)."""
    if isinstance(value, np.generic) and isinstance(value, (np.integer, np.bool_, np.float64)):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        tname = type(value).__name__
        module = type(value).__module__
        if module not in ("builtins", None):
            tname = f"{module}.{type(value).__qualname__}"
        raise TypeError(f"can't assign a {tname} to a {_tensor_type(self)}")
    dt = self._dtype
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        raise ValueError("Overflow when unpacking long long")
    if dt is D.bool or dt.is_complex:
        return value
    bad = isinstance(value, complex) and value.imag != 0
    if isinstance(value, complex):
        value = value.real
    if dt.is_floating_point:
        if dt in (D.float32,) and math.isfinite(value) and abs(value) > float(np.finfo(np.float32).max):
            bad = True
    else:
        info = np.iinfo(dt.np)
        lo = -info.max if dt is D.uint8 else info.min  # torch lets negative values wrap into uint8
        bad = bad or not math.isfinite(value) or not lo <= value <= info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CPP_SCALAR.get(dt, dt.np.name)} without overflow")
    return value


def _strip_leading_ones(shape: tuple) -> tuple:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def _expand_check(value: Tensor, shape: tuple) -> None:
    """torch's expand errors for broadcasting ``value`` to ``shape`` (setitem's copy)."""
    src = _strip_leading_ones(tuple(value._shape))
    if len(src) > len(shape):
        raise RuntimeError(
            f"expand({_tensor_type(value)}{{{_shape_str(src)}}}, size={_shape_str(shape)}): the number of sizes "
            f"provided ({len(shape)}) must be greater or equal to the number of dimensions in the tensor ({len(src)})"
        )
    lead = len(shape) - len(src)
    for i, s in enumerate(src):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size ({s}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {_shape_str(shape)}.  Tensor sizes: "
                f"{_shape_str(src)}"
            )


def _fill_name(static: tuple, dyn: tuple) -> str:
    return "FillBackward3" if isinstance(dyn[1], Tensor) else "FillBackward2"


@defop(promote=None, method=False, grad_name=_fill_name, saves=(), scalar=("value",))
def fill(input: RawTensor, value: TensorOrScalar) -> Any:
    return jnp.broadcast_to(jnp.asarray(value).astype(input.dtype), input.shape)


def _fill_check(self: Tensor, value: Any) -> None:
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
        )
    if isinstance(value, (int, float, complex)) and D.overflows(value, self._dtype):
        raise D.overflow_error(self._dtype)


@expose("torch")
def fill_(self: Tensor, value: Any) -> Tensor:
    _fill_check(self, value)
    if grad_mode._state.enabled and (self._rg or self._base_t is not None or (isinstance(value, Tensor) and value._rg)):
        graph.check_inplace(self)
        graph.commit_inplace(self, fill(self, value))
        return self
    self._assign_broadcast(value._data() if isinstance(value, Tensor) else value)
    return self


@defop(promote=None, method=False, grad_name="ZeroBackward0", saves=())
def _zeros_of(input: RawTensor) -> Any:
    return jnp.zeros_like(input)


@expose("torch")
def zero_(input: Tensor) -> Tensor:
    if grad_mode._state.enabled and (input._rg or input._base_t is not None):
        graph.check_inplace(input)
        graph.commit_inplace(input, _zeros_of(input))
        return input
    input._assign_broadcast(0)
    return input


def _write_basic(view: Tensor, value: Any) -> None:
    """No-grad ``view[...] = value`` (value broadcast to the view): one fused write kernel."""
    if isinstance(value, Tensor):
        device = value._buf.device
        if device is not view._buf.device and device != view._buf.device and value.dim() != 0:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, {view.device} and "
                f"{value.device}!"
            )
        value = _cast_for(view, value)
    view._assign_broadcast(value)


def _copy_to(dst: Tensor, value: Any, track: bool) -> None:
    """torch's setitem copy: same shape -> copy_, 0-dim -> fill_, else expand then copy_."""
    if not isinstance(value, Tensor):
        if track:  # torch wraps the number in a 0-dim tensor: FillBackward3
            value = T.make_on(jnp.asarray(value, dst._dtype.np), dst.device, dst._dtype)
            graph.commit_inplace(dst, fill(dst, value))
        else:
            _write_basic(dst, value)
        return
    if value._shape != dst._shape:
        if value.dim() == 0:
            if track:
                graph.commit_inplace(dst, fill(dst, value))
            else:
                _write_basic(dst, value)
            return
        _expand_check(value, tuple(dst._shape))
        from .views import reshape

        value = reshape(value, _strip_leading_ones(tuple(value._shape)))
    if track:
        copy_(dst, value)
    else:
        _write_basic(dst, value)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    if key is False:  # torch: x[False] = v does nothing
        return
    if not isinstance(value, Tensor):
        value = _scalar_value(self, value)
    track = grad_mode._state.enabled and (self._rg or (isinstance(value, Tensor) and value._rg))
    if type(key) is slice and self._shape:
        t, advanced = _first_slice(self, key, track, False), None
    else:
        t, advanced = _basic(self, _as_tuple(key), track, single_slice_view=False)
    if grad_mode._state.enabled and (track or t._base_t is not None):
        graph.check_inplace(t)
    if not advanced:
        if isinstance(value, Tensor) and value._buf is t._buf:
            check_overlap(t, value)
        _copy_to(t, value, track)
        return
    k, arrays, dims, bshape = _advanced(t, advanced)
    if isinstance(value, Tensor):
        _index_put_checks(t, value, advanced, _result_shape(t, dims, bshape))
        if value.dim() and value._shape[0] == 1:
            from .views import reshape

            value = reshape(value, _strip_leading_ones(tuple(value._shape)))
        if value._buf.device != t._buf.device and value.dim() == 0:
            value = value.item()
    result = _index_put(t, _index_tensors(arrays, t.device), value, k, False)
    graph.commit_inplace(t, result)


def _index_put_checks(t: Tensor, value: Tensor, advanced: list, shape: tuple, strip: bool = True) -> None:
    vshape = _strip_leading_ones(tuple(value._shape)) if strip else tuple(value._shape)
    if len(vshape) > len(shape) or any(a != 1 and a != b for a, b in zip(reversed(vshape), reversed(shape))):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {_shape_str(vshape)} cannot be broadcast to indexing result of "
            f"shape {_shape_str(shape)}"
        )
    # torch: a one-element value with a single mask index goes through masked_fill_ (any dtype)
    masks = [i for _, i in advanced if isinstance(i, Tensor) and i._dtype in (D.bool, D.uint8)]
    if value.numel() == 1 and len(masks) == 1 and len(advanced) == 1:
        return
    if value._dtype is not t._dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {D.cpp_name(t._dtype)} for the "
            f"destination and {D.cpp_name(value._dtype)} for the source."
        )


# --- copy_ ---------------------------------------------------------------------------------------


@defop(promote=None, method=False, grad_name="CopyBackwards", saves=())
def _copy_from(self: RawTensor, src: RawTensor) -> Any:
    return convert(jnp.broadcast_to(src, self.shape), self.dtype)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Tensor.copy_: broadcast ``src`` into ``self``, casting to its dtype, across devices."""
    from . import creation

    if not isinstance(src, Tensor):
        if not isinstance(src, (bool, int, float, complex, np.ndarray, np.generic)):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        src = creation.tensor(src)
    check_overlap(self, src)
    _check_copy_shape(tuple(src._shape), tuple(self._shape))
    if src._buf.device != self._buf.device:
        src = src.to(self.device)
    if grad_mode._state.enabled and (self._rg or src._rg or self._base_t is not None):
        graph.check_inplace(self)
    if grad_mode._state.enabled and (self._rg or src._rg):
        graph.commit_inplace(self, _copy_from(self, src))
        return self
    self._assign_broadcast(_cast_for(self, src))
    return self


def _cast_for(dst: Tensor, src: Tensor) -> Any:
    """``src``'s array in ``dst``'s dtype with torch's conversions (float -> int wraps as torch does)."""
    if src._dtype is dst._dtype:
        return src._data()
    return _to_dtype(src, dst._dtype)._data()


def _check_copy_shape(src: tuple, dst: tuple) -> None:
    """torch's broadcasting errors for writing ``src`` into ``dst``."""
    n = max(len(src), len(dst))
    out = []
    for i in range(n):
        a = dst[len(dst) - n + i] if len(dst) - n + i >= 0 else 1
        b = src[len(src) - n + i] if len(src) - n + i >= 0 else 1
        if a != b and a != 1 and b != 1:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {i}"
            )
        out.append(a if b == 1 else b)
    if tuple(out) != dst:
        raise RuntimeError(f"output with shape {_shape_str(dst)} doesn't match the broadcast shape {_shape_str(out)}")



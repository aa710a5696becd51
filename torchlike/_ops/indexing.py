"""``Tensor.__getitem__`` / ``__setitem__``: basic indexing makes views, advanced indexing gathers.

Integer positions are dynamic kernel arguments (``x[i]`` in a loop compiles once); slice
bounds are resolved in Python so output shapes are static.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core import views as V
from .._core.tensor import Tensor
from ..autograd import grad_mode, graph
from . import registry
from .registry import RawTensor, defop
from .views import select_spec, slice_spec


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _as_index_tensor(x: Any, device: Any) -> Tensor:
    from . import creation

    if isinstance(x, Tensor):
        return x
    t = creation.tensor(x, device=device)
    if t._dtype.is_floating_point and t.numel() == 0:
        t = t.long()
    return t


def _normalize(key: Any) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _count_dims(key: tuple) -> int:
    n = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
            continue
        if isinstance(k, Tensor) and k._dtype in (D.bool, D.uint8):
            n += k.dim()
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            n += k.ndim
        else:
            n += 1
    return n


def _slice_bounds(s: slice, n: int) -> tuple:
    step = 1 if s.step is None else int(s.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else int(s.start)
    stop = n if s.stop is None else int(s.stop)
    if start < 0:
        start = max(start + n, 0)
    if stop < 0:
        stop = max(stop + n, 0)
    start = min(start, n)
    stop = min(max(stop, start), n)
    size = (stop - start + step - 1) // step
    return start, size, step


def _bad_index(k: Any) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(k).__name__})"
    )


def _is_advanced(k: Any) -> bool:
    return isinstance(k, (Tensor, list, np.ndarray)) or (isinstance(k, tuple))


def _basic(self: Tensor, key: tuple, record: bool) -> tuple[Tensor, list]:
    """Apply the basic part of ``key`` as views. Returns the view and the advanced entries left
    (each as (dim_in_result, index)) -- the dims they address in the view."""
    ndim = self.dim()
    used = _count_dims(key)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    single = len(key) == 1
    t = self
    dim = 0
    advanced = []
    for k in key:
        if k is Ellipsis:
            dim += ndim - used
            continue
        if k is None:
            t = _view(t, _unsqueeze_spec(t, dim), "UnsqueezeBackward0", record)
            dim += 1
            continue
        if isinstance(k, (bool, np.bool_)):
            t = _view(t, _unsqueeze_spec(t, dim), "UnsqueezeBackward0", record)
            advanced.append((dim, bool(k)))
            dim += 1
            continue
        if _is_int(k):
            n = t._shape[dim]
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
            t = _view(t, select_spec(t, dim, k % n), "SelectBackward0", record)
            continue
        if isinstance(k, slice):
            n = t._shape[dim]
            start, size, step = _slice_bounds(k, n)
            if single or not (start == 0 and size == n and step == 1):
                t = _view(t, slice_spec(t, dim, start, size, step), "SliceBackward0", record)
            dim += 1
            continue
        if isinstance(k, Tensor) and k.dim() == 0 and not k._dtype.is_floating_point and k._dtype is not D.bool:
            n = t._shape[dim]
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            t = _view(t, select_spec(t, dim, i % n), "SelectBackward0", record)
            continue
        if isinstance(k, (Tensor, list, tuple, np.ndarray)):
            idx = _as_index_tensor(k, self.device)
            if idx._dtype.is_floating_point or idx._dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            advanced.append((dim, idx))
            dim += idx.dim() if idx._dtype in (D.bool, D.uint8) else 1
            continue
        raise _bad_index(k)
    return t, advanced


def _unsqueeze_spec(t: Tensor, d: int) -> tuple:
    sh, st, off = t._geometry()
    new_st = st[d] * sh[d] if d < len(sh) else 1
    shape = sh[:d] + (1,) + sh[d:]
    return ("reshape", (shape,), (), shape, st[:d] + (new_st,) + st[d:], off)


def _view(t: Tensor, spec: tuple, name: str, record: bool) -> Tensor:
    if record:
        return registry.make_view_of(t, spec, name)
    from .._core import tensor as T

    kind, static, dyn, shape, stride, offset = spec
    view = t._view
    new = V.View(((kind, static),), dyn, shape, stride, offset) if view is None else view.then(*spec)
    return T.make_view(t, new)


def _advanced_key(t: Tensor, advanced: list) -> tuple:
    """The static index structure and dynamic index arrays for JAX's numpy-style gather."""
    key: list = [slice(None)] * t.dim()
    arrays = []
    check = t.device.type == "cpu"
    for dim, idx in advanced:
        if isinstance(idx, bool):
            key[dim] = ("b", idx)
            continue
        if idx._dtype in (D.bool, D.uint8):
            mask = np.asarray(idx._data()).astype(bool)
            shape = t._shape[dim : dim + idx.dim()]
            if mask.shape != tuple(shape):
                for i, (a, b) in enumerate(zip(mask.shape, shape)):
                    if a != b:
                        raise IndexError(
                            f"The shape of the mask [{', '.join(map(str, mask.shape))}] at index {i} does not match "
                            f"the shape of the indexed tensor [{', '.join(map(str, t._shape))}] at index {dim + i}"
                        )
            for j, nz in enumerate(np.nonzero(mask)):
                key[dim + j] = ("a", len(arrays))
                arrays.append(jnp.asarray(nz))
            continue
        n = t._shape[dim]
        arr = idx._data()
        if check and idx.numel():
            host = np.asarray(arr)
            lo, hi = host.min(), host.max()
            if hi >= n or lo < -n:
                bad = hi if hi >= n else lo
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
        key[dim] = ("a", len(arrays))
        arrays.append(arr)
    # drop trailing full slices so the key stays small
    while key and key[-1] == slice(None):
        key.pop()
    return tuple(_freeze(k) for k in key), arrays


def _freeze(k: Any) -> Any:
    return ("s",) if k == slice(None) else k


def _thaw(key: tuple, arrays: list) -> tuple:
    out = []
    for k in key:
        if k == ("s",):
            out.append(slice(None))
        elif k[0] == "b":
            out.append(slice(None) if k[1] else slice(0, 0))
        else:
            out.append(arrays[k[1]])
    return tuple(out)


@defop(promote=None, method=False, grad_name="IndexBackward0", saves=("indices",))
def _index(input: RawTensor, indices: registry.TensorList, key: tuple) -> Any:
    return input[_thaw(key, indices)]


@defop(promote=None, method=False, inplace=False, grad_name="IndexPutBackward0", saves=("indices",))
def _index_put_key(input: RawTensor, values: RawTensor, indices: registry.TensorList, key: tuple,
                   accumulate: bool) -> Any:
    k = _thaw(key, indices)
    values = values.astype(input.dtype)
    return input.at[k].add(values) if accumulate else input.at[k].set(values)


def getitem(self: Tensor, key: Any) -> Tensor:
    key = _normalize(key)
    record = self._rg and grad_mode._enabled
    t, advanced = _basic(self, key, record)
    if not advanced:
        if t is self:  # x[...] or x[()] : torch returns an alias
            return registry.make_view_of(self, ("reshape", (tuple(self._shape),), (), *self._geometry()), "AliasBackward0")
        return t
    k, arrays = _advanced_key(t, advanced)
    from .._core import tensor as T

    return _index(t, [T.make(a, t.device) for a in arrays], k)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    from . import creation

    key = _normalize(key)
    if not isinstance(value, Tensor):
        value = creation.tensor(value, dtype=self._dtype, device=self.device) if not isinstance(
            value, (int, float, bool, complex)) else value  # fmt: skip
    track = grad_mode._enabled and (self._rg or (isinstance(value, Tensor) and value._rg))
    if track:
        graph.check_inplace(self)
    t, advanced = _basic(self, key, record=False)
    if not advanced:
        if not track:
            _write_basic(t, value)
        else:
            t = _basic(self, key, record=True)[0]
            copy_(t, value)
        return
    k, arrays = _advanced_key(t, advanced)
    from .._core import tensor as T

    if not isinstance(value, Tensor):
        value = creation.tensor(value, dtype=self._dtype, device=self.device)
    if t is self:
        result = _index_put_key(self, value, [T.make(a, self.device) for a in arrays], k, False)
        graph.commit_inplace(self, result)
    else:
        result = _index_put_key(t, value, [T.make(a, self.device) for a in arrays], k, False)
        graph.commit_inplace(t, result)


def _write_basic(view: Tensor, value: Any) -> None:
    """No-grad ``x[basic] = v``: one fused write kernel (broadcast, cast, scatter)."""
    arr = value._data() if isinstance(value, Tensor) else value
    if isinstance(value, Tensor):
        _check_broadcast(value._shape, view._shape)
    if view._view is None:
        view._assign(jnp.broadcast_to(jnp.asarray(arr, view._dtype.np), view._shape))
        return
    if isinstance(value, Tensor) and value._buf.device != view._buf.device and value.dim() != 0:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, {view.device} and "
            f"{value.device}!"
        )
    view._assign_broadcast(arr)


def _check_broadcast(src: tuple, dst: tuple) -> None:
    if len(src) > len(dst) and any(s != 1 for s in src[: len(src) - len(dst)]):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape [{', '.join(map(str, src))}] cannot be broadcast to indexing "
            f"result of shape [{', '.join(map(str, dst))}]"
        )
    for a, b in zip(reversed(src), reversed(dst)):
        if a != b and a != 1:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape [{', '.join(map(str, src))}] cannot be broadcast to indexing "
                f"result of shape [{', '.join(map(str, dst))}]"
            )


@defop(promote=None, method=False, grad_name="CopyBackwards", saves=())
def _copy_from(self: RawTensor, src: RawTensor) -> Any:
    return jnp.broadcast_to(src, self.shape).astype(self.dtype)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Tensor.copy_: broadcast ``src`` into ``self``, casting to its dtype, across devices."""
    from . import creation

    if not isinstance(src, Tensor):
        src = creation.tensor(src)
    _check_copy_shape(src._shape, self._shape)
    if src._buf.device != self._buf.device:
        src = src.to(self.device)
    if grad_mode._enabled and (self._rg or src._rg):
        graph.check_inplace(self)
        result = _copy_from(self, src)
        graph.commit_inplace(self, result)
        return self
    if self._view is None:
        self._assign(_copy_from(self, src)._data())
    else:
        self._assign_broadcast(src._data())
    return self


def _check_copy_shape(src: tuple, dst: tuple) -> None:
    if len(src) > len(dst) and any(s != 1 for s in src[: len(src) - len(dst)]) or any(
        a != b and a != 1 for a, b in zip(reversed(src), reversed(dst))
    ):
        raise RuntimeError(
            f"The size of tensor a ({dst[-1] if dst else 1}) must match the size of tensor b "
            f"({src[-1] if src else 1}) at non-singleton dimension {max(len(dst) - 1, 0)}"
        )


registry.METHODS.update(__getitem__=getitem, __setitem__=setitem, copy_=copy_)

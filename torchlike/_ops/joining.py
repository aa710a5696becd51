"""Joining and broadcasting helpers built from views and ``cat``/``stack``: hstack/vstack/dstack,
column_stack, atleast_nd, broadcast_to/tensors/shapes, meshgrid, cartesian_prod, block_diag,
combinations."""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

from .._core.size import Size
from .._core.tensor import Tensor
from . import registry
from ._common import _broadcast_shape
from .registry import TensorList, defop, expose
from .shape import cat, stack
from .views import expand, reshape, unsqueeze, view


def _tensor_seq(name: str, tensors: Any) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}"
        )
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def _at_least(t: Tensor, n: int) -> Tensor:
    d = t.dim()
    if d >= n:
        return t
    if d == 0:
        return view(t, (1,) * n)
    if n == 2:
        return unsqueeze(t, 0)
    return unsqueeze(unsqueeze(t, 0), -1) if d == 1 else unsqueeze(t, -1)


def _at_least_all(n: int, tensors: tuple) -> Any:
    if len(tensors) == 1:
        tensors = tensors[0]
        if isinstance(tensors, Tensor):
            return _at_least(tensors, n)
    return tuple(_at_least(t, n) for t in tensors)


@expose("torch")
def atleast_1d(*tensors: Any) -> Any:
    return _at_least_all(1, tensors)


@expose("torch")
def atleast_2d(*tensors: Any) -> Any:
    return _at_least_all(2, tensors)


@expose("torch")
def atleast_3d(*tensors: Any) -> Any:
    return _at_least_all(3, tensors)


@expose("torch")
def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    ts = [_at_least(t, 1) for t in _tensor_seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


@expose("torch")
def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    return cat([_at_least(t, 2) for t in _tensor_seq("vstack", tensors)], 0, out=out)


row_stack = vstack
expose("torch", "row_stack")(row_stack)


@expose("torch")
def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    return cat([_at_least(t, 3) for t in _tensor_seq("dstack", tensors)], 2, out=out)


@expose("torch")
def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    ts = _tensor_seq("column_stack", tensors)
    return cat([reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in ts], 1, out=out)


# --- broadcasting -------------------------------------------------------------------------------


@expose("torch")
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    return expand(input, tuple(size))


@expose("torch")
def broadcast_shapes(*shapes: Any) -> Size:
    norm, given = [], []
    for s in shapes:
        given.append(s)
        if isinstance(s, (int, np.integer)):
            s = (int(s),)
        if not isinstance(s, (tuple, list, Size)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
        for v in s:
            if v < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension ({v}): ({v})")
        norm.append(tuple(int(v) for v in s))
    n = max((len(s) for s in norm), default=0)
    out = [1] * n
    for s in norm:
        for i, v in enumerate(s):
            j = n - len(s) + i
            if out[j] == 1 or v == out[j]:
                out[j] = v
            elif v != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {v} at {j - n}! Mismatching argument at index "
                    f"{norm.index(s)} had {given[norm.index(s)]!r}; but expected shape should be broadcastable to "
                    f"{list(out)}"
                )
    return Size(out)


@expose("torch")
def broadcast_tensors(*tensors: Tensor) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast_shape(*(tuple(t._shape) for t in tensors))
    return tuple(t if tuple(t._shape) == shape else expand(t, shape) for t in tensors)


_MESHGRID_WARNING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


@expose("torch")
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for t in tensors[1:]:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same device")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        vshape = [1] * len(ts)
        vshape[i] = -1
        out.append(expand(view(t, vshape), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@expose("torch")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def _block_diag_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    for i, t in enumerate(dyn[0]):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )


@defop(method=False, grad_name="BlockDiagBackward0", check=_block_diag_check, saves=())
def _block_diag(tensors: TensorList) -> Any:
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = jnp.zeros((rows, cols), mats[0].dtype if mats else jnp.float32)
    r = c = 0
    for m in mats:
        out = out.at[r : r + m.shape[0], c : c + m.shape[1]].set(m)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


@expose("torch")
def block_diag(*tensors: Tensor) -> Tensor:
    if not tensors:
        from .creation import empty

        return empty(1, 0)
    return _block_diag(list(tensors))


@defop(promote=None, method=False, grad_name="StackBackward0", saves=())
def _combinations(input: registry.RawTensor, combos: tuple, r: int) -> Any:
    idx = np.asarray(combos, np.int64).reshape(len(combos), r)
    return input[idx]


@expose("torch")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        from .creation import empty

        return empty(0, dtype=input._dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = tuple(pick(range(input._shape[0]), r))
    return _combinations(input, combos, r)  # torch 2.13: r=1 gives shape (n, 1) too



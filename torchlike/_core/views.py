"""Views over immutable arrays: torch's strided geometry plus a chain of JAX steps.

A view is described twice. Its geometry (shape, stride, storage offset) is torch's, kept for
``stride()``, ``is_contiguous()``, ``.numpy()`` and the legality of ``view()``. Its *steps* are
the JAX operations that read it out of the base array; they are what runs. Writing through a
view scatters into the base at the positions the same steps select from an iota of the base.
Integer positions (slice starts, selected indices) are dynamic arguments of the cached kernels,
so ``x[i]`` in a loop compiles once.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np
from jax import lax

from . import cold_kernels
from .kernel_cache import LRU

Geometry = tuple  # (shape, stride, offset)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def is_channels_last(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """torch's channels-last contiguity of a 4-D (N, C, H, W: C fastest, then W, H, N) or 5-D geometry; dims of
    size 1 may have any stride."""
    order = (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)
    expected = 1
    for d in order:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_contiguous(shape: Sequence[int], stride: Sequence[int]) -> bool:
    # torch: dims of size 1 may have any stride; an empty tensor is contiguous.
    expected = 1
    for size, st in zip(reversed(shape), reversed(stride)):
        if size == 0:
            return True
        if size != 1:
            if st != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """torch's is_non_overlapping_and_dense: some permutation of the dims is contiguous."""
    dims = sorted((st, size) for size, st in zip(shape, stride) if size != 1)
    if any(size == 0 for size in shape):
        return True
    expected = 1
    for st, size in dims:
        if st != expected:
            return False
        expected *= size
    return True


_PARTIAL = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
_INTERNAL = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)


def check_internal_overlap(shape: Sequence[int], stride: Sequence[int]) -> None:
    """torch's assert_no_internal_overlap for a tensor written to: a stride-0 dim of size > 1 overlaps."""
    if any(st == 0 and size > 1 for size, st in zip(shape, stride)):
        raise RuntimeError(_INTERNAL)


def check_partial_overlap(a: Geometry, b: Geometry, itemsize_a: int, itemsize_b: int) -> None:
    """torch's assert_no_partial_overlap for two views of one storage: dense views whose memory ranges
    meet raise unless they are the same elements in the same order (views torch can't decide pass)."""
    (sa, sta, oa), (sb, stb, ob) = a, b
    na, nb = math.prod(sa), math.prod(sb)
    if na == 0 or nb == 0:
        return
    if not (is_non_overlapping_and_dense(sa, sta) and is_non_overlapping_and_dense(sb, stb)):
        return
    a0, a1 = oa * itemsize_a, (oa + na) * itemsize_a
    b0, b1 = ob * itemsize_b, (ob + nb) * itemsize_b
    if a0 == b0 and a1 == b1 and tuple(sta) == tuple(stb):
        return
    if a0 < b1 and b0 < a1:
        raise RuntimeError(_PARTIAL)


def view_strides(old_shape: Sequence[int], old_stride: Sequence[int], new_shape: Sequence[int]) -> tuple | None:
    """torch's computeStride: strides for viewing (old_shape, old_stride) as new_shape, or None."""
    numel = math.prod(old_shape)
    if numel == 0:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_stride)
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def has_internal_overlap(shape: Sequence[int], stride: Sequence[int]) -> bool:
    return 0 in stride and any(st == 0 and sz > 1 for sz, st in zip(shape, stride))


# --- steps: (kind, static) pairs; each consumes `ndyn` dynamic ints ---------------------------


def _read_slice(x, dyn, dim, size, step):
    (start,) = dyn
    span = (size - 1) * step + 1 if size > 0 else 0
    x = lax.dynamic_slice_in_dim(x, start, span, axis=dim)
    if step != 1:
        x = lax.slice_in_dim(x, 0, span, stride=step, axis=dim)
    return x


def _read_select(x, dyn, dim):
    (index,) = dyn
    return lax.dynamic_index_in_dim(x, index, axis=dim, keepdims=False)


def _read_reshape(x, dyn, shape):
    return x.reshape(shape)


def _read_permute(x, dyn, perm):
    return jnp.transpose(x, perm)


def _read_expand(x, dyn, shape):
    return jnp.broadcast_to(x, shape)


def _read_diagonal(x, dyn, offset, dim1, dim2):
    return jnp.diagonal(x, offset, dim1, dim2)


def _read_as_strided(x, dyn, size, stride, offset):
    idx = jnp.asarray(offset, dtype=jnp.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (jnp.arange(n, dtype=jnp.int64) * st).reshape(shape)
    return x.reshape(-1)[jnp.broadcast_to(idx, size)]


def _read_bitcast(x, dyn, np_dtype):
    # torch's Tensor.view(dtype): same itemsize only (other sizes change the last dim).
    return lax.bitcast_convert_type(x, np_dtype)


def _read_as_real(x, dyn):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def _read_as_complex(x, dyn):
    return lax.complex(x[..., 0], x[..., 1])


_READERS = {
    "as_real": (_read_as_real, 0),
    "as_complex": (_read_as_complex, 0),
    "real": (lambda x, dyn: jnp.real(x), 0),
    "imag": (lambda x, dyn: jnp.imag(x), 0),
    "conj": (lambda x, dyn: jnp.conj(x), 0),
    "slice": (_read_slice, 1),
    "select": (_read_select, 1),
    "reshape": (_read_reshape, 0),
    "permute": (_read_permute, 0),
    "expand": (_read_expand, 0),
    "diagonal": (_read_diagonal, 0),
    "as_strided": (_read_as_strided, 0),
    "bitcast": (_read_bitcast, 0),
}


def apply_steps(steps: tuple, x: Any, dyn: Sequence[Any]) -> Any:
    i = 0
    for kind, static in steps:
        fn, n = _READERS[kind]
        x = fn(x, dyn[i : i + n], *static)
        i += n
    return x


_read_kernels: LRU = LRU()
_write_kernels: LRU = LRU()


def _np_slice(x, dyn, dim, size, step):
    span = (size - 1) * step + 1 if size > 0 else 0
    start = min(max(int(dyn[0]), 0), x.shape[dim] - span)  # lax.dynamic_slice clamps the start so
    return x[(slice(None),) * dim + (slice(start, start + span, step),)]


def _np_select(x, dyn, dim):
    index = min(max(int(dyn[0]), 0), x.shape[dim] - 1)  # (clamped as lax.dynamic_index_in_dim does)
    return x[(slice(None),) * dim + (index,)]


# Data movement that NumPy does exactly as XLA: a view read of these steps runs on the cold path without
# tracing its kernel (each new size of a view is a new kernel: a growing context traced one per step).
_NP_READERS = {
    "slice": (_np_slice, 1),
    "select": (_np_select, 1),
    "reshape": (lambda x, dyn, shape: x.reshape(shape), 0),
    "permute": (lambda x, dyn, perm: x.transpose(perm), 0),
    "expand": (lambda x, dyn, shape: np.broadcast_to(x, shape), 0),
}


def _numpy_read(steps: tuple) -> Any:
    if not all(kind in _NP_READERS for kind, _ in steps):
        return None

    def read(x, *dyn):
        i = 0
        for kind, static in steps:
            fn, n = _NP_READERS[kind]
            x = fn(x, dyn[i : i + n], *static)
            i += n
        return [np.asarray(x)]

    read.n_steps = len(steps)
    return read


def read_kernel(steps: tuple) -> Any:
    k = _read_kernels.get(steps)
    if k is None:
        def view_read(x, *dyn):
            return apply_steps(steps, x, dyn)

        k = _read_kernels[steps] = cold_kernels.cold(view_read, numpy=_numpy_read(steps))
    return k


_COMPLEX_STEPS = frozenset(("as_real", "as_complex", "real", "imag", "conj"))


def _write(steps, base, value, *dyn):
    if any(kind == "bitcast" for kind, _ in steps):
        raise NotImplementedError("torchlike: writing through a dtype-reinterpreting view is not supported")
    if any(kind in _COMPLEX_STEPS for kind, _ in steps):
        return _write_complex(steps, base, value, dyn)
    idx_dtype = jnp.int32 if base.size < 2**31 else jnp.int64
    idx = apply_steps(steps, jnp.arange(base.size, dtype=idx_dtype).reshape(base.shape), dyn)
    value = jnp.broadcast_to(value, idx.shape).astype(base.dtype)
    flat = base.reshape(-1).at[idx.reshape(-1)].set(value.reshape(-1), unique_indices=True)
    return flat.reshape(base.shape)


def _write_complex(steps, base, value, dyn):
    """Writing through real/imag/view_as_real/view_as_complex/conj views. Positions are counted in the
    base's float components (a complex base's element k has components 2k and 2k + 1); a complex
    position carries its two components as real and imaginary parts, so the same readers that move
    values move positions. A conj step conjugates the value instead."""
    n_conj = sum(kind == "conj" for kind, _ in steps)
    steps = tuple(st for st in steps if st[0] != "conj")
    k = jnp.arange(base.size, dtype=jnp.float64).reshape(base.shape)
    pos = lax.complex(2 * k, 2 * k + 1) if jnp.iscomplexobj(base) else k
    pos = apply_steps(steps, pos, dyn)
    comps = (
        jnp.stack([jnp.real(base), jnp.imag(base)], axis=-1).reshape(-1) if jnp.iscomplexobj(base) else base.reshape(-1)
    )
    value = jnp.broadcast_to(value, pos.shape)
    if n_conj % 2:
        value = jnp.conj(value)
    if jnp.iscomplexobj(pos):
        value = value.astype(pos.dtype)
        idx = jnp.concatenate([jnp.real(pos).reshape(-1), jnp.imag(pos).reshape(-1)]).astype(jnp.int64)
        vals = jnp.concatenate([jnp.real(value).reshape(-1), jnp.imag(value).reshape(-1)])
    else:
        idx, vals = pos.reshape(-1).astype(jnp.int64), jnp.real(value).reshape(-1)
    comps = comps.at[idx].set(vals.astype(comps.dtype), unique_indices=True)
    if jnp.iscomplexobj(base):
        pairs = comps.reshape(base.shape + (2,))
        return lax.complex(pairs[..., 0], pairs[..., 1]).astype(base.dtype)
    return comps.reshape(base.shape)


def _numpy_write(steps: tuple) -> Any:
    """``_write`` in NumPy for views read by ``_numpy_read`` (expands excepted: their positions repeat), where
    the value has the base's dtype (a cast runs compiled)."""
    read = _numpy_read(steps)
    if read is None or any(kind == "expand" for kind, _ in steps):
        return None

    def write(base, value, *dyn):
        if value.dtype != base.dtype:
            raise cold_kernels._Unsupported("a cast in a view write")
        out = np.array(base)
        (region,) = read(out, *dyn)
        if region.base is out:  # the steps kept a NumPy view of the copy (no reshape copied): write through it
            region[...] = value
            return [out]
        (idx,) = read(np.arange(base.size).reshape(base.shape), *dyn)
        out.reshape(-1)[idx.reshape(-1)] = np.broadcast_to(value, idx.shape).reshape(-1)
        return [out]

    write.n_steps = read.n_steps + 2
    return write


def write_kernel(steps: tuple) -> Any:
    """A cached jitted ``(base, value, *dyn) -> new base`` writing ``value`` through the view."""
    k = _write_kernels.get(steps)
    if k is None:
        def view_write(base, value, *dyn):
            return _write(steps, base, value, *dyn)

        k = _write_kernels[steps] = cold_kernels.cold(view_write, numpy=_numpy_write(steps))
    return k


class View:
    """How a tensor reads itself out of its base buffer."""

    __slots__ = ("steps", "dyn", "shape", "stride", "offset")

    def __init__(self, steps: tuple, dyn: tuple, shape: tuple, stride: tuple, offset: int) -> None:
        self.steps = steps
        self.dyn = dyn
        self.shape = shape
        self.stride = stride
        self.offset = offset

    def then(self, kind: str, static: tuple, dyn: tuple, shape: tuple, stride: tuple, offset: int) -> View:
        return View(self.steps + ((kind, static),), self.dyn + dyn, shape, stride, offset)

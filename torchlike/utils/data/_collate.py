"""default_collate / default_convert: turning a list of samples into a batch, as torch does.

Tensors and numpy arrays on the CPU (without autograd history) are stacked with numpy and wrapped
in one transfer: the same values, dtypes and errors as ``torch.stack``, without a JAX call per
sample, and usable in worker processes that must not run JAX. Anything else goes through
``torchlike.stack``/``torchlike.as_tensor``.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import _ops
from ..._core import dtype as D
from ..._core import tensor as T
from ..._core.tensor import Tensor
from . import _host

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map", "collate_tensor_fn",
           "collate_numpy_array_fn", "collate_numpy_scalar_fn", "collate_float_fn", "collate_int_fn",
           "collate_str_fn"]  # fmt: skip

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _torch() -> Any:
    return _ops.namespace()


def default_convert(data: Any) -> Any:
    """Convert numpy arrays and scalars (not strings/objects) inside ``data`` to tensors; keep the structure."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _torch().as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type cannot be built from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch: tuples become lists
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    """torch's generic collate: per element type via ``collate_fn_map``, recursing into containers."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
                )
                return clone
            return elem_type(
                {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
            )
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def stack_host(arrays: list, dtypes: list) -> Tensor:
    """``torch.stack(tensors)`` for tensors given as numpy arrays and their dtypes."""
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                f"{list(a.shape)} at entry {i}"
            )
    dt = dtypes[0]
    if any(d is not dt for d in dtypes):
        dt = functools.reduce(D.promote_types, dtypes)
        arrays = [a.astype(dt.np, copy=False) for a in arrays]
    return _host.wrap(np.stack(arrays), dt)


def collate_tensor_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    if all(type(t) is Tensor and _host.is_host_readable(t) for t in batch):
        return stack_host([_host.host_array(t) for t in batch], [t._dtype for t in batch])
    return _torch().stack(batch, 0)


_DTYPE_OF = T._DTYPE_OF


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    # torch: collate([torch.as_tensor(b) for b in batch]); arrays that from_numpy takes as they are
    # stack directly, the rest go through as_tensor (which raises torch's error where there is one).
    if all(type(b) is np.ndarray and b.dtype in _DTYPE_OF and min(b.strides, default=0) >= 0 for b in batch):
        return stack_host(list(batch), [_DTYPE_OF[b.dtype] for b in batch])
    as_tensor = _torch().as_tensor
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    return _torch().as_tensor(batch)


def collate_float_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    return _torch().tensor(batch, dtype=D.float64)


def collate_int_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    return _torch().tensor(batch)


def collate_str_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """Stack a list of samples into a batch: tensors/arrays stacked along a new first dimension, numbers
    into tensors (float64 for floats), strings kept as lists; dicts, namedtuples and sequences recursed
    into (tuples become lists). Same rules as torch's ``default_collate``."""
    return collate(batch, collate_fn_map=default_collate_fn_map)

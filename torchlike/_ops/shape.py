"""Shape ops that copy: cat, stack, clone, contiguous, and dtype/device conversion (``to``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._core import device as _device
from .._core import dtype as D
from .._core import tensor as T
from .._core.tensor import Tensor
from . import registry
from .reduction import dims
from .registry import RawTensor, TensorList, defop


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


@defop(method=False, out=True, saves=(), aliases=("concat", "concatenate"), autocast="promote")
def cat(tensors: TensorList, dim: int = 0) -> Any:
    real, d = _cat_check(tensors, dim)
    return jnp.concatenate(real, axis=d)


@defop(method=False, out=True, saves=(), autocast="promote")
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
    return self if self.is_contiguous() else clone(self)


@defop(promote=None, method=False, grad_name="ToCopyBackward0", saves=())
def _to_dtype(input: RawTensor, dtype: Any) -> Any:
    return input.astype(dtype.np)


_movers: dict = {}


def _mover(jdev: Any) -> Any:
    m = _movers.get(jdev)
    if m is None:
        m = _movers[jdev] = lambda x: jax.device_put(x, jdev)
    return m


def _parse_to(args: tuple, kwargs: dict) -> tuple:
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
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
    dev = _device.canonical(device) if device is not None else self.device
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


_TYPE_NAMES = {
    D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor", D.bfloat16: "BFloat16Tensor",
    D.int64: "LongTensor", D.int32: "IntTensor", D.int16: "ShortTensor", D.int8: "CharTensor",
    D.uint8: "ByteTensor", D.bool: "BoolTensor", D.complex64: "ComplexFloatTensor",
    D.complex128: "ComplexDoubleTensor",
}  # fmt: skip
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def type_name(t: Tensor) -> str:
    prefix = "torch.cuda." if t.is_cuda else "torch."
    return prefix + _TYPE_NAMES[t._dtype]


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    if dtype is None:
        return type_name(self)
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _BY_TYPE_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        out = to(self, _BY_TYPE_NAME[name])
        return out.cuda() if ".cuda." in dtype else out
    if isinstance(dtype, type) and hasattr(dtype, "dtype"):
        dtype = dtype.dtype
    return to(self, D.to_dtype(dtype))


registry.METHODS.update(
    contiguous=contiguous, to=to, type=type_,
    float=_conversion(D.float32), double=_conversion(D.float64), half=_conversion(D.float16),
    bfloat16=_conversion(D.bfloat16), int=_conversion(D.int32), long=_conversion(D.int64),
    short=_conversion(D.int16), char=_conversion(D.int8), byte=_conversion(D.uint8), bool=_conversion(D.bool),
    cfloat=_conversion(D.complex64), cdouble=_conversion(D.complex128),
    cpu=lambda self, memory_format=None: to(self, "cpu"),
    cuda=lambda self, device=None, non_blocking=False, memory_format=None: to(
        self, _device.device("cuda", device) if isinstance(device, int) else (device or "cuda")),
)  # fmt: skip

"""torch's legacy tensor types: ``torch.FloatTensor``, ``torch.cuda.LongTensor``, ...

Each is a class whose metaclass is ``tensortype``, as in torch: calling it is the legacy constructor
(``FloatTensor(2, 3)``, ``LongTensor([1, 2])``), ``isinstance(x, FloatTensor)`` asks whether ``x`` is a
float32 CPU tensor, and ``x.type(FloatTensor)`` converts to it. They are not subclasses of Tensor.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core import device as _device
from .._core import dtype as D
from .._core.layout import strided
from .._core.tensor import Tensor
from ._common import _TYPE_NAMES, type_name
from .creation import legacy_new
from .shape import to


class tensortype(type):
    """torch.tensortype: the metaclass of the legacy tensor types."""

    dtype: D.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype and obj.is_cuda == cls.is_cuda and not obj.is_sparse

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        if cls.is_cuda and not _device.cuda_available():
            raise TypeError(f"type {_name(cls)} not available. Torch not compiled with CUDA enabled.")
        return legacy_new(cls.dtype, "cuda" if cls.is_cuda else "cpu", args, kwargs)

    def __getattr__(cls, name: str) -> Any:
        # torch copies Tensor's methods into each type: torch.FloatTensor.add(x, y) works
        return getattr(Tensor, name)


tensortype.__module__ = "torchlike"


def _name(cls: type) -> str:
    return f"torch.{'cuda.' if cls.is_cuda else ''}{cls.__name__}"


def _make(dtype: D.dtype, cuda: bool) -> type:
    ns = {"dtype": dtype, "layout": strided, "is_cuda": cuda, "is_sparse": False, "is_sparse_csr": False,
          "is_xpu": False, "__module__": "torchlike.cuda" if cuda else "torchlike", "__doc__": None}  # fmt: skip
    return tensortype(_TYPE_NAMES[dtype], (), ns)


# torch has legacy types for these ten dtypes only (no complex or unsigned-beyond-uint8 ones)
_DTYPES = (D.float32, D.float64, D.float16, D.bfloat16, D.uint8, D.int8, D.int16, D.int32, D.int64, D.bool)
CPU_TYPES = {_TYPE_NAMES[d]: _make(d, False) for d in _DTYPES}
CUDA_TYPES = {_TYPE_NAMES[d]: _make(d, True) for d in _DTYPES}
BY_NAME = {f"torch.{n}": t for n, t in CPU_TYPES.items()} | {f"torch.cuda.{n}": t for n, t in CUDA_TYPES.items()}


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """Tensor.type: the type's name (``'torch.FloatTensor'``), or a copy converted to a legacy type, a
    type name or a dtype (``self`` when it already is one)."""
    for k in kwargs:
        if k != "async":
            raise TypeError(f"type() got an unexpected keyword argument '{k}'")
    if dtype is None:
        return type_name(self)
    if isinstance(dtype, str):
        target = BY_NAME.get(dtype)
        if target is None:
            raise ValueError(f"invalid type: '{dtype}'")
    elif isinstance(dtype, tensortype):
        target = dtype
    elif dtype is Tensor:
        target = CPU_TYPES[_TYPE_NAMES[D.get_default_dtype()]]
    elif isinstance(dtype, type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    elif isinstance(dtype, D.dtype):
        return self if self._dtype is dtype else to(self, dtype)
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    if isinstance(self, target):
        return self
    if target.is_cuda != self.is_cuda:
        return to(self, "cuda" if target.is_cuda else "cpu", target.dtype)
    return to(self, target.dtype)


_warned: list = []


def set_default_tensor_type(t: Any, /) -> None:
    """torch.set_default_tensor_type (deprecated in torch): the default float dtype, and for a CUDA type
    the default device, from a floating legacy type or its name."""
    if isinstance(t, str):
        found = BY_NAME.get(t)
        if found is None:
            module, _, rest = t.partition(".")
            if module != "torch":
                raise ModuleNotFoundError(f"No module named '{module}'")
            raise AttributeError(f"module 'torch' has no attribute '{rest}'")
        t = found
    if not _warned:  # torch: TORCH_WARN_ONCE
        _warned.append(True)
        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() "
            "and torch.set_default_device() as alternatives.",
            UserWarning,
            stacklevel=2,
        )
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if t.is_cuda and not _device.cuda_available():
        raise TypeError(f"type {_name(t)} not available. Torch not compiled with CUDA enabled.")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)
    if t.is_cuda:
        _device.set_default_device("cuda")
    elif _device.get_default_device().type == "cuda":
        _device.set_default_device(None)

"""torch.utils.dlpack: zero-copy exchange with other array libraries through DLPack."""

from __future__ import annotations

from typing import Any

import jax.dlpack

from .._core import device as _device
from .._core import tensor as T
from .._core.tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any object implementing ``__dlpack__`` (or a legacy capsule)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):  # a legacy capsule, as torch.utils.dlpack.to_dlpack returns
        ext_tensor = _Capsule(ext_tensor, _devices.pop(id(ext_tensor), (1, 0)))
    arr = jax.dlpack.from_dlpack(ext_tensor)
    return T.make(arr, _device.from_jax(next(iter(arr.devices()))))


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s current array."""
    arr = tensor._data()
    cap = arr.__dlpack__()
    _devices[id(cap)] = arr.__dlpack_device__()
    return cap


_devices: dict = {}  # capsule id -> DLPack device, for capsules this module made


class _Capsule:
    """Presents a bare capsule through the ``__dlpack__`` protocol JAX requires."""

    def __init__(self, capsule: Any, device: tuple) -> None:
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return self.device

"""torch.accelerator: the current accelerator, which for torchlike is JAX's GPU backend ('cuda')."""

from __future__ import annotations

from typing import Any

from .. import cuda as _cuda
from .._core import device as _device

__all__ = ["current_accelerator", "current_device_index", "current_device_idx", "device_count", "device_index",
           "is_available", "set_device_index", "set_device_idx", "synchronize", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats"]  # fmt: skip


def _require() -> None:
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device: Any) -> int:
    if device is None:
        return _device.current_cuda
    if isinstance(device, int):
        return device
    d = _device.canonical(device)
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return _device.current_cuda if d.index is None else d.index


def device_count() -> int:
    return _cuda.device_count()


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device.device | None:
    """``device('cuda')`` where JAX sees a GPU, else None (as a CPU-only torch build)."""
    if _cuda.is_available():
        return _device.device("cuda")
    return None


def current_device_index() -> int:
    _require()
    return _device.current_cuda


current_device_idx = current_device_index


def set_device_index(device: Any, /) -> None:
    _require()
    _device.current_cuda = _index(device)


set_device_idx = set_device_index


def synchronize(device: Any = None, /) -> None:
    _require()
    _cuda.synchronize(_index(device))


class device_index:
    """Context manager that makes ``device`` the current accelerator device index (None: no change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            _require()
            self.prev_idx, _device.current_cuda = _device.current_cuda, self.idx

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None:
            _device.current_cuda = self.prev_idx


def empty_cache() -> None:
    _require()
    _cuda.empty_cache()


def memory_allocated(device: Any = None, /) -> int:
    _require()
    return _cuda.memory_allocated(_index(device))


def max_memory_allocated(device: Any = None, /) -> int:
    _require()
    return _cuda.max_memory_allocated(_index(device))


def memory_reserved(device: Any = None, /) -> int:
    _require()
    return _cuda.memory_reserved(_index(device))


def max_memory_reserved(device: Any = None, /) -> int:
    _require()
    return _cuda.max_memory_reserved(_index(device))


def reset_peak_memory_stats(device: Any = None, /) -> None:
    _require()
    _cuda.reset_peak_memory_stats(_index(device))

"""torch.cuda: device queries and memory stats, answered by JAX's GPU backend."""

from __future__ import annotations

from typing import Any

from .._core import device as _device
from .._ops.legacy_types import CUDA_TYPES as _CUDA_TYPES
from . import amp  # noqa: F401

__all__ = ["is_available", "device_count", "current_device", "get_device_name", "get_device_properties",
           "set_device", "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "empty_cache", "is_bf16_supported", "device", "amp", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", *_CUDA_TYPES]  # fmt: skip
globals().update(_CUDA_TYPES)  # torch.cuda.FloatTensor and friends: the legacy types of CUDA tensors

def is_available() -> bool:
    return _device.cuda_available()


def device_count() -> int:
    return len(_device._gpus())


def _lazy_check() -> None:
    if not is_available():
        raise RuntimeError("No CUDA GPUs are available")


def _index(device: Any) -> int:
    if device is None:
        return _device.current_cuda
    if isinstance(device, int):
        return device
    d = _device.canonical(device)
    return d.index if d.type == "cuda" else _device.current_cuda


def _jax_dev(device: Any) -> Any:
    _lazy_check()
    return _device.jax_device(_device.device("cuda", _index(device)))


def current_device() -> int:
    _lazy_check()
    return _device.current_cuda


def set_device(device: Any) -> None:
    _device.current_cuda = _index(device)


def get_device_name(device: Any = None) -> str:
    return _jax_dev(device).device_kind


class _Properties:
    def __init__(self, jdev: Any) -> None:
        self.name = jdev.device_kind
        stats = jdev.memory_stats() or {}
        self.total_memory = stats.get("bytes_limit", 0)
        self.multi_processor_count = getattr(jdev, "core_count", 0)
        cc = getattr(jdev, "compute_capability", "0.0")
        self.major, self.minor = (int(x) for x in str(cc).split(".")[:2])

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _Properties:
    return _Properties(_jax_dev(device))


def synchronize(device: Any = None) -> None:
    """Wait for all work dispatched to the device (see ``device_barrier``)."""
    device_barrier(_jax_dev(device))


def device_barrier(jdev: Any) -> None:
    """Block until the computations dispatched to JAX device ``jdev`` have finished.

    JAX has no per-device barrier (``jax.effects_barrier`` only orders side effects), so this
    waits on every live array that has a shard on the device: every program whose results can
    still be observed. This is the one place where work queued elsewhere (a lazy engine) must be
    flushed before waiting.
    """
    # NOTE: jax.live_arrays() lists the default backend's arrays only; on a GPU host a CPU device's
    # arrays live in the CPU backend, so ask the device's own platform.
    import jax

    from .._core import lazy

    lazy.flush("synchronize")
    for a in jax.live_arrays(jdev.platform):
        if not a.is_deleted() and jdev in a.sharding.device_set:
            a.block_until_ready()
    jax.effects_barrier()


def _stats(device: Any) -> dict:
    if not is_available():
        return {}
    return _jax_dev(device).memory_stats() or {}


def memory_allocated(device: Any = None) -> int:
    return int(_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device: Any = None) -> int:
    return int(_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device: Any = None) -> int:
    s = _stats(device)
    return int(s.get("bytes_reserved", s.get("bytes_in_use", 0)))


def max_memory_reserved(device: Any = None) -> int:
    s = _stats(device)
    return int(s.get("peak_bytes_reserved", s.get("peak_bytes_in_use", 0)))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Accepted; JAX's allocator keeps its own peak and cannot reset it."""


def empty_cache() -> None:
    """Free cached compiled kernels' buffers JAX no longer needs (a no-op for live arrays)."""
    import gc

    gc.collect()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def manual_seed(seed: int) -> None:
    from .._ops import random

    if is_available():
        random.cuda_generator(_device.current_cuda).manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    from .._ops import random

    for i in range(device_count()):
        random.cuda_generator(i).manual_seed(seed)


def seed() -> None:
    from .._ops import random

    if is_available():
        random.cuda_generator(_device.current_cuda).seed()


def seed_all() -> None:
    from .._ops import random

    for i in range(device_count()):
        random.cuda_generator(i).seed()


def get_rng_state(device: Any = "cuda") -> Any:
    """The state of a CUDA device's generator (a uint8 tensor, torchlike's own layout)."""
    from .._ops import random

    _lazy_check()
    return random.cuda_generator(_index(device)).get_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    from .._ops import random

    _lazy_check()
    random.cuda_generator(_index(device)).set_state(new_state)


def get_rng_state_all() -> list:
    """The generator states of every CUDA device (empty without a GPU, as in torch)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: Any) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


class device:
    """Context manager that changes the current CUDA device."""

    def __init__(self, device: Any) -> None:
        self.idx = _index(device)

    def __enter__(self) -> None:
        self.prev, _device.current_cuda = _device.current_cuda, self.idx

    def __exit__(self, *exc: Any) -> None:
        _device.current_cuda = self.prev


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)

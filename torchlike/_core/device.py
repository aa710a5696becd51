"""torch.device, mapped onto JAX devices."""

from __future__ import annotations

import functools
import threading
from typing import Any

import jax

__all__ = ["device", "set_default_device", "get_default_device"]

_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu mtia privateuseone"
).split()


class device:
    """torch.device: a device type and an optional index (``'cpu'``, ``'cuda:1'``)."""

    __slots__ = ("type", "index", "_hash")

    def __init__(self, type: Any, index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
            if not cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
        elif isinstance(type, str):
            name, sep, idx = type.partition(":")
            if name not in _TYPES:
                raise RuntimeError(
                    f"Expected one of {', '.join(_TYPES[:-1])}, {_TYPES[-1]} device type at start of device string: {type}"
                )
            if sep:
                if index is not None or not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                    raise RuntimeError(f"Invalid device string: '{type}'")
                index = int(idx)
            type = name
        else:
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index
        self._hash = hash((type, index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device(d):`` factories called without a device inside create on ``d``."""
        _default.stack = _default.stack + (self,)
        _default.dev = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _default.stack = stack = _default.stack[:-1]
        _default.dev = stack[-1] if stack else _default.base


class _DefaultDevice(threading.local):
    """The default device of the calling thread (torch keeps its device modes per thread): ``base`` is
    ``set_default_device``'s, ``stack`` the open ``with torch.device(d):`` blocks, ``dev`` the one in force."""

    base: device | None = None
    stack: tuple = ()
    dev: device | None = None


_default = _DefaultDevice()


def set_default_device(device: Any) -> None:
    """torch.set_default_device: where factory functions without ``device=`` create tensors (None: the CPU)."""
    d = None if device is None else _as_device(device)
    _default.base = d
    if not _default.stack:
        _default.dev = d


def get_default_device() -> device:
    """torch.get_default_device: the device in force, with a CUDA index filled in as torch does."""
    d = _default.dev
    if d is None:
        return CPU
    return canonical(d) if d.index is None and d.type in ("cpu", "cuda") else d


def _as_device(d: Any) -> device:
    return d if type(d) is device else device(d)


@functools.cache
def _gpus() -> tuple:
    # this process's GPUs: under jax.distributed (one process per GPU) cuda:0 is the process's own
    try:
        return tuple(jax.local_devices(backend="gpu"))
    except RuntimeError:
        return ()


def cuda_available() -> bool:
    return bool(_gpus())


CPU = device("cpu")
current_cuda = 0  # torch.cuda.set_device / torch.cuda.device change it: what plain 'cuda' means


@functools.cache
def _cpu_jax() -> Any:
    # this process's CPU: under jax.distributed, jax.devices() also lists other processes' devices
    return jax.local_devices(backend="cpu")[0]


def canonical(dev: Any) -> device:
    """A device with torch's default index filled in where tensors report one ('cuda' -> 'cuda:0')."""
    if dev is None:
        dev = _default.dev
        if dev is None:
            return CPU
    if type(dev) is not device:
        dev = device(dev)
    if dev.type == "cuda" and dev.index is None:
        return device("cuda", current_cuda)
    if dev.type == "cpu" and dev.index is not None:
        return CPU
    if dev.type not in ("cpu", "cuda"):
        raise RuntimeError(f"torchlike supports only 'cpu' and 'cuda' devices, got '{dev}'")
    return dev


def jax_device(dev: device) -> Any:
    """The JAX device behind a canonical torch device; torch's error when it is missing."""
    if dev.type == "cpu":
        return _cpu_jax()
    gpus = _gpus()
    if not gpus:
        raise RuntimeError("No CUDA GPUs are available")
    if dev.index >= len(gpus):
        raise RuntimeError(
            "CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some "
            "other API call, so the stacktrace below might be incorrect."
        )
    return gpus[dev.index]


def from_jax(jdev: Any) -> device:
    if jdev.platform == "cpu":
        return CPU
    return device("cuda", _gpus().index(jdev))


def onto_mesh(tree: Any, error: Exception) -> Any:
    """Replicate the single-device arrays of ``tree`` over the mesh of its sharded ones (torch's
    DataParallel lets a tensor on cuda:0 meet the batch-split arrays); re-raise ``error`` if none."""
    mesh = None
    for a in jax.tree_util.tree_leaves(tree):
        sh = getattr(a, "sharding", None)
        if sh is not None and len(sh.device_set) > 1 and hasattr(sh, "mesh"):
            mesh = sh.mesh
            break
    if mesh is None:
        raise error
    rep = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())

    def move(a: Any) -> Any:
        sh = getattr(a, "sharding", None)
        return jax.device_put(a, rep) if sh is not None and len(sh.device_set) == 1 else a

    return jax.tree_util.tree_map(move, tree)

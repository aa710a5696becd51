"""Tensors in memory shared between processes: ``Tensor.share_memory_()``, ``is_shared()``, and the
blocks ``torch.multiprocessing`` sends tensors through.

A shared tensor's buffer is backed by a numpy array over a memory-mapped block (a file in
``/dev/shm``), the buffer's numpy sharing that ``from_numpy`` also uses: writes go into the block at
once and every read copies it, so an in-place update made by any process (an optimizer step in a
Hogwild worker) is seen by all of them. JAX arrays never alias the block: they are immutable, the
block is not.

Blocks are registered with multiprocessing's resource tracker (shared by the processes that
multiprocessing starts); the main process unlinks every block it created or received when it
exits, so nothing is left behind in ``/dev/shm``.
"""

from __future__ import annotations

import atexit
import mmap
import os
import secrets
import tempfile
import weakref
from typing import Any

import jax.numpy as jnp
import numpy as np

from . import device as _device
from . import dtype as _dtype
from . import tensor as T

_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_PREFIX = "torchlike_"

# block name -> (mmap, numpy array over it). Holding the array keeps its reference count above the
# buffer's own, so Buffer.get() re-reads the block on every read instead of dropping the sharing.
_BLOCKS: dict[str, tuple[mmap.mmap, np.ndarray]] = {}
_NAME_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Buffer -> block name
_BUFFER_OF: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # block name -> Buffer


def _tracker(action: str, name: str) -> None:
    # The tracker speaks of POSIX shared memory names, whose files live in /dev/shm on Linux.
    if _DIR == "/dev/shm":
        from multiprocessing import resource_tracker

        getattr(resource_tracker, action)("/" + name, "shared_memory")


def _map(name: str, shape: tuple, np_dtype: np.dtype, create: bool) -> np.ndarray:
    path = os.path.join(_DIR, name)
    nbytes = max(int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize, 1)
    fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
    try:
        if create:
            os.ftruncate(fd, nbytes)
        block = mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)
    array = np.ndarray(shape, np_dtype, buffer=block)
    _BLOCKS[name] = (block, array)
    return array


def is_shared(t: T.Tensor) -> bool:
    """Tensor.is_shared: whether the tensor's memory is in a shared block (CUDA tensors: False)."""
    return t._buf in _NAME_OF


def share(t: T.Tensor) -> T.Tensor:
    """Tensor.share_memory_: move the tensor's whole buffer (every view of it) into a shared block.
    A no-op for a buffer already shared and, as in torch, for CUDA tensors."""
    buf = t._buf
    if buf in _NAME_OF or buf.device.type != "cpu":
        return t
    values = np.asarray(buf.get())
    name = _PREFIX + secrets.token_hex(8)
    shared = _map(name, values.shape, values.dtype, create=True)
    shared[...] = values
    _tracker("register", name)
    buf.np, buf.np_strides = shared, None
    buf.__class__ = T.SharedBuffer
    _NAME_OF[buf] = name
    _BUFFER_OF[name] = buf
    return t


def block_of(t: T.Tensor) -> tuple[str, tuple, str]:
    """(block name, buffer shape, dtype name) of a shared tensor: what another process attaches."""
    buf = t._buf
    return _NAME_OF[buf], tuple(buf.np.shape), str(t._dtype).removeprefix("torch.")


def attach(name: str, shape: tuple, dtype_name: str) -> T.Tensor:
    """A base tensor over a block another process shared (the same buffer again if this process
    already has it, so aliases stay aliases)."""
    dt = getattr(_dtype, dtype_name)
    buf = _BUFFER_OF.get(name)
    if buf is None:
        cached = _BLOCKS.get(name)
        array = cached[1] if cached is not None else _map(name, tuple(shape), np.dtype(dt.np), create=False)
        base = T.make(jnp.array(array, copy=True), _device.CPU, dt)
        buf = base._buf
        buf.np = array
        buf.__class__ = T.SharedBuffer
        _NAME_OF[buf] = name
        _BUFFER_OF[name] = buf
        return base
    base = T.make(buf.get(), buf.device, dt)
    base._buf = buf
    return base


def _unlink_all() -> None:
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return  # a child's blocks may still be on their way to another process: the main process unlinks
    for name in list(_BLOCKS):
        try:
            os.unlink(os.path.join(_DIR, name))
        except FileNotFoundError:
            continue
        _tracker("unregister", name)


atexit.register(_unlink_all)
T.Tensor.share_memory_ = share
T.Tensor.is_shared = is_shared

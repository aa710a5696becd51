"""torch.UntypedStorage / torch.TypedStorage over torchlike's Buffers.

A storage is either *bound* to a Buffer (the memory of a tensor and its views: its bytes are
the buffer's current array, read on demand) or *free* (bytes on the host, e.g. just read from a
checkpoint, waiting for the first tensor built on it). Building a tensor on a free storage binds
it: later tensors on the same storage become aliases or views of that first buffer, so storage
sharing survives save/load as in torch.
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import device as _device
from . import dtype as _dtype
from . import tensor as T
from . import views as _views

_BY_BUFFER: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _raw_bytes(array: Any) -> np.ndarray:
    """A C-ordered uint8 view (or copy) of an array's elements."""
    a = np.ascontiguousarray(np.asarray(array))
    return a.reshape(-1).view(np.uint8)


class UntypedStorage:
    """torch.UntypedStorage: a tensor's memory as bytes."""

    __slots__ = ("_buf", "_base", "_host", "_device", "__weakref__")

    def __init__(self, *args: Any, device: Any = None) -> None:
        if len(args) > 1:
            raise TypeError(f"UntypedStorage() takes at most 1 positional argument ({len(args)} given)")
        n = args[0] if args else 0
        if isinstance(n, (bytes, bytearray, list, tuple)):
            host = np.array(bytearray(n) if not isinstance(n, (list, tuple)) else n, dtype=np.uint8)
        else:
            host = np.zeros(int(n), dtype=np.uint8)
        self._buf = None
        self._base = None
        self._host = host
        self._device = _device.canonical(device)

    @classmethod
    def _of(cls, tensor: T.Tensor) -> UntypedStorage:
        """The storage of ``tensor``'s buffer (one Python object per buffer while it is alive)."""
        buf = tensor._buf
        s = _BY_BUFFER.get(id(buf))
        if s is None or s._buf is not buf:
            s = cls._bound(buf, None)
        return s

    @classmethod
    def _bound(cls, buf: T.Buffer, base: T.Tensor | None) -> UntypedStorage:
        s = object.__new__(cls)
        s._buf = buf
        s._base = base
        s._host = None
        s._device = buf.device
        _BY_BUFFER[id(buf)] = s
        return s

    @classmethod
    def _free(cls, data: np.ndarray, device: _device.device) -> UntypedStorage:
        """A storage holding ``data`` (uint8, 1-d) that no tensor uses yet."""
        s = object.__new__(cls)
        s._buf = None
        s._base = None
        s._host = data
        s._device = device
        return s

    # --- torch's API -------------------------------------------------------------------------

    @property
    def device(self) -> _device.device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def _bytes(self) -> np.ndarray:
        """The contents as a 1-d uint8 numpy array (a read-only view where possible)."""
        if self._buf is None:
            return self._host
        return _raw_bytes(self._buf.get())

    def nbytes(self) -> int:
        if self._buf is None:
            return int(self._host.size)
        arr = self._buf.array
        return int(math.prod(arr.shape)) * arr.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return id(self._buf) if self._buf is not None else id(self._host)

    def tolist(self) -> list:
        return self._bytes().tolist()

    def __getitem__(self, idx: Any) -> int:
        if not isinstance(idx, int):
            raise NotImplementedError("torchlike: UntypedStorage supports integer indexing only")
        n = self.nbytes()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return int(self._bytes()[idx])

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __repr__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device={self._device}) of size {self.nbytes()}]"
        return " " + "\n ".join(str(b) for b in self.tolist()) + "\n" + info

    def to(self, *, device: Any = None, non_blocking: bool = False) -> UntypedStorage:
        dev = _device.canonical(device)
        if dev == self._device:
            return self
        _device.jax_device(dev)  # raises torch's error for a missing device
        return UntypedStorage._free(np.array(self._bytes()), dev)

    def cpu(self) -> UntypedStorage:
        return self.to(device="cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> UntypedStorage:
        if device is None:
            device = 0
        return self.to(device=_device.device("cuda", device) if isinstance(device, int) else device)

    def untyped(self) -> UntypedStorage:
        return self

    def __reduce__(self) -> tuple:
        return (_storage_from_bytes, (self._bytes().tobytes(), str(self._device)))


def _storage_from_bytes(data: bytes, device: str) -> UntypedStorage:
    return UntypedStorage._free(np.frombuffer(data, dtype=np.uint8), _device.canonical(device))


class TypedStorage:
    """torch.TypedStorage (deprecated in torch): an UntypedStorage seen as elements of one dtype."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, *, wrap_storage: UntypedStorage, dtype: _dtype.dtype, _internal: bool = False) -> None:
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(f"expected an UntypedStorage, got {type(wrap_storage).__name__}")
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def device(self) -> _device.device:
        return self._untyped_storage.device

    def _size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self) -> int:
        return self._size()

    def __len__(self) -> int:
        return self._size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def tolist(self) -> list:
        arr = self._untyped_storage._bytes().view(self.dtype.np)
        if self.dtype is _dtype.bfloat16:
            arr = arr.astype(np.float32)
        return arr.tolist()

    def __repr__(self) -> str:
        info = (
            f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self._size()}]"
        )
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info


# --- tensors on storages ----------------------------------------------------------------------


def _jax_array(host: np.ndarray, device: _device.device) -> Any:
    if device.type == "cpu":
        return jnp.asarray(host)  # the default device is the CPU; 3x faster than device_put
    return jax.device_put(host, _device.jax_device(device))


def tensor_on(
    storage: UntypedStorage, dtype: _dtype.dtype, offset: int, size: tuple, stride: tuple
) -> T.Tensor:
    """torch's ``empty(0).set_(storage, offset, size, stride)``: a tensor sharing ``storage``."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    itemsize = dtype.itemsize
    nbytes = storage.nbytes()
    numel = math.prod(size)
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(
            f"setStorage: invalid geometry sizes {list(size)}, strides {list(stride)}, offset {offset}"
        )
    if numel:
        need = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * itemsize
        if need > nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
                f"{itemsize} requiring a storage size of {need} are out of bounds for storage of size {nbytes}"
            )
    base = storage._base
    if storage._buf is None:
        if nbytes % itemsize:
            raise RuntimeError(f"storage of {nbytes} bytes is not a whole number of {dtype} elements")
        host = storage._host.view(dtype.np)
        full = offset == 0 and numel == host.size and _views.is_contiguous(size, stride)
        base = T.make(
            _jax_array(host.reshape(size if full else (host.size,)), storage.device), storage.device, dtype
        )
        storage._buf, storage._base, storage._host = base._buf, base, None
        _BY_BUFFER[id(base._buf)] = storage
        if full:
            return base
    elif base is None or base._buf is not storage._buf or tuple(base._shape) != storage._buf.array.shape:
        base = storage._base = _base_over(storage._buf)
    return _view_of(base, dtype, offset, size, stride)


def _base_over(buf: T.Buffer) -> T.Tensor:
    """A base (non-view) tensor over an existing buffer, with its own version counter."""
    t = T.make(buf.get(), buf.device)
    t._buf = buf
    return t


def _view_of(base: T.Tensor, dtype: _dtype.dtype, offset: int, size: tuple, stride: tuple) -> T.Tensor:
    steps: tuple = ()
    if dtype is not base._dtype:
        if dtype.itemsize != base._dtype.itemsize:
            raise RuntimeError(
                f"torchlike: tensors of {base._dtype} and {dtype} share a storage; only dtypes of one size can"
            )
        steps = (("bitcast", (dtype.np,)),)
    base_shape = tuple(base._shape)
    flat = (math.prod(base_shape),)
    contiguous = _views.is_contiguous(size, stride)
    if steps == () and offset == 0 and size == base_shape and contiguous:
        t = T._alias(base)  # the whole storage again: another tensor over the same memory
        t._vc = T.VersionCounter()
        return t
    dyn: tuple = ()
    if contiguous:
        if base_shape != flat:
            steps += (("reshape", (flat,)),)
        steps += (("slice", (0, math.prod(size), 1)), ("reshape", (size,)))
        dyn = (offset,)
    else:
        steps += (("as_strided", (size, stride, offset)),)
    return T.make_view(base, _views.View(steps, dyn, size, stride, offset))


def byteswap(raw: np.ndarray, dtype: _dtype.dtype) -> np.ndarray:
    """Reverse the byte order of each element (each component of complex elements)."""
    k = dtype.itemsize // (2 if dtype.is_complex else 1)
    if k == 1:
        return raw
    return np.ascontiguousarray(raw.reshape(-1, k)[:, ::-1]).reshape(-1)


NATIVE_ORDER = sys.byteorder


# The storage views of a tensor: attached here, so that tensor.py need not import this module back.
def storage(self) -> Any:
    return TypedStorage(wrap_storage=UntypedStorage._of(self), dtype=self._dtype)


def untyped_storage(self) -> Any:
    return UntypedStorage._of(self)


T.Tensor.storage = storage
T.Tensor.untyped_storage = untyped_storage

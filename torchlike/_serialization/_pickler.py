"""Writing: a pickler that names torch's globals, and torch's zip and legacy file layouts."""

from __future__ import annotations

import io
import pickle
import re
import struct
import sys
import types
from collections import OrderedDict
from typing import IO, Any

import jax
import numpy as np

from .._core import device as _device
from .._core import dtype as D
from .._core import layout as _layout
from .._core import tensor as T
from .._core.size import Size
from .._core.storage import TypedStorage, UntypedStorage, _raw_bytes
from .._core.tensor import Tensor
from . import _zip
from ._names import _STORAGE_NAMES, _V3_DTYPES, _g, _Global, _parameter_class, _torch_name_of

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
             "type_sizes": {"short": 2, "int": 4, "long": 4}}  # fmt: skip


def _location(dev: _device.device) -> str:
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index if dev.index is not None else 0}"


class _StorageRef:
    """A tensor's storage as ``reduce`` hands it to ``persistent_id``."""

    __slots__ = ("source", "dtype", "untyped", "device")

    def __init__(self, source: Any, dtype: D.dtype, untyped: bool, device: _device.device) -> None:
        self.source, self.dtype, self.untyped, self.device = source, dtype, untyped, device


def _source_bytes(source: Any) -> np.ndarray:
    """The bytes of a storage source: a Buffer, an UntypedStorage or a numpy byte array."""
    if isinstance(source, T.Buffer):
        return _raw_bytes(source.get())
    if isinstance(source, UntypedStorage):
        return source._bytes()
    return source


def _source_nbytes(source: Any) -> int:
    if isinstance(source, T.Buffer):
        return int(np.prod(source.array.shape, dtype=np.int64)) * source.array.dtype.itemsize
    if isinstance(source, UntypedStorage):
        return source.nbytes()
    return int(source.size)


class _Storages:
    """The storages one save writes, keyed like torch's (first use numbers them 0, 1, ...)."""

    def __init__(self, legacy: bool) -> None:
        self.legacy = legacy
        self.keys: dict[int, str] = {}
        self.records: list[tuple[str, Any, D.dtype]] = []
        self.dtypes: dict[int, D.dtype] = {}
        self._locations: dict = {}

    def pid(self, ref: _StorageRef) -> tuple:
        source = ref.source
        sid = id(source)
        storage_dtype = D.uint8 if ref.untyped else ref.dtype
        seen = self.dtypes.setdefault(sid, storage_dtype)
        if seen is not storage_dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same data as different types"
            )
        key = self.keys.get(sid)
        if key is None:
            key = self.keys[sid] = str(sid) if self.legacy else str(len(self.keys))
            self.records.append((key, source, storage_dtype))
        nbytes = _source_nbytes(source)
        if ref.untyped:
            storage_type, numel = _g("torch.storage", "UntypedStorage"), nbytes
        else:
            storage_type, numel = _g("torch", _STORAGE_NAMES[ref.dtype]), nbytes // ref.dtype.itemsize
        location = self._locations.setdefault(ref.device, _location(ref.device))
        if self.legacy:
            return ("storage", storage_type, key, location, numel, None)
        return ("storage", storage_type, key, location, numel)


def _obj_state(t: Tensor) -> dict | None:
    state = {k: v for k, v in t.__dict__.items() if k != "_acc"}  # _acc: autograd's accumulator handle
    return state or None


def _tensor_reduce(t: Tensor) -> tuple:
    """torch's Tensor._reduce_ex_internal for a dense tensor: (rebuild function, args)."""
    buf = t._buf
    if isinstance(buf.array, jax.core.Tracer):
        raise RuntimeError("torchlike: cannot save a tensor inside a compiled function (it has no value yet)")
    dtype = t._dtype
    if buf.np_strides is not None:
        # NOTE: memory shared with a non-contiguous numpy array: save this tensor's values on their own.
        source: Any = _raw_bytes(t._data())
        shape, stride, offset = tuple(t._shape), _contiguous(t._shape), 0
    else:
        source = buf
        shape, stride, offset = t._geometry()
    untyped = dtype in _V3_DTYPES
    ref = _StorageRef(source, dtype, untyped, buf.device)
    # fresh tuples, as torch's size() and stride() are: geometry tuples shared between tensors (the strides table)
    # would be pickled once and then referenced from the memo, and the file would differ from torch's
    args: tuple = (ref, offset, (*shape,), (*stride,), t._rg, OrderedDict())
    if untyped:
        return _g("torch._utils", "_rebuild_tensor_v3"), args + (dtype,)
    return _g("torch._utils", "_rebuild_tensor_v2"), args


def _contiguous(shape: tuple) -> tuple:
    from .._core.views import contiguous_strides

    return contiguous_strides(shape)


class _TorchPickler(pickle._Pickler):  # type: ignore[name-defined]  # pure Python: it can write torch's globals
    """A pickler writing torchlike objects under torch's global names, storages as persistent ids."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]
    # pickle's table holds its own save_global for functions: route them through torch's names too
    dispatch[types.FunctionType] = lambda self, obj: self.save_global(obj)

    def __init__(self, file: IO[bytes], protocol: int, storages: _Storages) -> None:
        super().__init__(file, protocol)
        self._storages = storages

    def persistent_id(self, obj: Any) -> Any:
        t = type(obj)
        if t is _StorageRef:
            return self._storages.pid(obj)
        if t is UntypedStorage:
            src = obj._buf if obj._buf is not None else obj
            return self._storages.pid(_StorageRef(src, D.uint8, True, obj.device))
        if t is TypedStorage:
            u = obj._untyped_storage
            src = u._buf if u._buf is not None else u
            return self._storages.pid(_StorageRef(src, obj.dtype, obj.dtype in _V3_DTYPES, u.device))
        return None

    def reducer_override(self, obj: Any) -> Any:
        t = type(obj)
        if t in _PLAIN:
            return NotImplemented
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if t is Size:
            return _g("torch", "Size"), (tuple(obj),)
        if t is _device.device:
            kind = (
                obj.type.encode().decode()
            )  # torch's reduce makes a new str each time: no memo hit on "cpu"
            return _g("torch", "device"), ((kind,) if obj.index is None else (kind, obj.index))
        if t is _layout.layout:
            return _g("torch.serialization", "_get_layout"), ("torch." + obj.name,)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> tuple:
        state = _obj_state(t)
        if isinstance(t, _parameter_class()):
            data = T._alias(t)
            if state is None:
                return _g("torch._utils", "_rebuild_parameter"), (data, t._rg, OrderedDict())
            return _g("torch._utils", "_rebuild_parameter_with_state"), (data, t._rg, OrderedDict(), state)
        func, args = _tensor_reduce(t)
        if type(t) is Tensor and state is None:
            return func, args
        return _g("torch._tensor", "_rebuild_from_type_v2"), (func, type(t), args, state or {})

    def save_global(self, obj: Any, name: Any = None) -> None:
        tn = _torch_name_of(obj)
        if tn is None:
            super().save_global(obj, name)
            return
        module, qualname = tn
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + qualname.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = save_global
    dispatch[D.dtype] = save_global
    dispatch[_layout.memory_format] = save_global


_PLAIN = frozenset((int, float, str, bytes, bool, type(None), tuple, list, dict, OrderedDict))


def _pickle_with_storages(obj: Any, protocol: int, legacy: bool) -> tuple[bytes, _Storages]:
    storages = _Storages(legacy)
    buf = io.BytesIO()
    try:
        _TorchPickler(buf, protocol, storages).dump(obj)
    except pickle.PicklingError as e:
        local = re.match(r"Can't pickle <function (\S+\.<locals>\.\S+) at ", str(e))
        if local:  # the C pickler's error, which torch.save shows
            raise AttributeError(f"Can't pickle local object '{local.group(1)}'") from None
        raise
    return buf.getvalue(), storages


def _write_zip(stream: IO[bytes], archive: str, data: bytes, storages: _Storages, byteorder: bool) -> None:
    writer = _zip.PyTorchFileWriter(stream, archive)
    writer.write_record("data.pkl", data, len(data))
    writer.write_record(".format_version", b"1", 1)
    writer.write_record(".storage_alignment", b"64", 2)
    if byteorder:
        writer.write_record("byteorder", sys.byteorder.encode(), len(sys.byteorder))
    for key, source, _dtype in storages.records:
        raw = _source_bytes(source)
        writer.write_record(f"data/{key}", raw, int(raw.size))
    writer.write_end_of_file()


def _write_legacy(stream: IO[bytes], data: bytes, storages: _Storages, protocol: int) -> None:
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYS_INFO):
        pickle.dump(header, stream, protocol=protocol)
    stream.write(data)
    by_key = {key: (source, dt) for key, source, dt in storages.records}
    keys = sorted(by_key)
    pickle.dump(keys, stream, protocol=protocol)
    for key in keys:
        source, dt = by_key[key]
        raw = _source_bytes(source)
        stream.write(struct.pack("<q", int(raw.size) // dt.itemsize))
        stream.write(memoryview(raw))

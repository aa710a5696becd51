"""torch.save / torch.load, in torch's own checkpoint format (torch.serialization).

Files are torch's zip checkpoints: ``data.pkl`` (a protocol-2 pickle whose tensors point at
storages through persistent ids ``('storage', <torch.FloatStorage>, key, location, numel)``),
one ``data/<key>`` record per storage, and torch's ``.format_version``, ``.storage_alignment``,
``byteorder``, ``version`` and ``.data/serialization_id`` records. The pickle names torch's
globals (``torch._utils._rebuild_tensor_v2``, ``torch.Size``, ``torch.float32``...), so real
torch loads what torchlike saves and vice versa; on load those names map back to torchlike.

Differences from torch: every record's CRC-32 is checked on load (torch reads corrupted tensor
data silently); saving to a path writes a temporary file and renames it over the target, so an
interrupted save leaves the previous file intact.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import struct
import sys
import tempfile
import warnings
from collections import OrderedDict
from typing import IO, Any, Callable, Union

import jax
import numpy as np

from . import _weights_only_unpickler as _wo
from . import _zip_container as _zip
from ._core import device as _device
from ._core import dtype as D
from ._core import layout as _layout
from ._core import tensor as T
from ._core.size import Size
from ._core.storage import NATIVE_ORDER, TypedStorage, UntypedStorage, _raw_bytes, byteswap, tensor_on
from ._core.tensor import Tensor

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "default_restore_location", "location_tag", "DEFAULT_PROTOCOL"]  # fmt: skip

FileLike = Union[str, os.PathLike, IO[bytes]]
DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
             "type_sizes": {"short": 2, "int": 4, "long": 4}}  # fmt: skip
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` "
    "to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source."
)

_STORAGE_NAMES = {
    D.float64: "DoubleStorage", D.float32: "FloatStorage", D.float16: "HalfStorage", D.bfloat16: "BFloat16Storage",
    D.int64: "LongStorage", D.int32: "IntStorage", D.int16: "ShortStorage", D.int8: "CharStorage",
    D.uint8: "ByteStorage", D.bool: "BoolStorage", D.complex64: "ComplexFloatStorage",
    D.complex128: "ComplexDoubleStorage",
}  # fmt: skip
_DTYPE_OF_STORAGE = {name: dt for dt, name in _STORAGE_NAMES.items()}
_V3_DTYPES = (D.uint16, D.uint32, D.uint64)  # torch saves these with _rebuild_tensor_v3 on untyped storages


# --- torch's globals, by name ---------------------------------------------------------------


class _Global:
    """A torch global (module, name) to write into a pickle without importing torch."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle wants reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is torch's, for pickles only")


_GLOBALS: dict[tuple, _Global] = {}


def _g(module: str, name: str) -> _Global:
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = _Global(module, name)
    return g


class StorageType:
    """What a legacy storage class name (``torch.FloatStorage``) means on load: a dtype."""

    def __init__(self, name: str) -> None:
        if name not in _DTYPE_OF_STORAGE:
            raise KeyError(name)
        self.dtype = _DTYPE_OF_STORAGE[name]

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


_STORAGE_TYPES = {name: StorageType(name) for name in _DTYPE_OF_STORAGE}


def _parameter_class() -> type:
    from .nn.parameter import Parameter

    return Parameter


def _torch_name_of(obj: Any) -> tuple[str, str] | None:
    """The (module, name) torch pickles ``obj`` under, for torchlike objects; None for others."""
    if isinstance(obj, _Global):
        return obj.module, obj.name
    if isinstance(obj, (D.dtype, _layout.memory_format)):
        return "torch", obj.name
    special = _SPECIAL_CLASSES.get(obj) if isinstance(obj, type) else None
    if special is not None:
        return special
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not (module == "torchlike" or module.startswith("torchlike.")):
        return None
    qualname = getattr(obj, "__qualname__", None) or obj.__name__
    if isinstance(obj, type) and obj.__name__ == "Parameter" and module == "torchlike.nn.parameter":
        return "torch.nn.parameter", "Parameter"
    parts = module.split(".")
    if any(p.startswith("_") for p in parts):
        # torchlike's private implementation file: name the public module that exports it
        for n in range(len(parts), 0, -1):
            if any(p.startswith("_") for p in parts[:n]):
                continue
            mod = sys.modules.get(".".join(parts[:n]))
            if mod is not None and getattr(mod, qualname, None) is obj:
                parts = parts[:n]
                break
    return ".".join(["torch"] + parts[1:]), qualname


_SPECIAL_CLASSES: dict = {
    Tensor: ("torch", "Tensor"), Size: ("torch", "Size"), _device.device: ("torch", "device"),
    D.dtype: ("torch", "dtype"), UntypedStorage: ("torch.storage", "UntypedStorage"),
    TypedStorage: ("torch.storage", "TypedStorage"),
}  # fmt: skip


# --- rebuilding (what torch's globals mean here) ---------------------------------------------


def _rebuild_tensor(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple) -> Tensor:
    return tensor_on(storage._untyped_storage, storage.dtype, storage_offset, size, stride)


def _apply_metadata(t: Tensor, metadata: Any) -> Tensor:
    # torch's lazy conj/neg bits: torchlike has none, so resolve them into values
    if metadata and metadata.get("conj"):
        t = t.conj_physical()
    if metadata and metadata.get("neg"):
        t = t.neg()
    return t


def _rebuild_tensor_v2(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:  # fmt: skip
    t = _apply_metadata(_rebuild_tensor(storage, storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple, requires_grad: bool,
                       backward_hooks: Any, dtype: D.dtype, metadata: Any = None) -> Tensor:  # fmt: skip
    untyped = storage._untyped_storage if isinstance(storage, TypedStorage) else storage
    t = _apply_metadata(tensor_on(untyped, dtype, storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _set_obj_state(obj: Any, state: Any) -> Any:
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for k, v in (dict_state or {}).items():
        setattr(obj, k, v)
    for k, v in (slots_state or {}).items():
        setattr(obj, k, v)
    return obj


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Tensor:
    return _set_obj_state(_parameter_class()(data, requires_grad), state)


def _rebuild_from_type_v2(func: Callable, new_type: type, args: tuple, state: Any) -> Any:
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise RuntimeError(f"torchlike: cannot rebuild a tensor as {new_type}")
        sub = object.__new__(new_type)
        for slot in Tensor.__slots__:
            if slot not in ("__dict__", "__weakref__"):
                setattr(sub, slot, getattr(ret, slot))
        ret = sub
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


def _rebuild_device_tensor_from_cpu_tensor(data: Tensor, dtype: D.dtype, device: str, requires_grad: bool) -> Tensor:
    t = data.to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _unsupported(what: str) -> Callable:
    def rebuild(*args: Any) -> Any:
        raise NotImplementedError(f"torchlike cannot load {what} (saved by torch); only strided dense tensors")

    rebuild.__name__ = "_rebuild_" + what.replace(" ", "_")
    return rebuild


def _get_layout(name: str) -> Any:
    value = getattr(_layout, name.removeprefix("torch."), None)
    if not isinstance(value, _layout.layout):
        raise RuntimeError(f"torchlike has no layout {name}")
    return value


_REBUILDERS = {
    "_rebuild_tensor": _rebuild_tensor, "_rebuild_tensor_v2": _rebuild_tensor_v2,
    "_rebuild_tensor_v3": _rebuild_tensor_v3, "_rebuild_parameter": _rebuild_parameter,
    "_rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "_rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
    "_rebuild_qtensor": _unsupported("quantized tensors"), "_rebuild_sparse_tensor": _unsupported("sparse tensors"),
    "_rebuild_nested_tensor": _unsupported("nested tensors"),
    "_rebuild_meta_tensor_no_storage": _unsupported("meta tensors"),
    "_rebuild_wrapper_subclass": _unsupported("wrapper tensor subclasses"),
    "_rebuild_device_tensor_from_numpy": _unsupported("tensors pickled through numpy"),
}  # fmt: skip


_TORCH_GLOBALS: dict[str, Any] = {}


def _torch_globals() -> dict[str, Any]:
    """torch's names for the globals torch's weights-only loader allows, mapped to torchlike's."""
    if _TORCH_GLOBALS:
        return _TORCH_GLOBALS
    rc = _TORCH_GLOBALS
    rc.update(_wo.BASE_GLOBALS)
    rc.update({
        "torch.nn.parameter.Parameter": _parameter_class(), "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size, "torch.Tensor": Tensor, "torch.device": _device.device,
        "torch.storage.UntypedStorage": UntypedStorage, "torch.storage.TypedStorage": TypedStorage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    })  # fmt: skip
    for dt in D.ALL:
        rc[f"torch.{dt.name}"] = dt
    for name, st in _STORAGE_TYPES.items():
        rc[f"torch.{name}"] = st
        rc[f"torch.cuda.{name}"] = st
    for name, fn in _REBUILDERS.items():
        rc[f"torch._utils.{name}"] = fn
    return rc


def _resolve_torch_global(module: str, name: str) -> Any:
    """The torchlike object for a torch global in a checkpoint (weights_only=False)."""
    if module == "torch.tensor":  # torch's own rename (pytorch#51633)
        module = "torch._tensor"
    full = f"{module}.{name}"
    known = _torch_globals().get(full)
    if known is not None:
        return known
    if name == "Tensor" and module == "torch._tensor":
        return Tensor
    target = "torchlike" + module[len("torch") :]
    try:
        obj: Any = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise pickle.UnpicklingError(f"torchlike has no equivalent of torch's {full} ({e})") from None
    return obj


# --- safe globals (torch.serialization.add_safe_globals) ---------------------------------------

_safe_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (objects, or ``(object, "module.name")`` pairs) in ``load(weights_only=True)``."""
    _safe_globals.update(safe_globals)


def clear_safe_globals() -> None:
    _safe_globals.clear()


def get_safe_globals() -> list:
    return list(_safe_globals)


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Any:
    """Context manager form of :func:`add_safe_globals`."""
    added = set(safe_globals) - _safe_globals
    _safe_globals.update(added)
    try:
        yield
    finally:
        _safe_globals.difference_update(added)


def _user_globals() -> dict[str, Any]:
    rc = {}
    for f in _safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(f[1])}")
            rc[f[1]] = f[0]
        else:
            tn = _torch_name_of(f)
            rc[f"{tn[0]}.{tn[1]}" if tn else f"{f.__module__}.{f.__qualname__}"] = f
    return rc


# --- saving ---------------------------------------------------------------------------------


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
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
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
    args: tuple = (ref, offset, tuple(shape), tuple(stride), t._rg, OrderedDict())
    if untyped:
        return _g("torch._utils", "_rebuild_tensor_v3"), args + (dtype,)
    return _g("torch._utils", "_rebuild_tensor_v2"), args


def _contiguous(shape: tuple) -> tuple:
    from ._core.views import contiguous_strides

    return contiguous_strides(shape)


class _TorchPickler(pickle._Pickler):  # type: ignore[name-defined]  # pure Python: it can write torch's globals
    """A pickler writing torchlike objects under torch's global names, storages as persistent ids."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

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
            kind = obj.type.encode().decode()  # torch's reduce makes a new str each time: no memo hit on "cpu"
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
    _TorchPickler(buf, protocol, storages).dump(obj)
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


def _atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write a new file next to ``path`` and rename it over ``path`` only once it is complete."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    parent = os.path.dirname(target)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            mode = os.stat(target).st_mode & 0o7777
        else:
            umask = os.umask(0o022)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(obj: object, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:  # fmt: skip
    """torch.save: write ``obj`` to ``f`` (a path or a binary file object) in torch's checkpoint format.

    A path is written atomically (temporary file, then rename). ``pickle_module`` must be the
    standard ``pickle``: torch's global names are written by a pure-Python pickler.
    """
    if pickle_module is not pickle:
        raise NotImplementedError("torchlike.save supports only the standard pickle module")
    is_path = isinstance(f, (str, os.PathLike))
    if not is_path and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    legacy = not _use_new_zipfile_serialization
    data, storages = _pickle_with_storages(obj, pickle_protocol, legacy)

    def write(stream: IO[bytes], archive: str) -> None:
        if legacy:
            _write_legacy(stream, data, storages, pickle_protocol)
        else:
            _write_zip(stream, archive, data, storages, not _disable_byteorder_record)

    if is_path:
        path = os.fspath(f)
        archive = _zip.archive_name_for(path) if path.isascii() else "archive"
        if not archive:
            raise RuntimeError(f"invalid file name: {path}")
        _atomic_write(path, lambda fh: write(fh, archive))
    else:
        if not callable(getattr(f, "write", None)):
            raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
        write(f, "archive")  # type: ignore[arg-type]
        if hasattr(f, "flush"):
            f.flush()  # type: ignore[union-attr]


# --- loading --------------------------------------------------------------------------------


def location_tag(storage: Any) -> str:
    return _location(storage.device)


def default_restore_location(storage: UntypedStorage, location: str) -> UntypedStorage:
    """Move a freshly read (CPU) storage to the device its location tag names."""
    if location == "cpu":
        return storage
    name = location.partition(":")[0]
    if name == "cuda":
        dev = _device.device(location)
        dev = _device.device("cuda", dev.index or 0)
        if not _device.cuda_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
                "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
                "your storages to the CPU."
            )
        count = len(_device._gpus())
        if dev.index >= count:
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {dev.index} but torch.cuda.device_count() is "
                f"{count}. Please use torch.load with map_location to map your storages to an existing device."
            )
        return storage.to(device=dev)
    if name in ("meta", "mps", "xpu", "hpu", "mtia", "privateuseone"):
        raise RuntimeError(f"torchlike cannot load storages onto the '{location}' device; use map_location='cpu'")
    raise RuntimeError(
        f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with {location})"
    )


def _restore_location(map_location: Any) -> Callable[[UntypedStorage, str], UntypedStorage]:
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda s, loc: default_restore_location(s, str(map_location.get(loc, loc)))
    if isinstance(map_location, (str, bytes)):
        where = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda s, loc: default_restore_location(s, where)
    if isinstance(map_location, _device.device):
        return lambda s, loc: default_restore_location(s, str(map_location))
    if not callable(map_location):
        raise TypeError(f"map_location should be a str, device, dict or callable, got {type(map_location).__name__}")

    def restore(storage: UntypedStorage, location: str) -> UntypedStorage:
        result = map_location(storage, location)
        if result is None:
            return default_restore_location(storage, location)
        if isinstance(result, TypedStorage):
            result = result._untyped_storage
        if not isinstance(result, UntypedStorage):
            raise TypeError(f"map_location returned {type(result).__name__}, expected a storage or None")
        return result

    return restore


def _decode(s: Any) -> str:
    return s.decode("ascii") if isinstance(s, bytes) else s


def _storage_dtype(storage_type: Any) -> D.dtype:
    if storage_type is UntypedStorage:
        return D.uint8
    if isinstance(storage_type, StorageType):
        return storage_type.dtype
    raise pickle.UnpicklingError(f"unknown storage type in checkpoint: {storage_type!r}")


def _get_wo_message(message: str) -> str:
    docs = (
        "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
        "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
    if "was not an allowed global by default." in message:
        out = (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
            "recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
        return out + docs
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += (
            "Please file an issue with the following so that we can make `weights_only=True` compatible with your "
            "use case: WeightsUnpickler error: "
        )
    return out + "\n\n" + message + docs


def _build(inst: Any, state: Any) -> None:
    """BUILD for the weights-only unpickler: only the instances torch allows."""
    if type(inst) is OrderedDict:
        inst.__dict__.update(state)
        return
    if any(type(inst) is v for v in _user_globals().values()):
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            inst.__dict__.update(state)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)
        return
    raise pickle.UnpicklingError(
        f"Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, but got {type(inst)}"
    )


class _Loader:
    """Unpickles a checkpoint's pickle, turning persistent storage ids into storages."""

    def __init__(self, map_location: Any, weights_only: bool, pickle_module: Any, load_args: dict) -> None:
        self.restore = _restore_location(map_location)
        self.weights_only = weights_only
        self.pickle_module = pickle_module
        self.load_args = load_args
        self.storages: dict[Any, TypedStorage] = {}

    def storage(self, key: Any, dtype: D.dtype, location: str, raw: np.ndarray) -> TypedStorage:
        s = self.storages.get(key)
        if s is None:
            untyped = self.restore(UntypedStorage._free(raw, _device.CPU), location)
            s = self.storages[key] = TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)
        return s

    def unpickle(self, file: IO[bytes], persistent_load: Callable) -> Any:
        if self.weights_only:
            allowed = dict(_torch_globals())
            allowed.update(_user_globals())
            return _wo.Unpickler(
                file, allowed=allowed, persistent_load=persistent_load, build=_build,
                new_parameter=_parameter_class, encoding=self.load_args.get("encoding", "utf-8"),
            ).load()  # fmt: skip
        base = self.pickle_module.Unpickler

        class _Unpickler(base):  # type: ignore[valid-type,misc]
            def find_class(self, module: str, name: str) -> Any:
                if "Storage" in name and name in _STORAGE_TYPES:
                    return _STORAGE_TYPES[name]
                if module == "torch" or module.startswith("torch."):
                    return _resolve_torch_global(module, name)
                return super().find_class(module, name)

        unpickler = _Unpickler(file, **self.load_args)
        unpickler.persistent_load = persistent_load
        return unpickler.load()


def _load_zip(reader: _zip.PyTorchFileReader, loader: _Loader, mmap_file: Any) -> Any:
    order = reader.get_record("byteorder").decode() if reader.has_record("byteorder") else "little"
    if order not in ("little", "big"):
        raise ValueError("Unknown endianness type: " + order)

    def persistent_load(saved_id: Any) -> Any:
        if not isinstance(saved_id, tuple) or _decode(saved_id[0]) != "storage" or len(saved_id) != 5:
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got {saved_id!r}")
        _, storage_type, key, location, numel = saved_id
        dtype = _storage_dtype(storage_type)
        if key in loader.storages:
            return loader.storages[key]
        name = f"data/{key}"
        nbytes = numel * dtype.itemsize
        offset = reader.get_record_offset(name) if mmap_file is not None else None
        if offset is not None:
            raw = mmap_file[offset : offset + nbytes]
        else:
            raw = np.frombuffer(reader.get_record(name), dtype=np.uint8)
        if raw.size != nbytes:
            raise RuntimeError(
                f"PytorchStreamReader failed reading file {name}: expected {nbytes} bytes, found {raw.size}; the "
                "checkpoint is corrupted"
            )
        if order != NATIVE_ORDER:
            raw = byteswap(raw, dtype)
        return loader.storage(key, dtype, _decode(location), raw)

    return loader.unpickle(io.BytesIO(reader.get_record("data.pkl")), persistent_load)


def _safe_unpickle(f: IO[bytes]) -> Any:
    return _wo.Unpickler(f, allowed={}, persistent_load=_no_pid, build=_build).load()


def _no_pid(pid: Any) -> Any:
    raise pickle.UnpicklingError("unsupported persistent id encountered")


def _legacy_storage_dtype(storage_type: Any) -> D.dtype:
    name = storage_type.name.rpartition(".")[2] if isinstance(storage_type, _wo.Inert) else ""
    if name == "UntypedStorage":
        return D.uint8
    if name not in _STORAGE_TYPES:
        raise RuntimeError(f"torchlike cannot load legacy storages of type {name or storage_type!r}")
    return _STORAGE_TYPES[name].dtype


def _load_legacy(f: IO[bytes], loader: _Loader) -> Any:
    """torch's pre-1.6 format: pickled headers, the object pickle, storage keys, then raw storages."""
    start = f.tell()
    f.seek(start + 257)
    if f.read(5) == b"ustar":
        raise RuntimeError("torchlike cannot load torch's legacy tar checkpoint format (PyTorch < 0.4)")
    f.seek(start)
    try:  # NOTE: torch unpickles these headers with the caller's unpickler; they never need globals
        magic = _safe_unpickle(f)
    except pickle.UnpicklingError as e:
        if loader.weights_only and "GLOBAL" in str(e):
            raise  # a raw pickle naming globals: report it as torch's weights-only loader does
        magic = None
    except (ValueError, KeyError, IndexError, UnicodeDecodeError, EOFError):
        magic = None
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = _safe_unpickle(f)
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    sys_info = _safe_unpickle(f)
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    # The data comes after the pickle: scan the pickle (running nothing) to learn each storage's dtype.
    body = f.tell()
    dtypes: dict[str, D.dtype] = {}

    def scan_pid(pid: Any) -> Any:
        if isinstance(pid, tuple) and pid and _decode(pid[0]) == "storage":
            if len(pid) != 6:
                raise RuntimeError("torchlike: corrupted legacy checkpoint (bad storage id)")
            if pid[5] is not None:
                raise NotImplementedError("torchlike cannot load legacy storage views (PyTorch < 1.0 checkpoints)")
            dtypes[_decode(pid[2])] = _legacy_storage_dtype(pid[1])
        return _wo.Inert("pid")

    _wo.Unpickler(f, allowed={}, persistent_load=scan_pid, build=_build, scan=True).load()
    keys = _safe_unpickle(f)
    raws: dict[str, np.ndarray] = {}
    for key in keys:
        head = f.read(8)
        if len(head) != 8 or key not in dtypes:
            raise RuntimeError("torchlike: truncated or corrupted legacy checkpoint")
        numel = struct.unpack("<q" if little else ">q", head)[0]
        dtype = dtypes[key]
        raw = np.frombuffer(f.read(numel * dtype.itemsize), dtype=np.uint8)
        if raw.size != numel * dtype.itemsize:
            raise RuntimeError("torchlike: truncated or corrupted legacy checkpoint")
        if ("little" if little else "big") != NATIVE_ORDER:
            raw = byteswap(raw, dtype)
        raws[key] = raw
    end = f.tell()

    def persistent_load(saved_id: Any) -> Any:
        typename = _decode(saved_id[0])
        if typename == "module":
            return saved_id[1]
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        _, storage_type, key, location, _numel, _view = saved_id
        key = _decode(key)
        if key not in raws:
            raise RuntimeError(f"torchlike: storage {key} is missing from the legacy checkpoint")
        return loader.storage(key, _storage_dtype(storage_type), _decode(location), raws[key])

    f.seek(body)
    result = loader.unpickle(f, persistent_load)
    f.seek(end)
    return result


def _default_weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    truthy = ("1", "y", "yes", "true")
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force_wo and force_no_wo:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but "
            "both were set."
        )
    if force_wo:
        return True
    if weights_only is None:
        if force_no_wo:
            warnings.warn(
                "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` argument was "
                "not explicitly passed to `torch.load`, forcing weights_only=False.",
                UserWarning,
                stacklevel=3,
            )
            return False
        return pickle_module is None
    return bool(weights_only)


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:  # fmt: skip
    """torch.load: read an object saved by torch.save (torch's or torchlike's) from a path or file object.

    ``weights_only=True`` (the default) allows only tensors, containers, primitives and globals
    added with :func:`add_safe_globals`; nothing in the file can run code. The whole file is
    read (and every record's CRC checked) before the object is returned, so a corrupted file
    raises instead of giving a partial object.
    """
    weights_only = _default_weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    loader = _Loader(map_location, weights_only, pickle_module, pickle_load_args)
    is_path = isinstance(f, (str, os.PathLike))
    with contextlib.ExitStack() as stack:
        if is_path:
            opened: Any = stack.enter_context(open(f, "rb"))
        else:
            opened = f
            try:
                opened.seek(opened.tell())  # type: ignore[union-attr]
            except (io.UnsupportedOperation, AttributeError) as e:
                raise type(e)(
                    f"{e}. You can only torch.load from a file that is seekable. Please pre-load the data into a "
                    "buffer like io.BytesIO and try to load from it instead."
                ) from None
        try:
            return _load_file(opened, loader, f if is_path else None, bool(mmap))
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
            raise


def _load_file(opened: IO[bytes], loader: _Loader, path: Any, mmap: bool) -> Any:
    start = opened.tell()
    magic = opened.read(4)
    opened.seek(start)
    if magic == b"PK\x03\x04":
        reader = _zip.PyTorchFileReader(opened)
        try:
            if reader.has_record("constants.pkl"):
                raise RuntimeError("torchlike cannot load TorchScript archives (torch.jit.save); save a state_dict")
            mmap_file = None
            if mmap:
                if path is None:
                    raise ValueError("f must be a file path in order to use the mmap argument")
                mmap_file = np.memmap(os.fspath(path), dtype=np.uint8, mode="r")
            return _load_zip(reader, loader, mmap_file)
        finally:
            reader.close()
    if mmap:
        name = "" if not isinstance(path, str) else f"{path}, "
        raise RuntimeError(
            f"mmap can only be used with files saved with `torch.save({name}_use_new_zipfile_serialization=True), "
            "please torch.save your checkpoint with this option in order to use mmap."
        )
    if not magic:
        raise EOFError("Ran out of input")
    return _load_legacy(opened, loader)


# --- plain pickling and copy.copy of tensors (Tensor.__reduce_ex__) ---------------------------


def _rebuild_plain(storage: UntypedStorage, dtype: D.dtype, offset: int, size: tuple, stride: tuple,
                   requires_grad: bool, state: Any) -> Tensor:  # fmt: skip
    t = tensor_on(storage, dtype, offset, size, stride)
    t.requires_grad = requires_grad
    if state:
        _set_obj_state(t, state)
    return t


def reduce_tensor(tensor: Tensor, proto: int) -> tuple:
    """``Tensor.__reduce_ex__`` for pickle and ``copy.copy``: the storage travels once per pickle.

    As in torch, ``copy.copy(t)`` shares ``t``'s memory, and tensors sharing memory still share
    it after one ``pickle.loads``.
    """
    func, args = _tensor_reduce(tensor)
    ref = args[0]
    source = ref.source
    storage = UntypedStorage._of(tensor) if isinstance(source, T.Buffer) else UntypedStorage._free(source, ref.device)
    state = _obj_state(tensor)
    if type(tensor) is Tensor:
        return _rebuild_plain, (storage, tensor._dtype, args[1], args[2], args[3], tensor._rg, state)
    plain = (storage, tensor._dtype, args[1], args[2], args[3], tensor._rg, None)
    return _rebuild_from_type_v2, (_rebuild_plain, type(tensor), plain, state or {})

"""Reading: torch's zip and legacy checkpoints, storages, map_location."""

from __future__ import annotations

import io
import os
import pickle
import struct
from collections import OrderedDict
from typing import IO, Any, Callable

import numpy as np

from .. import _weights_only_unpickler as _wo
from .._core import device as _device
from .._core import dtype as D
from .._core.storage import NATIVE_ORDER, TypedStorage, UntypedStorage, byteswap
from . import _zip
from ._names import (
    _STORAGE_TYPES,
    StorageType,
    _parameter_class,
    _resolve_torch_global,
    _torch_globals,
    _user_globals,
)
from ._pickler import MAGIC_NUMBER, PROTOCOL_VERSION, _location


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
        raise RuntimeError(
            f"torchlike cannot load storages onto the '{location}' device; use map_location='cpu'"
        )
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
    # torch: anything else is called (a non-callable fails there, once a storage is read)

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
            raise pickle.UnpicklingError(
                f"Unknown typename for persistent_load, expected 'storage' but got {saved_id!r}"
            )
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
    # torch reads the magic number with the caller's unpickler: a file that is no pickle fails as that unpickler
    # fails (UnpicklingError, EOFError...); a pickle of something else is an invalid magic number
    if loader.weights_only:
        magic = _safe_unpickle(f)
    else:
        magic = loader.pickle_module.load(f, **loader.load_args)
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
    sizes: dict[str, Any] = {}

    def scan_pid(pid: Any) -> Any:
        if isinstance(pid, tuple) and pid and _decode(pid[0]) == "storage":
            if len(pid) != 6:
                raise RuntimeError("torchlike: corrupted legacy checkpoint (bad storage id)")
            if pid[5] is not None:
                raise NotImplementedError(
                    "torchlike cannot load legacy storage views (PyTorch < 1.0 checkpoints)"
                )
            dtypes[_decode(pid[2])] = _legacy_storage_dtype(pid[1])
            sizes[_decode(pid[2])] = pid[4]
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
        declared = sizes[key]
        if isinstance(declared, int) and numel != declared:
            # torch's message, printf placeholders and all: the byte sizes follow it unformatted
            expected = (numel * dtype.itemsize) % 2**64
            raise RuntimeError(
                f"storage has wrong byte size: expected %ld got %ld{expected}{declared * dtype.itemsize}"
            )
        if numel < 0 or numel * dtype.itemsize > 2**62:
            raise RuntimeError("torchlike: truncated or corrupted legacy checkpoint")
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


def _load_file(opened: IO[bytes], loader: _Loader, path: Any, mmap: bool) -> Any:
    start = opened.tell()
    magic = opened.read(4)
    opened.seek(start)
    if magic == b"PK\x03\x04":
        reader = _zip.PyTorchFileReader(opened)
        try:
            if reader.has_record("constants.pkl"):
                raise RuntimeError(
                    "torchlike cannot load TorchScript archives (torch.jit.save); save a state_dict"
                )
            mmap_file = None
            if mmap:
                if path is None:
                    raise ValueError("f must be a file path in order to use the mmap argument")
                mmap_file = np.memmap(os.fspath(path), dtype=np.uint8, mode="c")  # MAP_PRIVATE, as torch
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

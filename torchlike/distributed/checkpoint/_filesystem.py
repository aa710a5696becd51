"""torch.distributed.checkpoint's ``save``/``load`` into a folder, in torchlike's own format.

NOT torch's on-disk format (torch writes a pickled ``.metadata`` and ``__<rank>_<n>.distcp``
files); a folder written here is read only by torchlike. The folder holds:

- ``torchlike_dcp.json``: ``{"version": 1, "tensors": [...], "objects": "objects.pkl"}``. Each
  tensor record has its ``path`` (the keys leading to it in the nested state dict), ``dtype``,
  global ``shape``, ``kind`` (``tensor`` or ``dtensor`` with its ``placements``) and ``chunks``:
  ``{"offsets", "sizes", "file", "byte_offset"}`` for each distinct shard it was saved as.
- ``data_<process>.bin``: the chunks, raw C-order bytes one after another.
- ``objects.pkl``: every non-tensor leaf (numbers, strings, hyper-parameters), pickled by path.

A sharded array is saved as its distinct shards (one per device of its split), so saving does
not gather it. Loading is in place, as torch's: each tensor of the given state dict is filled
with the region of the saved tensor that each of its own shards covers (read from the chunks
that overlap it), so a checkpoint saved over 4 devices loads over 2 or 1 (or as plain tensors).
"""

from __future__ import annotations

import json
import os
import pickle
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._core.tensor import Tensor
from ...autograd import grad_mode

__all__ = ["FileSystemReader", "FileSystemWriter", "Metadata", "load", "save"]

_META = "torchlike_dcp.json"
_OBJECTS = "objects.pkl"


class FileSystemWriter:
    """torch.distributed.checkpoint.FileSystemWriter: where ``save`` writes (a folder)."""

    def __init__(self, path: str | os.PathLike, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True, **kwargs: Any) -> None:  # fmt: skip
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite


class FileSystemReader:
    """torch.distributed.checkpoint.FileSystemReader: where ``load`` reads (a folder)."""

    def __init__(self, path: str | os.PathLike, **kwargs: Any) -> None:
        self.path = os.fspath(path)

    def read_metadata(self) -> Metadata:
        with open(os.path.join(self.path, _META)) as f:
            meta = json.load(f)
        return Metadata({".".join(map(str, r["path"])): {"shape": r["shape"], "dtype": r["dtype"]}
                         for r in meta["tensors"]})  # fmt: skip


@dataclass
class Metadata:
    """What a checkpoint holds: flattened key -> ``{"shape", "dtype"}`` of each tensor."""

    state_dict_metadata: dict = field(default_factory=dict)


def _is_stateful(v: Any) -> bool:
    return not isinstance(v, Tensor) and hasattr(v, "state_dict") and hasattr(v, "load_state_dict")


def _leaves(obj: Any, path: tuple = ()) -> Any:
    """(path, leaf) pairs of a nested dict/list state dict (Stateful values by their state_dict())."""
    if _is_stateful(obj):
        obj = obj.state_dict()
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list) and _holds_tensor(obj):  # a list of plain values is one leaf
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    else:
        yield path, obj


def _holds_tensor(obj: Any) -> bool:
    if isinstance(obj, Tensor) or _is_stateful(obj):
        return True
    if isinstance(obj, dict):
        return any(_holds_tensor(v) for v in obj.values())
    if isinstance(obj, list):
        return any(_holds_tensor(v) for v in obj)
    return False


def _path_key(path: tuple) -> str:
    return json.dumps([[type(p).__name__, p] for p in path])


def _rank() -> int:
    from .. import _process_group as pg

    return pg.get_rank() if pg.is_initialized() else 0


def _barrier() -> None:
    from .. import _process_group as pg

    if pg.is_initialized() and pg.get_world_size() > 1:
        from .._collectives import barrier

        barrier()


def _folder(checkpoint_id: Any, storage: Any, cls: type) -> str:
    if storage is not None:
        return storage.path
    if checkpoint_id is None:
        raise RuntimeError(f"`checkpoint_id` must be specified if {cls.__name__.replace('FileSystem', 'storage_')} "
                           "is None.")  # fmt: skip
    return os.fspath(checkpoint_id)


def save(state_dict: dict, *, checkpoint_id: Any = None, storage_writer: FileSystemWriter | None = None,
         planner: Any = None, process_group: Any = None, no_dist: bool = False) -> Metadata:  # fmt: skip
    """Write ``state_dict`` (nested dicts/lists of tensors, DTensors and objects) into a folder.

    Under several processes rank 0 writes (every rank holds the same replicated state; meshes across
    processes are not supported) and every rank waits for it.
    """
    if planner is not None:
        raise NotImplementedError("torchlike's distributed checkpoint: planner= is not supported")
    path = _folder(checkpoint_id, storage_writer, FileSystemWriter)
    records, objects = [], {}
    if no_dist or _rank() == 0:
        os.makedirs(path, exist_ok=True)
        data_name = f"data_{jax.process_index()}.bin"
        with open(os.path.join(path, data_name), "wb") as f:
            for p, v in _leaves(state_dict):
                if not isinstance(v, Tensor):
                    objects[_path_key(p)] = v
                    continue
                arr = v.detach()._data()
                rec = {"path": list(p), "dtype": str(arr.dtype), "shape": list(arr.shape), "chunks": [],
                       "kind": "dtensor" if hasattr(v, "placements") else "tensor"}  # fmt: skip
                if rec["kind"] == "dtensor":
                    rec["placements"] = [repr(pl) for pl in v.placements]
                for shard in arr.addressable_shards:
                    if shard.replica_id != 0:
                        continue
                    idx = shard.index
                    offsets = [s.start or 0 for s in idx]
                    data = np.array(shard.data, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
                    rec["chunks"].append({"offsets": offsets, "sizes": list(data.shape), "file": data_name,
                                          "byte_offset": f.tell()})  # fmt: skip
                    f.write(data.tobytes())
                records.append(rec)
            if storage_writer is None or storage_writer.sync_files:
                f.flush()
                os.fsync(f.fileno())
        with open(os.path.join(path, _OBJECTS), "wb") as f:
            pickle.dump(objects, f)
        with open(os.path.join(path, _META), "w") as f:
            json.dump({"version": 1, "format": "torchlike distributed checkpoint (not torch's)",
                       "tensors": records, "objects": _OBJECTS}, f)  # fmt: skip
    if not no_dist:
        _barrier()
    return Metadata({".".join(map(str, r["path"])): {"shape": r["shape"], "dtype": r["dtype"]} for r in records})


def _chunk(path: str, c: dict, dtype: Any) -> np.ndarray:
    sizes = tuple(c["sizes"])
    file = os.path.join(path, c["file"])
    if not sizes:
        return np.fromfile(file, dtype, count=1, offset=c["byte_offset"]).reshape(())
    if 0 in sizes:
        return np.zeros(sizes, dtype)
    return np.memmap(file, dtype=dtype, mode="r", offset=c["byte_offset"], shape=sizes)


def _read_region(path: str, rec: dict, index: tuple) -> np.ndarray:
    """The part ``index`` (slices over the global shape) of a saved tensor, from its chunks."""
    shape = rec["shape"]
    dtype = jnp.dtype(rec["dtype"])
    lo = [(s.start or 0) if isinstance(s, slice) else 0 for s in index] + [0] * (len(shape) - len(index))
    hi = [(s.stop if s.stop is not None else n) if isinstance(s, slice) else n
          for s, n in zip(index, shape)] + list(shape[len(index):])  # fmt: skip
    out = np.zeros([b - a for a, b in zip(lo, hi)], dtype)
    for c in rec["chunks"]:
        c_lo, c_hi = c["offsets"], [o + n for o, n in zip(c["offsets"], c["sizes"])]
        a = [max(x, y) for x, y in zip(lo, c_lo)]
        b = [min(x, y) for x, y in zip(hi, c_hi)]
        if any(x >= y for x, y in zip(a, b)):
            continue
        chunk = _chunk(path, c, dtype)
        src = tuple(slice(x - o, y - o) for x, y, o in zip(a, b, c_lo))
        dst = tuple(slice(x - o, y - o) for x, y, o in zip(a, b, lo))
        out[dst] = chunk[src]
    return out


def load(state_dict: dict, *, checkpoint_id: Any = None, storage_reader: FileSystemReader | None = None,
         planner: Any = None, process_group: Any = None, no_dist: bool = False) -> None:  # fmt: skip
    """Fill ``state_dict`` in place from a folder written by ``save``: each tensor keeps its own layout
    (device count, sharding), whatever the saving run's was; other values are replaced."""
    if planner is not None:
        raise NotImplementedError("torchlike's distributed checkpoint: planner= is not supported")
    path = _folder(checkpoint_id, storage_reader, FileSystemReader)
    with open(os.path.join(path, _META)) as f:
        meta = json.load(f)
    with open(os.path.join(path, meta["objects"]), "rb") as f:
        objects = pickle.load(f)
    records = {_path_key(tuple(r["path"])): r for r in meta["tensors"]}
    _fill(state_dict, (), path, records, objects)


def _fill(obj: Any, path: tuple, folder: str, records: dict, objects: dict) -> Any:
    if _is_stateful(obj):
        sd = obj.state_dict()
        _fill(sd, path, folder, records, objects)
        obj.load_state_dict(sd)
        return obj
    if isinstance(obj, dict) or (isinstance(obj, list) and _holds_tensor(obj)):
        items = obj.items() if isinstance(obj, dict) else list(enumerate(obj))
        for k, v in items:
            obj[k] = _fill(v, (*path, k), folder, records, objects)
        return obj
    key = _path_key(path)
    if isinstance(obj, Tensor):
        rec = records.get(key)
        if rec is None:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {'.'.join(map(str, path))}.")
        if list(obj.shape) != rec["shape"]:
            raise RuntimeError(
                f"Size mismatch between saved {tuple(rec['shape'])} and current: {tuple(obj.shape)} for "
                f"{'.'.join(map(str, path))}"
            )
        sharding = obj._data().sharding
        arr = jax.make_array_from_callback(tuple(rec["shape"]), sharding, lambda idx: _read_region(folder, rec, idx))
        with grad_mode.no_grad():
            obj._assign(arr)
        return obj
    if key not in objects:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {'.'.join(map(str, path))}.")
    return objects[key]

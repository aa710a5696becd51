"""Fetchers: turn the sampler's (batched) indices into a collated batch, in the main process or a worker."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from . import _host
from ._collate import default_collate
from ._dataset import Subset, TensorDataset


class _DatasetKind:
    Map = 0
    Iterable = 1


def create_fetcher(kind: int, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> Any:
    if kind == _DatasetKind.Map:
        return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
    return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _IterableDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _rows_source(dataset: Any) -> tuple | None:
    """(TensorDataset, index maps) when a batch of ``dataset`` is rows of CPU tensors: a plain TensorDataset,
    possibly under plain Subsets (what ``random_split`` makes). Otherwise None."""
    maps = []
    while type(dataset) is Subset:
        maps.append(dataset.indices)
        dataset = dataset.dataset
    cls = type(dataset)
    if not isinstance(dataset, TensorDataset) or cls.__getitem__ is not TensorDataset.__getitem__:
        return None
    if getattr(cls, "__getitems__", None) is not None:
        return None
    return dataset, maps


def _rows_batch(source: tuple, indices: list) -> list | None:
    """``default_collate([dataset[i] for i in indices])`` by gathering rows with numpy, or None when the
    indices are not plain in-range ints (the per-sample path then gives torch's behaviour and errors)."""
    dataset, maps = source
    tensors = dataset.tensors
    if not all(type(t) is Tensor and _host.is_host_readable(t) for t in tensors):
        return None
    idx = indices
    try:
        for m in maps:
            idx = [m[i] for i in idx]
    except (IndexError, TypeError):
        return None
    if not all(type(i) is int for i in idx):
        return None
    n = len(tensors[0])
    rows = np.asarray(idx, dtype=np.int64)
    if len(rows) == 0 or rows.min() < -n or rows.max() >= n:
        return None
    return [_host.wrap(_host.host_array(t)[rows], t._dtype) for t in tensors]


class _MapDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        # A TensorDataset batch with the default collate is a gather per tensor: same values, far fewer calls.
        self.rows = _rows_source(dataset) if auto_collation and collate_fn is default_collate else None

    def fetch(self, possibly_batched_index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self.rows is not None:
            batch = _rows_batch(self.rows, possibly_batched_index)
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[idx] for idx in possibly_batched_index]
        return self.collate_fn(data)

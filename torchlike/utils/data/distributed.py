"""torch.utils.data.distributed: DistributedSampler, one replica's share of a dataset."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator
from typing import Any

from ..._ops.random import Generator, randperm
from ._dataset import Dataset
from ._sampler import Sampler

__all__ = ["DistributedSampler"]


def _dist() -> Any:
    try:
        return importlib.import_module("torchlike.distributed")
    except ModuleNotFoundError:
        raise RuntimeError("Requires distributed package to be available") from None


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (seeded, per-epoch) permutation of the dataset.

    The permutation is ``randperm(len, generator=Generator().manual_seed(seed + epoch))``; without
    ``drop_last`` the index list is padded by wrapping around so that every replica gets the same count.
    """

    def __init__(self, dataset: Dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:  # fmt: skip
        if num_replicas is None:
            num_replicas = _dist().get_world_size()
        if rank is None:
            rank = _dist().get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})"
            )
        indices = indices[self.rank : self.total_size : self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match num_samples ({self.num_samples})"
            )
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Reseed the shuffle for ``epoch`` (call it before each epoch, as with torch)."""
        self.epoch = epoch

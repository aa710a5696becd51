"""torch.utils.data: datasets, samplers and the DataLoader."""

from ._collate import default_collate, default_convert
from ._dataloader import DataLoader, get_worker_info
from ._dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ._fetch import _DatasetKind
from ._sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .distributed import DistributedSampler

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "_DatasetKind", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]  # fmt: skip


def __getattr__(name: str) -> object:
    from ...compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)

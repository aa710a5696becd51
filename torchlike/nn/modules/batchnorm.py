"""torch.nn.modules.batchnorm."""

from ._normalization import (  # noqa: F401  (importable here, as in torch)
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    SyncBatchNorm,
    _BatchNorm,
    _LazyNormBase,
    _NormBase,
)
from ._paths import set_module

__all__ = [
    "BatchNorm1d",
    "LazyBatchNorm1d",
    "BatchNorm2d",
    "LazyBatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]

set_module(__name__, globals())

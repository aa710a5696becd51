"""torchvision.datasets.svhn."""

from ._svhn import (
    SVHN,
)

__all__ = ["SVHN"]  # fmt: skip

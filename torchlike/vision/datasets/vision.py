"""torchvision.datasets.vision."""

from ._vision import (
    StandardTransform,
    VisionDataset,
)

__all__ = ["VisionDataset", "StandardTransform"]  # fmt: skip

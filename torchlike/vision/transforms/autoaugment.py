"""torchvision.transforms.autoaugment."""

from ._autoaugment import (
    AutoAugment,
    AutoAugmentPolicy,
    RandAugment,
    TrivialAugmentWide,
)

__all__ = ["AutoAugment", "AutoAugmentPolicy", "RandAugment", "TrivialAugmentWide"]  # fmt: skip

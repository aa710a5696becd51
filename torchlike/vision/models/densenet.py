"""torchvision.models.densenet."""

from ._densenet import (
    DenseNet,
    DenseNet121_Weights,
    densenet121,
)

__all__ = ["DenseNet", "densenet121", "DenseNet121_Weights"]  # fmt: skip

"""torchvision.models.alexnet."""

from ._classic import (
    AlexNet,
    AlexNet_Weights,
    alexnet,
)

__all__ = ["AlexNet", "alexnet", "AlexNet_Weights"]  # fmt: skip

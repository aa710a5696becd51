"""torchvision.datasets.cifar."""

from ._cifar import (
    CIFAR10,
    CIFAR100,
)

__all__ = ["CIFAR10", "CIFAR100"]  # fmt: skip

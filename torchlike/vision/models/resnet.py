"""torchvision.models.resnet."""

from ._resnet import (
    BasicBlock,
    Bottleneck,
    ResNet,
    ResNet18_Weights,
    ResNet34_Weights,
    ResNet50_Weights,
    ResNet101_Weights,
    conv1x1,
    conv3x3,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
)

__all__ = ["BasicBlock", "Bottleneck", "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights", "conv1x1", "conv3x3"]  # fmt: skip

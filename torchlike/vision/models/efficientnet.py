"""torchvision.models.efficientnet."""

from ._mobile import (
    EfficientNet,
    EfficientNet_B0_Weights,
    MBConv,
    MBConvConfig,
    efficientnet_b0,
)

__all__ = ["EfficientNet", "MBConv", "MBConvConfig", "efficientnet_b0", "EfficientNet_B0_Weights"]  # fmt: skip

"""torchvision.models.mobilenetv3."""

from ._mobile import (
    InvertedResidualConfig,
    MobileNet_V3_Large_Weights,
    MobileNet_V3_Small_Weights,
    MobileNetV3,
    mobilenet_v3_large,
    mobilenet_v3_small,
)
from ._mobile import (
    InvertedResidualV3 as InvertedResidual,
)

__all__ = ["MobileNetV3", "InvertedResidualConfig", "mobilenet_v3_large", "mobilenet_v3_small", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights", "InvertedResidual"]  # fmt: skip

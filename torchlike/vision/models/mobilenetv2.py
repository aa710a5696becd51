"""torchvision.models.mobilenetv2."""

from ._mobile import (
    InvertedResidualV2 as InvertedResidual,
)
from ._mobile import (
    MobileNet_V2_Weights,
    MobileNetV2,
    mobilenet_v2,
)

__all__ = ["MobileNetV2", "mobilenet_v2", "MobileNet_V2_Weights", "InvertedResidual"]  # fmt: skip

"""torchvision.models.convnext."""

from ._transformers import (
    CNBlock,
    CNBlockConfig,
    ConvNeXt,
    ConvNeXt_Tiny_Weights,
    LayerNorm2d,
    convnext_tiny,
)

__all__ = ["ConvNeXt", "CNBlock", "CNBlockConfig", "LayerNorm2d", "convnext_tiny", "ConvNeXt_Tiny_Weights"]  # fmt: skip

"""torchvision.models.vision_transformer."""

from ._transformers import (
    Encoder,
    EncoderBlock,
    MLPBlock,
    VisionTransformer,
    ViT_B_16_Weights,
    vit_b_16,
)

__all__ = ["VisionTransformer", "Encoder", "EncoderBlock", "MLPBlock", "vit_b_16", "ViT_B_16_Weights"]  # fmt: skip

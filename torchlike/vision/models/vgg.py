"""torchvision.models.vgg."""

from ._classic import (
    VGG,
    VGG11_BN_Weights,
    VGG11_Weights,
    VGG16_BN_Weights,
    VGG16_Weights,
    cfgs,
    make_layers,
    vgg11,
    vgg11_bn,
    vgg16,
    vgg16_bn,
)

__all__ = ["VGG", "make_layers", "cfgs", "vgg11", "vgg11_bn", "vgg16", "vgg16_bn", "VGG11_Weights", "VGG11_BN_Weights", "VGG16_Weights", "VGG16_BN_Weights"]  # fmt: skip

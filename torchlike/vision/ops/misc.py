"""torchvision.ops.misc."""

from ._misc import MLP, Conv2dNormActivation, ConvNormActivation, Permute, SqueezeExcitation

__all__ = ["MLP", "Conv2dNormActivation", "ConvNormActivation", "Permute", "SqueezeExcitation"]

"""torchvision.models.squeezenet."""

from ._classic import (
    Fire,
    SqueezeNet,
    SqueezeNet1_0_Weights,
    SqueezeNet1_1_Weights,
    squeezenet1_0,
    squeezenet1_1,
)

__all__ = ["Fire", "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights"]  # fmt: skip

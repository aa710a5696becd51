"""torchvision.ops: box_iou, nms, roi_align and the misc building blocks models use."""

from . import misc
from ._misc import MLP, Conv2dNormActivation, Permute, SqueezeExcitation, StochasticDepth, stochastic_depth

__all__ = ["misc", "MLP", "Conv2dNormActivation", "Permute", "SqueezeExcitation", "StochasticDepth", "stochastic_depth"]

"""torchvision.ops: box_iou, nms, roi_align and the misc building blocks models use."""

from . import misc
from ._boxes import batched_nms, box_area, box_iou, nms, roi_align
from ._misc import MLP, Conv2dNormActivation, Permute, SqueezeExcitation, StochasticDepth, stochastic_depth

__all__ = [
    "misc", "batched_nms", "box_area", "box_iou", "nms", "roi_align", "MLP", "Conv2dNormActivation", "Permute", "SqueezeExcitation", "StochasticDepth", "stochastic_depth",
]  # fmt: skip

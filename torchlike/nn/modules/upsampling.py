"""torch.nn.modules.upsampling."""

from ._paths import set_module
from ._vision import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

set_module(__name__, globals())

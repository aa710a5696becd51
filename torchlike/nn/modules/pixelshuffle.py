"""torch.nn.modules.pixelshuffle."""

from ._paths import set_module
from ._vision import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]

set_module(__name__, globals())

"""torch.nn.modules.channelshuffle."""

from ._paths import set_module
from ._vision import ChannelShuffle

__all__ = ["ChannelShuffle"]

set_module(__name__, globals())

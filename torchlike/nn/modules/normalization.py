"""torch.nn.modules.normalization."""

from ._normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from ._paths import set_module

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]

set_module(__name__, globals())

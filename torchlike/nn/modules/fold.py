"""torch.nn.modules.fold."""

from ._paths import set_module
from ._vision import Fold, Unfold

__all__ = ["Fold", "Unfold"]

set_module(__name__, globals())

"""torch.nn.modules.flatten."""

from ._flatten import Flatten, Unflatten
from ._paths import set_module

__all__ = ["Flatten", "Unflatten"]

set_module(__name__, globals())

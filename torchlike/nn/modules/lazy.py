"""torch.nn.modules.lazy."""

from ._lazy import LazyModuleMixin
from ._paths import set_module

__all__ = ["LazyModuleMixin"]

set_module(__name__, globals())

"""torch.nn.modules.container."""

from ._container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ._paths import set_module

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]

set_module(__name__, globals())

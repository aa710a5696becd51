"""torch.nn.modules.adaptive."""

from ._adaptive import (
    AdaptiveLogSoftmaxWithLoss,
    _ASMoutput,  # noqa: F401  (importable here, as in torch)
)
from ._paths import set_module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

set_module(__name__, globals())

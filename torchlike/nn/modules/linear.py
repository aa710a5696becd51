"""torch.nn.modules.linear."""

from ._linear import (
    Bilinear,
    Identity,
    LazyLinear,
    Linear,
    NonDynamicallyQuantizableLinear,  # noqa: F401  (importable here, as in torch)
)
from ._paths import set_module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]

set_module(__name__, globals())

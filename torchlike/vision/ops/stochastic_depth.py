"""torchvision.ops.stochastic_depth."""

from ._misc import (
    StochasticDepth,
    stochastic_depth,
)

__all__ = ["StochasticDepth", "stochastic_depth"]  # fmt: skip

"""torch.nn.modules.distance."""

from ._paths import set_module
from ._vision import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]

set_module(__name__, globals())

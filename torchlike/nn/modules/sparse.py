"""torch.nn.modules.sparse."""

from ._paths import set_module
from ._sparse import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]

set_module(__name__, globals())

"""torch.sparse: COO tensors, their arithmetic and the sparse x dense product (see ``_coo``), and the legacy
sparse tensor types (``_legacy``)."""

from ._coo import addmm, mm, sum
from ._legacy import TYPES as _TYPES

__all__ = ["addmm", "mm", "sum", *_TYPES]
globals().update(_TYPES)  # torch.sparse.FloatTensor and friends

"""torch.sparse: COO tensors and the sparse x dense product (see ``_coo``)."""

from ._coo import mm, sum

__all__ = ["mm", "sum"]

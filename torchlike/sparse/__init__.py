"""torch.sparse: COO tensors and their arithmetic (``_coo``), products (``_matmul``), sums, index_select and
softmax (``_functions``), and the legacy sparse tensor types (``_legacy``)."""

from ._functions import log_softmax, softmax
from ._functions import sparse_sum as sum
from ._legacy import TYPES as _TYPES
from ._matmul import addmm, mm

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum", *_TYPES]
globals().update(_TYPES)  # torch.sparse.FloatTensor and friends

"""torch.nn.parallel: DataParallel (one host, a device mesh) and DistributedDataParallel (one process per device)."""

from ._data_parallel import DataParallel, data_parallel  # noqa: F401
from ._distributed import DistributedDataParallel  # noqa: F401

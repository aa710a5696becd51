"""torch.nn.parallel.data_parallel (public path)."""

from ._data_parallel import DataParallel, data_parallel  # noqa: F401

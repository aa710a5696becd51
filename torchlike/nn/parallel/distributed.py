"""torch.nn.parallel.distributed (public path)."""

from ._distributed import DistributedDataParallel  # noqa: F401

"""torch.distributed.tensor: ``DTensor`` over a mesh of this process's devices."""

from ._dtensor import DTensor, Placement, Replicate, Shard, distribute_tensor  # noqa: F401

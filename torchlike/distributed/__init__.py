"""torch.distributed on JAX's multi-process runtime (``jax.distributed``): one JAX process per rank,
collectives as ``shard_map`` programs over a mesh of the ranks' devices. Launch with
``python -m torchlike.distributed.run --nproc-per-node N script.py`` (torchrun's interface)."""

from ._collectives import (  # noqa: F401
    Work, all_gather, all_gather_into_tensor, all_gather_object, all_reduce, all_to_all_single, barrier,
    broadcast, broadcast_object_list, gather, gather_object, irecv, isend, monitored_barrier, recv, reduce,
    reduce_scatter, reduce_scatter_tensor, scatter, scatter_object_list, send,
)  # fmt: skip
from ._process_group import (  # noqa: F401
    Backend, GroupMember, ProcessGroup, ReduceOp, destroy_process_group, get_backend, get_global_rank,
    get_group_rank, get_process_group_ranks, get_rank, get_world_size, group, init_process_group, is_available,
    is_gloo_available, is_initialized, is_mpi_available, is_nccl_available, is_torchelastic_launched, new_group,
)  # fmt: skip

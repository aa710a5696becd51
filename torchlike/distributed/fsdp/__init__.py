"""torch.distributed.fsdp: FSDP1's ``FullyShardedDataParallel`` and FSDP2's ``fully_shard`` on
``jax.sharding`` (see docs/distributed.md)."""

from ._api import (  # noqa: F401
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)  # fmt: skip
from ._fsdp1 import FullyShardedDataParallel  # noqa: F401
from . import _named_state  # noqa: F401  (attaches FullyShardedDataParallel.optim_state_dict and optim_state_dict_to_load)
from ._fully_shard import FSDPModule, fully_shard  # noqa: F401

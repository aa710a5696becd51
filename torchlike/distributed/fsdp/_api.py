"""torch.distributed.fsdp's configuration types (enums and dataclasses), as torch spells them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

__all__ = ["BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig", "LocalStateDictConfig",
           "MixedPrecision", "OptimStateDictConfig", "ShardedOptimStateDictConfig", "ShardedStateDictConfig",
           "ShardingStrategy", "StateDictConfig", "StateDictSettings", "StateDictType"]  # fmt: skip


class ShardingStrategy(Enum):
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class MixedPrecision:
    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: Any = None


@dataclass
class CPUOffload:
    offload_params: bool = False


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig

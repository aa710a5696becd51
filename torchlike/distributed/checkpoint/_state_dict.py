"""torch.distributed.checkpoint.state_dict: model and optimizer state keyed by parameter names.

The same calls serve a plain module, ``DistributedDataParallel`` (no ``module.`` prefix),
``torchlike.compile`` (no ``_orig_mod.``), FSDP1 (original names, flat parameters split back into
the original ones) and FSDP2's ``fully_shard``. With ``full_state_dict=False`` (torch's default)
sharded parameters and their optimizer state come out as ``DTensor``s; otherwise as plain tensors
on one device (the CPU with ``cpu_offload=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax

from ..._core.tensor import Tensor
from ...autograd import grad_mode
from ...nn.modules._module import Module, _IncompatibleKeys
from ..fsdp._api import StateDictType
from ..fsdp._fsdp1 import FullyShardedDataParallel
from ..fsdp._named_state import (
    _clean,
    _is_fsdp1,
    _mesh_of,
    _optim_state_dict,
    _param_fqns,
    _to_optimizer_layout,
    _value,
)

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict", "get_state_dict",
           "set_model_state_dict", "set_optimizer_state_dict", "set_state_dict"]  # fmt: skip


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def get_model_state_dict(model: Module, *, submodules: Any = None, options: StateDictOptions | None = None) -> dict:
    """The model's state dict under clean names: DTensors for sharded parameters unless
    ``full_state_dict``."""
    opts = options or StateDictOptions()
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict: submodules= is deprecated in torch and not supported")
    if _is_fsdp1(model):
        with FullyShardedDataParallel.state_dict_type(
            model, StateDictType.FULL_STATE_DICT if opts.full_state_dict else StateDictType.SHARDED_STATE_DICT
        ):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NO_SHARD's "full state dict returned": documented behaviour
                sd = model.state_dict()
        if opts.cpu_offload:
            sd = {k: _value(v.detach()._data(), v._dtype, v._buf.device, None, True, True) for k, v in sd.items()}
    else:
        sd = {}
        for k, v in model.state_dict().items():
            arr = v.detach()._data()
            sd[_clean(k, model)] = _value(arr, v._dtype, v._buf.device, _mesh_of(arr), opts.full_state_dict,
                                          opts.cpu_offload)  # fmt: skip
    if opts.ignore_frozen_params:
        frozen = {f for p in model.parameters() if not p.requires_grad for f, _, _ in _param_fqns(model)[id(p)]}
        sd = {k: v for k, v in sd.items() if k not in frozen}
    return sd


def get_optimizer_state_dict(model: Module, optimizers: Any, *, submodules: Any = None,
                             options: StateDictOptions | None = None) -> dict:  # fmt: skip
    """The optimizers' state keyed by parameter names (``{'state': {fqn: {...}}, 'param_groups': [...]}``)."""
    opts = options or StateDictOptions()
    opts_list = list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]
    return _optim_state_dict(model, opts_list, opts.full_state_dict, opts.cpu_offload)


def get_state_dict(model: Module, optimizers: Any, *, submodules: Any = None,
                   options: StateDictOptions | None = None) -> tuple[dict, dict]:  # fmt: skip
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))  # fmt: skip


def set_model_state_dict(model: Module, model_state_dict: dict, *,
                         options: StateDictOptions | None = None) -> _IncompatibleKeys:  # fmt: skip
    """Load a state dict from ``get_model_state_dict`` (full or sharded) into ``model``."""
    opts = options or StateDictOptions()
    if _is_fsdp1(model):
        return model.load_state_dict(model_state_dict, strict=opts.strict)
    names = {_clean(k, model): k for k in model.state_dict()}
    sd = {names.get(k, k): v for k, v in model_state_dict.items()}
    placed = {id(t): t._data().sharding for t in (*model.parameters(), *model.buffers())}
    result = model.load_state_dict(sd, strict=opts.strict)
    with grad_mode.no_grad():
        for t in (*model.parameters(), *model.buffers()):
            s = placed.get(id(t))
            if s is not None and t._data().sharding != s:
                t._assign(jax.device_put(t._data(), s))  # keep the layout (sharded params stay sharded)
    return result


def set_optimizer_state_dict(model: Module, optimizers: Any, optim_state_dict: dict, *,
                             options: StateDictOptions | None = None) -> None:  # fmt: skip
    """Load an fqn-keyed optimizer state dict (from ``get_optimizer_state_dict``) into the optimizers."""
    opts_list = list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]
    for opt in opts_list:
        opt.load_state_dict(_to_optimizer_layout(model, opt, optim_state_dict))
        with grad_mode.no_grad():
            for p, st in opt.state.items():
                for v in st.values():
                    if isinstance(v, Tensor) and v.dim() > 0 and tuple(v.shape) == tuple(p.shape):
                        v._assign(jax.device_put(v._data(), p._data().sharding))  # state lies like its param


def set_state_dict(model: Module, optimizers: Any, *, model_state_dict: dict, optim_state_dict: dict,
                   options: StateDictOptions | None = None) -> _IncompatibleKeys:  # fmt: skip
    """``set_model_state_dict`` then ``set_optimizer_state_dict``."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result

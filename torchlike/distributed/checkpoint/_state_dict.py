"""torch.distributed.checkpoint.state_dict: model and optimizer state keyed by parameter names.

The same calls serve a plain module, ``DistributedDataParallel`` (no ``module.`` prefix),
``torchlike.compile`` (no ``_orig_mod.``), FSDP1 (original names, flat parameters split back into
the original ones) and FSDP2's ``fully_shard``. With ``full_state_dict=False`` (torch's default)
sharded parameters and their optimizer state come out as ``DTensor``s; otherwise as plain tensors
on one device (the CPU with ``cpu_offload=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from ..._core import tensor as T
from ..._core.tensor import Tensor
from ...autograd import grad_mode
from ...nn.modules._module import Module, _IncompatibleKeys
from ..device_mesh import DeviceMesh
from ..fsdp._api import StateDictType
from ..fsdp._fsdp1 import FullyShardedDataParallel, _Entry, _export

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


_PREFIXES = ("_fsdp_wrapped_module.", "_orig_mod.", "_checkpoint_wrapped_module.")


def _clean(name: str, model: Module) -> str:
    from ...nn.parallel._distributed import DistributedDataParallel

    if isinstance(model, DistributedDataParallel) and name.startswith("module."):
        name = name[len("module.") :]
    for p in _PREFIXES:
        name = name.replace(p, "")
    return name


def _is_fsdp1(model: Module) -> bool:
    return isinstance(model, FullyShardedDataParallel)


def _mesh_of(arr: Any) -> DeviceMesh | None:
    s = getattr(arr, "sharding", None)
    if isinstance(s, NamedSharding) and len(s.device_set) > 1 and not s.is_fully_replicated:
        return DeviceMesh._from_jax(s.mesh)
    return None


def _param_fqns(model: Module) -> dict[int, list[tuple[str, Any, Any]]]:
    """id(parameter) -> [(fqn, owner FSDP or None, _Entry or None)] (a flat parameter has several)."""
    out: dict[int, list] = {}
    prefixes = {id(m): _clean(name + ".", model) if name else "" for name, m in model.named_modules()
                if isinstance(m, FullyShardedDataParallel)}  # fmt: skip
    for root in FullyShardedDataParallel.fsdp_modules(model, root_only=True):
        for fqn, owner, item in root._walk(prefixes[id(root)]):
            if isinstance(item, _Entry):
                out.setdefault(id(owner._flat_param()), []).append((fqn, owner, item))
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in out and out[id(p)][0][1] is not None:
            continue
        out.setdefault(id(p), []).append((_clean(name, model), None, None))
    return out


def _value(arr: Any, dtype: Any, device: Any, mesh: DeviceMesh | None, full: bool, offload: bool) -> Tensor:
    return _export(arr, dtype, device, mesh, not full, offload)


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


def _optim_state_dict(model: Module, optimizers: Iterable[Any], full: bool, cpu_offload: bool) -> dict:
    fqns = _param_fqns(model)
    state: dict = {}
    groups: list = []
    for opt in optimizers:
        for group in opt.param_groups:
            g = {k: v for k, v in group.items() if k != "params"}
            g["params"] = [f for p in group["params"] for f, _, _ in fqns[id(p)]]
            groups.append(g)
            for p in group["params"]:
                st = opt.state.get(p)
                if not st:
                    continue
                parr = p._data()
                for fqn, owner, entry in fqns[id(p)]:
                    out = {}
                    for k, v in st.items():
                        if isinstance(v, Tensor) and v.dim() > 0 and tuple(v.shape) == tuple(p.shape):
                            arr = v.detach()._data()
                            mesh = owner._device_mesh if owner is not None else _mesh_of(parr)
                            if entry is not None:
                                arr = arr[entry.offset : entry.offset + entry.numel].reshape(entry.shape)
                                if not owner._sharded():
                                    mesh = None
                            out[k] = _value(arr, v._dtype, v._buf.device, mesh, full, cpu_offload)
                        elif isinstance(v, Tensor):
                            out[k] = v.detach().clone()
                        else:
                            out[k] = v
                    state[fqn] = out
    return {"state": state, "param_groups": groups}


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


def _array(v: Any) -> Any:
    return v.detach()._data() if isinstance(v, Tensor) else jnp.asarray(v)


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


def _to_optimizer_layout(model: Module, opt: Any, osd: dict) -> dict:
    """An fqn-keyed optimizer state dict in ``opt.load_state_dict``'s layout (indices)."""
    fqns = _param_fqns(model)
    saved_groups = osd["param_groups"]
    state: dict = {}
    groups = []
    idx = 0
    for group in opt.param_groups:
        names = [f for p in group["params"] for f, _, _ in fqns[id(p)]]
        saved = next((g for g in saved_groups if names and names[0] in g["params"]), None)
        if saved is None:
            raise ValueError(f"optimizer state dict has no parameter group holding {names[:1]}")
        ids = []
        for p in group["params"]:
            parts = [(osd["state"].get(f), e) for f, _, e in fqns[id(p)]]
            if all(s is not None for s, _ in parts) and parts:
                merged = {}
                for k, v in parts[0][0].items():
                    if parts[0][1] is not None and isinstance(v, Tensor) and v.dim() > 0:
                        merged[k] = _merge_flat(p, [(s[k], e) for s, e in parts])
                    elif isinstance(v, Tensor):
                        # uncommitted (like a fresh optimizer's step), so it meets parameters on any mesh
                        merged[k] = T.make(jnp.asarray(np.asarray(_array(v))), v._buf.device, v._dtype)
                    else:
                        merged[k] = v
                state[idx] = merged
            ids.append(idx)
            idx += 1
        g = {k: v for k, v in saved.items() if k != "params"}
        g["params"] = ids
        groups.append(g)
    return {"state": state, "param_groups": groups}


def _merge_flat(flat: Tensor, parts: list) -> Tensor:
    """One optimizer-state tensor of a flat parameter from its original parameters' pieces."""
    first: dict = {}
    for v, e in parts:
        first.setdefault(e.offset, (v, e))
    pieces = [_array(first[off][0]).reshape(-1) for off in sorted(first)]
    end = max(off + e.numel for off, (_, e) in first.items())
    if end < flat.numel():
        pieces.append(jnp.zeros((flat.numel() - end,), pieces[0].dtype))
    v0 = parts[0][0]
    return T.make(jnp.concatenate(pieces), flat._buf.device, v0._dtype)


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

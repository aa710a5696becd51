"""Parameter names for state dicts (torch.distributed.checkpoint.state_dict's and FSDP's
``optim_state_dict``): the clean names of a plain module, DDP, a compiled module, FSDP1 (a flat
parameter stands for several original parameters) or FSDP2, and the optimizer state keyed by them."""

from __future__ import annotations

from typing import Any, Iterable

import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from ..._core import tensor as T
from ..._core.tensor import Tensor
from ...nn.modules._module import Module
from ..device_mesh import DeviceMesh
from ._api import StateDictType
from ._fsdp1 import FullyShardedDataParallel, _Entry, _export

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


def _array(v: Any) -> Any:
    return v.detach()._data() if isinstance(v, Tensor) else jnp.asarray(v)


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


# FSDP1's optimizer-state methods, attached here: they are written over this module's name-keyed state.
def optim_state_dict(model: Module, optim: Any, optim_state_dict: Any = None, group: Any = None) -> dict:
    """The optimizer's state keyed by parameter names, full or sharded per ``state_dict_type``."""
    if optim_state_dict is not None:
        raise NotImplementedError("torchlike's FSDP.optim_state_dict: pass the optimizer, not its state dict")
    sharded = FullyShardedDataParallel.get_state_dict_type(model).state_dict_type == StateDictType.SHARDED_STATE_DICT
    return _optim_state_dict(model, [optim], full=not sharded, cpu_offload=False)


def optim_state_dict_to_load(model: Module, optim: Any, optim_state_dict: dict, is_named_optimizer: bool = False,
                             load_directly: bool = False, group: Any = None) -> dict:  # fmt: skip
    """The optimizer's ``load_state_dict`` argument for a state dict from ``optim_state_dict``."""
    out = _to_optimizer_layout(model, optim, optim_state_dict)
    if load_directly:
        optim.load_state_dict(out)
    return out


FullyShardedDataParallel.optim_state_dict = staticmethod(optim_state_dict)
FullyShardedDataParallel.optim_state_dict_to_load = staticmethod(optim_state_dict_to_load)

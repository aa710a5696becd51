"""torch.distributed.fsdp.FullyShardedDataParallel (FSDP1) on ``jax.sharding``.

One process drives a 1-d mesh of its devices (``device_mesh=``, or every local device of the
module's type). Each FSDP instance owns the parameters of its subtree that no nested instance
owns. With torch's default ``use_orig_params=False`` they are flattened, as in torch, into one
1-d ``_flat_param`` (padded to a multiple of the mesh size) laid out ``NamedSharding(mesh,
P(axis))``: each device holds one contiguous slice. The original attributes become plain tensors,
views of the flat parameter rebuilt at every forward, so autograd accumulates the gradient into
``_flat_param.grad`` and an optimizer built on ``model.parameters()`` keeps sharded state. XLA's
sharding propagation inserts the all-gathers (reading a slice of the flat parameter) and the
reduce-scatters (its gradient). With ``use_orig_params=True`` the original parameters stay,
each split along dim 0 (replicated where dim 0 does not divide by the mesh size).

``FULL_SHARD`` and ``SHARD_GRAD_OP`` give the same layout (XLA decides when gathered parameters
are freed); ``NO_SHARD`` replicates. The root instance splits its tensor arguments along dim 0
over the mesh, so results equal the unsharded module on the same global batch. A mesh of one
device switches to ``NO_SHARD`` with torch's warning (torch does so for a world of one rank).
"""

from __future__ import annotations

import contextlib
import warnings
from collections import OrderedDict
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..._core import device as _device
from ..._core import tensor as T
from ..._core.tensor import Tensor
from ..._ops import registry
from ...autograd import grad_mode
from ...nn.modules._module import Module, _IncompatibleKeys
from ...nn.parameter import Parameter
from .. import _process_group as pg
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor._dtensor import Replicate, Shard, _make
from ._api import (
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)  # fmt: skip
from ._fully_shard import _split

__all__ = ["FullyShardedDataParallel"]

_FLAT = "_flat_param"
_active = [0]  # FSDP forwards running (the outermost one is the root: it splits the batch)


class _Entry:
    """One original parameter inside a flat parameter: ``flat[offset:offset+numel].view(shape)``."""

    __slots__ = ("module", "attr", "offset", "numel", "shape")

    def __init__(self, module: Module, attr: str, offset: int, numel: int, shape: tuple) -> None:
        self.module, self.attr, self.offset, self.numel, self.shape = module, attr, offset, numel, shape


def _local_mesh(device_type: str) -> DeviceMesh:
    n = len(jax.local_devices(backend="cpu" if device_type == "cpu" else "gpu"))
    if jax.process_count() > 1:
        raise NotImplementedError(
            "torchlike's FSDP: meshes across processes (one rank per process) are not supported yet; run one "
            "process that drives every device"
        )
    return init_device_mesh(device_type, (n,))


def _resolve_mesh(device_mesh: DeviceMesh | None, process_group: Any, device_type: str) -> DeviceMesh:
    if process_group is not None and not isinstance(process_group, pg.ProcessGroup):
        raise NotImplementedError("torchlike's FSDP: process_group must be a ProcessGroup (no hybrid tuples)")
    if process_group is not None and process_group.size() > 1:
        raise NotImplementedError("torchlike's FSDP: process groups of several processes are not supported yet")
    mesh = device_mesh if device_mesh is not None else _local_mesh(device_type)
    if mesh.ndim != 1:
        raise NotImplementedError("torchlike's FSDP: only 1-d device meshes are supported (no HYBRID_SHARD)")
    return mesh


def _cast_floating(x: Any, dtype: Any) -> Any:
    if isinstance(x, Tensor):
        return x.to(dtype) if x.is_floating_point() and x.dtype != dtype else x
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_cast_floating(v, dtype) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_cast_floating(v, dtype) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _cast_floating(v, dtype)) for k, v in x.items())
    return x


def _recursive_wrap(module: Module, policy: Callable, wrap: Callable, ignored: set, ignored_params: set,
                    only_wrap_children: bool = False) -> tuple[Module, int]:  # fmt: skip
    """torch's ``_recursive_wrap``: children first, then the module when the policy says so."""
    numel = sum(p.numel() for p in module.parameters() if id(p) not in ignored_params)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        if child in ignored:
            continue
        new, n = _recursive_wrap(child, policy, wrap, ignored, ignored_params)
        setattr(module, name, new)
        wrapped += n
    remainder = numel - wrapped
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=remainder):
        return wrap(module), numel
    return module, wrapped


class FullyShardedDataParallel(Module):
    """torch.distributed.fsdp.FullyShardedDataParallel over a 1-d mesh of this process's devices
    (see the module doc)."""

    def __init__(
        self,
        module: Module,
        process_group: Any = None,
        sharding_strategy: ShardingStrategy | None = None,
        cpu_offload: CPUOffload | None = None,
        auto_wrap_policy: Callable | None = None,
        backward_prefetch: Any = None,
        mixed_precision: MixedPrecision | None = None,
        ignored_modules: Any = None,
        param_init_fn: Callable | None = None,
        device_id: Any = None,
        sync_module_states: bool = False,
        forward_prefetch: bool = False,
        limit_all_gathers: bool = True,
        use_orig_params: bool = False,
        ignored_states: Any = None,
        device_mesh: DeviceMesh | None = None,
    ) -> None:
        super().__init__()
        if isinstance(module, FullyShardedDataParallel):
            raise AssertionError(f"Child module {module} is already wrapped by {type(self)}")
        if cpu_offload is not None and cpu_offload.offload_params:
            raise NotImplementedError("torchlike's FSDP: CPUOffload(offload_params=True) is not supported")
        if param_init_fn is not None:
            raise NotImplementedError("torchlike's FSDP: param_init_fn (meta-device initialization) is not supported")
        if ignored_modules is not None and ignored_states is not None:
            raise ValueError(
                "Cannot pass both ignored_modules and ignored_states at the same time. Please just pass "
                "ignored_states."
            )
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotImplementedError(f"torchlike's FSDP: {strategy} (2-d meshes) is not supported")
        if device_id is not None:
            dev = _device.device(device_id if not isinstance(device_id, int) else f"cuda:{device_id}")
            module.to(dev)
        params = list(module.parameters())
        device_type = params[0].device.type if params else "cpu"
        mesh = _resolve_mesh(device_mesh, process_group, device_type)
        if mesh.size() == 1 and strategy != ShardingStrategy.NO_SHARD:
            warnings.warn(
                f"FSDP is switching to use `NO_SHARD` instead of {strategy} since the world size is 1.",
                stacklevel=2,
            )
            strategy = ShardingStrategy.NO_SHARD
        ignored_mods: set = set()
        ignored_params: set = set()
        for x in ignored_modules or ignored_states or ():
            if isinstance(x, Module):
                ignored_mods.update(x.modules())
                ignored_params.update(id(p) for p in x.parameters())
            else:
                ignored_params.add(id(x))
        if auto_wrap_policy is not None:
            kwargs = dict(process_group=process_group, sharding_strategy=sharding_strategy, cpu_offload=cpu_offload,
                          backward_prefetch=backward_prefetch, mixed_precision=mixed_precision,
                          ignored_states=ignored_states or ignored_modules, device_id=None,
                          sync_module_states=sync_module_states, forward_prefetch=forward_prefetch,
                          limit_all_gathers=limit_all_gathers, use_orig_params=use_orig_params,
                          device_mesh=device_mesh)  # fmt: skip
            _recursive_wrap(module, auto_wrap_policy, lambda m: FullyShardedDataParallel(m, **kwargs),
                            ignored_mods, ignored_params, only_wrap_children=True)  # fmt: skip
        self._fsdp_wrapped_module = module
        self.sharding_strategy = strategy
        self.mixed_precision = mixed_precision
        self.cpu_offload = cpu_offload or CPUOffload()
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self._use_orig_params = use_orig_params
        self._device_mesh = mesh
        self._is_root: bool | None = None
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config: StateDictConfig = FullStateDictConfig()
        self._optim_state_dict_config: OptimStateDictConfig = FullOptimStateDictConfig()
        self._entries: list[_Entry] = []
        self._order: dict[int, list[str]] = {}  # original parameter names of each owned module, in order
        self._orig_buffer_dtypes: dict = {}
        self._shard(module, ignored_mods, ignored_params)

    # --- layout -----------------------------------------------------------------------------------

    @property
    def module(self) -> Module:
        return self._fsdp_wrapped_module

    def _axis(self) -> tuple[Any, str, int]:
        jmesh = self._device_mesh.jax_mesh
        return jmesh, jmesh.axis_names[0], self._device_mesh.size()

    def _sharded(self) -> bool:
        return self.sharding_strategy != ShardingStrategy.NO_SHARD

    def _owned_modules(self, module: Module, ignored: set) -> Iterator[Module]:
        """The modules of ``module``'s subtree whose parameters this instance owns (not nested FSDPs')."""
        seen: set = set()
        stack = [module]
        while stack:
            m = stack.pop(0)
            if id(m) in seen or m in ignored:
                continue
            seen.add(id(m))
            yield m
            stack.extend(c for c in m.children() if not isinstance(c, FullyShardedDataParallel))

    def _shard(self, module: Module, ignored: set, ignored_params: set) -> None:
        jmesh, axis, n = self._axis()
        owned = list(self._owned_modules(module, ignored))
        for m in owned:
            self._order[id(m)] = [k for k, v in m._parameters.items() if v is not None]
        if self._use_orig_params:
            for m in owned:
                for p in m._parameters.values():
                    if p is None or id(p) in ignored_params:
                        continue
                    split = self._sharded() and p.dim() > 0 and p.shape[0] % n == 0
                    p._assign(jax.device_put(p._data(), NamedSharding(jmesh, P(axis) if split else P())))
            self._place_buffers(owned)
            return
        first: dict[int, _Entry] = {}
        flat_params: list[Parameter] = []
        offset = 0
        for m in owned:
            for name, p in list(m._parameters.items()):
                if p is None or id(p) in ignored_params:
                    continue
                if id(p) in first:  # a tied parameter: the same slice under a second name
                    e = first[id(p)]
                    self._entries.append(_Entry(m, name, e.offset, e.numel, e.shape))
                    continue
                e = first[id(p)] = _Entry(m, name, offset, p.numel(), tuple(p.shape))
                self._entries.append(e)
                flat_params.append(p)
                offset += p.numel()
        if not flat_params:
            self._place_buffers(owned)
            return
        dtypes = {p.dtype for p in flat_params}
        if len(dtypes) != 1:
            raise ValueError(f"Must flatten tensors with uniform dtype but got {sorted(map(str, dtypes))}")
        rgs = {p.requires_grad for p in flat_params}
        if len(rgs) != 1:
            raise ValueError(
                "Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`; use "
                "use_orig_params=True for frozen and trainable parameters in one FSDP instance"
            )
        pad = (-offset) % n if self._sharded() else 0
        arrays = [p._data().reshape(-1) for p in flat_params]
        if pad:
            arrays.append(jnp.zeros((pad,), arrays[0].dtype))
        spec = P(axis) if self._sharded() else P()
        arr = jax.device_put(jnp.concatenate(arrays), NamedSharding(jmesh, spec))
        # the flat parameter reports the mesh's first device (torch's compute device), where its shards live
        home = _device.from_jax(jmesh.devices.flat[0])
        flat = Parameter(T.make(arr, home, flat_params[0]._dtype), requires_grad=rgs.pop())
        for e in self._entries:
            if e.attr in e.module._parameters:
                del e.module._parameters[e.attr]
        module.register_parameter(_FLAT, flat)
        self._place_buffers(owned)
        with grad_mode.no_grad():
            self._use_views()

    def _place_buffers(self, owned: list[Module]) -> None:
        jmesh = self._axis()[0]
        for m in owned:
            for b in m._buffers.values():
                if b is not None:
                    b._assign(jax.device_put(b._data(), NamedSharding(jmesh, P())))

    def _flat_param(self) -> Parameter | None:
        return self._fsdp_wrapped_module._parameters.get(_FLAT)

    def _use_views(self) -> None:
        """Point every flattened attribute at its piece of the flat parameter (in ``param_dtype``):
        one kernel splits the flat parameter (and constrains its gradient to the same split, so XLA
        reduce-scatters it)."""
        flat = self._flat_param()
        if flat is None:
            return
        mp = self.mixed_precision
        dtype = mp.param_dtype if mp is not None and mp.param_dtype is not None else None
        first: dict[int, _Entry] = {}
        for e in self._entries:
            first.setdefault(e.offset, e)
        pieces = tuple((off, e.numel, e.shape) for off, e in sorted(first.items()))
        sharding = NamedSharding(self._axis()[0], P(self._axis()[1])) if self._sharded() else None
        kernel = _splitter(pieces, sharding, None if dtype is None else dtype.np)
        outs = registry.apply_pure("SplitWithSizesBackward0", kernel, [flat], device=flat._buf.device)
        by_offset = dict(zip(sorted(first), outs))
        for e in self._entries:
            object.__setattr__(e.module, e.attr, by_offset[e.offset])

    # --- forward ----------------------------------------------------------------------------------

    def _lazy_init_root(self) -> None:
        mp = self.mixed_precision
        if mp is None or mp.buffer_dtype is None:
            return
        for fsdp in FullyShardedDataParallel.fsdp_modules(self):
            for m in fsdp._owned_modules(fsdp._fsdp_wrapped_module, set()):
                for name, b in list(m._buffers.items()):
                    if b is not None and b.is_floating_point() and b.dtype != mp.buffer_dtype:
                        fsdp._orig_buffer_dtypes[(id(m), name)] = b.dtype
                        m._buffers[name] = b.to(mp.buffer_dtype)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        root = _active[0] == 0
        if self._is_root is None:
            self._is_root = root
            if root:
                self._lazy_init_root()
        mp = self.mixed_precision
        restore: list = []
        _active[0] += 1
        try:
            if root and self._device_mesh.size() > 1:
                jmesh, axis, n = self._axis()
                args, kwargs = _split(args, jmesh, axis, n), _split(kwargs, jmesh, axis, n)
            if mp is not None and mp.param_dtype is not None:
                if (root and mp.cast_root_forward_inputs) or mp.cast_forward_inputs:
                    args, kwargs = _cast_floating(args, mp.param_dtype), _cast_floating(kwargs, mp.param_dtype)
            if self._use_orig_params:
                restore = self._swap_orig_params()
            else:
                self._use_views()
            return self._fsdp_wrapped_module(*args, **kwargs)
        finally:
            _active[0] -= 1
            for m, name, p in restore:
                m._parameters[name] = p

    def _swap_orig_params(self) -> list:
        """For the forward: each parameter through one kernel that casts it to ``param_dtype`` and
        constrains its gradient to the parameter's own split (XLA reduce-scatters it)."""
        mp = self.mixed_precision
        dtype = mp.param_dtype.np if mp is not None and mp.param_dtype is not None else None
        slots = [(m, name, p) for m in self._owned_modules(self._fsdp_wrapped_module, set())
                 for name, p in m._parameters.items() if p is not None and p.requires_grad]  # fmt: skip
        if not slots or not grad_mode.is_grad_enabled() and dtype is None:
            return []
        shardings = tuple(p._data().sharding for _, _, p in slots)
        casts = tuple(dtype if dtype is not None and p.is_floating_point() else None for _, _, p in slots)
        outs = registry.apply_pure("ToCopyBackward0", _constrainer(shardings, casts), [[p for _, _, p in slots]],
                                   device=slots[0][2]._buf.device)  # fmt: skip
        for (m, name, _), o in zip(slots, outs):
            m._parameters[name] = o
        return slots

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_fsdp_wrapped_module":  # not set yet (during __init__, or an unpickled shell)
                raise
            return getattr(self._fsdp_wrapped_module, name)

    def __getitem__(self, key: Any) -> Any:
        return self._fsdp_wrapped_module.__getitem__(key)

    # --- torch's FSDP class API -------------------------------------------------------------------

    @staticmethod
    def fsdp_modules(module: Module, root_only: bool = False) -> list[FullyShardedDataParallel]:
        mods = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        if root_only:
            inner = {id(x) for m in mods for x in m._fsdp_wrapped_module.modules() if x is not m}
            mods = [m for m in mods if id(m) not in inner]
        return mods

    @staticmethod
    def set_state_dict_type(module: Module, state_dict_type: StateDictType,
                            state_dict_config: StateDictConfig | None = None,
                            optim_state_dict_config: OptimStateDictConfig | None = None) -> StateDictSettings:  # fmt: skip
        if state_dict_type == StateDictType.LOCAL_STATE_DICT:
            raise NotImplementedError("torchlike's FSDP: LOCAL_STATE_DICT is not supported (use SHARDED_STATE_DICT)")
        sharded = state_dict_type == StateDictType.SHARDED_STATE_DICT
        cfg = state_dict_config or (ShardedStateDictConfig() if sharded else FullStateDictConfig())
        ocfg = optim_state_dict_config or (ShardedOptimStateDictConfig() if sharded else FullOptimStateDictConfig())
        mods = FullyShardedDataParallel.fsdp_modules(module)
        if not mods:
            raise AssertionError("No FSDP modules found")
        prev = StateDictSettings(mods[0]._state_dict_type, mods[0]._state_dict_config, mods[0]._optim_state_dict_config)
        for m in mods:
            m._state_dict_type, m._state_dict_config, m._optim_state_dict_config = state_dict_type, cfg, ocfg
        return prev

    @staticmethod
    def get_state_dict_type(module: Module) -> StateDictSettings:
        mods = FullyShardedDataParallel.fsdp_modules(module)
        if not mods:
            raise AssertionError("No FSDP modules found")
        m = mods[0]
        return StateDictSettings(m._state_dict_type, m._state_dict_config, m._optim_state_dict_config)

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module: Module, state_dict_type: StateDictType,
                        state_dict_config: StateDictConfig | None = None,
                        optim_state_dict_config: OptimStateDictConfig | None = None) -> Iterator[None]:  # fmt: skip
        prev = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config,
                                                            optim_state_dict_config)  # fmt: skip
        try:
            yield
        finally:
            FullyShardedDataParallel.set_state_dict_type(module, prev.state_dict_type, prev.state_dict_config,
                                                         prev.optim_state_dict_config)  # fmt: skip

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        from ...nn.utils.clip_grad import clip_grad_norm_

        return clip_grad_norm_(self.parameters(), max_norm, norm_type)

    def summon_full_params(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "torchlike's FSDP.summon_full_params is not supported; read full values with "
            "FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT) and model.state_dict()"
        )

    # --- state dicts ------------------------------------------------------------------------------

    def _walk(self, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
        """``(fqn, owner, item)`` for every parameter and persistent buffer, with torch's clean names:
        ``item`` is an ``_Entry`` of ``owner``'s flat parameter, or ``(module, name, is_buffer)``."""
        entries = {(id(e.module), e.attr): e for e in self._entries}

        def visit(m: Module, pre: str) -> Iterator[tuple[str, Any, Any]]:
            if isinstance(m, FullyShardedDataParallel):
                yield from m._walk(pre)
                return
            names = self._order.get(id(m), [k for k, v in m._parameters.items() if v is not None])
            for name in names:
                e = entries.get((id(m), name))
                yield pre + name, self, (e if e is not None else (m, name, False))
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent_buffers_set:
                    yield pre + name, self, (m, name, True)
            for name, c in m._modules.items():
                if c is not None:
                    yield from visit(c, pre + name + ".")

        yield from visit(self._fsdp_wrapped_module, prefix)

    def _full_array(self, item: Any) -> tuple[Any, Any, Any]:
        """(global array, dtype, device) of one state-dict item, in the original dtype."""
        if isinstance(item, _Entry):
            flat = self._flat_param()
            arr = flat._data()[item.offset : item.offset + item.numel].reshape(item.shape)
            return arr, flat._dtype, flat._buf.device
        m, name, is_buffer = item
        t = m._buffers[name] if is_buffer else m._parameters[name]
        dtype = self._orig_buffer_dtypes.get((id(m), name), t._dtype) if is_buffer else t._dtype
        arr = t._data()
        return (arr.astype(dtype.np) if dtype != t._dtype else arr), dtype, t._buf.device

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        """Full (plain tensors) or sharded (``DTensor``s) per ``FSDP.state_dict_type``; torch's names."""
        if args:
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
        if destination is None:
            destination = OrderedDict()
        sharded = self._state_dict_type == StateDictType.SHARDED_STATE_DICT
        if sharded and not self._sharded():
            warnings.warn("When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned.",
                          stacklevel=2)  # fmt: skip
            sharded = False
        offload = self._state_dict_config.offload_to_cpu
        for fqn, owner, item in self._walk(prefix):
            arr, dtype, dev = owner._full_array(item)
            is_buffer = not isinstance(item, _Entry) and item[2]
            destination[fqn] = _export(arr, dtype, dev, owner._device_mesh, sharded and not is_buffer, offload)
        return destination

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Load full or sharded values (plain tensors or ``DTensor``s) under torch's names."""
        items = list(self._walk())
        names = {fqn for fqn, _, _ in items}
        missing = [fqn for fqn, _, _ in items if fqn not in state_dict]
        unexpected = [k for k in state_dict if k not in names]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if strict and missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        flats: dict[int, tuple[Any, dict]] = {}
        updates = []
        for fqn, owner, item in items:
            if fqn not in state_dict:
                continue
            value = state_dict[fqn]
            shape = item.shape if isinstance(item, _Entry) else tuple(self._target(item).shape)
            if tuple(value.shape) != tuple(shape):
                errors.append(f"size mismatch for {fqn}: copying a param with shape {tuple(value.shape)} from "
                              f"checkpoint, the shape in current model is {tuple(shape)}.")  # fmt: skip
                continue
            if isinstance(item, _Entry):
                flats.setdefault(id(owner), (owner, {}))[1][item.offset] = (item, value.detach()._data())
            else:
                updates.append((self._target(item), value.detach()._data()))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                    "\n\t".join(errors)))  # fmt: skip
        with grad_mode.no_grad():
            for t, arr in updates:
                t._assign(jax.device_put(arr.astype(t._dtype.np), t._data().sharding))
            for owner, new in flats.values():
                owner._load_flat(new)
        return _IncompatibleKeys(missing, unexpected)

    def _target(self, item: Any) -> Tensor:
        m, name, is_buffer = item
        return m._buffers[name] if is_buffer else m._parameters[name]

    def _load_flat(self, new: dict) -> None:
        flat = self._flat_param()
        old = flat._data()
        first: dict[int, _Entry] = {}
        for e in self._entries:
            first.setdefault(e.offset, e)  # a tied parameter's second name shares the slice
        pieces = [new[off][1].reshape(-1).astype(old.dtype) if off in new else old[off : off + first[off].numel]
                  for off in sorted(first)]  # fmt: skip
        end = max(off + e.numel for off, e in first.items())
        if end < old.shape[0]:
            pieces.append(old[end:])
        flat._assign(jax.device_put(jnp.concatenate(pieces), old.sharding))
        self._use_views()


_splitters: dict = {}


def _splitter(pieces: tuple, sharding: Any, dtype: Any) -> Any:
    """A cached kernel: the flat array (constrained to ``sharding``, cast to ``dtype``) cut into pieces."""
    key = (pieces, sharding, dtype)
    f = _splitters.get(key)
    if f is None:

        def f(flat: Any) -> tuple:
            if sharding is not None:
                flat = jax.lax.with_sharding_constraint(flat, sharding)
            if dtype is not None:
                flat = flat.astype(dtype)
            return tuple(flat[off : off + n].reshape(shape) for off, n, shape in pieces)

        _splitters[key] = f
    return f


_constrainers: dict = {}


def _constrainer(shardings: tuple, casts: tuple) -> Any:
    """A cached kernel: each array constrained to its sharding and cast to its dtype (None: kept)."""
    key = (shardings, casts)
    f = _constrainers.get(key)
    if f is None:

        def f(arrays: list) -> tuple:
            out = []
            for a, s, c in zip(arrays, shardings, casts):
                a = jax.lax.with_sharding_constraint(a, s)
                out.append(a if c is None else a.astype(c))
            return tuple(out)

        _constrainers[key] = f
    return f


def _export(arr: Any, dtype: Any, device: Any, mesh: DeviceMesh | None, sharded: bool, offload: bool) -> Tensor:
    """A state-dict value: a ``DTensor`` on ``mesh`` split along dim 0 (replicated where it does not
    divide), or a plain tensor on one device (the CPU when ``offload``)."""
    if sharded and mesh is not None:
        split = arr.ndim > 0 and arr.shape[0] % mesh.size() == 0
        return _make(arr, device, dtype, mesh, (Shard(0) if split else Replicate(),))
    if offload:
        return T.make(jax.device_put(arr, jax.local_devices(backend="cpu")[0]), _device.device("cpu"), dtype)
    first = min(arr.sharding.device_set, key=lambda d: d.id)
    return T.make(jax.device_put(arr, first), device, dtype)

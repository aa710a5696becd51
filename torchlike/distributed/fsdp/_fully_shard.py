"""torch.distributed.fsdp's FSDP2 ``fully_shard`` on ``jax.sharding`` (a first version).

``fully_shard(module, mesh=...)`` lays every parameter of ``module`` out sharded along dim 0 over
the (1-d) mesh, ``NamedSharding(mesh, P(axis))``, and the batch (each tensor argument of the
outermost sharded module) split along dim 0 over the same axis. torchlike's ops are jitted
kernels, so XLA's sharding propagation inserts the all-gathers of parameters and the
reduce-scatters of gradients; optimizer state made from sharded parameters is sharded too.
Results equal the unsharded model on the same global batch.

The mesh is over JAX devices that this process drives (see ``device_mesh``): one process, several
devices. Meshes spanning processes (one rank per process, as torch's FSDP runs), 2-d (HSDP)
meshes, ``shard_placement_fn``, ``mp_policy`` and ``offload_policy`` raise ``NotImplementedError``.
A parameter whose dim 0 does not divide by the mesh size is replicated (torch pads it instead), so
it saves no memory. ``reshard_after_forward`` is accepted: XLA decides when gathered parameters
are freed.
"""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ...nn.modules._module import Module
from ...nn.parallel._data_parallel import _place
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor._dtensor import DTensor, Replicate, Shard, _make

__all__ = ["FSDPModule", "fully_shard"]


class FSDPModule:
    """What ``fully_shard`` mixes into a module's class (``isinstance(m, FSDPModule)``), as in torch."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # torch: FSDP<Module> classes are made by fully_shard; building one directly builds the module
        orig = cls.__mro__[2]
        self = orig.__new__(orig)
        self.__init__(*args, **kwargs)
        return self


_depth = [0]  # how many fully_shard-ed modules' forwards are running (the outermost splits the batch)


def _split(x: Any, mesh: Any, axis: str, n: int, device: Any = None) -> Any:
    """``x``'s tensors split along dim 0 over ``mesh`` (replicated where dim 0 does not divide).

    torch: FSDP's root moves its inputs to the compute device, so a host batch comes out on the
    mesh's first device (``cuda:0``), where the parameters report they are; keeping the input's own
    label (``cpu``) made the first op raise torch's two-devices error on 2 GPUs.
    """
    from ..._core import device as _device
    from ..._core.tensor import Tensor

    if device is None:
        device = _device.from_jax(mesh.devices.flat[0])
    if isinstance(x, Tensor):
        if x.dim() == 0 or x.shape[0] % n:
            return _place(x, NamedSharding(mesh, P()), device)
        return _place(x, NamedSharding(mesh, P(axis, *[None] * (x.dim() - 1))), device)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_split(v, mesh, axis, n, device) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_split(v, mesh, axis, n, device) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _split(v, mesh, axis, n, device)) for k, v in x.items())
    return x


def fully_shard(module: Any, *, mesh: DeviceMesh | None = None, reshard_after_forward: Any = None,
                shard_placement_fn: Any = None, mp_policy: Any = None, offload_policy: Any = None,
                ignored_params: set | None = None) -> Any:  # fmt: skip
    """torch.distributed.fsdp.fully_shard over a 1-d mesh of this process's devices (see module doc)."""
    if isinstance(module, (list, tuple)):
        return [fully_shard(m, mesh=mesh, reshard_after_forward=reshard_after_forward,
                            shard_placement_fn=shard_placement_fn, mp_policy=mp_policy,
                            offload_policy=offload_policy, ignored_params=ignored_params) for m in module]  # fmt: skip
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard does not support containers that do not implement forward: {module}")
    for name, value in (("shard_placement_fn", shard_placement_fn), ("mp_policy", mp_policy),
                        ("offload_policy", offload_policy)):  # fmt: skip
        if value is not None:
            raise NotImplementedError(f"torchlike's fully_shard: {name} is not supported yet")
    if mesh is None:
        params = list(module.parameters())
        device_type = params[0].device.type if params else "cpu"
        mesh = init_device_mesh(device_type, (len(jax.devices("cpu" if device_type == "cpu" else "gpu")),))
    if mesh.ndim != 1:
        raise NotImplementedError("torchlike's fully_shard: only 1-d meshes (no HSDP) are supported yet")
    jmesh = mesh.jax_mesh
    if {d.process_index for d in jmesh.devices.reshape(-1)} != {jax.process_index()}:
        raise NotImplementedError(
            "torchlike's fully_shard: the mesh must hold only this process's devices (one process driving "
            "several devices); meshes across processes are not supported yet"
        )
    axis, n = jmesh.axis_names[0], mesh.size()
    ignored = {id(p) for p in (ignored_params or ())}
    placed: dict[int, Any] = {}
    for p in module.parameters():
        if id(p) in ignored:
            continue
        arr = p._data()
        if len(getattr(arr, "sharding", None).device_set) > 1 and arr.sharding.mesh == jmesh:
            continue  # sharded by an inner fully_shard already
        spec = P(axis) if p.dim() > 0 and p.shape[0] % n == 0 else P()
        placed[id(p)] = NamedSharding(jmesh, spec)
        p._assign(jax.device_put(arr, placed[id(p)]))

    def to_dtensors(m: Any, sd: Any, prefix: str, _meta: Any) -> None:
        # torch: an FSDP2 module's state dict holds its parameters as DTensors
        for name, p in m.named_parameters(prefix=prefix[:-1]):
            v = sd.get(name)
            if id(p) in placed and v is not None and not isinstance(v, DTensor):
                spec = placed[id(p)].spec
                sd[name] = _make(v._data(), v._buf.device, v._dtype, mesh, (Shard(0) if spec else Replicate(),))

    def replace(m: Any, _incompatible: Any) -> None:
        for p in m.parameters():  # loading copies values in; the layout stays sharded
            s = placed.get(id(p))
            if s is not None and p._data().sharding != s:
                p._assign(jax.device_put(p._data(), s))

    module._register_state_dict_hook(to_dtensors)
    module.register_load_state_dict_post_hook(replace)
    for b in module.buffers():
        b._assign(jax.device_put(b._data(), NamedSharding(jmesh, P())))

    def pre(_m: Any, args: tuple, kwargs: dict) -> tuple:
        _depth[0] += 1
        if _depth[0] > 1:
            return args, kwargs
        return _split(args, jmesh, axis, n), _split(kwargs, jmesh, axis, n)

    def post(_m: Any, _args: Any, _out: Any) -> None:
        _depth[0] -= 1

    module.register_forward_pre_hook(pre, with_kwargs=True)
    module.register_forward_hook(post, always_call=True)
    cls = type(module)
    if not isinstance(module, FSDPModule):
        module.__class__ = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return module

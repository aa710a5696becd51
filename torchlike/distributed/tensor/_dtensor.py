"""torch.distributed.tensor's ``DTensor`` for one process driving a mesh of devices.

A torchlike tensor's JAX array may already be laid out over several devices (``NamedSharding``);
in one process that array IS the global tensor. A ``DTensor`` is such a tensor that also names
its ``device_mesh`` and ``placements`` (``Shard(d)`` = dim ``d`` split over the mesh axis,
``Replicate()``), as torch's does. Ops on it return plain tensors (torch keeps DTensors; here
XLA's sharding propagation keeps the layout anyway). ``full_tensor()`` gathers it onto one device.

torch's ``to_local()`` is this rank's shard. With one process owning every shard there is no
single local shard, so it raises; meshes spanning processes are not supported (see
docs/distributed.md).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..._core import tensor as T
from ..._core.tensor import Tensor
from ..device_mesh import DeviceMesh

__all__ = ["DTensor", "Placement", "Replicate", "Shard", "distribute_tensor"]


class Placement:
    """torch.distributed.tensor.Placement: how a tensor lies along one mesh dimension."""

    def is_shard(self, dim: int | None = None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)


class Shard(Placement):
    """Dim ``dim`` of the tensor is split evenly over the mesh dimension."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    """Every device of the mesh dimension holds the whole tensor."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"


def _spec(mesh: DeviceMesh, placements: Sequence[Placement], ndim: int) -> P:
    dims: list[Any] = [None] * ndim
    for axis, pl in zip(mesh.jax_mesh.axis_names, placements):
        if isinstance(pl, Shard):
            d = pl.dim + ndim if pl.dim < 0 else pl.dim
            dims[d] = axis if dims[d] is None else (*(dims[d] if isinstance(dims[d], tuple) else (dims[d],)), axis)
        elif not isinstance(pl, Replicate):
            raise NotImplementedError(f"DTensor: placement {pl!r} is not supported (Shard and Replicate are)")
    return P(*dims)


class DTensor(Tensor):
    """torch.distributed.tensor.DTensor over a mesh of this process's devices (see the module doc)."""

    device_mesh: DeviceMesh
    placements: tuple

    def full_tensor(self) -> Tensor:
        """The whole tensor, unsharded, on the mesh's first device (a plain tensor)."""
        arr = self._data()
        first = self.device_mesh.jax_mesh.devices.reshape(-1)[0]
        return T.make(jax.device_put(arr, first), self._buf.device, self._dtype)

    def to_local(self, *, grad_placements: Any = None) -> Tensor:
        raise NotImplementedError(
            "DTensor.to_local: this process drives every device of the mesh, so there is no single local shard; "
            "use full_tensor(), or the DTensor itself (its array is the global tensor, laid out over the mesh)"
        )

    def redistribute(self, device_mesh: DeviceMesh | None = None, placements: Sequence[Placement] | None = None,
                     *, async_op: bool = False) -> DTensor:  # fmt: skip
        """The same values laid out as ``placements`` (XLA moves the data)."""
        return _make(self._data(), self._buf.device, self._dtype, device_mesh or self.device_mesh,
                     placements if placements is not None else self.placements)  # fmt: skip

    def __repr__(self) -> str:
        return (f"DTensor(local_tensor={Tensor.__repr__(self.full_tensor())}, device_mesh={self.device_mesh!r}, "
                f"placements={self.placements!r})")  # fmt: skip

    def __reduce_ex__(self, proto: int) -> Any:
        return (_rebuild, (self.full_tensor(), self.device_mesh, self.placements))


def _make(arr: Any, device: Any, dtype: Any, mesh: DeviceMesh, placements: Sequence[Placement]) -> DTensor:
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")  # fmt: skip
    spec = _spec(mesh, placements, arr.ndim)
    for d, axes in enumerate(spec):
        if axes is not None:
            names = axes if isinstance(axes, tuple) else (axes,)
            n = 1
            for a in names:
                n *= mesh.jax_mesh.shape[a]
            if arr.shape[d] % n:
                raise NotImplementedError(
                    f"DTensor: dim {d} of size {arr.shape[d]} does not split evenly over {n} devices (torch pads "
                    "uneven shards; torchlike's layouts are even)"
                )
    t = T.make(jax.device_put(arr, NamedSharding(mesh.jax_mesh, spec)), device, dtype, cls=DTensor)
    t.device_mesh = mesh
    t.placements = placements
    return t


def _rebuild(full: Tensor, mesh: DeviceMesh, placements: tuple) -> DTensor:
    return distribute_tensor(full, mesh, placements)


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None,
                      placements: Sequence[Placement] | None = None, *, src_data_rank: int | None = 0) -> DTensor:  # fmt: skip
    """torch.distributed.tensor.distribute_tensor: ``tensor`` laid out over ``device_mesh``."""
    if device_mesh is None:
        from ..device_mesh import init_device_mesh

        device_mesh = init_device_mesh(tensor.device.type, (len(jax.local_devices(
            backend="cpu" if tensor.device.type == "cpu" else "gpu")),))  # fmt: skip
    if placements is None:
        placements = [Replicate()] * device_mesh.ndim
    t = _make(tensor.detach()._data(), tensor._buf.device, tensor._dtype, device_mesh, placements)
    if tensor.requires_grad:
        t.requires_grad_(True)
    return t

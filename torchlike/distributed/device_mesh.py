"""torch.distributed.device_mesh: a ``DeviceMesh`` is a ``jax.sharding.Mesh``.

torch lays a mesh over ranks, one device per process. JAX lays it over devices, and one process
may drive several of them (a single controller), so here the mesh's entries are JAX devices of the
mesh's type: all processes' devices under ``python -m torchlike.distributed.run`` (one per rank,
as in torch), or this process's devices when it has several (``XLA_FLAGS=
--xla_force_host_platform_device_count=N`` on the CPU). ``DeviceMesh.jax_mesh`` is the JAX mesh,
with the mesh dimension names as axis names (``dim_0``, ``dim_1``... when none are given).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh

__all__ = ["DeviceMesh", "init_device_mesh"]


def _platform(device_type: str) -> str:
    if device_type == "cpu":
        return "cpu"
    if device_type == "cuda":
        return "gpu"
    raise RuntimeError(f"torchlike supports only 'cpu' and 'cuda' device meshes, got '{device_type}'")


class DeviceMesh:
    """torch.distributed.device_mesh.DeviceMesh over JAX devices (see the module doc).

    ``mesh`` holds indices into ``jax.devices()`` of the mesh's device type, in the mesh's shape.
    """

    def __init__(self, device_type: str, mesh: Any, *, mesh_dim_names: Sequence[str] | None = None) -> None:
        ids = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if ids.ndim == 0:
            ids = ids.reshape(1)
        devices = jax.devices(_platform(device_type))
        if ids.size and (ids.min() < 0 or ids.max() >= len(devices)):
            raise RuntimeError(f"DeviceMesh: device indices {ids.tolist()} are out of range for {len(devices)} devices")
        if len(set(ids.reshape(-1).tolist())) != ids.size:
            raise RuntimeError(f"DeviceMesh: the mesh {ids.tolist()} holds a device more than once")
        names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        self.device_type = device_type
        self.mesh_dim_names = names
        self._ids = ids
        self.jax_mesh = Mesh(
            np.array([devices[i] for i in ids.reshape(-1)]).reshape(ids.shape),
            names if names is not None else tuple(f"dim_{i}" for i in range(ids.ndim)),
        )

    @classmethod
    def _from_jax(cls, jmesh: Mesh) -> DeviceMesh:
        """The DeviceMesh of a JAX mesh (its axis names as the dimension names)."""
        dev = jmesh.devices.reshape(-1)[0]
        device_type = "cpu" if dev.platform == "cpu" else "cuda"
        index = {d: i for i, d in enumerate(jax.devices(_platform(device_type)))}
        ids = np.vectorize(lambda d: index[d], otypes=[np.int64])(jmesh.devices)
        return cls(device_type, ids, mesh_dim_names=tuple(jmesh.axis_names))

    @property
    def mesh(self) -> Any:
        from ... import tensor

        return tensor(self._ids.tolist())

    @property
    def ndim(self) -> int:
        return self._ids.ndim

    @property
    def shape(self) -> tuple:
        return tuple(self._ids.shape)

    def size(self, mesh_dim: int | None = None) -> int:
        return self._ids.size if mesh_dim is None else self._ids.shape[mesh_dim]

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._ids.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *,
                     mesh_dim_names: tuple[str, ...] | None = None) -> DeviceMesh:  # fmt: skip
    """torch.distributed.device_mesh.init_device_mesh: every device of ``device_type``, in ``mesh_shape``."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(
                "Each mesh_dim_name must be unique. "
                f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}"
            )
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(
                "mesh_shape and mesh_dim_names should have same length! "
                f"Found len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}."
            )
    if device_type and not device_type.isalpha():
        raise RuntimeError(
            f"Device type with index is not supported but got {device_type}. ",
            "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'."
        )
    n = len(jax.devices(_platform(device_type)))
    if math.prod(mesh_shape) != n:
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {tuple(mesh_shape)} holds {math.prod(mesh_shape)} devices, but JAX has "
            f"{n} {device_type} devices (all processes' together)"
        )
    return DeviceMesh(device_type, np.arange(n).reshape(mesh_shape), mesh_dim_names=mesh_dim_names)

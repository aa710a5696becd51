"""torch.distributed's process groups on JAX's multi-process runtime.

One torch rank is one JAX process (``jax.process_index() == rank``). A group is a list of
global ranks plus, per device platform, a ``jax.sharding.Mesh`` with one device of each member
process along the axis ``"p"``; collectives are ``shard_map`` programs over that mesh (see
``_collectives``). JAX's runtime must start before JAX sees its devices, which ``import
torchlike`` does, so processes started by ``python -m torchlike.distributed.run`` are connected
before the user's script runs and ``init_process_group`` only checks and records; a one-process
world needs no runtime at all.
"""

from __future__ import annotations

import datetime
import enum
import os
import warnings
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "destroy_process_group", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "new_group",
]  # fmt: skip


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class ReduceOp:
    """torch.distributed.ReduceOp: ``ReduceOp.SUM`` and friends are ``RedOpType`` members."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Backend(str):
    """torch.distributed.Backend: a lower-cased backend name. JAX picks the transport itself
    (NCCL between GPUs, gloo between CPUs), so the name is recorded, not acted on."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return str.__new__(cls, name.lower())


_DEFAULT_BACKEND = "cpu:gloo,cuda:nccl"


class ProcessGroup:
    """A set of global ranks that run collectives together."""

    def __init__(self, ranks: list[int], rank: int, backend: str, name: str) -> None:
        self._ranks = list(ranks)
        self._rank = rank
        self._backend = backend
        self.group_name = name
        self._meshes: dict[str, Mesh] = {}

    def rank(self) -> int:
        return self._ranks.index(self._rank)

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._backend

    def mesh(self, platform: str) -> Mesh:
        """One device of ``platform`` per member process, in group-rank order."""
        mesh = self._meshes.get(platform)
        if mesh is None:
            first = _first_device_per_process(platform)
            mesh = self._meshes[platform] = Mesh(np.array([first[r] for r in self._ranks]), ("p",))
        return mesh

    def __repr__(self) -> str:
        return f"<torchlike.distributed.ProcessGroup ranks={self._ranks}>"


def _first_device_per_process(platform: str) -> dict[int, Any]:
    first: dict[int, Any] = {}
    for d in sorted(jax.devices(platform), key=lambda d: d.id):
        first.setdefault(d.process_index, d)
    return first


class GroupMember:
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD: ProcessGroup | None = None


_ERR_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def is_mpi_available() -> bool:
    return False


def is_initialized() -> bool:
    return GroupMember.WORLD is not None


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _rendezvous_error(msg: str) -> ValueError:
    return ValueError("Error initializing torch.distributed using " + msg)


def _env(var: str) -> str:
    val = os.environ.get(var)
    if not val:
        raise _rendezvous_error(f"env:// rendezvous: environment variable {var} expected, but not set")
    return val


def _jax_distributed_initialized() -> bool:
    fn = getattr(jax.distributed, "is_initialized", None)
    if fn is not None:
        return bool(fn())
    from jax._src import distributed as _d  # JAX without the public query

    return _d.global_state.client is not None


def _rendezvous(init_method: str | None, world_size: int, rank: int) -> tuple[int, int, str | None]:
    """(rank, world_size, coordinator address) from torch's init_method conventions."""
    url = init_method or "env://"
    if url.startswith("env://"):
        if rank == -1:
            rank = int(_env("RANK"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE"))
        if world_size == 1:
            return rank, world_size, None
        return rank, world_size, f"{_env('MASTER_ADDR')}:{int(_env('MASTER_PORT'))}"
    if url.startswith("tcp://"):
        hostport = url[len("tcp://") :].split("?")[0].rstrip("/")
        if ":" not in hostport:
            raise _rendezvous_error("tcp:// rendezvous: port number missing")
        if rank == -1:
            raise _rendezvous_error("tcp:// rendezvous: rank parameter missing")
        if world_size == -1:
            raise _rendezvous_error("tcp:// rendezvous: world size parameter missing")
        return rank, world_size, hostport
    raise NotImplementedError(
        f"torchlike.distributed: init_method={init_method!r} is not supported; JAX's coordination service "
        "rendezvous through an address, so use 'env://' (torchrun's variables) or 'tcp://host:port'"
    )


def _start_jax(coordinator: str, world_size: int, rank: int, timeout: datetime.timedelta | None) -> None:
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    kwargs = {} if timeout is None else {"initialization_timeout": int(timeout.total_seconds())}
    try:
        jax.distributed.initialize(coordinator, world_size, rank, local_device_ids=[local_rank], **kwargs)
    except RuntimeError as e:
        if "before" not in str(e):
            raise
        raise RuntimeError(
            "torchlike.distributed: JAX's multi-process runtime has to start before JAX opens its devices, "
            "and `import torchlike` opens them. Start the processes with `python -m torchlike.distributed.run "
            "--nproc-per-node N script.py` (torchrun's interface), which connects them first."
        ) from e


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """torch.distributed.init_process_group over ``jax.distributed`` (one JAX process per rank)."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError(
            "torchlike.distributed: store= is not supported; JAX's coordination service replaces torch's Store"
        )
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be a string, got {type(backend).__name__}")
    rank, world_size, coordinator = _rendezvous(init_method, world_size, rank)
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]")
    if _jax_distributed_initialized():
        if jax.process_count() != world_size or jax.process_index() != rank:
            raise RuntimeError(
                f"torchlike.distributed: JAX runs process {jax.process_index()} of {jax.process_count()}, but "
                f"init_process_group asked for rank {rank} of {world_size}"
            )
    elif world_size > 1:
        _start_jax(coordinator, world_size, rank, timeout)
    name = Backend(backend) if backend is not None else _DEFAULT_BACKEND
    world = ProcessGroup(list(range(world_size)), rank, name, group_name or "0")
    _set_world(world)


_groups: list[ProcessGroup] = []


def _set_world(pg: ProcessGroup | None) -> None:
    GroupMember.WORLD = group.WORLD = pg
    _groups.clear()


def _world() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(_ERR_NOT_INIT)
    return GroupMember.WORLD


def resolve(group: Any) -> ProcessGroup | None:
    """The group a collective runs on; None when this rank is not a member (torch warns and skips)."""
    world = _world()
    if group is None:
        return world
    if group == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def warn_not_in_group(op_name: str) -> None:
    rank = -1 if GroupMember.WORLD is None else GroupMember.WORLD._rank
    warnings.warn(
        f"Running {op_name} on global rank {rank} which does not belong to the given group.", stacklevel=3
    )


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Forget the group (all groups for None). JAX's runtime stays up: it cannot restart in a process."""
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is GroupMember.WORLD:
        _set_world(None)
    elif group in _groups:
        _groups.remove(group)


def get_rank(group: ProcessGroup | None = None) -> int:
    world = _world()
    if group is None or group is world:
        return world._rank
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return group.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    world = _world()
    if group is None:
        return world.size()
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return group.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    g = _world() if group is None else group
    if g == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(g._backend)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    return list((group or _world())._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    if group is GroupMember.WORLD:
        return group_rank
    if not 0 <= group_rank < group.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return group._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    if group is GroupMember.WORLD:
        return global_rank
    if global_rank not in group._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return group._ranks.index(global_rank)


def new_group(
    ranks: list[int] | None = None,
    timeout: datetime.timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
    sort_ranks: bool = True,
) -> Any:
    """A subgroup: collectives over a mesh of the member processes only. As in torch, every rank
    calls it; non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    if ranks is None or len(ranks) == 0:
        ranks = list(range(world.size()))
    ranks = sorted(ranks) if sort_ranks else list(ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks must be unique, got {ranks}")
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(
                f"The new group's rank should be within the world_size set by init_process_group, got {r}"
            )
    name = str(len(_groups) + 1)
    if world._rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(ranks, world._rank, Backend(backend) if backend else world._backend, name)
    _groups.append(g)
    return g

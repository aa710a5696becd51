"""torch.distributed's collectives as ``shard_map`` programs over a group's process mesh.

Each process's tensor becomes its block of one global array (``make_array_from_single_device_arrays``
along the mesh axis ``"p"``); a cached jitted ``shard_map`` runs the JAX collective (``psum``,
``all_gather``, ``psum_scatter``, ``all_to_all``, ``ppermute``) and the process reads its own
block of the result back into the tensor through ``Tensor._assign``. JAX lowers these to NCCL
between GPUs and gloo between CPUs. Every member process must make the same calls in the same
order, as in torch.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .._core.tensor import Tensor
from . import _process_group as pg
from ._process_group import ProcessGroup, RedOpType

__all__ = [
    "Work", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all_single",
    "barrier", "broadcast", "broadcast_object_list", "gather", "gather_object", "irecv", "isend", "recv",
    "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
    "monitored_barrier", "all_reduce_arrays", "broadcast_arrays",
]  # fmt: skip

_AXIS = "p"


class Work:
    """What ``async_op=True`` returns. JAX dispatches asynchronously anyway; ``wait`` blocks on the results."""

    def __init__(self, arrays: Sequence[Any] = ()) -> None:
        self._arrays = list(arrays)

    def wait(self, timeout: Any = None) -> bool:
        jax.block_until_ready(self._arrays)
        return True

    def is_completed(self) -> bool:
        return all(a.is_ready() for a in self._arrays)

    def is_success(self) -> bool:
        return True

    def exception(self) -> None:
        return None

    def result(self) -> list:
        return []


def _done(arrays: Sequence[Any], async_op: bool) -> Work | None:
    return Work(arrays) if async_op else None


# --- global arrays ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _my_device(mesh: Mesh) -> Any:
    me = jax.process_index()
    return next(d for d in mesh.devices.flat if d.process_index == me)


def _platform(arr: Any) -> str:
    return next(iter(arr.devices())).platform


def _block(shape: tuple) -> tuple:
    return shape if shape else (1,)


def _to_global(arr: Any, mesh: Mesh) -> Any:
    """The global array whose block on this process is ``arr`` (0-dim arrays get a length-1 block)."""
    dev = _my_device(mesh)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.devices() != {dev}:
        arr = jax.device_put(arr, dev)
    shape = (mesh.size * arr.shape[0],) + arr.shape[1:]
    return jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, P(_AXIS)), [arr])


def _local(out: Any, shape: tuple, like: Any) -> Any:
    """This process's block of a program output, shaped ``shape`` and on ``like``'s device."""
    arr = out.addressable_data(0)
    if arr.shape != shape:
        arr = arr.reshape(shape)
    devs = like.devices()
    if arr.devices() != devs:
        arr = jax.device_put(arr, next(iter(devs)))
    return arr


def _program(body: Any, mesh: Mesh, n_in: int, out_specs: Any) -> Any:
    fn = jax.shard_map(body, mesh=mesh, in_specs=(P(_AXIS),) * n_in, out_specs=out_specs, check_vma=False)
    return jax.jit(fn)


# --- reductions -------------------------------------------------------------------------------


def _check_op(op: Any, dtype: Any) -> RedOpType:
    try:
        op = RedOpType(op)
    except (ValueError, TypeError):
        raise ValueError(f"Invalid reduce op {op!r}") from None
    if op is RedOpType.PREMUL_SUM:
        raise NotImplementedError("torchlike.distributed: ReduceOp.PREMUL_SUM is not supported")
    kind = np.dtype(dtype).kind
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op in (RedOpType.MIN, RedOpType.MAX) and kind == "c":
        raise RuntimeError(f"all_reduce does not support {op.name} on complex tensors")
    return op


def _reduce(x: Any, op: RedOpType, n: int) -> Any:
    """Reduce the per-process blocks ``x`` across the mesh axis (inside shard_map)."""
    if x.dtype == jnp.bool_:
        count = lax.psum(x.astype(jnp.int32), _AXIS)
        if op in (RedOpType.SUM, RedOpType.MAX, RedOpType.BOR, RedOpType.AVG):
            return count > 0
        if op is RedOpType.BXOR:
            return count % 2 == 1
        return count == n
    if op is RedOpType.SUM:
        return lax.psum(x, _AXIS)
    if op is RedOpType.AVG:
        s = lax.psum(x, _AXIS)
        return s // n if jnp.issubdtype(x.dtype, jnp.integer) else s / n
    if op is RedOpType.MAX:
        return lax.pmax(x, _AXIS)
    if op is RedOpType.MIN:
        return lax.pmin(x, _AXIS)
    every = lax.all_gather(x, _AXIS)
    if op is RedOpType.PRODUCT:
        return jnp.prod(every, axis=0, dtype=x.dtype)
    fn = {RedOpType.BAND: jnp.bitwise_and, RedOpType.BOR: jnp.bitwise_or, RedOpType.BXOR: jnp.bitwise_xor}[op]
    return fn.reduce(every, axis=0)


@functools.lru_cache(maxsize=None)
def _all_reduce_prog(mesh: Mesh, op: RedOpType, shapes: tuple) -> Any:
    n = mesh.size

    def body(*xs: Any) -> tuple:
        return tuple(_reduce(x.reshape(s), op, n).reshape(_block(s)) for x, s in zip(xs, shapes))

    return _program(body, mesh, len(shapes), (P(),) * len(shapes))


@functools.lru_cache(maxsize=None)
def _broadcast_prog(mesh: Mesh, src: int, shapes: tuple) -> Any:
    def one(x: Any) -> Any:
        if x.dtype == jnp.bool_:
            return one(x.astype(jnp.int8)).astype(jnp.bool_)
        return lax.psum(jnp.where(lax.axis_index(_AXIS) == src, x, jnp.zeros_like(x)), _AXIS)

    def body(*xs: Any) -> tuple:
        return tuple(one(x) for x in xs)

    return _program(body, mesh, len(shapes), (P(),) * len(shapes))


@functools.lru_cache(maxsize=None)
def _packer(n: int) -> Any:
    return jax.jit(lambda *xs: jnp.concatenate([x.reshape(-1) for x in xs]))


@functools.lru_cache(maxsize=None)
def _unpacker(shapes: tuple) -> Any:
    offsets = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    return jax.jit(
        lambda flat: tuple(flat[offsets[i] : offsets[i + 1]].reshape(s) for i, s in enumerate(shapes))
    )


def _run_packed(arrays: Sequence[Any], group: ProcessGroup, make_prog: Any) -> list:
    """Run a collective over many arrays as ONE program on one flat buffer per dtype (torch's
    buckets): packing and unpacking are local jitted copies, so the collective and the global-array
    bookkeeping happen once per dtype, not once per array."""
    mesh = group.mesh(_platform(arrays[0]))
    if len(arrays) == 1:
        (arr,) = arrays
        (out,) = make_prog(mesh, (_block(arr.shape),))(_to_global(arr, mesh))
        return [_local(out, arr.shape, arr)]
    groups: dict = {}
    for i, a in enumerate(arrays):
        groups.setdefault(a.dtype, []).append(i)
    flats = [_packer(len(idx))(*[arrays[i] for i in idx]) for idx in groups.values()]
    outs = make_prog(mesh, tuple(f.shape for f in flats))(*[_to_global(f, mesh) for f in flats])
    result: list = [None] * len(arrays)
    for idx, out, flat in zip(groups.values(), outs, flats):
        parts = _unpacker(tuple(arrays[i].shape for i in idx))(_local(out, flat.shape, flat))
        for i, part in zip(idx, parts):
            result[i] = part
    return result


def all_reduce_arrays(arrays: Sequence[Any], op: Any, group: ProcessGroup) -> list:
    """Reduce local arrays across ``group``: one program, one collective per dtype; returns this
    process's results."""
    if not arrays:
        return []
    op = RedOpType(op)
    return _run_packed(arrays, group, lambda mesh, shapes: _all_reduce_prog(mesh, op, shapes))


class _PendingAllReduce:
    """A lazy-graph node that averages arrays across ``group`` (DDP's gradients in lazy mode).

    Recorded with ``lazy.call``, it makes the pending program an SPMD program over the group's mesh
    (``_spmd_mesh``), where it is ``psum / n`` on each process's blocks: the all-reduce runs inside
    the same program as the backward and the optimizer update. Called on concrete arrays (a cold run
    of the pending graph) it runs the packed all-reduce program itself; under abstract evaluation
    it only gives the output shapes.
    """

    def __init__(self, group: ProcessGroup, mesh: Mesh) -> None:
        self.group = group
        self._spmd_mesh = mesh

    def __call__(self, *arrays: Any) -> tuple:
        from .._core import lazy

        if not isinstance(arrays[0], jax.core.Tracer):
            return tuple(all_reduce_arrays(list(arrays), RedOpType.AVG, self.group))
        if not lazy.spmd_tracing():
            return tuple(arrays)
        n = self._spmd_mesh.size
        return tuple(lax.psum(a, _AXIS) / n for a in arrays)


class _PendingBroadcast(_PendingAllReduce):
    """A lazy-graph node giving every process group rank ``src``'s arrays (DDP's buffers in lazy
    mode); see ``_PendingAllReduce``."""

    def __init__(self, group: ProcessGroup, mesh: Mesh, src: int) -> None:
        super().__init__(group, mesh)
        self.src = src

    def __call__(self, *arrays: Any) -> tuple:
        from .._core import lazy

        if not isinstance(arrays[0], jax.core.Tracer):
            return tuple(broadcast_arrays(list(arrays), self.src, self.group))
        if not lazy.spmd_tracing():
            return tuple(arrays)
        mine = lax.axis_index(_AXIS) == self.src
        return tuple(_masked_sum(a, mine) for a in arrays)


def _masked_sum(x: Any, mine: Any) -> Any:
    if x.dtype == jnp.bool_:
        return _masked_sum(x.astype(jnp.int8), mine).astype(jnp.bool_)
    return lax.psum(jnp.where(mine, x, jnp.zeros_like(x)), _AXIS)


_pending_nodes: dict = {}


def pending_all_reduce(group: ProcessGroup, platform: str) -> _PendingAllReduce:
    """The (cached) lazy all-reduce (average) node of ``group`` on ``platform``'s devices."""
    mesh = group.mesh(platform)
    f = _pending_nodes.get(("avg", mesh))
    if f is None:
        f = _pending_nodes[("avg", mesh)] = _PendingAllReduce(group, mesh)
    return f


def pending_broadcast(group: ProcessGroup, platform: str, src: int) -> _PendingBroadcast:
    """The (cached) lazy broadcast node from group rank ``src``."""
    mesh = group.mesh(platform)
    f = _pending_nodes.get(("bcast", mesh, src))
    if f is None:
        f = _pending_nodes[("bcast", mesh, src)] = _PendingBroadcast(group, mesh, src)
    return f


def broadcast_arrays(arrays: Sequence[Any], src: int, group: ProcessGroup) -> list:
    """Every process gets group rank ``src``'s arrays (one program, one collective per dtype)."""
    if not arrays:
        return []
    return _run_packed(arrays, group, lambda mesh, shapes: _broadcast_prog(mesh, src, shapes))


# --- public API -------------------------------------------------------------------------------


def _check_tensor(t: Any, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(t)} instead."
        )


def _check_list(ts: Any, name: str) -> None:
    if not isinstance(ts, list):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
            f"             but got {type(ts)} instead."
        )
    if not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
            f"             but got {type(ts)} with elements of type {[type(t) for t in ts]}."
        )


def _group_index(g: ProcessGroup, rank: int | None, group_rank: int | None, what: str) -> int:
    """torch's src/dst (global rank) or group_src/group_dst (rank in the group) as a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can only specify group_{what} or {what}, not both")
    if group_rank is not None:
        if not 0 <= group_rank < g.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {g}")
        return group_rank
    if rank is None:
        rank = 0
    return pg.get_group_rank(g, rank)


def all_reduce(tensor: Tensor, op: Any = RedOpType.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:  # fmt: skip
    """Reduce ``tensor`` across the group, in place on every rank."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("all_reduce")
    arr = tensor._data()
    (out,) = all_reduce_arrays([arr], _check_op(op, arr.dtype), g)
    tensor._assign(out)
    return _done([out], async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = RedOpType.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:  # fmt: skip
    """Reduce ``tensor`` across the group into rank ``dst``'s tensor (others keep theirs)."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("reduce")
    dst_i = _group_index(g, dst, group_dst, "dst")
    arr = tensor._data()
    (out,) = all_reduce_arrays([arr], _check_op(op, arr.dtype), g)
    if g.rank() == dst_i:
        tensor._assign(out)
    return _done([out], async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:  # fmt: skip
    """Overwrite ``tensor`` on every rank with rank ``src``'s."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("broadcast")
    (out,) = broadcast_arrays([tensor._data()], _group_index(g, src, group_src, "src"), g)
    tensor._assign(out)
    return _done([out], async_op)


@functools.lru_cache(maxsize=None)
def _all_gather_prog(mesh: Mesh, shape: tuple, out_shape: tuple | None) -> Any:
    n = mesh.size

    def body(x: Any) -> Any:
        every = lax.all_gather(x.reshape(shape), _AXIS)
        if out_shape is not None:
            return every.reshape(out_shape)
        return tuple(every[i].reshape(_block(shape)) for i in range(n))

    return _program(body, mesh, 1, P() if out_shape is not None else (P(),) * n)


def _gather_all(arr: Any, g: ProcessGroup, out_shape: tuple | None) -> Any:
    mesh = g.mesh(_platform(arr))
    return _all_gather_prog(mesh, arr.shape, out_shape)(_to_global(arr, mesh))


def all_gather(tensor_list: list, tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:  # fmt: skip
    """``tensor_list[i]`` becomes rank i's ``tensor`` on every rank."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("all_gather")
    if len(tensor_list) != g.size():
        raise ValueError(
            f"all_gather: tensor_list has {len(tensor_list)} tensors, the group has {g.size()} ranks"
        )
    arr = tensor._data()
    for t in tensor_list:
        if t._shape != tensor._shape:
            raise ValueError("all_gather: every tensor in tensor_list must have the input tensor's shape")
    outs = [_local(o, arr.shape, arr) for o in _gather_all(arr, g, None)]
    for t, o in zip(tensor_list, outs):
        t._assign(o)
    return _done(outs, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:  # fmt: skip
    """``output_tensor`` = the ranks' inputs concatenated (or stacked) along dim 0."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("all_gather_into_tensor")
    n = g.size()
    ins, outs = tuple(input_tensor._shape), tuple(output_tensor._shape)
    cat = (ins[0] * n,) + ins[1:] if ins else None
    if outs != cat and outs != (n,) + ins:
        raise ValueError(f"all_gather_into_tensor: output shape {list(outs)} is neither {n}x the input's "
                         f"first dimension nor a stack of {n} inputs of shape {list(ins)}")  # fmt: skip
    arr = input_tensor._data()
    out = _local(_gather_all(arr, g, outs), outs, arr)
    output_tensor._assign(out)
    return _done([out], async_op)


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:  # fmt: skip
    """Rank ``dst``'s ``gather_list[i]`` becomes rank i's ``tensor``."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("gather")
    dst_i = _group_index(g, dst, group_dst, "dst")
    if g.rank() == dst_i:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list(gather_list, "gather_list")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    arr = tensor._data()
    outs = [_local(o, arr.shape, arr) for o in _gather_all(arr, g, None)]
    if gather_list:
        for t, o in zip(gather_list, outs):
            t._assign(o)
    return _done(outs, async_op)


@functools.lru_cache(maxsize=None)
def _scatter_prog(mesh: Mesh, src: int, shape: tuple) -> Any:
    n = mesh.size

    def body(x: Any) -> Any:
        rows = x.reshape((n,) + shape)
        if rows.dtype == jnp.bool_:
            rows = rows.astype(jnp.int8)
        full = lax.psum(jnp.where(lax.axis_index(_AXIS) == src, rows, jnp.zeros_like(rows)), _AXIS)
        mine = lax.dynamic_index_in_dim(full, lax.axis_index(_AXIS), 0, keepdims=False)
        return mine.astype(x.dtype).reshape(_block(shape))

    return _program(body, mesh, 1, P(_AXIS))


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:  # fmt: skip
    """Rank i's ``tensor`` becomes rank ``src``'s ``scatter_list[i]``."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("scatter")
    src_i = _group_index(g, src, group_src, "src")
    n = g.size()
    arr = tensor._data()
    shape = arr.shape
    if g.rank() == src_i:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_list(scatter_list, "scatter_list")
        if len(scatter_list) != n or any(t._shape != tensor._shape for t in scatter_list):
            raise ValueError(f"scatter: scatter_list must hold {n} tensors shaped like the output tensor")
        rows = jnp.stack([t._data().astype(arr.dtype) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        rows = jnp.zeros((n,) + shape, arr.dtype)
    mesh = g.mesh(_platform(arr))
    out = _local(_scatter_prog(mesh, src_i, shape)(_to_global(rows.reshape(-1), mesh)), shape, arr)
    tensor._assign(out)
    return _done([out], async_op)


@functools.lru_cache(maxsize=None)
def _reduce_scatter_prog(mesh: Mesh, op: RedOpType, n_in: int, out_shape: tuple) -> Any:
    n = mesh.size

    def body(*xs: Any) -> Any:
        rows = jnp.concatenate([x.reshape(-1) for x in xs]).reshape(n, -1)
        if op in (RedOpType.SUM, RedOpType.AVG) and rows.dtype != jnp.bool_:
            mine = lax.psum_scatter(rows, _AXIS, scatter_dimension=0, tiled=False)
            if op is RedOpType.AVG:
                mine = mine // n if jnp.issubdtype(mine.dtype, jnp.integer) else mine / n
        else:
            mine = lax.dynamic_index_in_dim(_reduce(rows, op, n), lax.axis_index(_AXIS), 0, keepdims=False)
        return mine.reshape(_block(out_shape))

    return _program(body, mesh, n_in, P(_AXIS))


def _reduce_scatter(output: Tensor, arrays: list, op: Any, g: ProcessGroup, async_op: bool) -> Work | None:
    arr = output._data()
    op = _check_op(op, arr.dtype)
    mesh = g.mesh(_platform(arrays[0]))
    prog = _reduce_scatter_prog(mesh, op, len(arrays), tuple(arr.shape))
    out = _local(prog(*[_to_global(a.astype(arr.dtype), mesh) for a in arrays]), arr.shape, arr)
    output._assign(out)
    return _done([out], async_op)


def reduce_scatter(output: Tensor, input_list: list, op: Any = RedOpType.SUM, group: ProcessGroup | None = None,
                   async_op: bool = False) -> Work | None:  # fmt: skip
    """Rank i's ``output`` = the reduction over ranks of their ``input_list[i]``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("reduce_scatter")
    if len(input_list) != g.size() or any(t._shape != output._shape for t in input_list):
        raise ValueError(f"reduce_scatter: input_list must hold {g.size()} tensors shaped like the output")
    return _reduce_scatter(output, [t._data() for t in input_list], op, g, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = RedOpType.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:  # fmt: skip
    """Rank i's ``output`` = the reduction over ranks of the i-th chunk (dim 0) of their ``input``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("reduce_scatter_tensor")
    n, outs, ins = g.size(), tuple(output._shape), tuple(input._shape)
    if ins != (n,) + outs and not (outs and ins == (outs[0] * n,) + outs[1:]):
        raise ValueError(f"reduce_scatter_tensor: input shape {list(ins)} must be the output shape {list(outs)} "
                         f"with dim 0 multiplied by (or stacked over) the {n} ranks")  # fmt: skip
    return _reduce_scatter(output, [input._data()], op, g, async_op)


@functools.lru_cache(maxsize=None)
def _all_to_all_prog(mesh: Mesh, shape: tuple) -> Any:
    def body(x: Any) -> Any:
        return lax.all_to_all(x.reshape(shape), _AXIS, 0, 0, tiled=True)

    return _program(body, mesh, 1, P(_AXIS))


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list | None = None,
                      input_split_sizes: list | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:  # fmt: skip
    """Chunk i (dim 0) of rank j's ``input`` becomes chunk j of rank i's ``output`` (equal splits)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("all_to_all_single")
    if output_split_sizes is not None or input_split_sizes is not None:
        raise NotImplementedError(
            "torchlike.distributed: all_to_all_single with split sizes is not supported; JAX's all_to_all "
            "exchanges equal chunks"
        )
    n = g.size()
    if output._shape != input._shape or not input._shape or input._shape[0] % n:
        raise ValueError(
            f"all_to_all_single: input and output must have the same shape with dim 0 divisible by {n}"
        )
    arr = input._data()
    mesh = g.mesh(_platform(arr))
    out = _local(_all_to_all_prog(mesh, tuple(arr.shape))(_to_global(arr, mesh)), arr.shape, arr)
    output._assign(out.astype(output._dtype.np))
    return _done([out], async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None,
            timeout: Any = None) -> Work | None:  # fmt: skip
    """Block until every rank of the group reaches the barrier."""
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("barrier")
    token = jax.device_put(np.zeros((), np.int32), _my_device(g.mesh(_default_platform())))
    (out,) = all_reduce_arrays([token], RedOpType.SUM, g)
    if async_op:
        return Work([out])
    out.block_until_ready()
    return None


def monitored_barrier(
    group: ProcessGroup | None = None, timeout: Any = None, wait_all_ranks: bool = False
) -> None:
    barrier(group)


def _default_platform() -> str:
    return jax.local_devices()[0].platform


# --- point to point: a ppermute over the two processes' mesh ---------------------------------


@functools.lru_cache(maxsize=None)
def _pair_prog(mesh: Mesh, src: int, dst: int) -> Any:
    def body(x: Any) -> Any:
        return lax.ppermute(x, _AXIS, [(src, dst)])

    return _program(body, mesh, 1, P(_AXIS))


@functools.lru_cache(maxsize=None)
def _pair_group(ranks: tuple, me: int) -> ProcessGroup:
    return ProcessGroup(list(ranks), me, "p2p", f"p2p{ranks}")


def _p2p(tensor: Tensor, peer: int | None, g: ProcessGroup, sending: bool, what: str) -> Any:
    if peer is None:
        raise NotImplementedError(
            f"torchlike.distributed: {what} without a peer rank cannot be expressed: JAX runs point-to-point "
            "transfers as one program on both processes, so each side must name the other"
        )
    me = pg.get_rank()
    other = pg.get_global_rank(g, peer)
    if other == me:
        role = "destination" if sending else "source"
        raise ValueError(f"Invalid {role} rank: should not be the same as the rank of the current process.")
    ranks = sorted((me, other))
    arr = tensor._data()
    mesh = _pair_group(tuple(ranks), me).mesh(_platform(arr))
    mine, theirs = ranks.index(me), ranks.index(other)
    src_i, dst_i = (mine, theirs) if sending else (theirs, mine)
    out = _pair_prog(mesh, src_i, dst_i)(_to_global(arr, mesh))
    local = _local(out, arr.shape, arr)
    if not sending:
        tensor._assign(local)
    return local


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:  # fmt: skip
    """Send ``tensor`` to rank ``dst`` (which must call ``recv`` with this rank as ``src``)."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("send")
    peer = group_dst if group_dst is not None else (None if dst is None else pg.get_group_rank(g, dst))
    _p2p(tensor, peer, g, True, "send").block_until_ready()
    return None


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:  # fmt: skip
    """Receive into ``tensor`` from rank ``src``; returns the sender's rank."""
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        pg.warn_not_in_group("recv")
        return -1
    peer = group_src if group_src is not None else (None if src is None else pg.get_group_rank(g, src))
    _p2p(tensor, peer, g, False, "recv")
    return pg.get_global_rank(g, peer)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:  # fmt: skip
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("isend")
    peer = group_dst if group_dst is not None else (None if dst is None else pg.get_group_rank(g, dst))
    return Work([_p2p(tensor, peer, g, True, "isend")])


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:  # fmt: skip
    _check_tensor(tensor, "tensor")
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("irecv")
    peer = group_src if group_src is not None else (None if src is None else pg.get_group_rank(g, src))
    return Work([_p2p(tensor, peer, g, False, "irecv")])


# --- Python objects: pickled bytes through the same collectives --------------------------------


def _bytes_array(data: bytes, g: ProcessGroup, size: int | None = None) -> Any:
    buf = np.zeros(size if size is not None else len(data), np.uint8)
    buf[: len(data)] = np.frombuffer(data, np.uint8)
    return jax.device_put(buf, _my_device(g.mesh(_default_platform())))


def _gather_objects(obj: Any, g: ProcessGroup) -> list:
    data = pickle.dumps(obj)
    sizes = _gather_all(jax.device_put(np.int64(len(data)), _my_device(g.mesh(_default_platform()))), g, None)
    sizes = [int(np.asarray(s.addressable_data(0)).reshape(())) for s in sizes]
    blocks = _gather_all(_bytes_array(data, g, max(sizes)), g, None)
    return [pickle.loads(np.asarray(b.addressable_data(0)).tobytes()[:n]) for b, n in zip(blocks, sizes)]


def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` (pickled, like torch)."""
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("all_gather_object")
    object_list[:] = _gather_objects(obj, g)[: len(object_list)] if object_list else _gather_objects(obj, g)
    return None


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:  # fmt: skip
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("gather_object")
    dst_i = _group_index(g, dst, group_dst, "dst")
    objs = _gather_objects(obj, g)
    if g.rank() == dst_i:
        if object_gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        object_gather_list[:] = objs[: len(object_gather_list)]
    return None


def _broadcast_objects(objs: Any, src_i: int, g: ProcessGroup) -> Any:
    data = pickle.dumps(objs) if g.rank() == src_i else b""
    dev = _my_device(g.mesh(_default_platform()))
    (size,) = broadcast_arrays([jax.device_put(np.int64(len(data)), dev)], src_i, g)
    (buf,) = broadcast_arrays([_bytes_array(data, g, int(size))], src_i, g)
    return pickle.loads(np.asarray(buf).tobytes())


def broadcast_object_list(object_list: list, src: int | None = None, group: ProcessGroup | None = None,
                          device: Any = None, group_src: int | None = None) -> None:  # fmt: skip
    """Every rank's ``object_list`` becomes rank ``src``'s (in place)."""
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("broadcast_object_list")
    object_list[:] = _broadcast_objects(list(object_list), _group_index(g, src, group_src, "src"), g)
    return None


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:  # fmt: skip
    """``scatter_object_output_list[0]`` becomes rank ``src``'s ``scatter_object_input_list[rank]``."""
    g = pg.resolve(group)
    if g is None:
        return pg.warn_not_in_group("scatter_object_list")
    src_i = _group_index(g, src, group_src, "src")
    objs = _broadcast_objects(scatter_object_input_list if g.rank() == src_i else None, src_i, g)
    scatter_object_output_list[0] = objs[g.rank()]
    return None

"""Lazy execution: kernels record nodes, and XLA runs the pending graph as one program.

While lazy mode is on, ``call(fn, args)`` (``fn`` a pure, usually jitted, function of arrays)
does not run ``fn``: it works out the result's shape and dtype by abstract evaluation (cached
per function and input signature, so torch's errors still raise at the op) and returns
``LazyArray`` placeholders. Ops, the backward that ``loss.backward()`` emits, optimizer
updates and in-place writes all land in one pending graph. When a value is needed on the host
(``item``, printing, ``numpy``...), at an optimizer step, or when the graph grows past a limit,
``flush`` runs the whole graph as one XLA program and fills in every placeholder that is still
referenced; intermediates nobody holds are fused away.

Each node's structural key (its function's signature entry and where its inputs come from) is
appended while recording, so the graph's key is known at a flush without walking it. Leaves
(parameters, inputs, lifted scalars) are program arguments, never constants.

Cold, then hot: a structure seen for the first time runs node by node on the ordinary cached
kernels (today's eager cost); once it recurs it is compiled (in a background thread) and the
compiled program takes over when ready. Off the CPU, where every new one-op kernel is a slow
compile, a structure is compiled whole the first time it is seen. A skeleton that keeps coming back with
new shapes is not compiled per shape: its structures run node by node on bucketed kernels (``_churns``) until
one settles. Caches are bounded LRUs and ``stats`` counts compiles, hits, cold and churn runs and flush
reasons.

This module knows arrays only (no Tensor): it sits in ``_core`` below the op table.
"""

from __future__ import annotations

import atexit
import collections
import os
import sys
import threading
import warnings
import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import _xla_tiers

__all__ = ["LazyArray", "PerNode", "call", "flush", "enabled", "set_enabled", "stats", "flush_reasons"]

_tree_flatten = jax.tree_util.tree_flatten
_tree_unflatten = jax.tree_util.tree_unflatten
_tree_leaves = jax.tree_util.tree_leaves


def _env_flag(name: str, default: str) -> str:
    return os.environ.get(name, default).strip().lower()


# --- settings ----------------------------------------------------------------------------------

def _default_on() -> bool:
    value = _env_flag("TORCHLIKE_LAZY", "auto")
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    try:  # auto: on where a GPU makes one-op dispatch expensive
        return any(d.platform != "cpu" for d in jax.devices())
    except RuntimeError:
        return False


_on = _default_on()
MAX_NODES = int(os.environ.get("TORCHLIKE_LAZY_MAX_NODES", "20000"))  # flush when the graph gets this big
PROGRAM_CACHE_SIZE = int(os.environ.get("TORCHLIKE_LAZY_CACHE_SIZE", "64"))
SIGNATURE_CACHE_SIZE = 8192
# How many times a structure is seen before its program is compiled ("0": per backend, see _compile_after)
_COMPILE_AFTER = int(os.environ.get("TORCHLIKE_LAZY_COMPILE_AFTER", "0"))
_BACKGROUND = _env_flag("TORCHLIKE_LAZY_BACKGROUND", "1") not in ("0", "false", "no", "off")
_TRACE = _env_flag("TORCHLIKE_LAZY_TRACE", "0") in ("1", "true", "yes", "on")
_DONATE = _env_flag("TORCHLIKE_LAZY_DONATE", "1") not in ("0", "false", "no", "off")
_DONATE_CPU = False  # (tests: donate on the CPU too, to check the pairing there; XLA's CPU backend copies instead)
_AOT = _env_flag("TORCHLIKE_LAZY_AOT", "0") in ("1", "true", "yes", "on")
_REPLAY = _env_flag("TORCHLIKE_LAZY_REPLAY", "1") not in ("0", "false", "no", "off")
# Programs of one skeleton (the graph's ops and wiring, shapes and static arguments left out) made before it
# counts as churning: its later shapes run op by op on bucketed kernels instead of compiling ("0": never)
CHURN_SHAPES = int(os.environ.get("TORCHLIKE_LAZY_CHURN", "2"))
SETTLE = 3  # sightings in a row of one structure of a churning skeleton before it is compiled after all

stats: collections.Counter = collections.Counter()  # nodes, flushes, compiles, hits, cold_runs...
flush_reasons: collections.Counter = collections.Counter()
flush_sites: collections.Counter = collections.Counter()  # with TORCHLIKE_LAZY_TRACE=1: where values were read

_lock = threading.RLock()


def enabled() -> bool:
    """Whether ops record lazily (``TORCHLIKE_LAZY=1``, or ``set_enabled(True)``)."""
    return _on


def set_enabled(on: bool) -> None:
    """Turn lazy recording on or off; turning it off first runs whatever is pending."""
    global _on
    if not on:
        flush("lazy mode off")
    _on = bool(on)


# --- the placeholder ---------------------------------------------------------------------------


class LazyArray:
    """A pending array: shape and dtype now, the value after the graph holding it is flushed."""

    __slots__ = ("shape", "dtype", "sig", "graph", "slot", "value", "__weakref__")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def weak_type(self) -> bool:
        return self.sig[2]

    def materialize(self, reason: str = "value read") -> Any:
        """The concrete ``jax.Array`` (flushing the pending graph if needed)."""
        if self.graph is not None:
            flush(reason)
        return self.value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = np.asarray(self.materialize())
        return a if dtype is None else a.astype(dtype)

    def devices(self) -> set:
        if self.graph is None:
            return self.value.devices()
        return {self.graph.device or jax.devices()[0]}

    def block_until_ready(self) -> Any:
        return self.materialize().block_until_ready()

    def astype(self, dtype: Any) -> Any:
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        k = _astype_kernels.get(dtype)
        if k is None:
            k = _astype_kernels[dtype] = jax.jit(lambda x: x.astype(dtype))
        return call(k, (self,))

    def reshape(self, *shape: Any) -> Any:
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return call(_method("reshape", shape), (self,))

    def __getitem__(self, index: Any) -> Any:
        try:
            return call(_method("__getitem__", index), (self,))
        except TypeError:  # an array index: not hashable, not static
            return self.materialize()[index]

    def __add__(self, other: Any) -> Any:
        return call(_add, (self, other))

    def __radd__(self, other: Any) -> Any:
        return call(_add, (other, self))

    def __sub__(self, other: Any) -> Any:
        return call(_sub, (self, other))

    def __rsub__(self, other: Any) -> Any:
        return call(_sub, (other, self))

    def __mul__(self, other: Any) -> Any:
        return call(_mul, (self, other))

    def __rmul__(self, other: Any) -> Any:
        return call(_mul, (other, self))

    def __neg__(self) -> Any:
        return call(_neg, (self,))

    def __repr__(self) -> str:
        state = "pending" if self.graph is not None else "ready"
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, {state})"


_astype_kernels: dict = {}
_method_kernels: dict = {}


def _method(name: str, arg: Any) -> Callable:
    """A cached kernel ``x.<name>(arg)`` (static ``arg``) for the array methods callers use on results."""
    key = (name, arg)
    k = _method_kernels.get(key)
    if k is None:
        k = _method_kernels[key] = jax.jit(lambda x: getattr(x, name)(arg))
    return k
_add = jax.jit(jnp.add)
_sub = jax.jit(jnp.subtract)
_mul = jax.jit(jnp.multiply)
_neg = jax.jit(jnp.negative)
_new_lazy = object.__new__


def concrete(x: Any) -> Any:
    """``x`` with a LazyArray replaced by its value (flushing if needed); anything else as is."""
    if type(x) is LazyArray:
        return x.materialize()
    return x


def has_pending_input(args: Any) -> bool:
    """Whether a flat argument list (lists of arrays allowed) holds a LazyArray."""
    for a in args:
        t = type(a)
        if t is LazyArray:
            return True
        if t is list or t is tuple:
            for x in a:
                if type(x) is LazyArray:
                    return True
    return False


def concrete_tree(tree: Any) -> Any:
    """``concrete`` over a pytree (lists and tuples of arrays, as kernels take them)."""
    leaves, treedef = _tree_flatten(tree)
    if not any(type(x) is LazyArray for x in leaves):
        return tree
    return _tree_unflatten(treedef, [concrete(x) for x in leaves])


# --- the pending graph -------------------------------------------------------------------------


class _Graph:
    __slots__ = ("nodes", "leaves", "leaf_index", "key", "outs", "device", "last_sig", "expect", "pos", "trace",
                 "prev", "backwards")  # fmt: skip

    def __init__(self) -> None:
        self.nodes: list = []  # (fn, treedef, refs, first_slot, n_out, single)
        self.leaves: list = []  # concrete arrays and scalars: the program's arguments
        self.leaf_index: dict = {}  # id(array) -> (leaf position, signature) (arrays are deduplicated)
        self.key: list = []  # per node: (signature entry, refs)
        self.outs: list = []  # per slot: weakref to its LazyArray
        self.device = None
        self.last_sig: tuple = ()  # the input signature of the last node ``call`` appended
        # Guarded replay (see ``replay``): the op table's entries expected in this graph, in call order,
        # and the cursor into them; or, while not replaying, the entries recorded so far (None: no record)
        self.expect: list | None = None
        self.pos = 0
        self.trace: list | None = None
        self.prev: Any = None  # the program of the graph flushed before this one (whose successor this is)
        self.backwards = 0  # backward() calls recorded in it


class _Sig:
    """The abstract evaluation of one function on one input signature (shared by every node that
    calls it so; its identity is part of the structural key)."""

    __slots__ = ("out", "treedef", "single", "__weakref__")


_graph = _Graph()
_running = False  # while a flush runs kernels concretely: they must not record again
_suspended = False  # set while something needs every op's value at once (anomaly detection)


def suspend(on: bool) -> None:
    """Run ops eagerly while ``on`` (anomaly mode checks each node's values), without leaving lazy mode."""
    global _suspended
    if on:
        flush("anomaly mode")
        _graph.expect = None
    _suspended = bool(on)
_sigs: collections.OrderedDict = collections.OrderedDict()

_ARRAY_TYPES: tuple = ()
_SCALARS = (bool, int, float, complex)
_CONTAINERS = (list, tuple, dict)


def _array_types() -> tuple:
    global _ARRAY_TYPES
    if not _ARRAY_TYPES:
        _ARRAY_TYPES = (type(jnp.zeros(())),)
    return _ARRAY_TYPES


def _struct(x: Any) -> Any:
    if x is None or type(x) in _SCALARS:
        return x
    sharding = getattr(x, "sharding", None) if type(x) in _ARRAY_TYPES else None
    return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=getattr(x, "weak_type", False), sharding=sharding)


def _signature(fn: Callable, treedef: Any, sig: tuple, flat: list) -> _Sig:
    key = (fn, treedef, sig)
    entry = _sigs.get(key)
    if entry is not None:
        return entry
    structs = [_struct(x) for x in flat]
    if treedef is None:
        out = jax.eval_shape(fn, *structs)
    else:
        out = jax.eval_shape(lambda *xs: fn(*_tree_unflatten(treedef, xs)), *structs)
    out_leaves, out_tree = _tree_flatten(out)
    entry = _Sig()
    entry.out = tuple((tuple(o.shape), np.dtype(o.dtype), bool(getattr(o, "weak_type", False))) for o in out_leaves)
    entry.treedef = out_tree
    entry.single = out_tree.num_nodes == 1 and out_tree.num_leaves == 1
    _sigs[key] = entry
    if len(_sigs) > SIGNATURE_CACHE_SIZE:
        _sigs.popitem(last=False)
    stats["signatures"] += 1
    return entry


def call(fn: Callable, args: tuple | list) -> Any:
    """``fn(*args)``, recorded in the pending graph while lazy mode is on.

    ``args`` may hold arrays, LazyArrays, Python scalars, None and (nested) lists of those. Outside
    lazy mode, or when an argument is being traced by JAX, pending inputs are materialized and
    ``fn`` runs now.
    """
    if not _on or _running or _suspended:
        try:
            return fn(*args)
        except (TypeError, ValueError):  # a pending value left from lazy mode: JAX refuses it
            c = concrete_tree(args)
            if c is args:
                raise
            return fn(*c)
    treedef = None  # flat arguments (arrays, scalars, None): no pytree work
    for a in args:
        if type(a) in _CONTAINERS:
            leaves, treedef = _tree_flatten(args)
            break
    else:
        leaves = args
    arr_types = _ARRAY_TYPES or _array_types()
    with _lock:
        g = _graph
        refs = []
        sig = []
        for x in leaves:
            t = type(x)
            if x is None:
                refs.append(None)
                sig.append(None)
                continue
            known = None
            if t is LazyArray:
                if x.graph is g:
                    refs.append(x.slot)
                    sig.append(x.sig)
                    continue
                if x.graph is None:  # a flushed value: its signature is already known
                    known = x.sig
                    x = x.value
                else:
                    x = x.materialize()
                t = type(x)
            if t in arr_types or t is np.ndarray:
                hit = g.leaf_index.get(id(x))
                if hit is None:  # reading a jax.Array's shape/dtype costs ~1 us: once per graph
                    hit = (len(g.leaves), known or (x.shape, x.dtype, x.weak_type if t is not np.ndarray else False))
                    g.leaves.append(x)
                    g.leaf_index[id(x)] = hit
                    if g.device is None and t is not np.ndarray:
                        g.device = _one_device(x)
                refs.append(~hit[0])
                sig.append(hit[1])
            elif t in _SCALARS:
                refs.append(~len(g.leaves))
                g.leaves.append(x)
                sig.append(t)
            elif isinstance(x, np.generic):
                refs.append(~len(g.leaves))
                g.leaves.append(x)
                sig.append((x.dtype,))
            else:  # a tracer (inside jax.jit/grad/vmap) or something foreign: run now
                return fn(*concrete_tree(args))
        refs = tuple(refs)
        entry = _signature(fn, treedef, tuple(sig), leaves)
        first = len(g.outs)
        outs = []
        for o in entry.out:
            z = _new_lazy(LazyArray)
            z.shape = o[0]
            z.dtype = o[1]
            z.sig = o
            z.graph = g
            z.slot = len(g.outs)
            z.value = None
            g.outs.append(weakref.ref(z))
            outs.append(z)
        g.nodes.append((fn, treedef, refs, first, len(outs), entry.single))
        g.key.append((entry, refs))
        g.last_sig = sig
        if len(g.nodes) >= MAX_NODES:
            flush("node limit")
    if entry.single:
        return outs[0]
    return _tree_unflatten(entry.treedef, outs)


def backward_recorded() -> None:
    """The end of a ``backward()``. A graph holding a second one is a loop that reads nothing between its steps
    (gradients accumulated over batches, a sweep over sizes): it is run now, so that the loop becomes a sequence
    of recurring programs (each compiled once, or run op by op where its shapes churn) instead of one graph
    that grows until the loop ends and is then a new structure to compile."""
    g = _graph
    if not _on or _running or _suspended or not g.nodes:
        return
    g.backwards += 1
    if g.backwards >= 2:
        flush("second backward")


def replay(fn: Callable, entry: _Sig, want: tuple, flat: list) -> list | None:
    """Append the node ``fn(*flat)`` whose abstract evaluation ``entry`` is already known, for inputs of the
    signatures ``want`` (flat arrays, scalars and None; no lists): the outputs' LazyArrays, or None when an
    input's signature differs (then nothing was recorded). The op table's guarded replay calls it."""
    arr_types = _ARRAY_TYPES or _array_types()
    with _lock:
        g = _graph
        leaf_index = g.leaf_index
        refs = []
        new = None  # leaves this node adds, registered only once every input matched
        n_leaves = len(g.leaves)
        for x, w in zip(flat, want):
            if x is None:
                if w is not None:
                    return None
                refs.append(None)
                continue
            t = type(x)
            known = None
            if t is LazyArray:
                xg = x.graph
                if xg is g:
                    s = x.sig
                    if s is not w and s != w:
                        return None
                    refs.append(x.slot)
                    continue
                if xg is not None:
                    return None
                known = x.sig
                x = x.value
                t = type(x)
            if t in arr_types or t is np.ndarray:
                hit = leaf_index.get(id(x))
                if hit is None:
                    if new is not None:
                        for y, h in new:
                            if y is x:
                                hit = h
                                break
                    if hit is None:
                        hit = (n_leaves, known or (x.shape, x.dtype, x.weak_type if t is not np.ndarray else False))
                        n_leaves += 1
                        if new is None:
                            new = []
                        new.append((x, hit))
                s = hit[1]
                if s is not w and s != w:
                    return None
                refs.append(~hit[0])
            elif t in _SCALARS:
                if t is not w:
                    return None
                if new is None:
                    new = []
                new.append((x, None))
                refs.append(~n_leaves)
                n_leaves += 1
            else:
                return None
        if new is not None:
            for x, hit in new:
                g.leaves.append(x)
                if hit is not None:
                    leaf_index[id(x)] = hit
                    if g.device is None and type(x) is not np.ndarray:
                        g.device = _one_device(x)
        refs = tuple(refs)
        first = len(g.outs)
        outs = []
        for o in entry.out:
            z = _new_lazy(LazyArray)
            z.shape = o[0]
            z.dtype = o[1]
            z.sig = o
            z.graph = g
            z.slot = len(g.outs)
            z.value = None
            g.outs.append(weakref.ref(z))
            outs.append(z)
        g.nodes.append((fn, None, refs, first, len(outs), entry.single))
        g.key.append((entry, refs))
        if len(g.nodes) >= MAX_NODES:
            flush("node limit")
    return outs


def stop_replay(g: _Graph) -> None:
    """The step left its recorded path: from here on ``g`` records again (keeping the entries that matched)."""
    if g.expect is not None:
        g.trace = g.expect[: g.pos]
        g.expect = None
        stats["replay_misses"] += 1


def _one_device(x: Any) -> Any:
    try:
        devs = x.devices()
    except Exception:
        return None
    return next(iter(devs)) if len(devs) == 1 else None


class PerNode:
    """A node function that is itself a jitted program (``jitted``, what programs trace and what runs
    otherwise) with the form a churning structure runs instead (``per_node``, see ``_churns``): one that does
    not compile per shape, with the same results."""

    __slots__ = ("jitted", "per_node", "__name__", "__qualname__", "__weakref__")

    def __init__(self, jitted: Callable, per_node: Callable, name: str) -> None:
        self.jitted, self.per_node = jitted, per_node
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: Any) -> Any:
        return self.jitted(*args)


_put_kernels: dict = {}


def put(x: Any, device: Any) -> Any:
    """``jax.device_put(x, device)``; a pending ``x`` moves inside the program instead."""
    if type(x) is not LazyArray:
        return jax.device_put(x, device)
    k = _put_kernels.get(device)
    if k is None:
        jitted = jax.jit(lambda a: a, out_shardings=jax.sharding.SingleDeviceSharding(device))
        k = _put_kernels[device] = PerNode(jitted, lambda a: jax.device_put(a, device), "put")
    return call(k, (x,))


# --- running a graph ---------------------------------------------------------------------------


class _Program:
    """One graph structure: how often it was seen, its plan, and its compiled program once built."""

    __slots__ = ("seen", "plan", "live", "compiled", "compiling", "failed", "n_leaves", "donate", "on_mesh", "spmd",
                 "next_trace", "hits", "churn", "family", "numbers")  # fmt: skip

    def __init__(self, plan: tuple, live: tuple, n_leaves: int, donate: tuple) -> None:
        self.next_trace: list | None = None  # the op table's entries of the step that followed this one last time
        self.hits = 0  # calls of the compiled program
        self.donate = donate
        # a cross-process collective node (DDP's all-reduce) makes this one SPMD program over its mesh
        self.spmd = next((m for m in (getattr(n[0], "_spmd_mesh", None) for n in plan) if m is not None), None)
        self.seen = 0
        self.on_mesh = False  # single-device leaves meet mesh-sharded ones (DataParallel): replicate them
        self.plan = plan
        self.live = live
        self.n_leaves = n_leaves
        self.compiled = None
        self.compiling = False
        self.failed = False
        self.churn = False  # its skeleton keeps coming back with other shapes (``_churns``)
        self.family: list | None = None  # its skeleton's [structures met, the last one run, its run of sightings]
        self.numbers: tuple | None = None  # where its leaves hold Python numbers (the same every call)


_programs: collections.OrderedDict = collections.OrderedDict()
_skeletons: collections.OrderedDict = collections.OrderedDict()  # op names -> programs made for them (bounded)
_churn_run = False  # while a churning structure runs op by op: kernels take their bucketed executables


def _churns(prog: _Program, key: tuple) -> bool:
    """Whether a new structure is one more variant of a skeleton met ``CHURN_SHAPES`` times already.

    A loop whose sizes change every step (a growing context, batches padded to their longest sequence, the
    last short batch of each epoch... ) makes a new structure every step: compiling each whole (0.3-1 s on a
    GPU) costs more than running it. Such a structure runs node by node, each kernel on its bucketed
    executable (``buckets.py``), so its compiles grow with the logarithm of the sizes."""
    if CHURN_SHAPES <= 0:
        return False
    # (ops by name alone: a view's static steps, and so its arguments, can change with the data, such as
    # which row of a padded batch is the longest)
    skeleton = tuple(getattr(n[0], "__name__", None) or id(n[0]) for n in prog.plan)
    family = _skeletons.get(skeleton)
    if family is None:
        family = _skeletons[skeleton] = [set(), None, 0]
    if len(family[0]) <= CHURN_SHAPES:  # (distinct structures: one made again after an eviction is no new one)
        family[0].add(hash(key))
    _skeletons.move_to_end(skeleton)
    while len(_skeletons) > PROGRAM_CACHE_SIZE * 4:
        _skeletons.popitem(last=False)
    prog.family = family
    return len(family[0]) > CHURN_SHAPES


def _settled(prog: _Program) -> bool:
    """Whether a churning structure has run ``SETTLE`` times in a row (the context reached its cap): then it
    is compiled after all. One that only recurs among others (a padded batch's most common length) is not."""
    family = prog.family
    if family[1] is prog:
        family[2] += 1
    else:
        family[1], family[2] = prog, 1
    return family[2] >= SETTLE


def _run_plan(plan: tuple, live: tuple, leaves: list, free: tuple | None = None) -> list:
    """Run ``plan`` (node by node; traced inside the compiled program, concretely on the cold path)."""
    env: dict = {}
    churn = _churn_run
    for i, (fn, treedef, refs, first, n_out, single) in enumerate(plan):
        if churn:  # (a node that is itself a fused program, such as a backward, runs its own nodes one by one)
            fn = getattr(fn, "per_node", fn)
        flat = [None if r is None else env[r] if r >= 0 else leaves[~r] for r in refs]
        out = fn(*flat) if treedef is None else fn(*_tree_unflatten(treedef, flat))
        if single:
            env[first] = out
        else:
            for k, v in enumerate(_tree_leaves(out)):
                env[first + k] = v
        if free is not None:
            for s in free[i]:
                env.pop(s, None)
    return [env[s] for s in live]


def _frees(plan: tuple, live: tuple) -> tuple:
    """Per node, the slots whose last reader it is (dropped after it on the cold path)."""
    last: dict = {}
    for i, (_, _, refs, first, n_out, _) in enumerate(plan):
        for s in range(first, first + n_out):
            last[s] = i  # an output nobody reads dies right after its node
        for r in refs:
            if r is not None and r >= 0:
                last[r] = i
    keep = set(live)
    out: list = [[] for _ in plan]
    for s, i in last.items():
        if s not in keep:
            out[i].append(s)
    return tuple(tuple(x) for x in out)


_getrefcount = sys.getrefcount
# references to a leaf array that the flush itself holds: the leaves list, the loop variable, getrefcount's
# argument. An array nobody else holds (a parameter's old value after an optimizer write) dies in the program.
_OWN_REFS = 3


def _donation_plan(nodes: list, leaves: list, live: tuple, live_objs: list) -> tuple:
    """Which leaves give their buffer to which outputs: fixed by a graph's structure. A leaf pairs with an output
    of the same shape and dtype made by the last node that reads it and makes one (a parameter's old value and the
    optimizer's new one, not the gradient the backward made from it earlier; a moment and its update). JAX gives each output, in order, the first donated input of its shape and dtype not
    yet taken, so the outputs are reordered to put each paired one first, in its leaf's order; a pairing by
    position instead (a gradient took a parameter's buffer while the parameter was still to be read) made XLA
    copy 117 of a small GPT's parameters every step. Returns the donation candidates (leaf position, its
    (shape, dtype) bucket), the outputs per bucket, and the output order (None: as recorded)."""
    live_pos = {s: j for j, s in enumerate(live)}
    pairs: dict = {}  # output position -> leaf position
    taken: set = set()
    for _, _, refs, first, n_out, _ in reversed(nodes):
        outs = [live_pos[s] for s in range(first, first + n_out) if s in live_pos]
        if not outs:
            continue
        by_class: dict = {}
        for r in refs:
            if r is None or r >= 0 or ~r in taken:
                continue
            x = leaves[~r]
            if type(x) in _SCALARS or x is None:
                continue
            cands = by_class.setdefault((tuple(x.shape), np.dtype(x.dtype)), [])
            if ~r not in cands:
                cands.append(~r)
        if not by_class:
            continue
        for j in outs:
            z = live_objs[j]
            cands = by_class.get((tuple(z.shape), np.dtype(z.dtype)))
            if cands:
                i = cands.pop(0)
                taken.add(i)
                pairs[j] = i
    buckets: dict = {}
    cands = []
    for i in sorted(taken):
        x = leaves[i]
        cands.append((i, buckets.setdefault((tuple(x.shape), np.dtype(x.dtype)), len(buckets))))
    caps = [0] * len(buckets)
    for _, b in cands:
        caps[b] += 1
    order = sorted(pairs, key=pairs.__getitem__) + [j for j in range(len(live)) if j not in pairs]
    return tuple(cands), caps, (None if order == list(range(len(live))) else tuple(order))


def _donatable(leaves: list, device: Any, live_objs: list, plan: tuple) -> tuple:
    """Positions of leaf arrays the program may overwrite: held by nothing but this graph, and paired with an
    output that takes the buffer over (``_donation_plan``'s answer for this structure, kept from an earlier step:
    only the reference counts change). Off the CPU only (XLA's CPU backend does not reuse donated buffers)."""
    if device is None or (device.platform == "cpu" and not _DONATE_CPU) or not _DONATE:
        return ()
    cands, caps, _ = plan
    left = list(caps)
    arr_types = _ARRAY_TYPES
    out = []
    for i, b in cands:
        x = leaves[i]
        if left[b] and type(x) in arr_types and _getrefcount(x) == _OWN_REFS:
            left[b] -= 1
            out.append(i)
    stats["donated"] += len(out)
    return tuple(out)


_donation_plans: dict = {}  # (graph key, live slots) -> _donation_plan's answer


def _compile_after(device: Any) -> int:
    if _COMPILE_AFTER > 0:
        return _COMPILE_AFTER
    platform = getattr(device, "platform", "cpu")
    return 2 if platform == "cpu" else 1


def _build(prog: _Program, leaves: list, background: bool) -> None:
    plan, live, donate = prog.plan, prog.live, prog.donate

    def program(*leaves: Any) -> list:
        return _run_plan(plan, live, leaves)

    # Python scalars are arguments too (weakly typed, as in the kernels), never baked constants
    structs = [
        jax.ShapeDtypeStruct((), jnp.asarray(x).dtype, weak_type=type(x) is not bool) if type(x) in _SCALARS
        else _struct(x)
        for x in leaves
    ]

    jitted = jax.jit(program, donate_argnums=donate)
    if prog.spmd is not None:
        _build_spmd(prog, leaves, structs)
        return
    options = None if background else _xla_tiers.cold_options(_xla_tiers.platform_of(leaves))
    if options is not None:  # a GPU's first sighting: compile fast and run now, autotune in the background
        try:
            t = _xla_tiers.start(prog, jitted, jitted.lower(*structs), options, stats, lambda: prog.seen)
            stats["compiles"] += 1
            if t is not None:
                _compiling.add(t)
            return
        except Exception:  # e.g. options this XLA does not know: one tier
            prog.compiled = None
            stats["cold_compile_failures"] += 1

    def work() -> None:
        try:
            if _AOT:
                prog.compiled = jitted.lower(*structs).compile()
            else:
                # NOTE: calling the jit object takes JAX's C++ dispatch path (a few µs per argument); an AOT
                # ``Compiled`` checks every argument in Python. In the background the compile only fills the
                # persistent cache, which the first call then reads.
                if background:
                    jitted.lower(*structs).compile()
                prog.compiled = jitted
            stats["compiles"] += 1
        except Exception:  # the cold path stays correct; never retry a structure that failed
            prog.failed = True
            stats["compile_failures"] += 1
        finally:
            prog.compiling = False

    prog.compiling = True
    if background:
        t = threading.Thread(target=work, name="torchlike-lazy-compile", daemon=True)
        _compiling.add(t)
        t.start()
    else:
        work()


_compiling: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _join_compiles() -> None:
    # NOTE: a daemon thread killed inside XLA's compiler at interpreter exit aborts the process, and a fork
    # taken while one compiles leaves the child XLA's locks held: wait for them
    for t in list(_compiling):
        t.join()


def _before_fork() -> None:
    flush("fork")  # a forked worker must not inherit (and rerun) pending work
    _join_compiles()
    # NOTE: a lock another thread holds at fork() stays held forever in the child (which has only
    # the forking thread): hold it ourselves across the fork
    _lock.acquire()


def _after_fork_in_parent() -> None:
    _lock.release()


def _after_fork_in_child() -> None:
    global _lock, _graph
    _lock = threading.RLock()
    _graph = _Graph()  # whatever other threads recorded after the flush is theirs, not the child's
    _compiling.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)  # fmt: skip


def flush(reason: str = "explicit") -> None:
    """Run everything pending as one program and fill in the placeholders still referenced."""
    global _graph, _running
    with _lock:
        g = _graph
        if not g.nodes:
            return
        _graph = new = _Graph()
        _running = True
        try:
            prog = _run_graph(g, reason)
        finally:
            _running = False
        if _REPLAY:
            _chain(g, prog, new)


_first_trace: list = [None]  # the entries of the step that followed a graph with no program (a dead flush)


def _chain(g: _Graph, prog: Any, new: _Graph) -> None:
    """Remember ``g``'s entries as what follows the graph before it, and expect in ``new`` what followed
    ``prog``'s structure last time: a loop alternating structures (forward-backward, then the update) replays
    each."""
    exp = g.expect
    if exp is not None:
        trace = exp if g.pos == len(exp) else exp[: g.pos]
        n = len(trace) - trace.count(None)
        stats["replayed"] += n
        if n:
            stats["replayed_steps"] += 1
    else:
        trace = g.trace
    prev = g.prev
    if trace is not None and len(trace) - trace.count(None) > 0:
        if prev is None:
            _first_trace[0] = trace
        else:
            prev.next_trace = trace
    if new.nodes or not _on or _suspended:
        return
    nxt = _first_trace[0] if prog is None else prog.next_trace
    new.prev = prog
    if nxt is not None:
        new.expect = nxt
    elif prog is not None and prog.seen >= 2:  # a structure that recurs: note this step's calls, to replay next
        new.trace = []


def _run_graph(g: _Graph, reason: str) -> _Program | None:
    global _churn_run
    stats["flushes"] += 1
    stats["nodes"] += len(g.nodes)  # counted here, not per recorded op
    flush_reasons[reason] += 1
    if _TRACE:
        flush_sites[_user_site()] += 1
    live_objs = []
    live_slots = []
    for s, ref in enumerate(g.outs):
        z = ref()
        if z is not None:
            live_objs.append(z)
            live_slots.append(s)
    live = tuple(live_slots)
    if not live:  # nothing pending is referenced any more: pure kernels, nothing to run
        stats["dead_flushes"] += 1
        return None
    leaves = g.leaves
    gkey = tuple(g.key)
    device = g.device
    if device is None or (device.platform == "cpu" and not _DONATE_CPU) or not _DONATE:
        donate = ()
    else:
        plan = _donation_plans.get((gkey, live))
        if plan is None:
            if len(_donation_plans) >= PROGRAM_CACHE_SIZE:
                _donation_plans.clear()
            plan = _donation_plans[(gkey, live)] = _donation_plan(g.nodes, leaves, live, live_objs)
        order = plan[2]
        if order is not None:  # (the program returns its outputs in the order that pairs them with their leaves)
            live = tuple([live[j] for j in order])
            live_objs = [live_objs[j] for j in order]
        donate = _donatable(leaves, device, live_objs, plan)
    key = (gkey, live, donate)
    prog = _programs.get(key)
    if prog is None:
        prog = _Program(tuple(g.nodes), live, len(g.leaves), donate)
        prog.churn = _churns(prog, key)
        _programs[key] = prog
        while len(_programs) > PROGRAM_CACHE_SIZE:
            _programs.popitem(last=False)
            stats["evictions"] += 1
    else:
        _programs.move_to_end(key)
    prog.seen += 1
    if prog.on_mesh:
        leaves = _onto_mesh(leaves, None)
    settled = not prog.churn or _settled(prog)
    # the compiled program's own arguments: Python numbers among them as cached device arrays off the CPU
    args = _device_numbers(prog, leaves, device) if _put_numbers(device) else leaves
    if prog.compiled is None and not prog.compiling and not prog.failed \
            and prog.seen >= _compile_after(g.device) and settled:
        first = prog.seen == 1
        _build(prog, args, background=_BACKGROUND and not first)
    values = None
    if prog.compiled is not None:
        try:
            if prog.hits:
                values = prog.compiled(*args) if prog.spmd is None else _call_spmd(prog, leaves, live_objs)
            else:  # the first call traces and lowers: JAX's warnings about torchlike's own program stay here
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Some donated buffers were not usable")
                    values = prog.compiled(*args) if prog.spmd is None else _call_spmd(prog, leaves, live_objs)
            prog.hits += 1
            stats["hits"] += 1
        except Exception:  # e.g. arrays committed to other devices than at compile time
            prog.compiled = None
            prog.failed = True
            stats["compile_failures"] += 1
    if values is None:
        stats["cold_runs"] += 1
        plan = prog.plan
        if prog.churn:
            stats["churn_runs"] += 1
        _churn_run = prog.churn
        try:
            try:
                values = _run_plan(plan, live, leaves, _frees(plan, live))
            except ValueError as e:
                if prog.on_mesh or "ncompatible devices" not in str(e):
                    raise
                # a tensor committed to one device (cuda:0) meets DataParallel's mesh: from now on this
                # structure runs (and compiles) with such leaves replicated over the mesh
                leaves = _onto_mesh(leaves, e)
                prog.on_mesh = True
                prog.failed = False
                values = _run_plan(plan, live, leaves, _frees(plan, live))
        finally:
            _churn_run = False
    for z, v in zip(live_objs, values):
        z.value = v
        z.graph = None
    return prog


_numbers: dict = {}  # (type, value, sign, device) -> a 0-d device array of a Python number (see _device_numbers)


def _put_numbers(device: Any) -> bool:
    """Whether a compiled call's Python numbers go as device arrays (off the CPU, where a put is a transfer)."""
    return device is not None and device.platform != "cpu"


def _device_numbers(prog: _Program, leaves: list, device: Any) -> list:
    """``leaves`` with their Python numbers as cached 0-d arrays on the program's device, weakly typed as JAX types
    the numbers themselves. A compiled call puts each Python number argument on the device afresh: a GPT step's
    72 view offsets made its call 6.8 ms against 6.3 on an H200 host. Numbers are never donated (``_donatable``)."""
    if prog.spmd is not None or prog.on_mesh:  # (replicated over a mesh: left to JAX)
        return leaves
    positions = prog.numbers
    if positions is None:
        positions = prog.numbers = tuple(i for i, x in enumerate(leaves) if type(x) in _SCALARS)
    if not positions:
        return leaves
    out = list(leaves)
    for i in positions:
        x = out[i]
        key = (type(x), x, device) if x else (type(x), x, repr(x), device)  # (-0.0 and 0.0 kept apart)
        arr = _numbers.get(key)
        if arr is None:
            if len(_numbers) >= 4096:
                _numbers.clear()
            arr = _numbers[key] = jax.device_put(x, device)
        out[i] = arr
    return out


_spmd_tracing = False  # while an SPMD program traces: collective nodes emit their collective


def spmd_tracing() -> bool:
    """Whether a collective node is being traced into an SPMD program (else: abstract evaluation)."""
    return _spmd_tracing


def _replicated(leaf: Any) -> bool:
    """A Python or NumPy scalar: the same on every process (an SPMD program's replicated argument)."""
    return type(leaf) in _SCALARS or isinstance(leaf, np.generic)


def _my_block(mesh: Any) -> Any:
    me = jax.process_index()
    return next(d for d in mesh.devices.flat if d.process_index == me)


def _build_spmd(prog: _Program, leaves: list, structs: list) -> None:
    """The program as ``shard_map`` over the processes' mesh: each process's leaves are its blocks
    (0-dim ones as length-1 blocks; Python scalars replicated), so a collective node's ``psum`` spans
    the processes. Compiled now, in this thread: every process must switch to it at the same step."""
    global _spmd_tracing
    from jax.sharding import PartitionSpec as P

    mesh, plan, live = prog.spmd, prog.plan, prog.live
    axis = mesh.axis_names[0]
    scalar = [_replicated(x) for x in leaves]
    scalar_shapes = [None if sc else tuple(x.shape) for x, sc in zip(leaves, scalar)]

    def body(*blocks: Any) -> list:
        xs = [b if sc or shape != () else b.reshape(()) for b, sc, shape in zip(blocks, scalar, scalar_shapes)]
        return [o.reshape(1) if o.ndim == 0 else o for o in _run_plan(plan, live, xs)]

    in_specs = tuple(P() if sc else P(axis) for sc in scalar)
    # donated like the single-device program's: parameters, gradients and optimizer state are updated in place
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=P(axis), check_vma=False),
                 donate_argnums=prog.donate)
    _spmd_tracing = True
    try:
        prog.compiled = fn.lower(*_spmd_args(mesh, leaves, scalar)).compile()
        stats["compiles"] += 1
    except Exception:  # the cold path stays correct (collective nodes run their own programs)
        prog.failed = True
        stats["compile_failures"] += 1
    finally:
        _spmd_tracing = False


def _spmd_args(mesh: Any, leaves: list, scalar: list) -> list:
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    dev = _my_block(mesh)
    sharding = NamedSharding(mesh, P(mesh.axis_names[0]))
    out = []
    for x, sc in zip(leaves, scalar):
        if sc:
            out.append(x)
            continue
        if type(x) is np.ndarray or x.devices() != {dev}:
            x = jax.device_put(x, dev)
        if x.ndim == 0:
            x = x.reshape(1)
        out.append(jax.make_array_from_single_device_arrays((mesh.size * x.shape[0], *x.shape[1:]), sharding, [x]))
    return out


def _call_spmd(prog: _Program, leaves: list, live_objs: list) -> list:
    """Run an SPMD program on this process's leaves; its blocks of the outputs."""
    outs = prog.compiled(*_spmd_args(prog.spmd, leaves, [_replicated(x) for x in leaves]))
    blocks = [o.addressable_data(0) for o in outs]
    return [b.reshape(()) if z.shape == () else b for b, z in zip(blocks, live_objs)]


def _onto_mesh(leaves: list, error: Exception | None) -> list:
    from . import device as _device

    try:
        return _device.onto_mesh(leaves, error or ValueError("no mesh"))
    except ValueError:
        if error is not None:
            raise
        return leaves


def _user_site() -> str:
    """Where a value was asked for: the first frame outside torchlike, and the torchlike function below it."""
    f = sys._getframe(2)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.path.abspath(__file__)
    inner = None
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if name.startswith(pkg) or name == "<string>" or f.f_code.co_filename == "<string>":
            if inner is None and name != here and "/_core/tensor.py" not in name:
                inner = f"{os.path.relpath(name, pkg)}:{f.f_lineno} {f.f_code.co_name}"
            f = f.f_back
            continue
        break
    site = "<torchlike>" if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"
    return f"{site} via {inner}" if inner else site


def pending() -> int:
    """How many nodes are recorded and not yet run."""
    return len(_graph.nodes)


def reset_stats() -> None:
    stats.clear()
    flush_reasons.clear()
    flush_sites.clear()


def clear_caches() -> None:
    """Forget compiled programs and signatures (memory; tests)."""
    flush("clear caches")
    _graph.expect = None
    _programs.clear()
    _skeletons.clear()
    _donation_plans.clear()
    _sigs.clear()
    _first_trace[0] = None

"""The backward engine: replay the tape through jax.vjp.

Graphs are run in one of two ways, from the same program:

* fused: the whole backward (every node's VJP and the accumulation into ``.grad``) as ONE
  ``jax.jit`` call, cached by the graph's structure. A training loop builds the same graph
  each step, so after the first steps backward is a single cached XLA call.
* per node: each node's VJP as its own cached jitted call, with Python in between. Used the
  first time a structure is seen (compiling a whole graph that may never recur is waste), for
  graphs with hooks on intermediate tensors, and with ``create_graph=True`` (where each VJP is
  itself recorded on the tape, so it can be differentiated again).
"""

from __future__ import annotations

import collections
import contextlib
import threading
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import _xla_tiers, cold_kernels, kernel_cache, lazy
from .._core import device as _device
from .._core import graph as _graph
from .._core import tensor as T
from .._core.graph import AccumulateGrad, Node, _node_vjp, edge_of
from .._core.kernel_cache import LRU
from .._core.tensor import Tensor
from . import _node_hooks, _reach, anomaly_mode

FUSE_AFTER = 2  # compile the fused program the second time a structure is seen
CACHE_SIZE = 64
# A structure met with this many argument shapes is churning (growing contexts, dynamic padding, varying
# batch sizes): it compiles no fused program for a further shape, and runs per node on bucketed kernels.
CHURN_SHAPES = 4
_tree_leaves = jax.tree_util.tree_leaves

_ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)

stats = collections.Counter()  # observable counters: fused_calls, fused_compiles, per_node_calls


def _make_grads(roots: Sequence[Tensor], grads: Sequence[Any], create_graph: bool) -> list:
    """The roots' gradients as Tensors; an implicit one (``1`` for a scalar) of an eager CPU backward without
    create_graph is None: the fused program takes it as a NumPy array (``jnp.ones`` costs ~35 us of dispatch),
    the per-node path makes it as before (``_ones``)."""
    defer = not create_graph and not lazy._on
    out = []
    for i, (t, g) in enumerate(zip(roots, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"tensors[{i}] must be a Tensor")
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t._dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t._dtype}"
                )
            if defer and t._buf.device.type == "cpu" and not isinstance(t._peek(), jax.core.Tracer):
                out.append(None)
                continue
            g = T.make_on(jnp.ones(t._shape, t._dtype.np), t._buf.device)
        elif not isinstance(g, Tensor):
            from .._ops import creation

            g = creation.tensor(g, dtype=t._dtype)
        if g._shape != t._shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g._shape} and output[{i}] has a shape "
                f"of {t._shape}."
            )
        out.append(g)
    return out


class _Program:
    """A graph flattened into index form: what the fused trace and the per-node loop both run."""

    __slots__ = ("nodes", "leaves", "entries", "key", "roots", "wanted", "live", "runs")

    def __init__(self, root_edges: list, wanted_edges: list | None, run_captured: bool = False) -> None:
        # Depth-first post-order from the roots; reversed it is a topological order. NOTE: this runs on every
        # backward, so it is written for speed: type() instead of isinstance (AccumulateGrad has no
        # subclasses), one dict for both kinds of target, no helper calls per edge.
        order: list = []
        leaves: list = []
        where: dict = {}  # id(node) -> its post-order position (-1 while visiting); id(leaf) -> ("l", position)
        # A node popped while it is being visited (-1) is its own post-visit entry: an earlier copy of it lies
        # below that entry, and a later one would need a cycle.
        stack = [e[0] for e in reversed(root_edges)]
        pop, push, append, get = stack.pop, stack.append, order.append, where.get
        while stack:
            node = pop()
            i = id(node)
            w = get(i)
            if w is None:
                if type(node) is AccumulateGrad:
                    where[i] = ("l", len(leaves))
                    leaves.append(node)
                    continue
                where[i] = -1
                push(node)
                for nxt, _ in reversed(node.edges):
                    if id(nxt) not in where:
                        push(nxt)
            elif w == -1:
                where[i] = len(order)
                append(node)
        order.reverse()
        last = len(order) - 1  # a node's index in ``order`` is last - its post-order position
        self.nodes = order
        self.leaves = leaves

        entries = []
        for n in order:
            if n.freed and n.needs_saved:  # torch: a node that saved nothing runs again
                raise RuntimeError(_ERR_FREED)
            targets = tuple([t if type(t := where[id(m)]) is tuple else ("n", last - t, nr) for m, nr in n.edges])
            entries.append((n.kernel, n.diff, targets, _arg_sig(n.args)))
        self.entries = entries

        def target(edge: tuple | None) -> tuple | None:
            t = None if edge is None else where.get(id(edge[0]))
            if t is None:
                return None  # not reachable from the roots: its gradient is None
            return t if type(t) is tuple else ("n", last - t, edge[1])

        self.roots = tuple([target(e) for e in root_edges])
        self.wanted = None if wanted_edges is None else tuple([target(e) for e in wanted_edges])
        self.key = _intern((tuple(entries), self.roots, self.wanted))
        self.live = self.runs = None
        if self.wanted is not None:
            self.live, self.runs = _needed(entries, self.wanted, run_captured)


class _Key:
    """A structure's key whose hash is computed once: the engine's tables look it up several times per backward,
    and hashing the nested tuple costs about a microsecond each time. Interned, so lookups compare identities."""

    __slots__ = ("parts", "hash")

    def __init__(self, parts: tuple) -> None:
        self.parts, self.hash = parts, hash(parts)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is _Key and self.hash == other.hash and self.parts == other.parts)


_keys: LRU = LRU(kernels=False)


def _intern(parts: tuple) -> _Key:
    key = _keys.get(parts)
    if key is None:
        key = _keys[parts] = _Key(parts)
    return key


def _needed(entries: list, wanted: tuple, run_captured: bool) -> tuple[list, list]:
    """torch's exec_info for a backward with ``inputs``: per node, which of its edges lead to an input (the
    gradients of the others are undefined), and whether it runs: when one does (or, ``run_captured``, when an
    input's gradient is read at it: backward(inputs=...) runs a non-leaf input's node, autograd.grad does not)."""
    leaves = {t[1] for t in wanted if t is not None and t[0] == "l"}
    captured = {t[1] for t in wanted if t is not None and t[0] == "n"}
    runs = [False] * len(entries)
    live: list = [()] * len(entries)
    for i in range(len(entries) - 1, -1, -1):  # (a node's targets come after it)
        edges = tuple(t[1] in leaves if t[0] == "l" else runs[t[1]] or t[1] in captured for t in entries[i][2])
        live[i] = edges
        runs[i] = any(edges) or (run_captured and i in captured)
    return live, runs


class _Spent:
    """An array argument of a node that saved nothing, after its backward ran: shape and dtype only."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype


# ops that declare no saves (saves only drive torch's version errors) but whose gradient reads the
# values of their differentiable inputs: nansum (the NaN mask), lerp with a tensor weight, kron
_READS_INPUTS = frozenset({"NansumBackward0", "LerpBackward1", "UnsafeViewBackward0"})


def _spend(n: Node) -> list | None:
    """The arguments of ``n`` with its differentiable inputs' arrays dropped (shape and dtype kept):
    such a node's gradient is linear in them. Non-differentiable arguments (masks, noise) stay."""
    args = n.args
    if args is None or type(n).__name__ in _READS_INPUTS:
        return args
    out = list(args)
    for pos, j in n.diff:
        a = out[pos]
        if j is None:
            if type(a) in _PLAIN_ARRAYS or isinstance(a, _ARRAYS):
                out[pos] = _spent(a)
        elif type(a[j]) in _PLAIN_ARRAYS or isinstance(a[j], _ARRAYS):
            a = out[pos] = list(a)
            a[j] = _spent(a[j])
    return out


_ARRAYS = (jax.Array, np.ndarray, lazy.LazyArray)  # (isinstance: a tracer is a jax.Array too)
_PLAIN_ARRAYS = frozenset((type(jnp.zeros(())), np.ndarray, lazy.LazyArray))  # told by type, without the ABC
_spent_by_meta: dict = {}  # (shape, dtype) -> its _Spent (never changed: shared)


def _spent(a: Any) -> _Spent:
    meta = (tuple(a.shape), a.dtype)
    s = _spent_by_meta.get(meta)
    if s is None:
        if len(_spent_by_meta) > 4096:
            _spent_by_meta.clear()
        s = _spent_by_meta[meta] = _Spent(*meta)
    return s


def _revive(args: list) -> list:
    """Zeros in place of spent arrays (values the node's gradient does not read)."""
    def one(x: Any) -> Any:
        return jnp.zeros(x.shape, x.dtype) if type(x) is _Spent else x

    return [[one(x) for x in a] if isinstance(a, list) else one(a) for a in args]


_SCALAR_TYPES = (bool, int, float, complex)
_SIG_KINDS: dict = {}  # type -> how _arg_sig describes an argument of that type


def _sig_kind(t: type) -> str:
    k = _SIG_KINDS[t] = "list" if issubclass(t, list) else "none" if t is type(None) else (
        "scalar" if issubclass(t, _SCALAR_TYPES) else "array")  # fmt: skip
    return k


def _arg_sig(args: list) -> tuple:
    """Per argument: a list's length, None, a scalar's type, or 0 (an array)."""
    kinds = _SIG_KINDS
    sig = []
    for a in args:
        t = type(a)
        k = kinds.get(t) or _sig_kind(t)
        sig.append(0 if k == "array" else len(a) if k == "list" else None if k == "none" else t)
    return tuple(sig)


def _check_versions(nodes: list) -> None:
    for n in nodes:
        for vc, v, (dt, shape, producer, nr) in n.saved:
            if vc.v != v:
                from .._core import dtype as D

                what = f"[torch.{D.cpp_name(dt)}Tensor [{', '.join(map(str, shape))}]]"
                if producer is not None:
                    pname = type(producer).__name__
                    stem, found, nr_fn = pname.rpartition("Backward")
                    # torch: EluBackward0 reads "Elu", EluBackward1 "Elu1"
                    base = stem + ("" if nr_fn == "0" else nr_fn) if found else pname
                    what += f", which is output {nr} of {base},"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: {what} is at version {vc.v}; expected version {v} instead. Hint: enable anomaly "
                    "detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
                )


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    return a + b


def _execute(entries: Sequence, node_args: Sequence, n_leaves: int, roots: tuple, root_cts: Sequence,
             wanted: tuple | None, vjp: Any, on_node: Any = None, after_node: Any = None,
             runs: list | None = None, on_leaf: Any = None) -> tuple:  # fmt: skip
    """Run the program. ``vjp(i, kernel, diff, args, cts)`` computes one node's input grads;
    ``on_node(i, slot, runs)`` may rewrite a node's output cotangents first (tensor hooks), ``after_node`` its
    input gradients (node hooks); with ``runs`` (``_needed``), only those nodes run; ``on_leaf(j, g)`` takes a
    leaf's gradient as soon as the nodes that feed it have run."""
    slots: list[dict] = [dict() for _ in entries]
    leaf_cts: list = [None] * n_leaves
    wanted_cts: dict = {}

    def send(target: tuple, g: Any) -> None:
        if target[0] == "l":
            leaf_cts[target[1]] = _add(leaf_cts[target[1]], g)
        else:
            slot = slots[target[1]]
            slot[target[2]] = _add(slot.get(target[2]), g)

    for t, g in zip(roots, root_cts):
        send(t, g)
    ready = leaves_ready(entries, n_leaves) if on_leaf is not None else None
    for i, (kernel, diff, targets, _) in enumerate(entries):
        if ready is not None:
            for j in ready.get(i - 1, ()):
                on_leaf(j, leaf_cts[j])
        slot = slots[i]
        captured = wanted is not None and any(t is not None and t[0] == "n" and t[1] == i for t in wanted)
        run = runs is None or runs[i]
        if not run and not captured:
            continue  # torch: a node no input is reached from is not run (nor its hooks)
        if on_node is not None:
            slot = on_node(i, slot, run)
        if captured:
            for w, tgt in enumerate(wanted):
                if tgt is not None and tgt[0] == "n" and tgt[1] == i:
                    wanted_cts[w] = slot.get(tgt[2])
        if not slot or not run:
            continue
        n_out = max(slot) + 1
        cts = tuple(slot.get(k) for k in range(n_out))
        grads = vjp(i, kernel, diff, node_args[i], cts)
        if after_node is not None:
            grads = after_node(i, grads, cts)
        for tgt, g in zip(targets, grads):
            if g is not None and getattr(g, "dtype", None) != jax.dtypes.float0:
                send(tgt, g)
        slots[i] = None
    if ready is not None:
        for j in ready.get(len(entries) - 1, ()):
            on_leaf(j, leaf_cts[j])
    if wanted is not None:
        for w, tgt in enumerate(wanted):
            if tgt is not None and tgt[0] == "l":
                wanted_cts[w] = leaf_cts[tgt[1]]
    return leaf_cts, wanted_cts


def leaves_ready(entries: Sequence, n_leaves: int) -> dict:
    """{node index: leaves whose last feeding node it is} (-1: leaves only the roots feed)."""
    last = [-1] * n_leaves
    for i, e in enumerate(entries):
        for t in e[2]:
            if t[0] == "l":
                last[t[1]] = i
    ready: dict = {}
    for j, i in enumerate(last):
        ready.setdefault(i, []).append(j)
    return ready


# --- the fused path ----------------------------------------------------------------------------

_programs: LRU = LRU(kernels=False)  # structure -> times seen, then its fused program
# A fused backward's compile costs ~0.1-0.5 s per node on a loaded 2-core CPU (5 nodes: 0.6-2.5 s)
_fused_rental = cold_kernels.Rental(0.05)
_NODE_COST = 30e-6  # seconds of Python and dispatch per node on the per-node path


def _ones(root_cts: list, ones: list | None) -> list:
    """``root_cts`` with the implicit ones (NumPy arrays) made JAX arrays, as ``_make_grads`` made them."""
    if ones is None:
        return root_cts
    return [jnp.ones(c.shape, c.dtype) if o else c for c, o in zip(root_cts, ones)]


def _fused_fn(entries: tuple, roots: tuple, wanted: tuple | None, n_leaves: int) -> lazy.PerNode:
    """One structure's backward as one jitted function; in a lazy structure whose shapes keep changing, node
    by node on the per-node kernels, whose bucketed executables serve every size."""
    def backward(vjp: Any, node_args: list, root_cts: list, old_grads: list) -> tuple:
        leaf_cts, wanted_cts = _execute(entries, node_args, n_leaves, roots, root_cts, wanted, vjp)
        new_grads = [
            None if g is None else (g if old is None else old + g) for g, old in zip(leaf_cts, old_grads)
        ]
        return new_grads, [wanted_cts.get(w) for w in range(len(wanted or ()))]

    def run(node_args, root_cts, old_grads):
        return backward(lambda i, kernel, diff, args, cts: _node_vjp(kernel, diff, args, cts), node_args, root_cts,
                        old_grads)  # fmt: skip

    run.__name__ = "fused_backward"
    # (no autotuning on a GPU: its own program outside lazy mode)
    return lazy.PerNode(_xla_tiers.one_op_jit(run), lambda *args: backward(_per_node_vjp, *args), "fused_backward")


# --- the per-node path -------------------------------------------------------------------------

_vjp_kernels: LRU = LRU()


def _per_node_vjp(i: int, kernel: Any, diff: tuple, args: list, cts: tuple) -> tuple:
    key = (kernel, diff, _arg_sig(args), tuple(c is None for c in cts))
    k = _vjp_kernels.get(key)
    if k is None:
        def vjp(a, c):
            return _node_vjp(kernel, diff, a, c)

        vjp.__name__ = f"{getattr(kernel, '__name__', 'node')}_backward"
        k = _vjp_kernels[key] = cold_kernels.cold(vjp)
        if getattr(kernel, "pad", None) is not None:  # pads as the forward op declares (_core/buckets.py)
            k.vjp_of = (kernel, len(args))
    return _mesh_safe(k, args, cts)


def _mesh_safe(k: Any, *args: Any) -> Any:
    """Call ``k``; if single-device and mesh-sharded arrays meet (DataParallel), replicate and retry."""
    try:
        return lazy.call(k, args)
    except ValueError as e:
        if "ncompatible devices" not in str(e):
            raise
        from .._core import device as _device

        return k(*_device.onto_mesh(args, e))


def _has_intermediate_hooks(nodes: list) -> bool:
    return any(n.pre_hooks or n.retained or n.hooks or n.prehooks_node for n in nodes)


def _hooks_on_node(nodes: list) -> Any:
    def on_node(i: int, slot: dict, run: bool = True) -> dict:
        # torch: the tensors' hooks, retain_grad, then (on a node that runs) the node's pre-hooks
        node = nodes[i]
        if node.pre_hooks:
            for nr, hooks in node.pre_hooks.items():
                if nr in slot:
                    for hook in hooks:
                        r = hook(_as_tensor(slot[nr], node, nr))
                        if r is not None:
                            slot[nr] = r._peek()
        if node.retained:
            for nr, ref in node.retained.items():
                t = ref()
                if t is not None and nr in slot:
                    g = _as_tensor(slot[nr], node, nr)
                    t._grad = g if t._grad is None else T.make(t._grad._peek() + g._peek(), g._buf.device)
        if node.prehooks_node and run:
            outs = tuple(_as_tensor(slot.get(k), node, k) for k in range(len(node.out_meta)))
            outs = _node_hooks.call_hooks(node.prehooks_node, outs)
            slot = {k: o._peek() for k, o in enumerate(outs) if o is not None}
        return slot

    return on_node


def _as_tensor(arr: Any, node: Node, nr: int) -> Tensor | None:
    if arr is None:
        return None
    placed = hasattr(arr, "devices") and not isinstance(arr, jax.core.Tracer)
    return T.make(arr, _device.from_jax(next(iter(arr.devices()))) if placed else _device.CPU)


# --- entry points ------------------------------------------------------------------------------


def _root_edges(roots: Sequence[Tensor]) -> list:
    return [edge_of(t) for t in roots]


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """torch.autograd.backward: accumulate gradients of ``tensors`` into leaves' ``.grad``."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,) * len(tensors) if grad_tensors is None else (grad_tensors,)
    grads = _make_grads(tensors, grad_tensors, create_graph)
    stats["backward_calls"] += 1
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _run(tensors, grads, retain_graph, create_graph, inputs, accumulate=True)
    if lazy._on:
        lazy.backward_recorded()


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """torch.autograd.grad: gradients of ``outputs`` w.r.t. ``inputs``, returned (not accumulated)."""
    if is_grads_batched:
        raise NotImplementedError("torchlike: autograd.grad(is_grads_batched=True) is not supported; use torch.func.vmap")
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,) * len(outputs) if grad_outputs is None else (grad_outputs,)
    grads = _make_grads(outputs, grad_outputs, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if allow_unused is None:
        allow_unused = materialize_grads
    result = _run(outputs, grads, retain_graph, create_graph, inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                from .._ops import creation

                g = creation.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out)


def _run(roots: Sequence[Tensor], grads: list, retain_graph: bool, create_graph: bool,
         inputs: Sequence[Tensor] | None, accumulate: bool) -> list:
    root_edges = _root_edges(roots)
    wanted_edges = None
    if inputs is not None:
        wanted_edges = [edge_of(t) for t in inputs]
    prog = _Program(root_edges, wanted_edges, accumulate)
    _check_versions(prog.nodes)
    frames = _unpack_checkpoints(prog.nodes) if _graph.checkpoint_frames else ()
    for n in prog.nodes:
        if n.freed and n.args is not None:
            n.args = _revive(n.args)
    node_args = [n.args for n in prog.nodes]
    device = (roots[0] if grads[0] is None else grads[0])._buf.device if grads else _device.CPU

    # torch: accumulation into .grad is atomic across threads. The old .grad is read before the backward
    # runs (the fused program adds it inside the jit), so the read and the write hold one lock
    try:
        with _grad_lock if accumulate else contextlib.nullcontext():
            return _run_locked(prog, node_args, roots, grads, device, retain_graph, create_graph, inputs,
                               wanted_edges, accumulate)  # fmt: skip
    finally:
        for f in frames:
            f.pack()  # torch: a retained graph recomputes again in its next backward


def _unpack_checkpoints(nodes: list) -> list:
    """Recompute the arrays non-reentrant checkpoints dropped from ``nodes`` (utils.checkpoint's frames)."""
    frames = {}
    for n in nodes:
        f = n.checkpoint
        if f is not None and f.packed:
            frames[id(f)] = f
    for f in frames.values():
        f.unpack()
    return list(frames.values())


_grad_lock = threading.RLock()


def _run_locked(prog: _Program, node_args: list, roots: Sequence[Tensor], grads: list, device: Any,
                retain_graph: bool, create_graph: bool, inputs: Sequence[Tensor] | None, wanted_edges: list | None,
                accumulate: bool) -> list:  # fmt: skip
    only = None
    if accumulate and inputs is not None:
        only = {id(e[0]) for e in wanted_edges if e is not None and isinstance(e[0], AccumulateGrad)}
    done: set = set()
    on_leaf = None
    if accumulate and any(l.hooks or l.variable._hooks or "_post_acc_hooks" in l.variable.__dict__
                          for l in prog.leaves):  # fmt: skip

        def on_leaf(j: int, g: Any) -> None:  # torch: a leaf's AccumulateGrad runs once its gradients are in
            leaf = prog.leaves[j]
            if g is not None and (only is None or id(leaf) in only):
                _accumulate(leaf, g, create_graph)
                done.add(j)

    _with_inputs.append(inputs is not None)
    try:
        if create_graph:
            from . import _higher

            leaf_grads, wanted = _higher.run(prog, grads, on_leaf, leaves_ready)
        else:
            root_cts = [np.ones(t._shape, t._dtype.np) if g is None else g._peek() for t, g in zip(roots, grads)]
            ones = [g is None for g in grads]
            ones = ones if True in ones else None
            leaf_grads, wanted = _run_arrays(prog, node_args, root_cts, accumulate, device, on_leaf, ones)
    finally:
        _with_inputs.pop()

    if not retain_graph:
        for n in prog.nodes:
            # torch: a node that saved nothing holds no input after backward (it may run again: its
            # gradient depends on their shapes only). Keeping the arrays kept every step's activations
            # alive for as long as the loss was referenced, and made them outputs of the lazy program.
            n.args = None if n.needs_saved else _spend(n)
            n.freed = True
            if n.kernel is None:
                n._freed = True

    if not accumulate:
        out = [_wrap_grad(w, device, create_graph) for w in (wanted.get(i) for i in range(len(inputs)))]
        hooked: dict = {}  # torch: a leaf input's tensor hooks run (once) on the gradient autograd.grad reads for it
        for i, (t, g) in enumerate(zip(inputs, out)):
            if g is not None and t._node is None and t._hooks:
                out[i] = hooked[id(t)] if id(t) in hooked else hooked.setdefault(id(t), _leaf_hooks(t, g))
        return out
    if inputs is not None:
        # non-leaf inputs to backward(inputs=...) get their .grad like retain_grad
        for i, t in enumerate(inputs):
            if t._node is not None and wanted.get(i) is not None:
                g = _wrap_grad(wanted[i], device, create_graph)
                t._grad = g if t._grad is None else t._grad + g
    for j, (leaf, g) in enumerate(zip(prog.leaves, leaf_grads)):
        if g is None or j in done or (only is not None and id(leaf) not in only):
            continue
        _accumulate(leaf, g, create_graph)
    _run_callbacks()
    return []


_callbacks: list = []
_with_inputs: list = []  # per running backward: was it autograd.grad / backward(inputs=...)?


def running_with_inputs() -> bool:
    """Whether the innermost running backward was asked for particular inputs (torch's
    ``_is_checkpoint_valid`` is its negation)."""
    return bool(_with_inputs) and _with_inputs[-1]


def queue_callback(callback: Any) -> None:
    """torch's Variable._execution_engine.queue_callback: run ``callback`` when this backward ends."""
    _callbacks.append(callback)


def _run_callbacks() -> None:
    while _callbacks:
        _callbacks.pop(0)()


def _leaf_hooks(t: Tensor, g: Tensor) -> Tensor:
    for hook in t._hooks:
        r = hook(g)
        if r is not None:
            g = r
    return g


def _wrap_grad(g: Any, device: Any, create_graph: bool) -> Tensor | None:
    if g is None or isinstance(g, Tensor):
        return g
    return T.make(g, device)


def _run_arrays(prog: _Program, node_args: list, root_cts: list, accumulate: bool, device: Any,
                on_leaf: Any = None, ones: list | None = None) -> tuple:  # fmt: skip
    """``ones``: per root, whether its gradient is an implicit one (a NumPy array in ``root_cts``, which the fused
    program takes as it is and the per-node path makes a JAX array, as it did)."""
    nodes = prog.nodes
    hooks = (
        _has_intermediate_hooks(nodes)
        or any(l.hooks or l.variable._hooks for l in prog.leaves)
        or any(e[0] is None for e in prog.entries)
        or (_reach.undefined_when and any(n in _reach.undefined_when for n in nodes))
    )
    fuse = not hooks and not anomaly_mode._enabled  # anomaly mode checks (and reports) node by node
    # Eagerly on the CPU a (structure, shapes) runs per node (cold VJPs: no compile) until that has cost
    # about what compiling the fused program would: changing shapes then compile nothing.
    cold_key = _fused_rental.key(prog.key, (node_args, root_cts)) if fuse and not lazy._on else None
    sig = _shape_sig(node_args, root_cts) if fuse and not lazy._on else None
    seen = _meet(prog.key, sig) if sig is not None else 0
    if fuse and cold_key is None:
        entry = _programs.get(prog.key)
        # Lazily the backward is one node of the step's program either way: fuse it from the start, so the
        # step's structure (and its compiled program) is the same from the first step on
        fuse_after = 1 if lazy._on or cold_kernels.enabled() else FUSE_AFTER
        if entry is None:
            entry = 0
            _programs[prog.key] = 0
            if len(_programs) > CACHE_SIZE:
                _programs.popitem(last=False)
        else:
            _programs.move_to_end(prog.key)
        if isinstance(entry, int):
            entry += 1
            if entry >= fuse_after:
                entry = _fused_fn(tuple(prog.entries), prog.roots, prog.wanted, len(prog.leaves))
                stats["fused_compiles"] += 1
            _programs[prog.key] = entry
        if not isinstance(entry, int) and not _churning(prog.key, root_cts, sig, seen):
            olds = [
                (l.variable._grad._peek() if accumulate and l.variable._grad is not None else None)
                for l in prog.leaves
            ]
            stats["fused_calls"] += 1
            new_grads, wanted = _mesh_safe(entry, node_args, root_cts, olds)
            wanted = dict(enumerate(wanted))
            return [_Summed(g) if o is not None else g for g, o in zip(new_grads, olds)], wanted
    stats["per_node_calls"] += 1
    if ones is not None:
        root_cts = _ones(root_cts, ones)
    on_node = _hooks_on_node(nodes) if hooks else None

    def vjp(i: int, kernel: Any, diff: tuple, args: list, cts: tuple) -> Any:
        if kernel is None:  # a custom autograd.Function
            from .function import run_backward

            grads = run_backward(nodes[i], cts, device)
        else:
            grads = _per_node_vjp(i, kernel, diff, args, cts)
            if _reach.undefined_when:
                grads = _reach.drop_undefined(nodes[i], diff, grads, cts)
        if anomaly_mode.checking:
            anomaly_mode.check_grads(nodes[i], grads)
        return grads

    if anomaly_mode._enabled:
        vjp = anomaly_mode.reporting(vjp, nodes)

    t0 = cold_kernels.interpreted()  # modelled, not clocked: which programs compile must not depend on load
    leaf_cts, wanted = _execute(
        prog.entries, node_args, len(prog.leaves), prog.roots, root_cts, prog.wanted, vjp, on_node,
        _node_post_hooks(nodes, device, prog.live) if hooks else None, prog.runs if hooks else None,
        on_leaf if hooks else None,
    )
    if cold_key is not None:
        _fused_rental.spend(cold_key, cold_kernels.interpreted() - t0 + _NODE_COST * len(nodes), len(nodes))
    return leaf_cts, wanted


_fused_shapes: LRU = LRU(kernels=False)  # structure -> the argument shapes its fused program has met
_met_shapes: LRU = LRU(kernels=False)  # structure -> the argument shapes it has met at all (eager mode)


_ARRAY_TYPES = (type(jnp.zeros(())), np.ndarray)


def _shape_sig(node_args: list, root_cts: list) -> tuple:
    """(shape, dtype) of each array leaf of the arguments, the type of each other leaf: ``tree_leaves``'s order,
    with its common cases (arrays, None, scalars) inline. (The arguments' structure is the graph structure's,
    already in the key.)"""
    sig: list = []
    add = sig.append
    arrays, scalars = _ARRAY_TYPES, _SCALAR_TYPES
    for args in (*node_args, root_cts):
        for a in args or ():
            t = type(a)
            if t in arrays:
                add((a.shape, a.dtype))
            elif a is None:
                continue
            elif t in scalars:
                add(t)
            else:
                for b in _tree_leaves(a):
                    add((b.shape, b.dtype) if hasattr(b, "shape") else type(b))
    return tuple(sig)


def _meet(key: Any, sig: tuple) -> int:
    """Record this call's shapes among those its structure has met; how many times they have been met before
    (-1 where the structure has met too many shapes to record more)."""
    met = _met_shapes.get(key)
    if met is None:
        met = _met_shapes[key] = {}
    seen = met.get(sig, 0)
    if seen or len(met) <= CHURN_SHAPES:
        met[sig] = seen + 1
        return seen
    return -1


def _churning(key: Any, root_cts: list, sig: tuple | None, seen: int) -> bool:
    """Whether this call runs per node rather than compiling the fused program for one more shape (eager mode).
    A shape compiles at its third sighting, unless its structure has met more than CHURN_SHAPES shapes by then:
    a padded batch's longest length recurs a few times, and each of those compiled a program of a GRU's scans
    (1-3 s each, 4 of them, each run about 10 times; issue 40). Shapes already compiled stay fused."""
    if lazy._on or any(isinstance(c, jax.core.Tracer) for c in root_cts):
        return False  # traced (torchlike.compile): the enclosing program compiles once per shape anyway
    compiled = _fused_shapes.get(key)
    if compiled is not None and sig in compiled:
        return False
    if seen >= 2 and len(_met_shapes.get(key, ())) <= CHURN_SHAPES:
        if kernel_cache.admit(_fused_shapes, key, sig, CHURN_SHAPES):
            return False
    stats["churn_per_node"] += 1
    return True


def _node_post_hooks(nodes: list, device: Any, live: list | None) -> Any:
    """torch's Node.register_hook: ``hook(grad_inputs, grad_outputs)`` may replace the grad_inputs."""

    def after(i: int, grads: Any, cts: tuple) -> Any:
        node = nodes[i]
        if not node.hooks:
            return grads
        return _node_hooks.run(node, list(grads), cts, device, live=None if live is None else live[i])

    return after


class _Summed:
    """A leaf gradient that already includes the old ``.grad`` (the fused path adds inside the jit)."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array


def _accumulate(leaf: AccumulateGrad, g: Any, create_graph: bool) -> None:
    t = leaf.variable
    if isinstance(g, _Summed):
        arr = g.array
        summed = True
    else:
        arr = g
        summed = False
    if isinstance(arr, Tensor):  # create_graph: g is a Tensor with history
        gt = arr
        for hook in t._hooks or ():
            r = hook(gt)
            if r is not None:
                gt = r
        t._grad = gt if t._grad is None else t._grad + gt
        _after_accumulate(leaf, t)
        return
    if t._hooks:
        gt = T.make(arr, t._buf.device)
        for hook in t._hooks:
            r = hook(gt)
            if r is not None:
                gt = r
        arr = gt._peek()
    if arr.dtype != t._dtype.np:
        arr = arr.astype(t._dtype.np)
    old = t._grad
    if old is None:
        t._grad = T.make(arr, t._buf.device)
    elif summed:
        old._assign(arr)
    else:
        old._assign(old._peek() + arr)
    _after_accumulate(leaf, t)


def _after_accumulate(leaf: AccumulateGrad, t: Tensor) -> None:
    for hook in t.__dict__.get("_post_acc_hooks", ()):
        hook(t)
    if leaf.hooks:
        for hook in leaf.hooks:
            hook(t)

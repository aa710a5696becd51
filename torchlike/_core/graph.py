"""The tape: backward nodes recorded by ops, torch's grad_fn objects.

A ``Node`` keeps the op's kernel (a pure JAX function of its dynamic arguments), the
arguments as they were passed (immutable arrays, so they are exactly the saved values) and,
for each argument that needs a gradient, the edge it came from. The engine replays nodes
through ``jax.vjp`` of the kernel.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import tensor as T
from .tensor import Tensor

# torch's path of this module (torch.autograd.graph), which autograd/__init__ makes importable: what reprs and
# pickle show for the classes defined here
_PUBLIC_MODULE = "torchlike.autograd.graph"

_node_classes: dict[str, type] = {}


class Node:
    """Base of torch's grad_fn classes (``AddBackward0`` ...); one subclass per name, made on demand."""

    __slots__ = (
        "kernel",  # callable(*args) -> output(s); None for nodes the engine treats specially
        "args",  # the kernel's arguments: arrays, lists of arrays, Python scalars, None
        "diff",  # ((position, index-in-list or None), ...) of arguments that get gradients
        "edges",  # ((node, output_nr), ...) aligned with diff
        "n_inputs",  # for next_functions: edges of every tensor/scalar input in torch's order
        "input_edges",
        "out_meta",  # ((shape, np dtype), ...) of outputs
        "saved",  # ((version_counter, version, describe), ...) for torch's in-place check
        "__dict__",  # the rarely set attributes below, whose class defaults a new node shares
        "__weakref__",
    )
    pre_hooks: dict | None = None  # {output_nr: [hook]} tensor hooks on this node's outputs
    retained: dict | None = None  # {output_nr: weakref(tensor)} for retain_grad
    hooks: list | None = None
    prehooks_node: list | None = None
    freed = False
    _metadata: dict | None = None
    needs_saved = True
    checkpoint: Any = None  # utils.checkpoint's frame that dropped this node's arrays and recomputes them

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        return self.input_edges

    def register_hook(self, fn: Callable) -> Any:
        if type(self).__dict__.get("_spec") is not None and not _replayable(type(self)):
            inner = ", ".join(sorted(_shown_names(type(self)._spec)))
            raise NotImplementedError(
                f"torchlike runs this op as one node: {self.name()}'s grad_inputs would be the gradients that torch's "
                f"{inner} compute, which it never forms; register the hook on the op's inputs or use register_prehook"
            )
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return _RemovableHandle(self.hooks, fn)

    def register_prehook(self, fn: Callable) -> Any:
        if self.prehooks_node is None:
            self.prehooks_node = []
        self.prehooks_node.append(fn)
        return _RemovableHandle(self.prehooks_node, fn)

    def _out_shapes(self) -> tuple:
        return tuple(m[0] for m in self.out_meta)


def node_class(name: str) -> type:
    """The grad_fn class for ``name``; ``"Name@shape"`` is a fused op's node whose ``next_functions``
    show the chain of nodes torch builds for it (see ``show_as``)."""
    cls = _node_classes.get(name)
    if cls is None:
        base, _, shape = name.partition("@")
        ns: dict[str, Any] = {"__slots__": (), "__module__": _PUBLIC_MODULE}
        if shape:
            ns["next_functions"] = property(lambda self, spec=_SHAPES[shape]: _shown_edges(self, spec))
            ns["_spec"] = _SHAPES[shape]
        if base == "CopySlices":  # torch: a C++ node outside the generated ones, named with its namespace
            ns["name"] = lambda self: "torch::autograd::CopySlices"
            ns["next_functions"] = property(_copy_slices_edges)
        cls = _node_classes[name] = type(base, (Node,), ns)
    return cls


def _copy_slices_edges(node: Node) -> tuple:
    """torch's CopySlices wraps the in-place op's node: it lists the base's previous edge, then that node's
    edges but its first (the view that was written)."""
    edges = node.input_edges
    op = edges[1][0] if len(edges) > 1 else None
    if op is None or isinstance(op, AccumulateGrad) or not op.next_functions:
        return edges
    return (edges[0], *op.next_functions[1:])


# --- torch's graph shape for fused ops ----------------------------------------------------------
# torchlike runs e.g. ``linear`` as one kernel and one node, where torch records addmm over t(weight)
# (or view/mm/unsafe_view chains). Scripts and tools read ``next_functions``, so such a node shows
# torch's chain: a spec is a list of entries, each the index of one of the op's inputs, None (an
# empty edge), or a ``(name, [entries])`` node shown between. Backward runs the fused node, unless hooks on the
# node or its shown nodes ask for torch's chain (autograd/_node_hooks.py).

_SHAPES: dict[str, list] = {}


def show_as(shape: str, spec: list) -> None:
    """Register the graph shape ``shape`` (used as ``grad_name`` ``"Name@shape"``)."""
    _SHAPES[shape] = spec


class ShownNode:
    """A node torch would have built inside a fused op: its name and its inputs. The fused node computes the
    gradients; where torch's chain can be replayed (autograd/_node_hooks.py), hooks put here run on the gradients
    torch's node would see, and what they return flows on."""

    __slots__ = ("_next", "metadata", "_owner", "_path", "_hooks", "_prehooks", "__weakref__")

    def __init__(self, next_functions: tuple, owner: Node, path: tuple) -> None:
        self._next = next_functions
        self.metadata: dict = {}
        self._owner = weakref.ref(owner)
        self._path = path  # where this node sits in the owner's shown graph (indices from the owner down)
        self._hooks: list = []
        self._prehooks: list = []

    name = Node.name
    __repr__ = Node.__repr__

    @property
    def next_functions(self) -> tuple:
        return self._next

    def register_hook(self, fn: Callable) -> Any:
        """``fn(grad_inputs, grad_outputs)``, which may return new grad_inputs (torch's Node.register_hook)."""
        return self._add(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> Any:
        """``fn(grad_outputs)``, which may return new grad_outputs (torch's Node.register_prehook)."""
        return self._add(self._prehooks, fn)

    def _add(self, hooks: list, fn: Callable) -> Any:
        owner = self._owner()
        if owner is None or not _replayable(type(owner)):
            raise NotImplementedError(
                f"torchlike runs this op as one node, and {type(self).__name__} is shown for torch's graph shape "
                "between inner nodes that torchlike cannot replay: register the hook on the op's output tensor or "
                "on its grad_fn instead"
            )
        if owner.hooks is None:
            owner.hooks = []
        if _SHOWN_HOOKS not in owner.hooks:
            owner.hooks.append(_SHOWN_HOOKS)  # sends the owner's backward through torch's chain
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)


def _shown_marker(grad_inputs: tuple, grad_outputs: tuple) -> None:
    """Marks an owner node whose shown nodes have hooks (never called as a hook)."""


_SHOWN_HOOKS = _shown_marker

# The shown nodes autograd/_node_hooks.py can replay, each from its inputs' values.
_REPLAYABLE = frozenset((
    "AddmmBackward0", "MmBackward0", "BmmBackward0", "AddBackward0", "TBackward0", "TransposeBackward0",
    "CloneBackward0", "ExpandBackward0", "UnsqueezeBackward0", "SqueezeBackward4", "ViewBackward0",
    "UnsafeViewBackward0", "LogSoftmaxBackward0", "NllLossBackward0", "NllLoss2DBackward0",
))  # fmt: skip


def _replayable(cls: type) -> bool:
    """Whether the fused node class ``cls`` shows a graph whose nodes can all be replayed."""
    spec = getattr(cls, "_spec", None)
    if spec is None:
        return False

    def ok(entries: list) -> bool:
        return all(not isinstance(e, tuple) or (e[0] in _REPLAYABLE and ok(e[1])) for e in entries)

    return (cls.__name__ in _REPLAYABLE or all(not isinstance(e, tuple) for e in spec)) and ok(spec)


def _shown_names(entries: list) -> set:
    return {n for e in entries if isinstance(e, tuple) for n in (e[0], *_shown_names(e[1]))}


_shown_classes: dict[str, type] = {}


def _shown(name: str, next_functions: tuple, owner: Node, path: tuple) -> tuple:
    if all(f is None for f, _ in next_functions):
        return (None, 0)  # torch records no node where no input needs a gradient
    cls = _shown_classes.get(name)
    if cls is None:
        cls = _shown_classes[name] = type(name, (ShownNode,), {"__slots__": (), "__module__": _PUBLIC_MODULE})
    return (cls(next_functions, owner, path), 0)


def _shown_edges(node: Node, spec: list) -> tuple:
    cached = _shown_cache.get(node)
    if cached is None:

        def build(entries: list, path: tuple) -> tuple:
            return tuple(
                node.input_edges[e] if isinstance(e, int) else (None, 0) if e is None
                else _shown(e[0], build(e[1], (*path, k)), node, (*path, k))
                for k, e in enumerate(entries)
            )  # fmt: skip

        cached = _shown_cache[node] = build(spec, ())  # the same objects on every access, as torch's
    return cached


_shown_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class AccumulateGrad:
    """The sink of a leaf tensor that requires grad."""

    __slots__ = ("variable", "hooks", "__weakref__", "metadata")

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.hooks = None
        self.metadata = {}

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        return ()

    def register_hook(self, fn: Callable) -> Any:
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return _RemovableHandle(self.hooks, fn)


_handle_ids = itertools.count()


class _RemovableHandle:
    def __init__(self, container: list, fn: Callable) -> None:
        self.container = container
        self.fn = fn
        self.id = next(_handle_ids)

    def remove(self) -> None:
        try:
            self.container.remove(self.fn)
        except ValueError:
            pass

    def __enter__(self) -> _RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def accumulator(t: Tensor) -> AccumulateGrad:
    acc = t.__dict__.get("_acc")
    acc = acc() if acc is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t.__dict__["_acc"] = weakref.ref(acc)
    return acc


def edge_of(t: Tensor) -> tuple | None:
    """The (node, output_nr) a gradient for ``t`` flows into, or None if it needs none."""
    if not t._rg:
        return None
    node = t._node
    if node is None:
        return (accumulator(t), 0)
    if t._base_t is not None and t._node_v != t._vc.v:
        _refresh_view_node(t)
        node = t._node
    return (node, t._out_nr)


def grad_fn_of(t: Tensor) -> Any:
    if t._node is None:
        return None
    if t._base_t is not None and t._node_v != t._vc.v:
        _refresh_view_node(t)
    return t._node


def _describe(t: Tensor) -> tuple:
    return (t._dtype, tuple(t._shape), t._node, t._out_nr)


def record(op: Any, kernel: Callable, static: tuple, args: list, tensors: list, outputs: Any, dyn: tuple) -> None:
    """Attach a backward node to ``outputs`` if any tensor argument requires grad."""
    # Runs once per op that needs a gradient: one pass over the inputs builds the gradient edges and
    # torch's next_functions together (edge_of inlined for the common cases).
    diff = []
    edges = []
    in_edges = []
    number_edges = getattr(op, "number_edges", None)  # per dynamic argument: does a number there get an edge
    skip = getattr(op, "edge_skip", None)  # per dynamic argument: never differentiated (torch's non-differentiable)
    none_edges = getattr(op, "none_edges", None)  # per dynamic argument: does a None there get an empty edge
    if none_edges is not None and op.none_if_tensor and not any(isinstance(dyn[q], Tensor)
                                                                for q, k in enumerate(none_edges) if k):  # fmt: skip
        none_edges = None
    p = 0
    for pos, t in tensors:
        while p < pos:  # numbers and Nones between tensor arguments
            a = dyn[p]
            if (number_edges is None or number_edges[p]) if a is not None else none_edges is not None and none_edges[p]:
                in_edges.append(_NO_EDGE)
            p += 1
        p = pos + 1
        if skip is not None and skip[pos]:
            continue
        for j, item in ((None, t),) if isinstance(t, Tensor) else enumerate(t):
            if item._rg:
                node = item._node
                if node is None:
                    e = (accumulator(item), 0)
                elif item._base_t is not None and item._node_v != item._vc.v:
                    e = edge_of(item)
                else:
                    e = (node, item._out_nr)
                diff.append((pos, j))
                edges.append(e)
                in_edges.append(e)
            else:
                in_edges.append(_NO_EDGE)
    if not diff:
        return
    for q in range(p, len(dyn)):
        if (number_edges is None or number_edges[q]) if dyn[q] is not None else none_edges is not None and none_edges[q]:
            in_edges.append(_NO_EDGE)
    name = op.grad_name
    cls = _node_classes.get(name) if type(name) is str else None
    if cls is None:
        cls = node_class(name if isinstance(name, str) else name(static, dyn))
    node = cls()
    node.kernel = kernel
    node.args = args
    node.diff = tuple(diff)
    node.edges = tuple(edges)
    node.input_edges = tuple(in_edges)
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    node.out_meta = tuple([(o._shape, o._dtype.np) for o in outs])
    if getattr(op, "keep_numbers", False):
        node.numbers = _numbers(dyn)
    saves = op.saves
    saved = []
    if saves:
        names = op.dyn_names
        wanted = _saved_names(saves, names, tuple([p for p, _ in diff])) if saves != ("*",) else None
        for pos, t in tensors:
            if wanted is None or names[pos] in wanted:
                for item in (t,) if isinstance(t, Tensor) else t:
                    vc = item._vc
                    saved.append((vc, vc.v, (item._dtype, item._shape, item._node, item._out_nr)))
    node.saved = saved
    if not saves:
        node.needs_saved = False
    for i, o in enumerate(outs):
        dt = o._dtype
        if dt.is_floating_point or dt.is_complex:
            o._node = node
            o._out_nr = i
            o._node_v = o._vc.v
            o._rg = True
    if saves and "result" in saves:
        for o in outs:
            saved.append((o._vc, o._vc.v, _describe(o)))
    if region:
        for f in region:
            f(node)


_NO_EDGE = (None, 0)


def _numbers(dyn: tuple) -> tuple:
    return tuple(a if type(a) in (int, float) else None for a in dyn)

# Called with each node record, record_prepared and record_view make: a non-reentrant utils.checkpoint region
# being recorded, anomaly mode's stack recorder; empty otherwise. ``checkpoint_frames`` holds the regions whose
# nodes' arrays were dropped, so the engine looks for nodes to recompute only while there are some.
region: list = []
checkpoint_frames: weakref.WeakSet = weakref.WeakSet()


class Prepared:
    """What ``record`` decided for one op call that only depends on its inputs' metadata (a guarded replay
    of the same call reuses it): the node's class, gradient positions, next_functions layout, saved inputs."""

    __slots__ = ("cls", "diff", "rg", "in_edges", "slots", "head", "tail", "out_meta", "save", "needs_saved", "result",
                 "float_outs")  # fmt: skip


def prepare(op: Any, tensors: list, outputs: Any) -> Prepared | None:
    """The ``Prepared`` form of the node ``record`` just gave ``outputs`` (flat tensor arguments only)."""
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    node = outs[0]._node
    if node is None or any(not isinstance(t, Tensor) for _, t in tensors):
        return None
    if any(o._node is not node for o in outs if o._rg) or not node.diff:
        return None
    pr = Prepared()
    pr.cls = type(node) if type(op.grad_name) is str else None  # a computed name is computed per call
    pr.diff = node.diff
    pos = [p for p, _ in node.diff]
    pr.rg = tuple(pos)  # the dynamic arguments that get edges
    pr.slots = tuple(i for i, e in enumerate(node.input_edges) if e is not _NO_EDGE)
    pr.in_edges = (_NO_EDGE,) * len(node.input_edges)  # the edges are filled in per call: no nodes kept
    pr.head = pr.tail = None
    if len(pr.slots) == 1:
        pr.head, pr.tail = pr.in_edges[: pr.slots[0]], pr.in_edges[pr.slots[0] + 1 :]
    if len(pr.slots) != len(pr.rg):
        return None
    pr.out_meta = node.out_meta
    saves = op.saves
    names = op.dyn_names
    wanted = _saved_names(saves, names, tuple(pos)) if saves and saves != ("*",) else None
    pr.save = tuple(p for p, _ in tensors if saves and (wanted is None or names[p] in wanted))
    pr.needs_saved = node.needs_saved
    pr.result = bool(saves and "result" in saves)
    pr.float_outs = tuple(i for i, o in enumerate(outs) if o._node is node)
    return pr


def record_prepared(pr: Prepared, op: Any, kernel: Callable, static: tuple, args: list, outputs: Any,
                    dyn: tuple) -> None:  # fmt: skip
    """``record`` for a call whose inputs have the metadata ``pr`` was prepared from (see ``prepare``)."""
    cls = pr.cls
    node = cls() if cls is not None else node_class(op.grad_name(static, dyn))()
    node.kernel = kernel
    node.args = args
    node.diff = pr.diff
    edges = []
    for k in pr.rg:
        item = dyn[k]
        n = item._node
        if n is None:  # a leaf: its AccumulateGrad (``accumulator`` written out: a call per op)
            acc = item.__dict__.get("_acc")
            acc = acc() if acc is not None else None
            edges.append((acc if acc is not None else accumulator(item), 0))
        elif item._base_t is not None and item._node_v != item._vc.v:
            edges.append(edge_of(item))
        else:
            edges.append((n, item._out_nr))
    node.edges = edges = tuple(edges)
    if pr.head is not None:  # one input with an edge: next_functions is (no edges..., it, no edges...)
        node.input_edges = pr.head + edges + pr.tail
    else:
        in_edges = list(pr.in_edges)
        for i, e in zip(pr.slots, edges):
            in_edges[i] = e
        node.input_edges = tuple(in_edges)
    if op.keep_numbers:
        node.numbers = _numbers(dyn)
    saved = []
    for k in pr.save:
        item = dyn[k]
        vc = item._vc
        saved.append((vc, vc.v, (item._dtype, item._shape, item._node, item._out_nr)))
    node.saved = saved
    if not pr.needs_saved:
        node.needs_saved = False
    # (a plan serves every shape of its inputs: the outputs' shapes are this call's, their dtypes the plan's)
    if type(outputs) is tuple:
        outs = outputs
        for i in pr.float_outs:
            o = outs[i]
            o._node = node
            o._out_nr = i
            o._node_v = o._vc.v
            o._rg = True
        node.out_meta = tuple([(o._shape, m[1]) for o, m in zip(outs, pr.out_meta)])
    else:  # one output (float: prepare checked), _out_nr 0 and version 0 as made
        outs = (outputs,)
        outputs._node = node
        outputs._rg = True
        node.out_meta = ((outputs._shape, pr.out_meta[0][1]),)
    if pr.result:
        for o in outs:
            saved.append((o._vc, o._vc.v, _describe(o)))
    if region:
        for f in region:
            f(node)


@functools.lru_cache(maxsize=4096)
def _saved_names(saves: tuple, names: tuple, rg_pos: tuple) -> frozenset:
    """Which inputs torch saves: a name, or (name, other) = saved only if ``other`` needs a gradient
    (torch saves ``self`` for mul only when ``other``'s gradient is needed). ``rg_pos``: the positions
    of the inputs that need one."""
    rg = {names[pos] for pos in rg_pos}
    out = set()
    for entry in saves:
        if isinstance(entry, tuple):
            if entry[1] in rg:
                out.add(entry[0])
        else:
            out.add(entry)
    return frozenset(out)


def register_tensor_hook(t: Tensor, hook: Callable) -> _RemovableHandle:
    if t._node is None:
        if t._hooks is None:
            t._hooks = []
        t._hooks.append(hook)
        return _RemovableHandle(t._hooks, hook)
    node = grad_fn_of(t)
    if node.pre_hooks is None:
        node.pre_hooks = {}
    hooks = node.pre_hooks.setdefault(t._out_nr, [])
    hooks.append(hook)
    return _RemovableHandle(hooks, hook)


def retain(t: Tensor) -> None:
    node = grad_fn_of(t)
    if node.retained is None:
        node.retained = {}
    node.retained[t._out_nr] = weakref.ref(t)


# --- in-place ops ------------------------------------------------------------------------------


def check_inplace(t: Tensor) -> None:
    """torch's refusal of in-place ops on leaves that require grad (and on their views), and on the views
    a multi-output view op (unbind, split) made in grad mode."""
    multi = t.__dict__.get("_multi_view")
    if multi is not None and t._base_t is not None and t._base_t._rg:
        raise RuntimeError(
            f"Output {multi[1]} of {multi[0]} is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one."
        )
    if t._rg and t._node is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base_t
    if base is not None and base._rg and base._node is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def commit_inplace(t: Tensor, result: Tensor) -> None:
    """Make ``t`` hold ``result`` (same shape): write its array, and move autograd history onto ``t``."""
    from . import grad_mode

    track = grad_mode._state.enabled and (result._rg or (t._base_t is not None and t._base_t._rg) or t._rg)
    if not track:
        t._assign(result._peek())
        return
    base = t._base_t
    if base is None:
        t._assign(result._peek())
        t._node = result._node
        t._out_nr = result._out_nr
        t._rg = result._rg
        _refresh_saved(result._node, t, result)
        return
    # A write through a view: the base gets a CopySlices node, the view reads from the new base.
    old_base = T._alias(base)
    old_base._rg = base._rg
    old_base._node = base._node
    old_base._out_nr = base._out_nr
    t._assign(result._peek())
    _record_copy_slices(base, old_base, t._view, result)
    _refresh_saved(result._node, t, result)
    _refresh_view_node(t)


def _refresh_saved(node: Node | None, t: Tensor, result: Tensor | None = None) -> None:
    """Fix the saved-version records of the node an in-place op just gave ``t``.

    torch saves the pre-op ``self`` of an in-place op as a copy (our node already holds the old
    immutable array), so those records are dropped; records of the op's result now follow ``t``.
    """
    if node is None or not node.saved:
        return
    out = []
    for vc, v, d in node.saved:
        if vc is t._vc:
            continue
        if result is not None and vc is result._vc:
            vc, v = t._vc, t._vc.v
        out.append((vc, v, d))
    node.saved = out

def undefined_gradient(t: Tensor) -> None:
    """Keep ``t``'s backward node (``grad_fn``, ``next_functions``, its saved-tensor checks) but let it pass
    no gradient on, like a torch node whose formula returns an undefined tensor: its inputs' ``.grad``
    stays None, and ``autograd.grad`` reports them unused."""
    node = t._node
    if node is not None:
        node.diff = ()
        node.edges = ()


_FIRST = ((0, None),)  # the diff of a node whose one source gets a gradient


def _attach(out: Tensor, name: str, kernel: Callable, args: list, sources: tuple) -> None:
    """Give ``out`` a one-output node ``kernel(*args)`` whose first ``len(sources)`` arguments come
    from the tensors ``sources`` (those that require grad get gradients); nothing is saved."""
    node = node_class(name)()
    node.kernel = kernel
    node.args = args
    if len(sources) == 1:  # (a view's node: one source, recorded per view op)
        e = edge_of(sources[0])
        if e is None:
            node.diff = node.edges = ()
            node.input_edges = ((None, 0),)
        else:
            node.diff = _FIRST
            node.edges = node.input_edges = (e,)
    else:
        edges = [edge_of(src) for src in sources]
        node.diff = tuple((pos, None) for pos, e in enumerate(edges) if e is not None)
        node.edges = tuple(e for e in edges if e is not None)
        node.input_edges = tuple(e or (None, 0) for e in edges)
    node.out_meta = ((out._shape, out._dtype.np),)
    node.saved = []
    node.needs_saved = False
    out._node = node
    out._out_nr = 0
    out._node_v = out._vc.v
    out._rg = True


def _constant(*args: Any) -> Any:
    return args[-1]


def zero_gradient(out: Tensor, name: str, sources: tuple) -> None:
    """Give ``out``, whose values do not depend on ``sources``, a node ``name`` over ``sources`` that passes
    them zero gradients: torch's in-place comparisons (``EqBackward0``) and random fills (``NormalBackward0``)."""
    _attach(out, name, _constant, [*(s._peek() for s in sources), out._peek()], sources)


def _record_copy_slices(base: Tensor, old_base: Tensor, view: Any, value: Tensor) -> None:
    from . import views

    args = [old_base._peek(), value._peek(), *view.dyn]
    _attach(base, "CopySlices", views.write_kernel(view.steps), args, (old_base, value))


def _refresh_view_node(t: Tensor) -> None:
    """A view whose base changed in place reads its gradient through the base's new history."""
    from . import views

    base = t._base_t
    t._node_v = t._vc.v
    if base._rg:
        view = t._view
        _attach(t, "AsStridedBackward0", views.read_kernel(view.steps), [base._peek(), *view.dyn], (base,))


def record_view(input: Tensor, out: Tensor, kernel: Callable, dyn: tuple, name: str) -> None:
    """The backward node of a view op: ``kernel(input_array, *dyn)`` reads the view."""
    _attach(out, name, kernel, [input._peek(), *dyn], (input,))
    if region:
        for f in region:
            f(out._node)


# --- a node's vjp: what the engine (and create_graph's replay) runs for each node ----------------------


def _node_vjp(kernel: Any, diff: tuple, args: list, cts: tuple) -> tuple:
    """Gradients of ``kernel(*args)`` w.r.t. the ``diff`` arguments, given output cotangents."""

    def f(*dvals):
        a = list(args)
        for (pos, j), v in zip(diff, dvals):
            if j is None:
                a[pos] = v
            else:
                a[pos] = list(a[pos])
                a[pos][j] = v
        return kernel(*a)

    primals = [args[pos] if j is None else args[pos][j] for pos, j in diff]
    out, vjp_fn = jax.vjp(f, *primals)
    # torch's complex gradients are the conjugates of JAX's cotangents (grad_input = grad * conj(f'(z))
    # against JAX's ct * f'(z)): cotangents cross each vjp conjugated, so hooks, .grad and custom
    # Functions all see torch's convention. Real arrays are untouched (decided at trace time).
    if isinstance(out, (tuple, list)):
        full = tuple(_conj(_ct_or_zero(cts[k] if k < len(cts) else None, o)) for k, o in enumerate(out))
        grads = vjp_fn(type(out)(full) if isinstance(out, tuple) else list(full))
    else:
        grads = vjp_fn(_conj(_ct_or_zero(cts[0], out)))
    return tuple(_conj(g) for g in grads)


def _conj(x: Any) -> Any:
    return jnp.conj(x) if x is not None and jnp.iscomplexobj(x) else x


def _ct_or_zero(ct: Any, out: Any) -> Any:
    if jnp.issubdtype(out.dtype, jnp.floating) or jnp.issubdtype(out.dtype, jnp.complexfloating):
        return jnp.zeros_like(out) if ct is None else ct.astype(out.dtype)
    return np.zeros(out.shape, dtype=jax.dtypes.float0)


for _obj in list(globals().values()):
    if getattr(_obj, "__module__", None) == __name__ and not getattr(_obj, "__name__", "_").startswith("_"):
        _obj.__module__ = _PUBLIC_MODULE

"""torch's Node hooks on the per-node backward path: ``register_hook`` hooks see one gradient per
``next_functions`` entry (None where no gradient flows), and a fused op (linear, matmul, cross_entropy) whose hooked
node or shown inner nodes ask for it runs torch's chain of nodes, each node's gradients from ``jax.vjp``
of that node's forward, so every hook sees what torch's node would and a replacement flows on."""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from .._core import dtype as D
from .._core import graph as _graph
from .._core import lazy
from .._core import tensor as T
from .._core.graph import Node, _conj, _node_vjp
from .._core.tensor import Tensor
from ._reach import detach_constant_outputs


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def checked(hook: Callable, result: Any, old: tuple) -> tuple:
    """What ``hook`` returned for ``old`` (gradient tensors or None), with torch's checks (python_hook.cpp)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got {len(result)}, "
                           f"but expected {len(old)})")  # fmt: skip
    for new, was in zip(result, old):
        if new is None:
            continue
        if not isinstance(new, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
        if was is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        if new._dtype is not was._dtype:
            was_t, new_t = D.cpp_name(was._dtype), D.cpp_name(new._dtype)
            raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was torch.{was_t}Tensor got "
                               f"torch.{new_t}Tensor)")  # fmt: skip
        if tuple(new._shape) != tuple(was._shape):
            raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def call_hooks(hooks: list, args: tuple, rest: tuple = ()) -> tuple:
    """Run ``hook(args, *rest)`` for each hook in turn, each replacing ``args`` with what it returns."""
    for hook in hooks:
        if hook is _graph._SHOWN_HOOKS:
            continue
        r = hook(args, *rest)
        if r is not None:
            args = checked(hook, r, args)
    return args


def _wrap(a: Any, device: Any) -> Tensor | None:
    return None if a is None else T.make(a, device)


def _unwrap(t: Tensor | None) -> Any:
    return None if t is None else t._peek()


def run(node: Node, grads: list, cts: tuple, device: Any, args: list | None = None, live: tuple | None = None) -> list:
    """``node``'s post-hooks (and its shown nodes' hooks) on the gradients it passes on, aligned with
    ``node.diff``; returns them as the hooks leave them. Arrays in and out, or with ``args`` (the node's
    arguments, its differentiable ones as tensors wired to their producers: create_graph), tensors. ``live``
    (aligned with ``node.diff``): which edges lead to a backward's ``inputs`` (torch leaves the others' undefined)."""
    if live is not None:
        grads = [g if ok else None for g, ok in zip(grads, live)]
    if _graph._replayable(type(node)):
        dead = frozenset() if live is None else frozenset(pos for (pos, _), ok in zip(node.diff, live) if not ok)
        return _run_shown(node, grads, cts, device, args, dead)
    hooks = [h for h in node.hooks if h is not _graph._SHOWN_HOOKS]
    if not hooks:
        return grads
    unwrap = _keep if args is not None else _unwrap
    arrays = [_unwrap(g) if isinstance(g, Tensor) else g for g in grads]
    layout, slots = _layout(node, arrays, tuple(_unwrap(c) if isinstance(c, Tensor) else c for c in cts))
    for s, g in zip(slots, grads):
        layout[s] = g  # (with create_graph, the gradients with their history)
    grad_inputs = tuple(g if isinstance(g, Tensor) else _wrap(g, device) for g in layout)
    grad_outputs = tuple(c if isinstance(c, Tensor) else _wrap(c, device) for c in cts)
    grad_inputs = call_hooks(hooks, grad_inputs, (grad_outputs,))
    return [unwrap(grad_inputs[s]) for s in slots]


def _keep(a: Any) -> Any:
    return a


def _layout(node: Node, grads: list, cts: tuple) -> tuple[list, list]:
    """torch's grad_inputs for ``node`` (one per edge: ``input_edges``) and the slot of each ``diff`` entry."""
    edges = node.input_edges
    if not node.diff:  # a node whose formula passes no gradient on (``undefined_gradient``)
        return [None] * len(edges), []
    slots = [i for i, (f, _) in enumerate(edges) if f is not None]
    if len(slots) != len(node.diff):
        return list(grads), list(range(len(grads)))
    layout: list = [None] * len(edges)
    for s, g in zip(slots, grads):
        layout[s] = g
    if node.kernel is None:  # a custom Function: torch keeps what its backward returned for every tensor input
        result = node.__dict__.get("hook_grads")
        for s, pos in enumerate(node.__dict__.get("tensor_pos", ())):
            if layout[s] is None and result is not None and isinstance(result[pos], Tensor):
                layout[s] = result[pos]._peek()
        return layout, slots
    # torch: a list argument (cat, stack) gets gradients for all its tensors when one of them needs one
    extra, at = [], []
    for (pos, j), s in zip(node.diff, slots):
        if j is None or any(e[0] == pos for e in extra):
            continue
        items = node.args[pos]
        for j2, item in enumerate(items):
            if (pos, j2) not in node.diff and jnp.issubdtype(item.dtype, jnp.inexact):
                extra.append((pos, j2))
                at.append(s - j + j2)
    if extra:
        for s, g in zip(at, lazy.call(_vjp_fn(node.kernel, tuple(extra)), (node.args, cts))):
            layout[s] = g
    return layout, slots


@functools.lru_cache(maxsize=256)
def _vjp_fn(kernel: Any, diff: tuple) -> Any:
    return jax.jit(lambda args, cts: tuple(_node_vjp(kernel, diff, args, cts)))


# --- torch's chain inside a fused op ------------------------------------------------------------------
# A shown graph (graph.show_as) is replayed from the fused node's arguments: each shown node is a small JAX function
# of its inputs' values, and its gradients are the vjp of that function. The nodes run in torch's engine order, the
# reverse of the order torch creates them in.


@functools.lru_cache(maxsize=64)
def _shape_name(shape: int) -> str:
    return next(name for name, spec in _graph._SHAPES.items() if id(spec) == shape)


def _nll(shape: int) -> Callable:
    """The forward of cross_entropy's nll_loss node (``(args, logp)``, ``args`` the op's): the nll_loss op's body
    over the op's target, weight and ignore_index, with the reduction its graph shape's name ends in."""
    from .._ops import registry

    body, reduction = registry.OPS["_nll_loss"].fn, _shape_name(shape).rpartition("_")[2]

    def forward(args: list, logp: Any) -> Any:
        target = args[1] if logp.ndim == 1 else args[1].reshape(logp.shape[:1] + logp.shape[2:])  # (as logp's view)
        return body(logp, target, args[2], reduction, args[3])

    return forward


_PRODUCTS: dict[str, Callable] = {
    "MmBackward0": lambda a, b: a @ b,
    "BmmBackward0": lambda a, b: a @ b,
    "AddmmBackward0": lambda c, a, b: c + a @ b,
    "AddBackward0": lambda a, b: a + b,
}


def _forward(name: str, parent: str | None, want: tuple | None, shape: int = 0, args: Any = None) -> Callable:
    """The forward of shown node ``name`` (under ``parent``); ``want``: the shape its output has, where the
    op's output shape decides it; ``shape`` and ``args``: the graph shape's id and the op's arguments."""
    if name in ("NllLossBackward0", "NllLoss2DBackward0"):
        return functools.partial(_nll(shape), args)
    if name in _PRODUCTS:
        return _PRODUCTS[name]
    if name == "TBackward0":
        return lambda a: a.T
    if name == "TransposeBackward0":
        return lambda a: jnp.swapaxes(a, -1, -2)
    if name in ("CloneBackward0", "ExpandBackward0"):
        return lambda a: a
    if name == "UnsqueezeBackward0":
        return lambda a: a[None]
    if name == "LogSoftmaxBackward0":  # (cross_entropy's, over the class dim)
        return lambda a: jax.nn.log_softmax(a, axis=0 if a.ndim == 1 else 1)
    if parent == "NllLoss2DBackward0":  # torch's nll_loss_nd: a 3-d or 5-d and up input viewed as (N, C, 1, -1)
        return lambda a: a.reshape(a.shape[0], a.shape[1], 1, -1)
    if parent in ("MmBackward0", "AddmmBackward0"):  # a reshape of an operand into a matrix
        return lambda a: a.reshape(-1, a.shape[-1])
    if parent == "BmmBackward0":
        return lambda a: a.reshape(-1, *a.shape[-2:])
    return lambda a: a.reshape(want)


def _kid_want(name: str, want: tuple | None) -> tuple | None:
    if want is None:
        return None
    if name == "TransposeBackward0":
        return (*want[:-2], want[-1], want[-2])
    return want if name in ("CloneBackward0", "ExpandBackward0", "AddBackward0") else None


def _value(entry: Any, parent: str, want: tuple | None, args: list, shape: int) -> Any:
    if isinstance(entry, int):
        return args[entry]
    if entry is None:
        return None
    name, kids = entry
    return _forward(name, parent, want, shape, args)(*(_value(k, name, _kid_want(name, want), args, shape)
                                                       for k in kids))  # fmt: skip


@functools.lru_cache(maxsize=256)
def _step(root: tuple, path: tuple, out_shape: tuple, shape: int) -> Any:
    """The jitted ``(args, ct) -> grads of the node's inputs`` of the shown node at ``path`` under ``root`` (in
    graph shape ``shape``)."""
    entry, parent, want = root, None, out_shape
    for k in path:
        want = _kid_want(entry[0], want)
        parent, entry = entry[0], entry[1][k]
    name, kids = entry

    def step(args: list, ct: Any) -> list:
        vals = [_value(k, name, _kid_want(name, want), args, shape) for k in kids]
        live = [i for i, v in enumerate(vals) if v is not None]

        def f(*xs: Any) -> Any:
            full = list(vals)
            for i, x in zip(live, xs):
                full[i] = x
            return _forward(name, parent, want, shape, args)(*full)

        out, vjp = jax.vjp(f, *(vals[i] for i in live))
        grads = vjp(_conj(ct.astype(out.dtype)))  # (torch's complex convention, as graph._node_vjp)
        result: list = [None] * len(kids)
        for i, g in zip(live, grads):
            result[i] = _conj(g)
        return result

    step.__name__ = f"{name}_replay"
    return jax.jit(step)


_RESHAPES = frozenset(("ViewBackward0", "UnsafeViewBackward0", "CloneBackward0", "UnsqueezeBackward0"))


def _creation_order(entry: tuple, path: tuple, out: list) -> None:
    """The shown nodes under ``entry`` in the order torch creates them (post-order), except that an mm's
    transposed weight (``t()``) is made before its other operand's reshape (torch's linear and matmul)."""
    name, kids = entry
    if name == "MmBackward0":
        reshapes: list = []
        for k, kid in enumerate(kids):
            if not isinstance(kid, tuple) or kid[0] == "TBackward0":
                continue
            chain, at = [], (*path, k)
            while isinstance(kid, tuple) and kid[0] in _RESHAPES:
                chain.append((at, kid))
                at, kid = (*at, 0), kid[1][0]
            if isinstance(kid, tuple):
                _creation_order(kid, at, out)
            reshapes += reversed(chain)
        for k, kid in enumerate(kids):
            if isinstance(kid, tuple) and kid[0] == "TBackward0":
                _creation_order(kid, (*path, k), out)
        out += reshapes
    else:
        for k, kid in enumerate(kids):
            if isinstance(kid, tuple):
                _creation_order(kid, (*path, k), out)
    out.append((path, entry))


@functools.lru_cache(maxsize=64)
def _run_order(root: tuple) -> tuple:
    out: list = []
    _creation_order(root, (), out)
    return tuple(reversed(out))


def _shown_at(edges: tuple, path: tuple) -> Any:
    node = None
    for k in path:
        node = edges[k][0]
        edges = node.next_functions
    return node


def _freeze(entries: list) -> tuple:
    return tuple((e[0], _freeze(e[1])) if isinstance(e, tuple) else e for e in entries)


def _leads_to(entry: Any, dead: frozenset) -> bool:
    """Whether shown entry ``entry`` leads to one of the op's inputs not in ``dead``."""
    if entry is None or isinstance(entry, int):
        return entry is not None and entry not in dead
    return any(_leads_to(k, dead) for k in entry[1])


def _run_shown(owner: Node, grads: list, cts: tuple, device: Any, args: list | None = None,
               dead: frozenset = frozenset()) -> list:  # fmt: skip
    """``owner``'s gradients through torch's chain of nodes, running the owner's hooks (on torch's grad_inputs
    for it) and the shown nodes' pre- and post-hooks as torch's engine would. With ``args`` (create_graph), each
    node's gradients are a recorded op, so they can be differentiated again."""
    from .._ops import registry

    spec = type(owner)._spec
    root = (type(owner).__name__, _freeze(spec))
    by_input = {pos: g for (pos, _), g in zip(owner.diff, grads)}
    edges = owner.next_functions
    out_shape = tuple(owner.out_meta[0][0])
    tensors = args is not None
    wrap, unwrap = (_keep, _keep) if tensors else (lambda a: _wrap(a, device), _unwrap)
    incoming = {(): cts[0]}
    final: dict = {}
    for path, entry in _run_order(root):
        g = incoming.pop(path, None)
        if g is None:
            continue  # torch runs no node that no gradient reaches
        node = owner if not path else _shown_at(edges, path)
        kid_edges = edges if not path else node.next_functions
        grad_out = (wrap(g),)
        if path:
            grad_out = call_hooks(node._prehooks, grad_out)
            if grad_out[0] is None:
                continue
        if path or root[0] in _graph._REPLAYABLE:
            step = _step(root, path, out_shape, id(spec))
            if tensors:
                grads = registry.apply_pure(entry[0], step, [args, grad_out[0]], device)
                # as torch's formula records them: a gradient computed from nothing that requires grad has no history
                detach_constant_outputs(step, [args, grad_out[0]], tuple(g_ for g_ in grads if g_ is not None))
            else:
                grads = lazy.call(step, (owner.args, grad_out[0]._peek()))
        else:  # a shown layout of the op's own inputs (a missing bias's empty edge): the fused node's gradients
            grads = [None if k is None else by_input.get(k) for k in entry[1]]
        grad_in = tuple(None if e[0] is None or g_ is None or (dead and not _leads_to(k, dead))
                        else g_ if isinstance(g_, Tensor) else wrap(g_)
                        for g_, e, k in zip(grads, kid_edges, entry[1]))  # fmt: skip
        grad_in = call_hooks(owner.hooks if not path else node._hooks, grad_in, (grad_out,))
        for k, (kid, gi) in enumerate(zip(entry[1], grad_in)):
            if gi is None or kid is None:
                continue
            if isinstance(kid, int):
                final[kid] = unwrap(gi) if kid not in final else final[kid] + unwrap(gi)
            else:
                incoming[(*path, k)] = unwrap(gi)
    return [final.get(pos) for pos, _ in owner.diff]

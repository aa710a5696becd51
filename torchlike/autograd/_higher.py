"""Backward with ``create_graph=True``: every VJP is itself run as a recorded op, so the gradients
it produces have history and can be differentiated again (gradient penalties, Hessians)."""

from __future__ import annotations

from typing import Any

import jax

from .._core import tensor as T
from .._core.graph import AccumulateGrad, _node_vjp
from .._core.kernel_cache import LRU
from .._core.tensor import Tensor
from . import anomaly_mode

_vjp_fns: LRU = LRU()


def _vjp_fn(kernel: Any, diff: tuple) -> Any:
    key = (kernel, diff)
    f = _vjp_fns.get(key)
    if f is None:

        def vjp(args: Any, cts: Any) -> tuple:
            return tuple(_node_vjp(kernel, diff, args, cts))

        # named after the op: compile counts (and their warning) are per name, and every '<lambda>' was one
        vjp.__name__ = f"{getattr(kernel, '__name__', 'node')}_vjp"
        f = _vjp_fns[key] = jax.jit(vjp)
    return f


def _primal(node: Any, k: int, device: Any) -> Tensor:
    """The input at the k-th differentiable position of ``node`` as a Tensor wired to its producer."""
    pos, j = node.diff[k]
    arr = node.args[pos] if j is None else node.args[pos][j]
    src, nr = node.edges[k]
    if isinstance(src, AccumulateGrad):
        return src.variable
    t = T.make(arr, device)
    t._node = src
    t._out_nr = nr
    t._rg = True
    t._node_v = t._vc.v
    return t


def run(prog: Any, grads: list) -> tuple:
    nodes = prog.nodes
    device = grads[0]._buf.device
    slots: list[dict] = [dict() for _ in nodes]
    leaf: list = [None] * len(prog.leaves)
    wanted: dict = {}

    def send(target: tuple, g: Tensor) -> None:
        if target[0] == "l":
            leaf[target[1]] = g if leaf[target[1]] is None else leaf[target[1]] + g
        else:
            slot = slots[target[1]]
            slot[target[2]] = g if target[2] not in slot else slot[target[2]] + g

    for tgt, g in zip(prog.roots, grads):
        send(tgt, g)
    step = anomaly_mode.reporting(_step, nodes) if anomaly_mode._enabled else _step
    for i, node in enumerate(nodes):
        slot = slots[i]
        for nr, hooks in (node.pre_hooks or {}).items():
            if nr in slot:
                for hook in hooks:
                    r = hook(slot[nr])
                    if r is not None:
                        slot[nr] = r
        for nr, ref in (node.retained or {}).items():
            t = ref()
            if t is not None and nr in slot:
                t._grad = slot[nr] if t._grad is None else t._grad + slot[nr]
        if prog.wanted is not None:
            for w, tgt in enumerate(prog.wanted):
                if tgt is not None and tgt[0] == "n" and tgt[1] == i:
                    wanted[w] = slot.get(tgt[2])
        if not slot:
            continue
        n_out = max(slot) + 1
        cts = tuple(slot.get(k) for k in range(n_out))
        for tgt, g in zip(prog.entries[i][2], step(i, node, cts, device)):
            if g is not None:
                send(tgt, g)
        slots[i] = None
    if prog.wanted is not None:
        for w, tgt in enumerate(prog.wanted):
            if tgt is not None and tgt[0] == "l":
                wanted[w] = leaf[tgt[1]]
    return leaf, wanted


def _step(i: int, node: Any, cts: tuple, device: Any) -> Any:
    """The gradients ``node`` passes on (aligned with ``node.diff``), computed as recorded ops."""
    from .._ops import registry

    if node.kernel is None:  # a custom autograd.Function
        from .function import run_backward

        outs = run_backward(node, cts, device, create_graph=True)
    else:
        args = list(node.args)
        for k, (pos, j) in enumerate(node.diff):
            p = _primal(node, k, device)
            if j is None:
                args[pos] = p
            else:
                args[pos] = list(args[pos])
                args[pos][j] = p
        name = type(node).__name__
        outs = registry.apply_pure(name, _vjp_fn(node.kernel, node.diff), [args, cts], device)
        _reads_its_inputs(outs)
    if anomaly_mode.checking:
        anomaly_mode.check_grads(node, outs)
    return outs


def _reads_its_inputs(outs: Any) -> None:
    """A recorded VJP's gradient reads its inputs' values: like torch's saved tensors, they are freed
    by a backward through it, and a second backward raises."""
    for o in outs:
        if isinstance(o, Tensor) and o._node is not None:
            o._node.needs_saved = True

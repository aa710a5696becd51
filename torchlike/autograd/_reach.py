"""Which outputs of a traced function are computed from which of its inputs: read from the function's jaxpr,
through the bodies of the calls in it. The autograd layers use it to give a recorded op's outputs torch's
``requires_grad`` (a gradient computed from nothing that requires grad has no history)."""

from __future__ import annotations

import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jcore

from .._core.tensor import Tensor

# recorded VJP node -> ((flat input position, output index), ...): the node's gradient at that input is undefined
# (None, where JAX's VJP gives zeros) when no gradient reaches that output (torch's convolution double backward)
undefined_when: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def drop_undefined(node: Any, diff: tuple, grads: Any, cts: tuple) -> Any:
    """``grads`` (aligned with ``diff``) with those ``undefined_when`` leaves undefined for ``cts`` set to None."""
    rule = undefined_when.get(node)
    if rule is None:
        return grads
    grads = list(grads)
    for k, (pos, _) in enumerate(diff):
        for p, c in rule:
            if pos == p and (c >= len(cts) or cts[c] is None):
                grads[k] = None
    return grads


def _shaped(x: Any) -> tuple | None:
    if isinstance(x, Tensor):
        return tuple(x._shape), x._dtype.np
    return (tuple(x.shape), np.dtype(x.dtype)) if hasattr(x, "shape") else None


def detach_constant_outputs(fn: Callable, args: Any, outs: tuple) -> None:
    """Drop the history of the outputs of ``fn(*args)`` (just recorded as one op) that are not computed from
    an argument that requires grad (torch.func's results, whose graph torch records op by op)."""
    leaves, treedef = jax.tree_util.tree_flatten(args, is_leaf=lambda x: isinstance(x, Tensor))
    marks = tuple(isinstance(x, Tensor) and x._rg for x in leaves)
    abstract = [jax.ShapeDtypeStruct(*_shaped(x)) if _shaped(x) else x for x in leaves]
    try:
        closed = jax.make_jaxpr(lambda *xs: fn(*jax.tree_util.tree_unflatten(treedef, xs)))(*abstract)
    except Exception:  # noqa: BLE001 - what cannot be traced abstractly keeps its history
        return
    if len(closed.jaxpr.invars) != len(marks) or len(closed.jaxpr.outvars) != len(outs):
        return
    for o, dep in zip(outs, _reaches(closed.jaxpr, marks, False)):
        if isinstance(o, Tensor) and not dep:
            o._node = None
            o._rg = False


def _reaches(jaxpr: Any, marks: Any, floats_only: bool) -> list:
    live = {v for v, m in zip(jaxpr.invars, marks) if m}
    for eqn in jaxpr.eqns:
        ins = [isinstance(v, jcore.Var) and v in live for v in eqn.invars]
        if not any(ins):
            continue
        sub = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
        sub = getattr(sub, "jaxpr", sub)
        if isinstance(sub, jcore.Jaxpr) and len(sub.invars) == len(ins) and len(sub.outvars) == len(eqn.outvars):
            outs = _reaches(sub, ins, floats_only)  # a call (jit, custom_jvp): through its body
        else:
            outs = [True] * len(eqn.outvars)
        live.update(v for v, m in zip(eqn.outvars, outs)
                    if m and not (floats_only and not jnp.issubdtype(v.aval.dtype, jnp.inexact)))  # fmt: skip
    return [isinstance(v, jcore.Var) and v in live for v in jaxpr.outvars]

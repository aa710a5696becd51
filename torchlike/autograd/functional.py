"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp -- computed with JAX's own
transforms over the user's function run on tracer-backed tensors."""

from __future__ import annotations

from typing import Any, Callable

import jax

from .._core import tensor as T
from .._core.tensor import Tensor
from .._core import grad_mode

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _tuple(x: Any, fn_name: str | None = None) -> tuple[tuple, bool]:
    if isinstance(x, Tensor):
        return (x,), True
    if fn_name is not None and not isinstance(x, tuple):
        raise TypeError(
            f"The inputs given to {fn_name} must be either a Tensor or a tuple of Tensors but the given inputs has "
            f"type {type(x)}."
        )
    return tuple(x), False


def _pure(func: Callable, devices: list, out_single: list) -> Callable:
    """``func`` on Tensors as a function of arrays returning a tuple of arrays."""

    def f(*arrays: Any) -> tuple:
        with grad_mode.no_grad():
            out = func(*[T.make(a, d) for a, d in zip(arrays, devices)])
        outs, single = _tuple(out)
        out_single.append(single)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(
                    f"The outputs of the user-provided function given to jacobian must be either a Tensor or a tuple of "
                    f"Tensors but the given outputs of the user-provided function has an output of type "
                    f"{type(o).__name__}."
                )
        return tuple(o._data() for o in outs)

    return f


def _run(transform: Callable, func: Callable, inputs: tuple, extra: tuple, create_graph: bool) -> tuple:
    devices = [t.device for t in inputs]
    single_out: list = []
    fn = _pure(func, devices, single_out)
    kernel = jax.jit(lambda *xs: transform(fn, xs[: len(inputs)], xs[len(inputs) :]))
    args = list(_graph_inputs(inputs) if create_graph else inputs) + list(extra)
    if create_graph:
        from .._ops import registry

        # the op table records one node over flat outputs: flatten the transform's result, then rebuild it
        tree: list = []

        def flat(*xs: Any) -> tuple:
            leaves, treedef = jax.tree_util.tree_flatten(transform(fn, xs[: len(inputs)], xs[len(inputs) :]))
            tree.append(treedef)
            return tuple(leaves)

        leaves = registry.apply_pure("FunctionalBackward", jax.jit(flat), args)
        result = jax.tree_util.tree_unflatten(tree[-1], list(leaves if isinstance(leaves, tuple) else (leaves,)))
        for o in jax.tree_util.tree_leaves(result, is_leaf=lambda x: isinstance(x, T.Tensor)):
            if isinstance(o, T.Tensor) and o._node is not None:
                o._node.needs_saved = True  # its gradient reads the inputs' values (torch saves them)
    else:
        arrays = kernel(*[a._data() for a in args])
        result = jax.tree_util.tree_map(lambda a: T.make(a, devices[0]), arrays)
    return result, single_out[0] if single_out else True


def _recorded(func: Callable, inputs: tuple, out: Any, create_graph: bool) -> Any:
    """With ``create_graph``, the function's outputs as torch returns them: from a call recorded on the
    tape (their nodes are the function's own, ``MmBackward0`` for a matmul, and reach every tensor the
    function reads). The derived results stay one ``FunctionalBackward`` node over the inputs."""
    if not create_graph:
        return out
    return _tuple(func(*_graph_inputs(inputs)))[0]


def _graph_inputs(inputs: tuple) -> tuple:
    """torch: with create_graph, inputs that require grad enter as views, others as fresh leaves that do."""
    return tuple(i.view_as(i) if i.requires_grad else i.detach().requires_grad_() for i in inputs)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    ins, single_in = _tuple(inputs, "jacobian")

    def transform(fn, xs, _):
        jac = jax.jacfwd if strategy == "forward-mode" else jax.jacrev
        return jac(fn, argnums=tuple(range(len(xs))))(*xs)  # outputs x inputs

    jac, single_out = _run(transform, func, ins, (), create_graph)
    if single_out and single_in:
        return jac[0][0]
    if single_out:
        return tuple(jac[0])
    if single_in:
        return tuple(row[0] for row in jac)
    return tuple(tuple(row) for row in jac)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    ins, single_in = _tuple(inputs)

    def transform(fn, xs, _):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        return jax.hessian(scalar, argnums=tuple(range(len(xs))))(*xs)

    h, _ = _run(transform, func, ins, (), create_graph)
    if single_in:
        return h[0][0]
    return tuple(tuple(row) for row in h)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = () if v is None else _tuple(v)[0]

    def transform(fn, xs, vv):
        out, pull = jax.vjp(fn, *xs)
        if not vv:
            if any(o.size != 1 for o in out):
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a single Tensor with a "
                    "single element."
                )
            vv = tuple(jax.numpy.ones_like(o) for o in out)
        return out, pull(tuple(vv))

    (out, grads), single_out = _run(transform, func, ins, vs, create_graph)
    out = _recorded(func, ins, out, create_graph)
    return (out[0] if single_out else tuple(out)), (grads[0] if single_in else tuple(grads))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = () if v is None else _tuple(v)[0]

    def transform(fn, xs, vv):
        if not vv:
            vv = tuple(jax.numpy.ones_like(x) for x in xs)
        return jax.jvp(fn, tuple(xs), tuple(vv))

    (out, tangents), single_out = _run(transform, func, ins, vs, create_graph)
    out = _recorded(func, ins, out, create_graph)
    return (out[0] if single_out else tuple(out)), (tangents[0] if single_out else tuple(tangents))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = _tuple(v)[0] if v is not None else ()

    def transform(fn, xs, vv):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        out = scalar(*xs)
        vv = vv or tuple(jax.numpy.ones_like(x) for x in xs)
        _, pull = jax.vjp(jax.grad(scalar, argnums=tuple(range(len(xs)))), *xs)
        return (out,), pull(tuple(vv))

    (out, res), _ = _run(transform, func, ins, vs, create_graph)
    out = _recorded(func, ins, out, create_graph)
    return out[0], (res[0] if single_in else tuple(res))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = _tuple(v)[0] if v is not None else ()

    def transform(fn, xs, vv):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        out = scalar(*xs)
        vv = vv or tuple(jax.numpy.ones_like(x) for x in xs)
        _, tang = jax.jvp(jax.grad(scalar, argnums=tuple(range(len(xs)))), tuple(xs), tuple(vv))
        return (out,), tang

    (out, res), _ = _run(transform, func, ins, vs, create_graph)
    out = _recorded(func, ins, out, create_graph)
    return out[0], (res[0] if single_in else tuple(res))

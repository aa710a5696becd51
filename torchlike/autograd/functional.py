"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp.

Without ``create_graph`` the results are detached, so they are computed with JAX's own transforms over the
user's function run on tracer-backed tensors (one compiled program). With ``create_graph`` they take torch's
route through the tape (``autograd.grad``, the double-backward trick for forward products): the results then
hang from the same graph as in torch, and tensors the function reads from its closure (a model's parameters)
get gradients through them."""

from __future__ import annotations

from typing import Any, Callable

import jax

from .._core import grad_mode
from .._core import tensor as T
from .._core.tensor import Tensor
from .._ops.creation import zeros_like
from .._ops.shape import stack
from .engine import grad as _engine_grad

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


def _run(transform: Callable, func: Callable, inputs: tuple, extra: tuple) -> tuple:
    devices = [t.device for t in inputs]
    single_out: list = []
    fn = _pure(func, devices, single_out)
    kernel = jax.jit(lambda *xs: transform(fn, xs[: len(inputs)], xs[len(inputs) :]))
    arrays = kernel(*[a._data() for a in list(inputs) + list(extra)])
    result = jax.tree_util.tree_map(lambda a: T.make(a, devices[0]), arrays)
    return result, single_out[0] if single_out else True


# --- create_graph: torch's route through the tape ----------------------------------------------------------


def _graph_inputs(inputs: tuple) -> tuple:
    """torch: with create_graph, inputs that require grad enter as views, others as fresh leaves that do
    (a new object either way, so the function's closure tensors are told apart from its inputs)."""
    return tuple(i.view_as(i) if i.requires_grad else i.detach().requires_grad_() for i in inputs)


def _graph_vectors(vs: tuple) -> tuple:
    """torch: a ``v`` that requires grad stays on the graph (as a view); another one enters detached."""
    return tuple(v.view_as(v) if v.requires_grad else v.detach() for v in vs)


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None, retain_graph: bool | None = None) -> tuple:
    """torch's ``_autograd_grad``: outputs that need no gradient are left out, unused inputs give None."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or (None,) * len(outputs)) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _engine_grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], retain_graph=retain_graph,
                        create_graph=True, allow_unused=True)  # fmt: skip


def _zeros_for_none(grads: tuple, like: tuple) -> tuple:
    return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, like))


def _outputs(func: Callable, inputs: tuple, fn_name: str) -> tuple[tuple, bool]:
    outs, single = _tuple(func(*inputs))
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(
                f"The outputs of the user-provided function given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the given outputs of the user-provided function has an output of type "
                f"{type(o).__name__}."
            )
    return outs, single


def _scalar_output(func: Callable, fn_name: str, squeeze: bool = True) -> Callable:
    def f(*a: Any) -> Tensor:
        out = func(*a)
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        if not isinstance(out, Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
        return out.squeeze() if squeeze else out  # hessian squeezes; vhp/hvp return the output as it is

    return f


def _v_none_needs_one_element(inputs: tuple) -> None:
    if len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function is a single Tensor with a "
            "single element."
        )


def _tape_jacobian(func: Callable, ins: tuple) -> tuple[tuple, bool]:
    """Row by row, as torch's reverse mode without ``vectorize``: one backward per output element."""
    ins = _graph_inputs(ins)
    with grad_mode.enable_grad():
        outs, single_out = _outputs(func, ins, "jacobian")
        jac = []
        for out in outs:
            rows: list = [[] for _ in ins]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                for row, g, x in zip(rows, _grad((flat[j],), ins, retain_graph=True), ins):
                    row.append(zeros_like(x) if g is None else g)
            jac.append(tuple(
                stack(row, 0).view(tuple(out.shape) + tuple(x.shape)) if row else zeros_like(x).view(tuple(out.shape) + tuple(x.shape))
                for row, x in zip(rows, ins)
            ))  # fmt: skip
    return tuple(jac), single_out


def _tape_vjp(func: Callable, ins: tuple, vs: tuple) -> tuple:
    ins = _graph_inputs(ins)
    with grad_mode.enable_grad():
        outs, single_out = _outputs(func, ins, "vjp")
        if not vs and (len(outs) != 1 or outs[0].numel() != 1):
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single Tensor with a single "
                "element."
            )
        grads = _zeros_for_none(_grad(outs, ins, _graph_vectors(vs) or None), ins)
    return outs, single_out, grads


def _tape_jvp(func: Callable, ins: tuple, vs: tuple) -> tuple:
    ins = _graph_inputs(ins)
    with grad_mode.enable_grad():
        outs, single_out = _outputs(func, ins, "jvp")
        # the backward is linear in these, so their value never shows: the double-backward trick
        cot = tuple(zeros_like(o, requires_grad=True) for o in outs)
        grad_ins = _grad(outs, ins, cot)
        tangents = _zeros_for_none(_grad(grad_ins, cot, _graph_vectors(vs) or None), outs)
    return outs, single_out, tangents


def _tape_vhp(func: Callable, ins: tuple, vs: tuple) -> tuple:
    ins = _graph_inputs(ins)
    with grad_mode.enable_grad():
        out = _scalar_output(func, "vhp", squeeze=False)(*ins)
        jac = _grad((out,), ins)
        res = _zeros_for_none(_grad(jac, ins, _graph_vectors(vs) or None), ins)
    return out, res


def _tape_hvp(func: Callable, ins: tuple, vs: tuple) -> tuple:
    ins = _graph_inputs(ins)
    with grad_mode.enable_grad():
        out = _scalar_output(func, "hvp", squeeze=False)(*ins)
        jac = _grad((out,), ins)
        cot = tuple(zeros_like(x, requires_grad=True) for x in ins)
        back = _grad(jac, ins, cot)
        res = _zeros_for_none(_grad(back, cot, _graph_vectors(vs) or None), ins)
    return out, res


def _shaped_jacobian(jac: tuple, single_out: bool, single_in: bool) -> Any:
    if single_out and single_in:
        return jac[0][0]
    if single_out:
        return tuple(jac[0])
    if single_in:
        return tuple(row[0] for row in jac)
    return tuple(tuple(row) for row in jac)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    ins, single_in = _tuple(inputs, "jacobian")
    if create_graph:
        return _shaped_jacobian(*_tape_jacobian(func, ins), single_in)

    def transform(fn, xs, _):
        jac = jax.jacfwd if strategy == "forward-mode" else jax.jacrev
        return jac(fn, argnums=tuple(range(len(xs))))(*xs)  # outputs x inputs

    jac, single_out = _run(transform, func, ins, ())
    return _shaped_jacobian(jac, single_out, single_in)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    ins, single_in = _tuple(inputs)
    if create_graph:  # torch's: the jacobian of a differentiable jacobian

        def jac_func(*xs: Any) -> Any:
            return jacobian(_scalar_output(func, "hessian"), xs[0] if single_in else xs, create_graph=True)

        return jacobian(jac_func, inputs if single_in else ins, create_graph=True)

    def transform(fn, xs, _):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        return jax.hessian(scalar, argnums=tuple(range(len(xs))))(*xs)

    h, _ = _run(transform, func, ins, ())
    if single_in:
        return h[0][0]
    return tuple(tuple(row) for row in h)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = () if v is None else _tuple(v)[0]
    if create_graph:
        out, single_out, grads = _tape_vjp(func, ins, vs)
    else:

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

        (out, grads), single_out = _run(transform, func, ins, vs)
    return (out[0] if single_out else tuple(out)), (grads[0] if single_in else tuple(grads))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = () if v is None else _tuple(v)[0]
    if not vs:
        _v_none_needs_one_element(ins)
    if create_graph:
        out, single_out, tangents = _tape_jvp(func, ins, vs)
    else:

        def transform(fn, xs, vv):
            return jax.jvp(fn, tuple(xs), tuple(vv or (jax.numpy.ones_like(x) for x in xs)))

        (out, tangents), single_out = _run(transform, func, ins, vs)
    return (out[0] if single_out else tuple(out)), (tangents[0] if single_out else tuple(tangents))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = _tuple(v)[0] if v is not None else ()
    if not vs:
        _v_none_needs_one_element(ins)
    if create_graph:
        out, res = _tape_vhp(func, ins, vs)
        return out, (res[0] if single_in else tuple(res))

    def transform(fn, xs, vv):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        out = scalar(*xs)
        vv = vv or tuple(jax.numpy.ones_like(x) for x in xs)
        _, pull = jax.vjp(jax.grad(scalar, argnums=tuple(range(len(xs)))), *xs)
        return (out,), pull(tuple(vv))

    (out, res), _ = _run(transform, func, ins, vs)
    return out[0], (res[0] if single_in else tuple(res))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    ins, single_in = _tuple(inputs)
    vs = _tuple(v)[0] if v is not None else ()
    if not vs:
        _v_none_needs_one_element(ins)
    if create_graph:
        out, res = _tape_hvp(func, ins, vs)
        return out, (res[0] if single_in else tuple(res))

    def transform(fn, xs, vv):
        scalar = lambda *a: fn(*a)[0]  # noqa: E731
        out = scalar(*xs)
        vv = vv or tuple(jax.numpy.ones_like(x) for x in xs)
        _, tang = jax.jvp(jax.grad(scalar, argnums=tuple(range(len(xs)))), tuple(xs), tuple(vv))
        return (out,), tang

    (out, res), _ = _run(transform, func, ins, vs)
    return out[0], (res[0] if single_in else tuple(res))

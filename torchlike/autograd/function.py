"""torch.autograd.Function: user-defined forward/backward in Python.

The context object *is* the backward node (as in torch, ``type(y.grad_fn).__name__ ==
'MyFnBackward'``). Its backward runs in Python, so graphs holding one take the engine's
per-node path rather than the fused one.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core import grad_mode
from .._core import graph as _graph
from .._core import tensor as T
from .._core.graph import Node, edge_of
from .._core.tensor import Tensor


class FunctionCtx:
    """What ``forward``/``setup_context`` can use to talk to ``backward``."""

    def save_for_backward(self, *tensors: Any) -> None:
        self.to_save = tensors
        self._saved_versions = [(t._vc, t._vc.v) if isinstance(t, Tensor) else None for t in tensors]

    def save_for_forward(self, *tensors: Any) -> None:
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if getattr(self, "_freed", False):
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
                "a second time or if you need to access saved tensors after calling backward."
            )
        for t, v in zip(self.to_save, self._saved_versions):
            if v is not None and v[0].v != v[1]:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [torch.FloatTensor [{', '.join(map(str, t.shape))}]] is at version {v[0].v}; "
                    f"expected version {v[1]} instead."
                )
        return tuple(self.to_save)

    def mark_non_differentiable(self, *args: Tensor) -> None:
        self.non_differentiable = {id(t) for t in args}

    def mark_dirty(self, *args: Tensor) -> None:
        self.dirty = {id(t) for t in args}

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """torch.autograd.function.BackwardCFunction: the base of the per-Function node classes
    (``ExpBackward``); ``isinstance(y.grad_fn, BackwardCFunction)`` holds as in torch."""

    __slots__ = ()


_FunctionNode = BackwardCFunction


_node_types: dict[type, type] = {}


def _node_type(fn_cls: type) -> type:
    t = _node_types.get(fn_cls)
    if t is None:
        ns = {"__slots__": (), "_fn_backward": staticmethod(fn_cls.backward), "_forward_cls": fn_cls}
        t = _node_types[fn_cls] = type(f"{fn_cls.__name__}Backward", (BackwardCFunction,), ns)
    return t


class FunctionMeta(type):
    pass


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward`` and ``backward``; call ``MyFn.apply(...)``."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # torch: instantiating only warns; calling the instance is the legacy (non-static forward) error
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you should "
            "invoke them on the class itself. Instantiating an autograd function will raise an error in a future "
            "version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
            "#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        return _SETUP_NOT_OVERRIDDEN

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it with "
            "backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = _node_type(cls)()
        ctx.to_save = ()
        ctx._saved_versions = []
        ctx.non_differentiable = set()
        ctx.dirty = set()
        ctx.materialize_grads = True
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        track = grad_mode._state.enabled and any(args[i]._rg for i in tensor_pos)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg and track for a in args)
        new_style = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if new_style:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not track:
            return output
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        inputs = {id(args[i]) for i in tensor_pos}
        wired = []
        for o in outs:
            if isinstance(o, Tensor) and id(o) in inputs and id(o) not in ctx.dirty:
                o = T._alias(o)  # torch: an input returned as is becomes a view of it
            wired.append(o)
        diff = tuple((i, None) for i in tensor_pos if args[i]._rg)
        ctx.kernel = None
        ctx.args = []
        ctx.diff = diff
        ctx.edges = tuple(edge_of(args[i]) for i, _ in diff)
        ctx.input_edges = tuple(edge_of(args[i]) or (None, 0) for i in tensor_pos)
        ctx.tensor_pos = tuple(tensor_pos)
        ctx.out_meta = tuple((o._shape, o._dtype.np) if isinstance(o, Tensor) else ((), None) for o in wired)
        ctx.saved = []
        ctx.needs_saved = True
        ctx.n_args = len(args)
        if _graph.region:  # anomaly mode's stack recorder (checkpoint regions pass custom Functions by)
            for f in _graph.region:
                f(ctx)
        for nr, o in enumerate(wired):
            if isinstance(o, Tensor) and id(outs[nr]) not in ctx.non_differentiable and (
                o._dtype.is_floating_point or o._dtype.is_complex
            ):
                o._node = ctx
                o._out_nr = nr
                o._node_v = o._vc.v
                o._rg = True
        return wired[0] if single else tuple(wired)


_SETUP_NOT_OVERRIDDEN = object()


def run_backward(node: _FunctionNode, cts: tuple, device: Any, create_graph: bool = False) -> list:
    """Call the user's backward with gradient Tensors; return gradients for ``node.diff`` positions."""
    grads_in = []
    for k, (shape, np_dt) in enumerate(node.out_meta):
        g = cts[k] if k < len(cts) else None
        if g is None and node.materialize_grads and np_dt is not None:
            import jax.numpy as jnp

            g = jnp.zeros(shape, np_dt)
        if g is not None and not isinstance(g, Tensor):
            g = T.make(g, device)
        grads_in.append(g)
    with grad_mode.set_grad_enabled(bool(create_graph)):
        result = type(node)._fn_backward(node, *grads_in)
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != node.n_args:
        if len(result) > node.n_args and all(r is None for r in result[node.n_args :]):
            result = result[: node.n_args]
        else:
            raise RuntimeError(
                f"function {type(node).__name__} returned an incorrect number of gradients (expected {node.n_args}, "
                f"got {len(result)})"
            )
    if node.hooks:
        node.hook_grads = result  # torch's Node hooks see the gradients of every tensor input (autograd/_node_hooks)
    out = []
    for pos, _ in node.diff:
        g = result[pos]
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"function {type(node).__name__} returned a gradient of type {type(g).__name__}")
        out.append(g if create_graph or g is None else g._data())
    return out


class once_differentiable:
    """Decorator accepted for compatibility: torchlike runs custom backwards without grad tracking."""

    def __new__(cls, fn: Any) -> Any:
        return fn

"""torch.func on JAX's own transforms, plus JAX interop (``to_jax``).

Every transform runs the user's function on tensors whose arrays are JAX tracers, so
``grad``, ``vmap``, ``jacrev``... are jax.grad, jax.vmap, jax.jacrev of the same computation.
Nested transforms nest the same way. When an input requires grad under the outer (tape) autograd,
the transformed computation is recorded as one node, so results stay differentiable.
"""

from __future__ import annotations

import contextlib
import functools
import types
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import tensor as T
from .._core.tensor import Tensor
from ..autograd import _reach, grad_mode

__all__ = ["grad", "grad_and_value", "vmap", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "stack_module_state", "functionalize", "to_jax", "replace_all_batch_norm_modules_"]  # fmt: skip


def _is_t(x: Any) -> bool:
    return isinstance(x, Tensor)


def _leaves(tree: Any) -> tuple[list, Any]:
    return jax.tree_util.tree_flatten(tree, is_leaf=_is_t)


def _to_arrays(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda t: t._data() if _is_t(t) else t, tree, is_leaf=_is_t)


def _to_tensors(tree: Any, device: Any) -> Any:
    def wrap(a: Any) -> Any:
        if isinstance(a, (jax.Array, jax.core.Tracer)) or hasattr(a, "aval"):
            return T.make(a, device)
        return a

    return jax.tree_util.tree_map(wrap, tree)


def _device(tree: Any) -> Any:
    from .._core import device as _dev

    for leaf in _leaves(tree)[0]:
        if _is_t(leaf):
            return leaf.device
    return _dev.CPU


def _pure(func: Callable, device: Any) -> Callable:
    """``func`` on Tensors as a function of arrays (tensor outputs become arrays)."""

    def f(*args: Any, **kwargs: Any) -> Any:
        with grad_mode.no_grad():
            out = func(*_to_tensors(args, device), **_to_tensors(kwargs, device))
        return _to_arrays(out)

    return f


def _conj(tree: Any) -> Any:
    """torch's complex gradients are the conjugates of JAX's (see _core.graph._node_vjp)."""
    return jax.tree_util.tree_map(lambda a: jnp.conj(a) if jnp.iscomplexobj(a) else a, tree)


def _error_if_complex(name: str, tree: Any, is_input: bool) -> None:
    for i, leaf in enumerate(jax.tree_util.tree_leaves(tree)):
        if jnp.iscomplexobj(leaf):
            # torch's message says "input idx" for outputs too
            raise RuntimeError(
                f"{name}: Expected all {'inputs' if is_input else 'outputs'} to be real but received complex tensor "
                f"at flattened input idx: {i}"
            )


def _apply(transform: Callable, args: tuple, kwargs: dict, name: str, func: Callable | None = None) -> Any:
    """Run a JAX-transformed function on tensor arguments and wrap the results as tensors. Where an argument, or
    a tensor the user's ``func`` reads from its closure (``_captured``), requires grad (outside other
    transforms), the whole transform is recorded as one op ``name`` whose backward is the VJP of the transform,
    so the results connect to the outer autograd graph as torch's do."""
    device = _device((args, kwargs))
    if grad_mode.is_grad_enabled():
        arg_leaves = _leaves((args, kwargs))[0]
        captured = _captured(func, arg_leaves) if func is not None else []
        if captured or any(_is_t(x) and x._rg for x in arg_leaves):
            return _recorded(transform, args, kwargs, name, captured, device)
    arrays = _to_arrays((args, kwargs))
    out = transform(*arrays[0], **arrays[1])
    return _to_tensors(out, device)


def _recorded(transform: Callable, args: tuple, kwargs: dict, name: str, captured: list, device: Any) -> Any:
    from .._ops import registry

    tree: list = []

    def flat(a: Any, k: Any, c: Any) -> tuple:
        a, k, c = jax.tree_util.tree_map(lambda v: jnp.asarray(v) if isinstance(v, np.ndarray) else v, (a, k, c))
        with _reading(captured, c):  # the transform traces the function with the captured tensors as inputs
            leaves, treedef = jax.tree_util.tree_flatten(transform(*a, **k))
        tree[:] = [treedef]
        return tuple(leaves)

    flat.__name__ = name
    if captured:  # only those the results depend on join the graph (torch leaves the others' .grad None)
        arrays = _to_arrays((args, kwargs))
        try:
            used = _used_inputs(lambda *c: flat(list(arrays[0]), arrays[1], list(c)), [t._peek() for t in captured])
            captured = [t for t, u in zip(captured, used) if u]
        except Exception:  # noqa: BLE001 - a function that cannot be traced again here: keep them all
            pass
    inputs = [list(args), dict(kwargs), list(captured)]
    outs = registry.apply_pure(name, flat, inputs, device)
    outs = outs if isinstance(outs, tuple) else (outs,)
    _reach.detach_constant_outputs(flat, inputs, outs)
    return jax.tree_util.tree_unflatten(tree[0], list(outs))


def _used_inputs(fn: Callable, xs: list) -> list:
    """Per argument of ``fn``, whether its traced results depend on it (backward liveness over the jaxpr)."""
    jaxpr = jax.make_jaxpr(fn)(*xs).jaxpr
    try:  # JAX's own dead-code elimination sees into nested calls (a kernel's unused bias)
        from jax._src.interpreters import partial_eval as pe

        return list(pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))[1])
    except Exception:  # noqa: BLE001 - another JAX: liveness over the top level, which keeps more
        pass
    live = {v for v in jaxpr.outvars if type(v).__name__ != "Literal"}
    for eqn in reversed(jaxpr.eqns):
        if any(o in live for o in eqn.outvars):
            live.update(v for v in eqn.invars if type(v).__name__ != "Literal")
    return [v in live for v in jaxpr.invars]


def _captured(func: Callable, arg_leaves: list) -> list:
    """The tensors requiring grad that ``func`` reads without taking them as arguments, where they can be found:
    a module's parameters (``jacrev(model)``, a bound method of one), and tensors or modules held by the
    function's closure cells, defaults, ``functools.partial`` arguments and the globals its code names (and so
    on through the functions found there, a few levels deep). torch differentiates the outer graph through them;
    JAX's transform would treat them as constants. A view, and a tensor reached only some other way (an
    attribute of a plain object), stays a constant."""
    found: dict = {}
    seen = {id(x) for x in arg_leaves if _is_t(x)}

    def visit(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > 3:
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            if obj._rg and obj._view is None and not isinstance(obj._buf.array, jax.core.Tracer):
                found[id(obj)] = obj
        elif _is_module(obj):
            for p in obj.parameters():
                visit(p, depth)
        elif isinstance(obj, functools.partial):
            for x in (obj.func, *obj.args, *obj.keywords.values()):
                visit(x, depth)
        elif isinstance(obj, types.MethodType):
            visit(obj.__self__, depth)
            visit(obj.__func__, depth)
        elif isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                try:
                    visit(cell.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    pass
            for x in (*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()):
                visit(x, depth + 1)
            g = obj.__globals__
            for n in obj.__code__.co_names:
                if n in g:
                    visit(g[n], depth + 1)
        elif isinstance(obj, (list, tuple)) and len(obj) <= 64:
            for x in obj:
                visit(x, depth + 1)
        elif isinstance(obj, dict) and len(obj) <= 64:
            for x in obj.values():
                visit(x, depth + 1)

    visit(func, 0)
    return list(found.values())


def _is_module(obj: Any) -> bool:
    """An nn.Module instance (by its attributes: ``func`` sits below ``nn``), never raising."""
    if isinstance(obj, type):
        return False
    try:
        return isinstance(obj.__dict__.get("_parameters"), dict) and callable(getattr(obj, "parameters", None))
    except Exception:  # noqa: BLE001 - an object whose attributes raise: not a module
        return False


@contextlib.contextmanager
def _reading(captured: list, arrays: list) -> Iterator[None]:
    """Within, each captured tensor reads ``arrays[i]`` (the transform's trace of it) instead of its array."""
    old = [t._buf for t in captured]
    try:
        for t, a in zip(captured, arrays):
            t._buf = T.Buffer(a, t._buf.device)
        yield
    finally:
        for t, b in zip(captured, old):
            t._buf = b


_vmap_depth = 0


@contextlib.contextmanager
def _in_vmap(randomness: str) -> Iterator[None]:
    from .._ops import random

    global _vmap_depth
    prev = random.vmap_randomness if hasattr(random, "vmap_randomness") else None
    random.vmap_randomness = randomness
    _vmap_depth += 1
    try:
        yield
    finally:
        _vmap_depth -= 1
        random.vmap_randomness = prev


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad_and_value: ``(grad, value)`` (``(grad, (value, aux))`` with has_aux)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        device = _device((args, kwargs))
        f = _pure(func, device)

        def scalar(*a: Any, **k: Any) -> Any:
            out = f(*a, **k)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux "
                        "is True"
                    )
                return out[0], out[1]
            return out

        for_jax = jax.value_and_grad(scalar, argnums=argnums, has_aux=has_aux)

        def run(*a: Any, **k: Any) -> Any:
            value, g = for_jax(*a, **k)
            return value, _conj(g)

        (value, g) = _apply(run, args, kwargs, "GradBackward0", func)
        return g, value

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad: the gradient of a scalar-valued ``func`` w.r.t. ``argnums``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """torch.func.vjp: the output, and a function of cotangents giving one gradient per primal. Both connect to
    the outer autograd graph as ``grad``'s results do (the vjp function's through its primals and cotangents;
    it runs the forward again, where torch keeps its saved values)."""
    device = _device(primals)
    f = _pure(func, device)
    value_only = (lambda *p: f(*p)[0]) if has_aux else f
    if has_aux:
        value, aux = _apply(f, primals, {}, "VjpBackward0", func)
    else:
        value = _apply(f, primals, {}, "VjpBackward0", func)
    n = len(primals)

    def vjp_fn(*cotangents: Any) -> Any:
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        ct_leaves, ct_tree = _leaves(ct)

        def pull(*pc: Any) -> Any:
            back = jax.vjp(value_only, *pc[:n])[1]
            return _conj(back(_conj(jax.tree_util.tree_unflatten(ct_tree, list(pc[n:])))))

        return _apply(pull, (*primals, *ct_leaves), {}, "VjpBackward0", func)

    if has_aux:
        return value, vjp_fn, aux
    return value, vjp_fn


def jvp(func: Callable, primals: Sequence[Any], tangents: Sequence[Any], *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    device = _device(primals)
    f = _pure(func, device)
    n = len(primals)

    def run(*pt: Any) -> tuple:
        return jax.jvp(f, tuple(pt[:n]), tuple(pt[n:]), has_aux=has_aux)

    return tuple(_apply(run, (*primals, *tangents), {}, "JvpBackward0", func))


def linearize(func: Callable, *primals: Any) -> tuple:
    """torch.func.linearize: the output (connected to the outer autograd graph as ``jvp``'s is), and its JVP at
    ``primals`` as a function of tangents, connected through the tangents only."""
    device = _device(primals)
    f = _pure(func, device)
    n = len(primals)

    fixed = tuple(p.detach() if _is_t(p) else p for p in primals)  # (torch's jvp function holds the primals'
    # values as constants: no gradient reaches them through its results)

    def jvp_fn(*tangents: Any) -> Any:
        return _apply(lambda *pt: jax.jvp(f, tuple(pt[:n]), tuple(pt[n:]))[1], (*fixed, *tangents), {},
                      "LinearizeBackward0")  # fmt: skip

    return _apply(f, primals, {}, "LinearizeBackward0", func), jvp_fn


def _jac(jax_fn: Callable, func: Callable, argnums: Any, has_aux: bool, name: str) -> Callable:
    """jacrev/jacfwd/hessian: real inputs and outputs only, as torch's (complex ones raise its error)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        device = _device((args, kwargs))
        _error_if_complex(name, _to_arrays(args), True)
        f = _pure(func, device)

        def checked(*a: Any, **k: Any) -> Any:
            out = f(*a, **k)
            _error_if_complex(name, out[0] if has_aux else out, False)
            return out

        return _apply(jax_fn(checked, argnums=argnums, has_aux=has_aux), args, kwargs, f"{name.capitalize()}Backward0",
                      func)

    return wrapper


def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    return _jac(jax.jacrev, func, argnums, has_aux, "jacrev")


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    return _jac(jax.jacfwd, func, argnums, has_aux, "jacfwd")


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    return _jac(jax.hessian, func, argnums, False, "jacfwd")  # torch: jacfwd(jacrev(func))


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """torch.func.vmap on jax.vmap. ``randomness='same'`` draws one sample for the whole batch;
    'error' (torch's default) refuses random ops; 'different' is not supported."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        device = _device((args, kwargs))
        f = _pure(func, device)
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap(wrapped, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
                f"`inputs`. in_dims has structure {len(dims)} but inputs has structure {len(args)}."
            )
        batched = jax.vmap(lambda *a: f(*a, **_to_arrays(kwargs)), in_axes=dims, out_axes=out_dims)
        with _in_vmap(randomness):
            return _apply(batched, args, {}, "VmapBackward0", func)

    return wrapper


# --- modules as functions -------------------------------------------------------------------------


def _swap(module: Any, name: str, value: Any) -> tuple:
    *path, leaf = name.split(".")
    mod = module
    for p in path:
        mod = getattr(mod, p)
    for store in ("_parameters", "_buffers"):
        d = mod.__dict__.get(store)
        if d is not None and leaf in d:
            old = d[leaf]
            d[leaf] = value
            return d, leaf, old
    old = mod.__dict__.get(leaf)
    mod.__dict__[leaf] = value
    return mod.__dict__, leaf, old


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module`` with some of its parameters/buffers replaced by the given tensors."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged: dict = {}
        for d in dicts:
            for k in d:
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            merged.update(d)
        dicts = merged
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing = sorted(expected - set(dicts))
        unexpected = sorted(set(dicts) - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Unexpected key(s): {unexpected}.\n\tMissing key(s): {missing}.")  # fmt: skip
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = [_swap(module, k, v) for k, v in dicts.items()]
    try:
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old


def stack_module_state(models: Sequence[Any]) -> tuple[dict, dict]:
    """Stack the parameters and buffers of same-shaped modules along a new leading dim."""
    from .._ops.shape import stack

    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = {n: stack([dict(m.named_parameters())[n].detach() for m in models]) for n, _ in models[0].named_parameters()}
    for p in params.values():
        p.requires_grad_(True)
    buffers = {n: stack([dict(m.named_buffers())[n] for m in models]) for n, _ in models[0].named_buffers()}
    return params, buffers


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """Accepted: torchlike's ops are already functional underneath."""
    return func


def replace_all_batch_norm_modules_(root: Any) -> Any:
    for m in root.modules():
        if hasattr(m, "track_running_stats") and hasattr(m, "running_mean"):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def to_jax(model: Any) -> tuple[Callable, dict]:
    """A pure ``apply(params, *inputs) -> outputs`` (JAX arrays in and out) and the model's params
    and buffers as a dict of JAX arrays, so the model can be trained with jax.grad/optax/pmap."""
    params = {n: p.detach()._data() for n, p in model.named_parameters()}
    params.update({n: b._data() for n, b in model.named_buffers()})
    device = next(iter(model.parameters())).device if params else None

    def apply(p: dict, *inputs: Any) -> Any:
        with grad_mode.no_grad():
            tensors = {k: T.make(v, device) for k, v in p.items()}
            out = functional_call(model, tensors, tuple(T.make(x, device) for x in inputs))
        return _to_arrays(out)

    return apply, params

"""Bucketed executables (opt-in, ``TORCHLIKE_BUCKETS=1``): a kernel meeting a shape off the size classes runs on
the executable of its class.

XLA compiles one executable per exact input shape (0.05-0.5 s on a 2-core CPU), so code whose shapes
change (sampling with a growing context, the last short batch, dynamic padding, boolean masks) compiles
at every new size. With bucketing on, a position-wise kernel's call on the CPU runs at the signature's
*bucket*: every size above 1 rounded up (``size_class``), the inputs zero-padded on the host, the result
sliced back. Executables then grow with the logarithm of the size range.

Which executable runs is a function of the signature alone, never of history: XLA's CPU code rounds some
elements differently at different lengths (measured: float32 ``exp``, ``log`` and ``atan`` change in the
last bit in the scalar tail of a vectorised loop, at 3-8 of 42 lengths), so a signature that switched from
its bucket to its own executable would change its results. A signature off the size classes therefore
always runs bucketed, and one on them always runs exactly (the same executable).

Only position-wise kernels are bucketed: the kernel is traced at both shapes and both programs must consist
of position-wise primitives (elementwise arithmetic and functions, comparisons, selects, casts, broadcasts,
transposes, iotas) with the same parameters and literals, the shapes excepted. Reductions, contractions and
reshapes keep exact shapes: padding changes their results (sums along a row, softmax and dot products
change in the last bit with the number of rows), and so does every other kernel that refuses.

It is off by default: a fixed shape off the size classes pays the padding copies on every call, which the
round-4 design (a plan per signature, padding declared per op) is to remove before it can be the default.
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

__all__ = ["size_class", "bucket_shape", "run", "stats", "set_enabled", "enabled"]

MIN_BUCKET = 8

stats: dict = {"bucketed_calls": 0, "buckets": {}, "refused": 0}
_on = os.environ.get("TORCHLIKE_BUCKETS", "0").strip().lower() not in ("0", "false", "off", "no")

_POSITIONWISE = frozenset((
    "add", "add_any", "sub", "mul", "div", "rem", "pow", "max", "min", "neg", "sign", "floor", "ceil", "round",
    "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "square", "erf",
    "erfc", "erf_inv", "lgamma", "digamma", "nextafter", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor",
    "not", "shift_left", "shift_right_logical", "shift_right_arithmetic", "population_count", "clz", "real",
    "imag", "conj", "complex", "reduce_precision", "convert_element_type", "integer_pow", "select_n", "clamp",
    "copy", "copy_p", "stop_gradient", "broadcast_in_dim", "transpose", "iota", "squeeze", "expand_dims",
))  # fmt: skip
_CALLS = frozenset(("pjit", "jit", "closed_call", "custom_jvp_call", "remat", "checkpoint"))
_SHAPE_PARAMS = frozenset(("shape",))
_DROP = frozenset(("sharding", "out_sharding", "accuracy", "name", "jvp_jaxpr_fun", "jvp_jaxpr_thunk",
                   "num_consts", "symbolic_zeros", "keep_unused", "inline", "ctx_mesh", "compiler_options_kvs",
                   "donated_invars", "in_shardings", "out_shardings", "in_layouts", "out_layouts", "resource_env"))  # fmt: skip


def set_enabled(on: bool) -> None:
    """Turn bucketing on or off for the process (``TORCHLIKE_BUCKETS=1`` starts with it on)."""
    global _on
    _on = bool(on)


def enabled() -> bool:
    return _on


def size_class(n: int) -> int:
    """The bucket of a size: a power of two up to 1024, then steps of an eighth of the power of two below."""
    if n <= MIN_BUCKET:
        return MIN_BUCKET
    if n <= 1024:
        return 1 << (n - 1).bit_length()
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


def bucket_shape(shape: tuple) -> tuple:
    return tuple(n if n <= 1 else size_class(n) for n in shape)


class _Refused(Exception):
    pass


def _same_program(a: Any, b: Any, shapes: dict) -> None:
    """Raise _Refused unless jaxprs ``a`` (exact) and ``b`` (bucketed) are one position-wise program."""
    if len(a.eqns) != len(b.eqns):
        raise _Refused
    for ea, eb in zip(a.eqns, b.eqns):
        name = ea.primitive.name
        if name != eb.primitive.name:
            raise _Refused
        if name in _CALLS:
            ja, jb = (next((e.params[k] for k in ("jaxpr", "call_jaxpr") if k in e.params), None) for e in (ea, eb))
            if ja is None or jb is None:
                raise _Refused
            _same_program(getattr(ja, "jaxpr", ja), getattr(jb, "jaxpr", jb), shapes)
            if list(getattr(ja, "consts", ())) or list(getattr(jb, "consts", ())):
                raise _Refused
            continue
        if name not in _POSITIONWISE:
            raise _Refused
        for k, va in ea.params.items():
            if k in _DROP:
                continue
            vb = eb.params.get(k)
            if k in _SHAPE_PARAMS:
                if bucket_shape(tuple(va)) != tuple(vb):
                    raise _Refused
            elif type(va) is not type(vb) or va != vb:
                raise _Refused
        for va, vb in zip(ea.invars, eb.invars):
            la, lb = type(va).__name__ == "Literal", type(vb).__name__ == "Literal"
            if la != lb or (la and not np.array_equal(np.asarray(va.val), np.asarray(vb.val))):
                raise _Refused
        for va, vb in zip(ea.outvars, eb.outvars):
            sa, sb = tuple(getattr(va.aval, "shape", ())), tuple(getattr(vb.aval, "shape", ()))
            if bucket_shape(sa) != sb:
                raise _Refused


_ARRAY = None


def _signature(args: tuple) -> tuple | None:
    """((shape, dtype), ...) of the arguments, or None where bucketing does not apply (lists, tracers,
    weak-typed or empty arrays that would be padded, Python values)."""
    global _ARRAY
    if _ARRAY is None:
        with jax.ensure_compile_time_eval():
            _ARRAY = type(jax.device_put(np.zeros((), np.float32)))
    sig = []
    for a in args:
        if a is None:  # a baked argument
            sig.append(None)
            continue
        if type(a) is not _ARRAY:
            return None
        shape = a.shape
        if shape and (a.weak_type or 0 in shape):
            return None
        sig.append((shape, a.dtype))
    return tuple(sig)


class _Plan:
    """How a signature runs: padded to ``shapes`` and sliced back to ``outs`` (logical output shapes)."""

    __slots__ = ("shapes", "outs", "tree")

    def __init__(self, shapes: tuple, outs: list, tree: Any) -> None:
        self.shapes, self.outs, self.tree = shapes, outs, tree


_EXACT = "exact"


def _plan(kernel: Any, args: tuple, sig: tuple) -> Any:
    shapes = tuple(None if x is None else bucket_shape(x[0]) for x in sig)
    if shapes == tuple(None if x is None else x[0] for x in sig):
        return _EXACT  # already a bucket: the exact executable is the bucketed one
    try:
        exact = kernel.jitted.trace(*args)
        padded = kernel.jitted.trace(*[None if b is None else jax.ShapeDtypeStruct(b, x[1]) for b, x in zip(shapes, sig)])
        if list(exact.jaxpr.consts) or list(padded.jaxpr.consts):
            raise _Refused
        _same_program(exact.jaxpr.jaxpr, padded.jaxpr.jaxpr, {})
    except Exception:  # noqa: BLE001 - not position-wise, or a body that needs its exact shapes
        stats["refused"] += 1
        return _EXACT
    leaves, tree = jax.tree_util.tree_flatten(exact.out_info)
    return _Plan(shapes, [tuple(o.shape) for o in leaves], tree)


def run(kernel: Any, args: tuple, to_jax: Any) -> Any:
    """The kernel's result for ``args`` from its bucketed executable, or None: run it at the exact shape.
    ``to_jax`` puts a host array the caller owns on the CPU device without compiling."""
    sig = _signature(args)
    if sig is None:
        return None
    table = kernel.buckets
    plan = table.get(sig)
    if plan is None:
        plan = table[sig] = _plan(kernel, args, sig)
    if plan is _EXACT:
        return None
    padded = []
    for a, b in zip(args, plan.shapes):
        if a is None or a.shape == b:
            padded.append(a)
            continue
        host = np.zeros(b, a.dtype)
        host[tuple(slice(0, n) for n in a.shape)] = np.asarray(a)
        padded.append(to_jax(host))
    out = kernel.jitted(*padded)
    leaves = jax.tree_util.tree_leaves(out)
    sliced = []
    for o, want in zip(leaves, plan.outs):
        if tuple(o.shape) != want:
            o = to_jax(np.ascontiguousarray(np.asarray(o)[tuple(slice(0, n) for n in want)]))
        sliced.append(o)
    stats["bucketed_calls"] += 1
    name = getattr(kernel, "__name__", "kernel")
    key = (name, plan.shapes)
    stats["buckets"][key] = stats["buckets"].get(key, 0) + 1
    return jax.tree_util.tree_unflatten(plan.tree, sliced)

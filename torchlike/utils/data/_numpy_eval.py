"""Op kernels evaluated with NumPy, for DataLoader workers started with fork.

A forked worker inherits JAX's runtime without its threads, so it can neither compile nor run an
XLA program. Tracing still works (it is pure Python), so a worker turns a kernel into a jaxpr and
evaluates that here, one lax primitive at a time, with NumPy. This covers what datasets and
collate functions do (dtype conversions, arithmetic, comparisons, reshapes, concatenation,
reductions, sorting, matrix products, integer-array indexing); a primitive outside the table
raises the worker's "cannot run in a forked worker" error naming it.

Results follow lax's semantics (C-style integer division and remainder, round-half-even where
lax rounds so), and every value is cast to the dtype the jaxpr declares.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import ml_dtypes
import numpy as np

# --- the primitive table ----------------------------------------------------------------------------


def _int_div(a: Any, b: Any) -> Any:
    if np.issubdtype(np.result_type(a, b), np.integer):
        a, b = np.asarray(a), np.asarray(b)
        q = np.abs(a) // np.where(b == 0, 1, np.abs(b))  # C truncation toward zero
        return np.where((a < 0) != (b < 0), -q, q)
    return np.true_divide(a, b)


def _reduce_precision(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """lax.reduce_precision to a half type's bits, as a round trip through that type (``registry.round_to``)."""
    half = {(5, 10): np.float16, (8, 7): ml_dtypes.bfloat16}.get((exponent_bits, mantissa_bits))
    if half is None:
        raise Unsupported("reduce_precision to other widths")
    return x.astype(half).astype(x.dtype)


def _round(x: Any, rounding_method: Any = 0) -> Any:
    if int(rounding_method) == 1:  # to nearest even
        return np.round(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)  # half away from zero


def _shift_right_logical(a: Any, b: Any) -> Any:
    a = np.asarray(a)
    unsigned = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return np.right_shift(unsigned, np.asarray(b).astype(unsigned.dtype)).view(a.dtype)


def _vectorized(f: Callable) -> Callable:
    vf = np.vectorize(f, otypes=[np.float64])
    return lambda x: vf(x).astype(np.asarray(x).dtype)


_ELEMENTWISE: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _int_div, "rem": np.fmod, "pow": np.power,
    "max": np.maximum, "min": np.minimum, "atan2": np.arctan2, "nextafter": np.nextafter,
    "neg": np.negative, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "abs": np.abs,
    "is_finite": np.isfinite, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "cbrt": np.cbrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "square": np.square, "real": np.real, "imag": np.imag, "conj": np.conj,
    "erf": _vectorized(math.erf), "erfc": _vectorized(math.erfc), "lgamma": _vectorized(math.lgamma),
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "not": np.invert, "shift_left": np.left_shift, "shift_right_arithmetic": np.right_shift,
    "shift_right_logical": _shift_right_logical, "population_count": None,
    "copy": np.copy, "copy_p": np.copy, "optimization_barrier": lambda *xs: list(xs),
}  # fmt: skip
_ELEMENTWISE = {k: v for k, v in _ELEMENTWISE.items() if v is not None}


def _broadcast_in_dim(x: Any, shape: tuple, broadcast_dimensions: tuple, **_: Any) -> Any:
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _slice(x: Any, start_indices: tuple, limit_indices: tuple, strides: Any = None, **_: Any) -> Any:
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides))]


def _clamped_starts(x: Any, starts: Any, sizes: tuple) -> list:
    return [min(max(int(s), 0), dim - size) for s, dim, size in zip(starts, x.shape, sizes)]


def _dynamic_slice(x: Any, *starts: Any, slice_sizes: tuple, **_: Any) -> Any:
    st = _clamped_starts(x, starts, slice_sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(st, slice_sizes))]


def _dynamic_update_slice(x: Any, update: Any, *starts: Any, **_: Any) -> Any:
    st = _clamped_starts(x, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(s, s + n) for s, n in zip(st, update.shape))] = update
    return out


def _pad(x: Any, value: Any, padding_config: tuple) -> Any:
    for axis, (lo, hi, interior) in enumerate(padding_config):
        if interior:
            n = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior if n else 0
            spread = np.full(shape, value, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, interior + 1)
            spread[tuple(index)] = x
            x = spread
        pad = [(0, 0)] * x.ndim
        pad[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, pad, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(-min(lo, 0), x.shape[axis] + min(hi, 0))
        x = x[tuple(index)]
    return x


def _iota(dtype: Any, shape: tuple, dimension: int, **_: Any) -> Any:
    line = np.arange(shape[dimension], dtype=dtype)
    return _broadcast_in_dim(line, shape, (dimension,))


def _reduction(f: Callable) -> Callable:
    return lambda x, axes, **_: f(x, axis=tuple(axes))


def _arg(f: Callable) -> Callable:
    return lambda x, axes, index_dtype, **_: f(x, axis=axes[0]).astype(index_dtype)


def _cumulative(f: Callable) -> Callable:
    def run(x: Any, axis: int, reverse: bool = False, **_: Any) -> Any:
        if reverse:
            return np.flip(f(np.flip(x, axis), axis=axis), axis)
        return f(x, axis=axis)

    return run


def _dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, preferred_element_type: Any = None, **_: Any) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc, rc):
        rs[b] = ls[a]
    for a, b in zip(lb, rb):
        rs[b] = ls[a]
    out = [ls[d] for d in lb]
    out += [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    out += [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    dt = preferred_element_type or np.result_type(lhs, rhs)
    return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs.astype(dt), rhs.astype(dt))


def _sort(*operands: Any, dimension: int, is_stable: bool = True, num_keys: int = 1) -> list:
    keys = operands[:num_keys]
    if num_keys == 1:
        order = np.argsort(keys[0], axis=dimension, kind="stable")
    else:  # lexicographic: the first key is the primary one
        moved = [np.moveaxis(k, dimension, -1) for k in keys]
        flat = [k.reshape(-1, k.shape[-1]) for k in moved]
        rows = [np.lexsort(tuple(f[i] for f in reversed(flat))) for i in range(flat[0].shape[0])]
        order = np.moveaxis(np.array(rows).reshape(moved[0].shape), -1, dimension)
    return [np.take_along_axis(x, order, axis=dimension) for x in operands]


def _top_k(x: Any, k: int, axis: int = -1, **_: Any) -> list:
    """lax.top_k: the k largest along ``axis``, NaN largest, equal values in index order."""
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    order = n - 1 - np.flip(np.argsort(moved[..., ::-1], axis=-1, kind="stable"), axis=-1)[..., :k]
    values = np.take_along_axis(moved, order, axis=-1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


def _gather_fill(dtype: np.dtype) -> Any:
    if np.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).min if np.issubdtype(dtype, np.signedinteger) else np.iinfo(dtype).max


def _gather(operand: Any, indices: Any, dimension_numbers: Any, slice_sizes: tuple, mode: Any = None,
            fill_value: Any = None, **_: Any) -> Any:  # fmt: skip
    dn = dimension_numbers
    if getattr(dn, "operand_batching_dims", ()):
        raise Unsupported("gather with batching dimensions")
    fill = "FILL" in str(mode)
    batch_shape = indices.shape[:-1]
    offset_src = [d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims]
    offset_shape = tuple(slice_sizes[d] for d in offset_src)
    pieces = []
    for row in indices.reshape(-1, indices.shape[-1]):
        start = [0] * operand.ndim
        outside = False
        for k, d in enumerate(dn.start_index_map):
            s, hi = int(row[k]), operand.shape[d] - slice_sizes[d]
            outside = outside or s < 0 or s > hi
            start[d] = min(max(s, 0), hi)
        if fill and outside:
            value = _gather_fill(operand.dtype) if fill_value is None else fill_value
            pieces.append(np.full(offset_shape, value, operand.dtype))
            continue
        piece = operand[tuple(slice(s, s + n) for s, n in zip(start, slice_sizes))]
        pieces.append(piece.reshape(offset_shape))
    stacked = np.stack(pieces) if pieces else np.zeros((0, *offset_shape), operand.dtype)
    stacked = stacked.reshape(batch_shape + offset_shape)
    first_offset = len(batch_shape)
    return np.moveaxis(stacked, list(range(first_offset, stacked.ndim)), list(dn.offset_dims))


def _scatter(combine: Callable) -> Callable:
    def run(operand: Any, indices: Any, updates: Any, dimension_numbers: Any, mode: Any = None, **_: Any) -> Any:
        dn = dimension_numbers
        if getattr(dn, "operand_batching_dims", ()):
            raise Unsupported("scatter with batching dimensions")
        batch_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        u = np.moveaxis(updates, batch_dims, list(range(len(batch_dims))))
        windows = u.reshape((-1,) + u.shape[len(batch_dims) :])
        sizes = iter(windows.shape[1:])
        window = [1 if d in dn.inserted_window_dims else next(sizes) for d in range(operand.ndim)]
        clip = "CLIP" in str(mode)
        out = np.array(operand)
        for row, w in zip(indices.reshape(-1, indices.shape[-1]), windows):
            start = [0] * operand.ndim
            inside = True
            for k, d in enumerate(dn.scatter_dims_to_operand_dims):
                s, hi = int(row[k]), operand.shape[d] - window[d]
                if clip:
                    s = min(max(s, 0), hi)
                inside = inside and 0 <= s <= hi
                start[d] = s
            if inside:  # XLA skips windows that fall outside the operand
                at = tuple(slice(s, s + n) for s, n in zip(start, window))
                out[at] = combine(out[at], w.reshape(window))
        return out

    return run


def _tile(x: Any, reps: tuple) -> Any:
    return np.tile(x, reps)


def _split(x: Any, sizes: tuple, axis: int) -> list:
    return np.split(x, np.cumsum([int(n) for n in sizes])[:-1], axis=axis)


_STRUCTURAL: dict[str, Callable] = {
    "convert_element_type": lambda x, new_dtype, **_: np.asarray(x).astype(new_dtype),
    "bitcast_convert_type": lambda x, new_dtype, **_: np.asarray(x).view(new_dtype),
    "reshape": lambda x, new_sizes, **_: np.reshape(x, new_sizes),
    "broadcast_in_dim": _broadcast_in_dim,
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "squeeze": lambda x, dimensions: np.squeeze(x, tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)),
    "pad": _pad,
    "iota": _iota,
    "select_n": lambda which, *cases: np.choose(np.asarray(which).astype(np.int64), np.broadcast_arrays(*cases)),
    "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
    "round": _round,
    "integer_pow": lambda x, y: np.power(x, y),
    "reduce_precision": _reduce_precision,
    "reduce_sum": _reduction(np.sum), "reduce_max": _reduction(np.max), "reduce_min": _reduction(np.min),
    "reduce_prod": _reduction(np.prod), "reduce_and": _reduction(np.all), "reduce_or": _reduction(np.any),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "cumsum": _cumulative(np.cumsum), "cumprod": _cumulative(np.cumprod),
    "cummax": _cumulative(np.maximum.accumulate), "cummin": _cumulative(np.minimum.accumulate),
    "dot_general": _dot_general,
    "sort": _sort,
    "top_k": _top_k,
    "gather": _gather,
    "scatter": _scatter(lambda old, new: new), "scatter-add": _scatter(np.add), "scatter_add": _scatter(np.add),
    "scatter-sub": _scatter(np.subtract), "scatter-mul": _scatter(np.multiply),
    "scatter-min": _scatter(np.minimum), "scatter-max": _scatter(np.maximum),
    "stack": lambda *xs, axis: np.stack(xs, axis), "tile": _tile, "split": _split,
    "stop_gradient": lambda x: x,
}  # fmt: skip


# --- evaluation ---------------------------------------------------------------------------------------


class Unsupported(Exception):
    """A primitive outside the NumPy table (the message names it)."""


def _sub_jaxpr(params: dict) -> Any:
    for name in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        j = params.get(name)
        if j is not None:
            return j
    return None


def _apply(eqn: Any, args: list) -> Any:
    return apply_primitive(eqn.primitive.name, dict(eqn.params), args)


def apply_primitive(name: str, params: dict, args: list) -> Any:
    """One lax primitive ``name`` with its parameters, on NumPy arrays."""
    f = _ELEMENTWISE.get(name)
    if f is not None:
        return f(*args)
    f = _STRUCTURAL.get(name)
    if f is not None:
        params.pop("sharding", None)
        params.pop("out_sharding", None)
        params.pop("accuracy", None)
        return f(*args, **params)
    if name == "cond":
        index, *ops = args
        return eval_closed(params["branches"][int(index)], ops)
    if name == "while":
        nc, nb = params["cond_nconsts"], params["body_nconsts"]
        cconsts, bconsts, carry = args[:nc], args[nc : nc + nb], args[nc + nb :]
        while bool(eval_closed(params["cond_jaxpr"], cconsts + carry)[0]):
            carry = eval_closed(params["body_jaxpr"], bconsts + carry)
        return carry
    inner = _sub_jaxpr(params)
    if inner is not None:  # jit, closed_call, custom_jvp_call, custom_vjp_call, remat: run the primal
        n = len(getattr(inner, "jaxpr", inner).invars)
        return eval_closed(inner, args[len(args) - n :])
    raise Unsupported(f"the JAX primitive '{name}'")


def eval_closed(closed: Any, args: list) -> list:
    if hasattr(closed, "consts"):
        return _eval(closed.jaxpr, list(closed.consts), args)
    return _eval(closed, [], args)


def _eval(jaxpr: Any, consts: list, args: list) -> list:
    env: dict = {}

    def read(v: Any) -> Any:
        return v.val if type(v).__name__ == "Literal" else env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = np.asarray(x)
    for v, x in zip(jaxpr.invars, args):
        env[v] = np.asarray(x)
    for eqn in jaxpr.eqns:
        outs = _apply(eqn, [read(v) for v in eqn.invars])
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            if type(v).__name__ != "DropVar":
                env[v] = np.asarray(o, dtype=v.aval.dtype).reshape(v.aval.shape)
    return [read(v) for v in jaxpr.outvars]


def compiled(fn: Callable, on_unsupported: Callable[[str], Exception]) -> Callable:
    """``fn`` (a function of arrays) run by tracing it once per argument signature and evaluating the
    jaxpr with NumPy. ``on_unsupported(what)`` builds the error for a primitive outside the table."""
    cache: dict = {}

    def run(*args: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten(args)
        key = (tree, tuple((np.shape(x), np.result_type(x), type(x)) for x in leaves))
        entry = cache.get(key)
        if entry is None:
            closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*args)
            entry = cache[key] = (closed, jax.tree_util.tree_structure(out_shape))
        closed, out_tree = entry
        try:
            outs = eval_closed(closed, leaves)
        except Unsupported as e:
            raise on_unsupported(str(e)) from None
        return jax.tree_util.tree_unflatten(out_tree, outs)

    return run

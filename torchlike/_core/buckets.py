"""Bucketed executables: a kernel meeting a shape off the size classes runs on the executable of its class.

XLA compiles one executable per exact input shape (0.05-0.5 s on a 2-core CPU), so code whose shapes
change (sampling with a growing context, the last short batch, dynamic padding, boolean masks) compiles
at every new size. With bucketing (on by default on the CPU in eager mode; ``TORCHLIKE_BUCKETS=0`` turns it
off), a kernel's call runs at the signature's *bucket*: sizes rounded up (``size_class``), the inputs padded
on the host, the result sliced back. Executables then grow with the logarithm of the size range.

Which executable runs is a function of the signature alone, never of history: XLA's CPU code rounds some
elements differently at different lengths (measured: float32 ``exp``, ``log`` and ``atan`` change in the
last bit in the scalar tail of a vectorised loop, at 3-8 of 42 lengths; row sums and products change with
the number of rows), so a signature that switched from its bucket to its own executable would change its
results. A signature off the size classes therefore always runs bucketed, and one on them always runs
exactly (the same executable). Where padding changes no bit (``_pads_exactly``) history may choose: a
kernel's first signature runs exact, and so does a signature whose padded calls have cost about a compile
(``STAGE_CALL``). Only signatures whose padded arguments hold at most ``MAX_ELEMENTS`` are
bucketed: larger ones compile for their shape, where the compile costs little next to the work and padding
would not.

Two kinds of kernel are bucketed:

- **position-wise** kernels, found by tracing at both shapes: both programs must consist of position-wise
  primitives (elementwise arithmetic and functions, comparisons, selects, casts, broadcasts, transposes,
  iotas) with the same parameters and literals, the shapes excepted. Every axis is padded with zeros.
- **declared** kernels: the op table says which axes of which arguments may be padded and with what
  (``defop(pad=...)``): rows of a linear layer, of a layer norm or of a softmax (whose own axis is padded
  with -inf), the rows, columns and (with zeros) the contraction of a matrix product. Each result is the
  padded call's leading block, of the exact call's shape.

Other kernels (reductions over padded axes without a declaration, reshapes, sorts) keep exact shapes.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import jax
import numpy as np

from . import _xla_tiers, kernel_cache

__all__ = ["size_class", "bucket_shape", "ArgFill", "Lengths", "Count", "rows", "all_but", "matrix_product", "run", "stats", "set_enabled", "enabled"]

MAX_ELEMENTS = 1 << 18  # elements of a signature's padded arguments beyond which it runs exactly (1 MiB of float32)

stats: dict = {"bucketed_calls": 0, "buckets": {}, "refused": 0}
_on = os.environ.get("TORCHLIKE_BUCKETS", "1").strip().lower() not in ("0", "false", "off", "no")

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
    """The bucket of a size: a power of two up to 1024, then steps of an eighth of the power of two below.
    Powers of two are their own class, so the common fixed sizes run exactly as without bucketing."""
    if n <= 1024:
        return 1 << (n - 1).bit_length() if n > 1 else n
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


COARSE = 64  # the least size a kernel whose padding changes no bit runs at, once it meets several signatures
COARSE_ELEMENTS = 1 << 16  # ... while its padded arguments hold at most this many elements


def coarse_class(n: int) -> int:
    """The bucket of a size for a kernel whose padded results are its exact results bit for bit: which
    executable runs cannot change a result, so a few coarse ones serve every small size (a context growing
    from 1 to 64 meets one executable, not seven)."""
    return max(size_class(n), COARSE)


def bucket_shape(shape: tuple, cls: Any = size_class) -> tuple:
    return tuple(n if n <= 1 else cls(n) for n in shape)


# --- padding declarations (``defop(pad=fn)``: ``fn(static, shapes)`` -> per dynamic argument, None or
# {axis: fill}) ---------------------------------------------------------------------------------------------


class ArgFill:
    """A fill read from the call's argument ``index`` (a loss's ``ignore_index``), not fixed by the declaration."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArgFill) and other.index == self.index

    def __hash__(self) -> int:
        return hash(("ArgFill", self.index))


class Lengths:
    """For an argument passed as None: the sequence lengths a padded call needs instead (a recurrent layer
    run on a padded time axis then stops each sequence at its length), one per row of axis ``batch`` of
    argument ``of``, each its exact size along ``axis``."""

    __slots__ = ("of", "axis", "batch")

    def __init__(self, of: int, axis: int, batch: int) -> None:
        self.of, self.axis, self.batch = of, axis, batch

    def shape(self, sig: tuple) -> tuple:
        return (sig[self.of][0][self.batch],)

    def array(self, leaves: list, shape: tuple) -> np.ndarray:
        return np.full(shape, leaves[self.of].shape[self.axis], np.int64)

    def key(self) -> tuple:
        return ("lengths", self.of, self.axis, self.batch)


class Count:
    """For an argument passed as None: the exact element count of argument ``of``, a 0-d int64 (a mean over
    a padded argument divides by it instead of by the padded size)."""

    __slots__ = ("of",)

    def __init__(self, of: int) -> None:
        self.of = of

    def shape(self, sig: tuple) -> tuple:
        return ()

    def array(self, leaves: list, shape: tuple) -> np.ndarray:
        return np.asarray(leaves[self.of].size, np.int64)

    def key(self) -> tuple:
        return ("count", self.of)


_MADE = (Lengths, Count)  # fills that make an argument the exact call passes as None


def rows(shape: tuple | None, kept: int) -> dict | None:
    """Every axis but the last ``kept`` padded with zeros: the rows of a row-independent op."""
    if shape is None or len(shape) <= kept:
        return None
    return {a: 0 for a in range(len(shape) - kept)}


def all_but(shape: tuple | None, dim: int, fill: float) -> dict | None:
    """Every axis padded with zeros, ``dim`` with ``fill`` (a softmax's own axis: -inf adds nothing to it)."""
    if not shape:
        return None
    d = dim % len(shape)
    return {a: (fill if a == d else 0) for a in range(len(shape))}


def matrix_product(static: tuple, shapes: tuple) -> tuple:
    """``a @ b`` of matrices (or stacks of them, the batch axes exact): rows, columns and the contraction
    padded with zeros, which add nothing to the dot products."""
    a, b = shapes[0], shapes[1]
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return (None, None)
    return ({len(a) - 2: 0, len(a) - 1: 0}, {len(b) - 2: 0, len(b) - 1: 0})


class _Refused(Exception):
    pass


def _same_program(a: Any, b: Any, cls: Any) -> None:
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
            _same_program(getattr(ja, "jaxpr", ja), getattr(jb, "jaxpr", jb), cls)
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
                if bucket_shape(tuple(va), cls) != tuple(vb):
                    raise _Refused
            elif type(va) is not type(vb) or va != vb:
                raise _Refused
        for va, vb in zip(ea.invars, eb.invars):
            la, lb = type(va).__name__ == "Literal", type(vb).__name__ == "Literal"
            if la != lb or (la and not np.array_equal(np.asarray(va.val), np.asarray(vb.val))):
                raise _Refused
        for va, vb in zip(ea.outvars, eb.outvars):
            sa, sb = tuple(getattr(va.aval, "shape", ())), tuple(getattr(vb.aval, "shape", ()))
            if bucket_shape(sa, cls) != sb:
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
        t = type(a)
        if t is not _ARRAY and t is not np.ndarray:  # (a host array: a small op's result, see ColdKernel.host)
            return None
        shape = a.shape
        # (``t is np.ndarray`` first: in a forked DataLoader worker ``jax.device_put`` gives NumPy arrays, so
        # _ARRAY may be np.ndarray itself)
        if shape and ((t is not np.ndarray and a.weak_type) or 0 in shape):
            return None
        sig.append((shape, a.dtype))
    return tuple(sig)


class _Plan:
    """How a signature runs: padded to ``shapes`` (``fills``: per argument, the axes padded with a value
    other than zero) and sliced back to ``outs`` (the exact call's output shapes). ``exact``: whether padding
    changes no bit (None: not asked yet); ``staged``: the modelled seconds this signature's host staging has
    cost, for one whose padding is exact (see ``STAGE_CALL``)."""

    __slots__ = ("shapes", "outs", "tree", "fills", "exact", "staged", "cuts", "key")

    def __init__(self, shapes: tuple, outs: list, tree: Any, fills: tuple = ()) -> None:
        self.shapes, self.outs, self.tree, self.fills = shapes, outs, tree, fills
        self.exact = None
        self.staged = 0.0
        self.cuts = [tuple(slice(0, n) for n in o) for o in outs]  # each result's exact block
        self.key = None  # (stats' key, made on the first call)


_EXACT = "exact"


def _declared_shapes(kernel: Any, sig: tuple, cls: Any = size_class) -> tuple | None:
    """(padded shapes, fills) from the op's declaration, or None where it declares nothing to pad."""
    spec = kernel.pad(tuple(None if x is None else x[0] for x in sig))
    shapes, fills = [], []
    for i, x in enumerate(sig):
        axes = spec[i] if i < len(spec) else None
        if type(axes) in _MADE:
            if x is not None:
                raise _Refused
            shapes.append(axes.shape(sig))
            fills.append(axes)
            continue
        if x is None or not axes:
            shapes.append(None if x is None else x[0])
            fills.append(())
            continue
        shapes.append(tuple(cls(n) if a in axes and n > 1 else n for a, n in enumerate(x[0])))
        fills.append(tuple((a, v) for a, v in axes.items() if type(v) is ArgFill or v != 0))
        if any(type(v) is ArgFill and (v.index >= len(sig) or sig[v.index] is None) for v in axes.values()):
            raise _Refused
    return tuple(shapes), tuple(fills)


def _structs(shapes: tuple, sig: tuple, fills: tuple) -> list:
    """The padded call's abstract arguments (synthesized lengths and counts are int64)."""
    out = []
    for i, (b, x) in enumerate(zip(shapes, sig)):
        if fills and type(fills[i]) in _MADE:
            out.append(jax.ShapeDtypeStruct(b, np.int64))
        else:
            out.append(None if b is None else jax.ShapeDtypeStruct(b, x[1]))
    return out


def _vjp_shapes(kernel: Any, sig: tuple, tree: Any, cls: Any = size_class) -> tuple | None:
    """(padded shapes, fills) of a backward kernel's (primals..., cotangents...) leaves: the primals as the
    forward op declares, the cotangents zero-padded to the padded forward call's output shapes."""
    fwd, n = kernel.vjp_of
    primals = jax.tree_util.treedef_children(tree)[0] if tree is not None else None
    if primals is not None:  # (a list argument, such as index tensors, has a leaf per element)
        n = primals.num_leaves
    shapes, fills = _declared_shapes(fwd, sig[:n], cls)
    key = ("vjp", shapes, tuple(None if x is None else x[1] for x in sig[:n]), _fills_key(fills))
    outs = kernel.buckets.get(key)
    if outs is None:
        outs = kernel.buckets[key] = [tuple(o.shape) for o in jax.tree_util.tree_leaves(
            jax.eval_shape(fwd.jitted, *_unflatten(primals, _structs(shapes, sig[:n], fills))))]  # fmt: skip
    cts = [o if x is not None else None for o, x in zip(outs, sig[n:])]  # (trailing unused ones left out)
    if len(outs) < len(sig) - n or any(x is not None and len(x[0]) != len(c) for x, c in zip(sig[n:], cts)):
        raise _Refused
    return shapes + tuple(cts), fills + ((),) * len(cts)


def _unflatten(tree: Any, leaves: list) -> Any:
    return leaves if tree is None else jax.tree_util.tree_unflatten(tree, leaves)


def _fills_key(fills: tuple) -> tuple:
    return tuple(f.key() if type(f) in _MADE else f for f in fills)


def _pattern(sig: tuple, padded: tuple | None = None) -> tuple:
    """``sig`` with each size other than 0 and 1 named, equal sizes alike, and the sizes by name. ``padded``
    (per argument, its padded shape): name only the sizes of padded axes, the others kept as they are."""
    sizes: dict = {}
    out = []
    for i, x in enumerate(sig):
        if x is None:
            out.append(None)
            continue
        shape = []
        for a, n in enumerate(x[0]):
            if n > 1 and (padded is None or padded[i] is None or padded[i][a] != n):
                n = sizes.setdefault(n, f"d{len(sizes)}")
            shape.append(n)
        out.append((tuple(shape), x[1]))
    return tuple(out), {name: n for n, name in sizes.items()}


def _generic(jaxpr: Any) -> bool:
    """Whether a symbolic trace holds, with this call's sizes put in, the program traced at those sizes in
    every detail _same_program compares: no size read as a value, every shape made of whole sizes."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dim_as_value":
            return False
        for k, v in eqn.params.items():
            if k in _SHAPE_PARAMS and not all(type(d) is int or _is_var(d) for d in v):
                return False
            inner = v if hasattr(v, "eqns") else getattr(v, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns") and not _generic(inner):
                return False
        for o in eqn.outvars:
            if not all(type(d) is int or _is_var(d) for d in getattr(o.aval, "shape", ())):
                return False
    return True


def _is_var(d: Any) -> bool:
    try:
        return str(d).isidentifier()
    except Exception:  # noqa: BLE001
        return False


def _symbolic(kernel: Any, tree: Any, pattern: tuple, names: dict, positionwise: bool) -> Any:
    """One trace per shape pattern: (output shapes as expressions in the sizes, out tree, generic) or None
    where the body needs its exact sizes."""
    key = ("symbolic", pattern)
    got = kernel.buckets.get(key)
    if got is None:
        got = False
        try:
            syms = dict(zip(names, jax.export.symbolic_shape(", ".join(names)))) if names else {}
            structs = [None if x is None else jax.ShapeDtypeStruct(tuple(syms.get(n, n) for n in x[0]), x[1])
                       for x in pattern]  # fmt: skip
            args = jax.tree_util.tree_unflatten(tree, structs)
            if positionwise:
                traced = kernel.jitted.trace(*args)
                info, generic = traced.out_info, _generic(traced.jaxpr.jaxpr)
            else:
                info, generic = jax.eval_shape(kernel.jitted, *args), True
            outs, out_tree = jax.tree_util.tree_flatten(info)
            got = ([tuple(o.shape) for o in outs], out_tree, generic)
        except Exception:  # noqa: BLE001 - the body needs concrete sizes
            pass
        kernel.buckets[key] = got
    return got or None


def _padded_shapes(kernel: Any, sig: tuple, tree: Any, declared: bool, cls: Any) -> tuple:
    if getattr(kernel, "vjp_of", None) is not None:
        return _vjp_shapes(kernel, sig, tree, cls)
    if declared:
        return _declared_shapes(kernel, sig, cls)
    return tuple(None if x is None else bucket_shape(x[0], cls) for x in sig), ()


def _plan(kernel: Any, leaves: list, tree: Any, sig: tuple, coarse: bool) -> Any:
    exact_shapes = tuple(None if x is None else x[0] for x in sig)
    declared = getattr(kernel, "pad", None) is not None or getattr(kernel, "vjp_of", None) is not None
    cls = coarse_class if coarse else size_class
    try:
        shapes, fills = _padded_shapes(kernel, sig, tree, declared, cls)
        if coarse and sum(int(np.prod(b)) for b in shapes if b is not None) > COARSE_ELEMENTS:
            cls = size_class
            shapes, fills = _padded_shapes(kernel, sig, tree, declared, cls)
    except Exception:  # noqa: BLE001 - a declaration that does not apply to these arguments
        stats["refused"] += 1
        return _EXACT
    if all(e is None or b == e for b, e in zip(shapes, exact_shapes)):
        return _EXACT  # already a bucket: the exact executable is the bucketed one
    if sum(int(np.prod(b)) for b, e in zip(shapes, exact_shapes) if e is not None and b != e) > MAX_ELEMENTS:
        return _EXACT
    # Each new size would cost two traces; a symbolic trace per shape pattern gives the exact call's output
    # shapes, and the padded call's check is kept per (pattern, padded shapes).
    pattern, names = _pattern(sig)
    symbolic = _symbolic(kernel, tree, pattern, names, not declared)
    if symbolic is None and declared and len(shapes) == len(sig):
        # a body that checks the sizes it does not pad (a layer norm's normalized shape): sizes named only on
        # the padded axes, one trace per such pattern instead of two per signature
        pattern, names = _pattern(sig, shapes)
        symbolic = _symbolic(kernel, tree, pattern, names, not declared)
    weak = tuple(getattr(a, "weak_type", False) for a in leaves)
    key = ("checked", pattern, weak, shapes, _fills_key(fills)) if symbolic is not None and symbolic[2] else None
    checked = kernel.buckets.get(key) if key is not None else None
    if checked is None:
        checked = _check(kernel, leaves, tree, sig, shapes, fills, declared, symbolic is not None, cls)
        if key is not None:
            kernel.buckets[key] = checked
    if checked is _EXACT:
        return _EXACT
    if symbolic is not None:
        outs = [tuple(d if type(d) is int else int(d._evaluate(names)) for d in o) for o in symbolic[0]]
        return _Plan(shapes, outs, symbolic[1], fills)
    return _Plan(shapes, checked[0], checked[1], fills)


def _check(kernel: Any, leaves: list, tree: Any, sig: tuple, shapes: tuple, fills: tuple, declared: bool,
           shaped: bool, cls: Any) -> Any:
    """(exact output shapes, out tree) where the padded call serves this signature, else _EXACT. ``shaped``:
    a symbolic trace gave the output shapes already, so a declared op's exact call is not traced."""
    args = jax.tree_util.tree_unflatten(tree, leaves)
    padded_args = jax.tree_util.tree_unflatten(tree, _structs(shapes, sig, fills))
    try:
        if declared:
            out_info = None if shaped else jax.eval_shape(kernel.jitted, *args)
            jax.eval_shape(kernel.jitted, *padded_args)  # the body accepts the padded shapes
            if shaped:
                return True
        else:
            exact = kernel.jitted.trace(*args)
            padded = kernel.jitted.trace(*padded_args)
            if list(exact.jaxpr.consts) or list(padded.jaxpr.consts):
                raise _Refused
            _same_program(exact.jaxpr.jaxpr, padded.jaxpr.jaxpr, cls)
            out_info = exact.out_info
    except Exception:  # noqa: BLE001 - not position-wise, or a body that needs its exact shapes
        stats["refused"] += 1
        return _EXACT
    outs, out_tree = jax.tree_util.tree_flatten(out_info)
    return [tuple(o.shape) for o in outs], out_tree


def _is_none(x: Any) -> bool:
    return x is None


FIXED_SIGNATURES = 1  # signatures a kernel meets before its bit-exact paddings start (see ``run``)
# A signature whose padding changes no bit may leave its bucket for its own executable: once the host staging
# of its padded calls (pad, put, slice back) has cost about what compiling that executable costs (ski rental,
# as the cold tier rents), it runs exact. Modelled from the work, not timed, so compile counts stay put.
COMPILE_COST = 0.05  # seconds: one small executable's compile on this CPU (as ``cold_kernels.COMPILE_COST``)
# Measured beyond the exact call: x[idx]'s backward of 50-60 rows, 36 us; a linear of 40, 100 and 200 rows
# (padded to 64, 128, 256), 0.30, 0.47 and 0.45 ms on a loaded CPU (its padded rows' work included).
STAGE_CALL = 40e-6  # seconds a padded call costs beyond its exact call (host copies, puts, waiting for the result)
STAGE_ELEMENT = 8e-9  # ... per element staged (padded arguments in, sliced results out, the padded work)
_met: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # kernel -> padded signatures met (a few)


def _few_signatures(kernel: Any, sig: tuple) -> bool:
    return kernel_cache.admit(_met, kernel, sig, FIXED_SIGNATURES)


def _pads_exactly(kernel: Any, args: tuple) -> bool:
    """Whether the kernel's padded results are the exact call's bit for bit: position-wise bodies in the
    exact tier (XLA's CPU code rounds transcendentals differently at some lengths), and ops whose padding
    declaration says so (``pad.exact``: True, or "forward" where the backward's results are not)."""
    if kernel.pad is None and kernel.vjp_of is None:
        tier = getattr(kernel, "exact_tier", None)
        return tier is not None and tier(args)
    if not _on_cpu(args):  # the declarations' row-exactness is measured on XLA's CPU code (a GPU's BLAS picks
        return False  # its algorithm by size)
    if kernel.vjp_of is not None:
        fwd = kernel.vjp_of[0]
        return fwd.pad is not None and getattr(fwd.pad, "exact", False) is True
    return bool(getattr(kernel.pad, "exact", False))


def _on_cpu(args: tuple) -> bool:
    for a in jax.tree_util.tree_leaves(args):
        if type(a) is np.ndarray:
            return True
        devices = getattr(a, "devices", None)
        if devices is not None:
            return all(d.platform == "cpu" for d in devices())
    return True


def _planned(kernel: Any, args: tuple) -> tuple:
    """(plan, leaves, their tree or None, signature, whether padding is exact (None: not asked)) of a call;
    plan None where bucketing does not apply to its arguments."""
    if any(type(a) is list or type(a) is tuple for a in args):
        leaves, tree = jax.tree_util.tree_flatten(args, is_leaf=_is_none)
    else:
        leaves, tree = args, None
    sig = _signature(leaves)
    if sig is None:
        return None, leaves, tree, sig, None
    table = kernel.buckets
    plan = table.get(sig)
    exact = None
    if plan is None:
        if tree is None:
            tree = jax.tree_util.tree_structure(args, is_leaf=_is_none)
        exact = _pads_exactly(kernel, args)
        # Off the CPU only a lazy structure whose shapes churn is bucketed, and an executable costs far more
        # to compile (0.05-0.5 s): coarse classes there too, a function of the signature all the same
        plan = table[sig] = _plan(kernel, list(leaves), tree, sig, coarse=exact or not _on_cpu(args))
    return plan, leaves, tree, sig, exact


def executable(kernel: Any, args: tuple) -> Any:
    """The padded shapes of the executable a compiled call of ``args`` would run on, or None for the call's
    own. The cold tier rents against the executable: what the signatures of one bucket spend interpreted
    adds up to one compile."""
    plan = _planned(kernel, args)[0]
    return None if plan is None or plan is _EXACT else plan.shapes


def run(kernel: Any, args: tuple, to_jax: Any) -> Any:
    """The kernel's result for ``args`` from its bucketed executable, or None: run it at the exact shape.
    ``to_jax`` puts a host array the caller owns on the CPU device without compiling. ``args`` may nest
    (a backward kernel's (primals, cotangents))."""
    plan, leaves, tree, sig, exact = _planned(kernel, args)
    if plan is None or plan is _EXACT or _xla_tiers.tracing():  # (a traced result cannot be sliced on the host)
        return None
    if plan.exact is None:
        plan.exact = _pads_exactly(kernel, args) if exact is None else exact
    if plan.exact:
        # padding changes no bit here, so the path may depend on history: a kernel that has met few
        # signatures (a fixed shape off the size classes) runs exact, without two host copies per call, and so
        # does a signature whose staging has cost about a compile (it recurs: its executable is worth buying)
        if plan.staged > COMPILE_COST or _few_signatures(kernel, sig):
            return None
    padded = []
    staged = 0
    for i, (a, b) in enumerate(zip(leaves, plan.shapes)):
        if plan.fills and type(plan.fills[i]) in _MADE:
            padded.append(to_jax(plan.fills[i].array(leaves, b)))
            continue
        if a is None or a.shape == b:
            padded.append(a)
            continue
        host = np.zeros(b, a.dtype)
        staged += host.size
        for axis, fill in plan.fills[i] if plan.fills else ():
            if type(fill) is ArgFill:
                fill = np.asarray(leaves[fill.index])
            host[(slice(None),) * axis + (slice(a.shape[axis], None),)] = fill
        host[tuple(slice(0, n) for n in a.shape)] = a if type(a) is np.ndarray else np.asarray(a)
        padded.append(to_jax(host))
    out = kernel.jitted(*(padded if tree is None else jax.tree_util.tree_unflatten(tree, padded)))
    leaves = jax.tree_util.tree_leaves(out)
    sliced = []
    for o, want, cut in zip(leaves, plan.outs, plan.cuts):
        if o.shape != want:
            staged += o.size
            o = to_jax(np.ascontiguousarray(np.asarray(o)[cut]))
        sliced.append(o)
    if plan.exact:
        plan.staged += STAGE_CALL + STAGE_ELEMENT * staged
    stats["bucketed_calls"] += 1
    key = plan.key
    if key is None:
        key = plan.key = (getattr(kernel, "__name__", "kernel"), plan.shapes)
    counts = stats["buckets"]
    counts[key] = counts.get(key, 0) + 1
    return jax.tree_util.tree_unflatten(plan.tree, sliced)

"""Cold kernels: an eager kernel's first calls on a new input signature run without compiling.

An XLA compile of even a one-op kernel costs ~0.1-0.5 s on the CPU, so a script whose shapes
change (a last short batch, variable lengths, evaluation) used to stall on every new shape. On the
CPU, a kernel seen with a new signature (input shapes and dtypes) is traced to a jaxpr (once per
shape pattern: sizes are symbolic, so one trace serves every batch size) and that jaxpr is run with
NumPy, one lax primitive at a time. The signature turns *hot* (the
jitted kernel compiles and runs from then on) when the time spent interpreting it passes what a
compile is expected to cost (modelled from the work done, so the choice does not depend on the
machine's load): the ski-rental rule, so a signature that recurs pays at most about
twice what compiling at once would have, and one seen a few times never compiles. From its second cold
call a signature's program, bound to its sizes, is routed (``ColdKernel.routes``): later calls skip the
signature tables until the rent is paid.

Two tiers share the interpreter and its primitive table:

- **exact** (the default): only kernels made of primitives that NumPy and XLA both round exactly (IEEE
  add, sub, mul, div, sqrt, comparisons, selects, min/max, integer arithmetic, casts and data movement) run
  cold, so a result never depends on whether its kernel was cold or hot. A kernel where a float product
  meets a float sum is refused too: XLA's CPU code contracts ``a*b+c`` into one FMA, NumPy rounds twice.
  Transcendentals, float sums and products compile (or run bucketed, ``buckets.py``).
- **all** (``TORCHLIKE_COLD_KERNELS=1``, opt-in): the whole table, transcendentals and float reductions
  included. NumPy rounds some of them differently from XLA in the last bits, so a result may change when
  its signature turns hot; the autograd engine then also runs new backward structures per node.

``TORCHLIKE_COLD_KERNELS=0`` turns both off. Kernels whose jaxpr needs a primitive outside the table
(convolutions, pooling, erf, sorts...), or that meet half-precision, empty or non-CPU arrays or tracers,
run jitted as before. ``TORCHLIKE_COLD_CHECK=1`` runs every cold call compiled too and raises where the
bits differ (the test suite's check of the exact tier).
"""

from __future__ import annotations

import collections
import functools
import math
import os
import threading
import time
from typing import Any, Callable

import jax
import numpy as np

from . import _xla_tiers, buckets, lazy
from .kernel_cache import LRU

__all__ = ["ColdKernel", "Rental", "cold", "signature", "to_jax", "stats", "set_enabled", "enabled"]

# Seconds of interpretation after which a signature compiles: about what one small kernel's compile
# costs on a loaded 2-core CPU (0.1-0.5 s measured), halved so a recurring signature turns hot early.
# The seconds are estimated from the work (equations run, elements they touch), not read from a clock:
# a clock made which kernels compiled depend on the machine's load, and a compiled kernel may round
# differently from NumPy in the last bit, so a script's results changed from run to run.
COMPILE_COST = 0.05
# A body with a row take (``x[idx]``, an embedding) costs on the host about twice its compiled call at a size that
# recurs (x[idx] on 8x8 floats: 34 against 15 us), while sizes met a few times each run without any compile: after
# this many host calls at one size, that size goes to the compiled kernel
HOST_TAKES = 1000
# The model: CALL_COST + STEP_COST * equations + ELEMENT_COST * elements (the call's larger side, inputs or
# outputs). Fitted to 9,900 interpreted calls of the sampling, masked-loss and padded-GRU benchmarks (2-core
# CPU, inputs ready; view reads and writes, embeddings, index arithmetic, masked_fill, products): 31 us a call,
# 4.3 us an equation, 1.7 ns an element of the call. Elements per equation fitted to nothing: most equations of
# a long program work on its small index arrays, and the former per-equation element term counted an
# embedding's 31 equations as touching its whole table (modelled 293 us against 183 measured), while a large
# masked_fill's 4 were underestimated.
STEP_COST = 4e-6  # seconds per equation interpreted
ELEMENT_COST = 2e-9  # seconds per element of the call (NumPy's loops, copies in and out, the put onto JAX)
CALL_COST = 30e-6  # seconds per call around the equations (signature or route, conversions, outputs)
SLOW_STEPS = 25  # equations one gather or scatter counts as (general index arithmetic: ~100 us on small arrays)
ROW_STEPS = 2  # ... a gather of whole rows (an embedding, ``x[idx]``: one NumPy take, ~12 us)

stats: dict = {"cold_calls": 0, "cold_seconds": 0.0, "traces": 0, "trace_seconds": 0.0, "hot_signatures": 0,
               "unsupported": 0, "host_plans": 0, "host_calls": 0, "moved_calls": 0}
unsupported: collections.Counter = collections.Counter()  # primitive -> kernels sent to XLA for it
_MODE = os.environ.get("TORCHLIKE_COLD_KERNELS", "exact").strip().lower()
_on = _MODE in ("1", "true", "on", "yes", "all")  # the whole table
_exact_on = _on or _MODE not in ("0", "false", "off", "no")  # the exactly-rounded part
_EXACT_AT_START = _exact_on
_check = os.environ.get("TORCHLIKE_COLD_CHECK", "0").strip().lower() not in ("0", "false", "off", "no")
_lock = threading.Lock()


def set_enabled(on: bool, exact: bool | None = None) -> None:
    """Turn the whole table on or off for the process (tests compare both); ``exact`` sets the exact tier."""
    global _on, _exact_on
    _on = bool(on)
    if exact is not None:
        _exact_on = bool(exact)


def enabled() -> bool:
    """Whether new signatures run cold with the whole table now (the opt-in tier): on the CPU, in eager mode.
    The autograd engine then runs new backward structures per node, as inexact as the table."""
    return _on and not lazy._on and _cpu_only() and not _exact.depth


class _Exact(threading.local):
    depth = 0


_exact = _Exact()


class exact:
    """Within, kernels run compiled: NumPy's float32 exp/log/pow round differently from XLA's in the last
    bits, and some results must be torch's bit for bit (samples drawn from torch's CPU stream)."""

    def __enter__(self) -> None:
        _exact.depth += 1

    def __exit__(self, *exc: Any) -> None:
        _exact.depth -= 1


_cpu = None


def _cpu_only() -> bool:
    global _cpu
    if _cpu is None:
        _cpu = jax.default_backend() == "cpu" and jax.device_count() == 1
    return _cpu


# --- the primitive table: lax semantics in NumPy ---------------------------------------------------

_FLOAT_KINDS = frozenset("fc")


try:  # np.errstate(all="ignore") without its context manager (~1 us, as much as a small op): NumPy 2's own
    from numpy._core._ufunc_config import _extobj_contextvar as _np_errors
    from numpy._core._ufunc_config import _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except Exception:  # noqa: BLE001 - another NumPy: the public context manager
    _np_errors = _IGNORE = None
_HOST = os.environ.get("TORCHLIKE_HOST_OPS", "1").strip().lower() not in ("0", "false", "off", "no")


def host_enabled() -> bool:
    """Whether eager ops on small CPU arrays may run with NumPy (``ColdKernel.host``): a CPU-only process,
    the exact tier on, and not switched off (``TORCHLIKE_HOST_OPS=0``)."""
    # (the switch as the environment set it: callers cache the answer, and ``host`` reads ``_exact_on`` per call)
    return _HOST and _EXACT_AT_START and (_cpu if _cpu is not None else _cpu_only())


def _float_only(f: Callable) -> Callable:
    """A primitive whose integer form differs from NumPy's (division by zero, shifts): floats only."""

    def run(*xs: Any) -> Any:
        if xs[0].dtype.kind not in _FLOAT_KINDS:
            raise _Unsupported
        return f(*xs)

    return run


def _logistic(x: Any) -> Any:
    return np.reciprocal(np.exp(-x) + x.dtype.type(1))


_ELEMENTWISE: dict[str, Callable] = {
    "add": np.add, "add_any": np.add, "optimization_barrier": lambda *xs: list(xs), "sub": np.subtract, "mul": np.multiply, "div": _float_only(np.true_divide),
    "rem": _float_only(np.fmod), "pow": _float_only(np.power), "max": np.maximum, "min": np.minimum,
    "neg": np.negative, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "abs": np.abs,
    "is_finite": np.isfinite, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "sqrt": np.sqrt,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)), "logistic": _logistic, "square": np.square,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "not": np.invert, "stop_gradient": lambda x: x, "copy": np.copy, "copy_p": np.copy,
}  # fmt: skip


def _convert(x: Any, new_dtype: Any, **_: Any) -> Any:
    new = np.dtype(new_dtype)
    if x.dtype.kind in _FLOAT_KINDS and new.kind not in _FLOAT_KINDS:
        raise _Unsupported  # NaN/inf to integer: XLA saturates, NumPy does not
    if x.dtype.kind == "c" and new.kind != "c":
        raise _Unsupported
    return x.astype(new)


def _broadcast_in_dim(x: Any, shape: tuple, broadcast_dimensions: tuple, **_: Any) -> Any:
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _slice(x: Any, start_indices: tuple, limit_indices: tuple, strides: Any = None, **_: Any) -> Any:
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides))]


def _pad(x: Any, value: Any, padding_config: tuple) -> Any:
    if any(lo < 0 or hi < 0 or interior for lo, hi, interior in padding_config):
        raise _Unsupported
    return np.pad(x, [(lo, hi) for lo, hi, _ in padding_config], constant_values=value)


def _iota(dtype: Any, shape: tuple, dimension: int, **_: Any) -> Any:
    line = np.arange(shape[dimension], dtype=dtype)
    return _broadcast_in_dim(line, shape, (dimension,))


def _reduction(f: Callable) -> Callable:
    return lambda x, axes, **_: f(x, axis=tuple(axes))


def _arg(f: Callable) -> Callable:
    return lambda x, axes, index_dtype, **_: f(x, axis=axes[0]).astype(index_dtype)


def _select_n(which: Any, *cases: Any) -> Any:
    if len(cases) == 2:
        return np.where(which, cases[1], cases[0])
    return np.choose(which.astype(np.int64), np.broadcast_arrays(*cases))


def _dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, preferred_element_type: Any = None, **_: Any) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    dt = np.dtype(preferred_element_type) if preferred_element_type is not None else np.result_type(lhs, rhs)
    if dt.kind not in _FLOAT_KINDS:
        raise _Unsupported  # integer products: XLA accumulates in the result type; keep its kernel
    lhs, rhs = lhs.astype(dt, copy=False), rhs.astype(dt, copy=False)
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    # lax's output order: batch dims, lhs free dims, rhs free dims. As a batched matmul: (B, M, K) @ (B, K, N).
    a = np.transpose(lhs, list(lb) + lf + list(lc))
    b = np.transpose(rhs, list(rb) + list(rc) + rf)
    bs = a.shape[: len(lb)]
    m = a.shape[len(lb) : len(lb) + len(lf)]
    n = b.shape[len(rb) + len(rc) :]
    k = int(np.prod(a.shape[len(lb) + len(lf) :], dtype=np.int64))
    a = a.reshape(bs + (int(np.prod(m, dtype=np.int64)), k))
    b = b.reshape(bs + (k, int(np.prod(n, dtype=np.int64))))
    with _one_blas_thread():
        return np.matmul(a, b).reshape(bs + m + n)


class _OneBlasThread:
    """OpenBLAS threads for the products of a cold kernel: one. Its thread pool costs far more than it saves
    on these small products, and stalls for milliseconds when the cores are busy (measured: a 150x64 @ 64x128
    product, 0.8-18 ms threaded on a loaded 2-core CPU, 0.07-0.14 ms on one thread)."""

    def __init__(self) -> None:
        self.get = self.set = None
        try:
            import ctypes

            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
            for path in paths:
                lib = ctypes.CDLL(path)
                for get, set_ in (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                                  ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                                  ("openblas_get_num_threads", "openblas_set_num_threads")):  # fmt: skip
                    if hasattr(lib, get) and hasattr(lib, set_):
                        self.get, self.set = getattr(lib, get), getattr(lib, set_)
                        return
        except (OSError, ImportError):  # no /proc, or another BLAS: products run as NumPy sets them
            pass

    def __enter__(self) -> None:
        self.n = self.get() if self.get is not None else 1
        if self.n != 1:
            self.set(1)

    def __exit__(self, *exc: Any) -> None:
        if self.n != 1:
            self.set(self.n)


_blas = None


def _one_blas_thread() -> _OneBlasThread:
    global _blas
    if _blas is None:
        _blas = _OneBlasThread()
    return _blas


def _integer_pow(x: Any, y: int) -> Any:
    """lax's x**y for an integer y: multiplications by squaring (as XLA expands it), not C's pow."""
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    acc = np.ones_like(x) if acc is None else acc
    return np.reciprocal(acc) if y < 0 else acc


def _cumulative(f: Callable) -> Callable:
    def run(x: Any, axis: int, reverse: bool = False, **_: Any) -> Any:
        if reverse:
            return np.flip(f(np.flip(x, axis), axis=axis), axis)
        return f(x, axis=axis)

    return run


def _dynamic_slice(x: Any, *starts: Any, slice_sizes: tuple, **_: Any) -> Any:
    at = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, slice_sizes)]  # lax clamps
    return x[tuple(slice(s, s + k) for s, k in zip(at, slice_sizes))]


def _dynamic_update_slice(x: Any, update: Any, *starts: Any, **_: Any) -> Any:
    at = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, update.shape)]
    out = np.array(x)
    out[tuple(slice(s, s + k) for s, k in zip(at, update.shape))] = update
    return out


def _start(d: int, indices: Any, starts: tuple, batching: tuple, batch_of: tuple) -> Any:
    """The start index along operand dim ``d`` of each slice (shape: the indices' batch shape)."""
    batch = indices.shape[:-1]
    if d in starts:
        return indices[..., starts.index(d)].astype(np.int64)
    if d in batching:
        j = batch_of[batching.index(d)]
        return np.broadcast_to(np.arange(batch[j]).reshape([batch[j] if k == j else 1 for k in range(len(batch))]), batch)
    return np.zeros(batch, np.int64)


def _gather(operand: Any, indices: Any, dimension_numbers: Any, slice_sizes: tuple, mode: Any = None,
            fill_value: Any = None, **_: Any) -> Any:  # fmt: skip
    dn = dimension_numbers
    if "ONE_HOT" in str(mode):
        raise _Unsupported("gather")
    fill = "FILL" in str(mode)
    batch = indices.shape[:-1]
    nb, r = len(batch), operand.ndim
    k = indices.shape[-1]
    if (not dn.operand_batching_dims and tuple(dn.start_index_map) == tuple(range(k))
            and tuple(dn.collapsed_slice_dims) == tuple(range(k)) and tuple(dn.offset_dims) == tuple(range(nb, nb + r - k))
            and all(slice_sizes[d] == 1 for d in range(k)) and tuple(slice_sizes[k:]) == operand.shape[k:]):  # fmt: skip
        # whole rows picked by leading indices (an embedding, ``x[idx]``): one NumPy take, not index arithmetic
        # for every element (an embedding's lookup: 0.2 ms -> 0.03 ms)
        return _take_rows(operand, indices, k, fill, fill_value)
    idx = []
    outside = np.zeros(batch, bool)
    for d in range(r):
        s = _start(d, indices, tuple(dn.start_index_map), tuple(dn.operand_batching_dims),
                   tuple(dn.start_indices_batching_dims))  # fmt: skip
        hi = operand.shape[d] - slice_sizes[d]
        if fill:
            outside |= (s < 0) | (s > hi)
        s = np.clip(s, 0, hi)  # lax clamps where it does not fill
        off = np.arange(slice_sizes[d]).reshape([1] * nb + [slice_sizes[d] if k == d else 1 for k in range(r)])
        idx.append(s.reshape(batch + (1,) * r) + off)
    g = operand[tuple(idx)]
    if fill and outside.any():
        g = np.where(outside.reshape(batch + (1,) * r), _gather_fill(operand, fill_value), g)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    g = g.reshape(batch + tuple(slice_sizes[d] for d in range(r) if d not in dropped))
    return np.moveaxis(g, list(range(nb, g.ndim)), list(dn.offset_dims))


def _gather_fill(operand: Any, fill_value: Any) -> Any:
    if fill_value is None:
        kind = operand.dtype.kind
        fill_value = (np.nan if kind in _FLOAT_KINDS else True if kind == "b"
                      else np.iinfo(operand.dtype).min if kind == "i" else np.iinfo(operand.dtype).max)  # fmt: skip
    return np.asarray(fill_value).astype(operand.dtype)


def _row_gather(eqn: Any) -> bool:
    """Whether a gather equation takes whole slices at leading indices (``_gather``'s fast path, ``_take_rows``)."""
    if eqn.primitive.name != "gather":
        return False
    try:
        dn, sizes = eqn.params["dimension_numbers"], tuple(eqn.params["slice_sizes"])
        operand, indices = (tuple(v.aval.shape) for v in eqn.invars[:2])
        k, nb, r = indices[-1], len(indices) - 1, len(operand)
        return bool(not dn.operand_batching_dims and tuple(dn.start_index_map) == tuple(range(k))
                    and tuple(dn.collapsed_slice_dims) == tuple(range(k))
                    and tuple(dn.offset_dims) == tuple(range(nb, nb + r - k))
                    and all(n == 1 for n in sizes[:k]) and sizes[k:] == operand[k:])  # fmt: skip
    except Exception:  # noqa: BLE001 - symbolic sizes that do not compare, or another layout: the general path
        return False


def _take_rows(operand: Any, indices: Any, k: int, fill: bool, fill_value: Any) -> Any:
    """``_gather`` of whole slices at leading indices: ``operand[indices[..., 0], ..., indices[..., k-1]]``, each
    index clamped as lax clamps, or (``fill``) its slice filled where it falls outside."""
    batch = indices.shape[:-1]
    outside = None
    starts = []
    for d in range(k):
        s = indices[..., d].astype(np.int64, copy=False)
        hi = operand.shape[d] - 1
        if fill:
            out_d = (s < 0) | (s > hi)
            outside = out_d if outside is None else outside | out_d
        starts.append(np.clip(s, 0, hi))
    g = np.take(operand, starts[0], axis=0) if k == 1 else operand[tuple(starts)]
    if fill and outside.any():
        g = np.where(outside.reshape(batch + (1,) * (g.ndim - len(batch))), _gather_fill(operand, fill_value), g)
    return g


def _scatter(operand: Any, indices: Any, updates: Any, dimension_numbers: Any, mode: Any = None,
             combine: Any = None, **_: Any) -> Any:  # fmt: skip
    dn = dimension_numbers
    if "ONE_HOT" in str(mode):
        raise _Unsupported("scatter")
    clip = "FILL" not in str(mode)
    window = tuple(dn.update_window_dims)
    scatter_at = [k for k in range(updates.ndim) if k not in window]  # where the indices' batch dims sit
    batch = indices.shape[:-1]
    win_ops = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    shape_at = [1] * updates.ndim
    for k, n in zip(scatter_at, batch):
        shape_at[k] = n
    idx = []
    inside = np.ones(batch, bool)
    for d in range(operand.ndim):
        s = _start(d, indices, tuple(dn.scatter_dims_to_operand_dims), tuple(dn.operand_batching_dims),
                   tuple(dn.scatter_indices_batching_dims))  # fmt: skip
        w = updates.shape[window[win_ops.index(d)]] if d in win_ops else 1
        hi = operand.shape[d] - w
        if clip:
            s = np.clip(s, 0, hi)
        else:  # XLA drops a window that does not fit
            inside &= (s >= 0) & (s <= hi)
        full = s.reshape(shape_at)
        if d in win_ops:
            k = window[win_ops.index(d)]
            full = full + np.arange(w).reshape([w if j == k else 1 for j in range(updates.ndim)])
        idx.append(np.broadcast_to(full, updates.shape))
    keep = np.broadcast_to(inside.reshape(shape_at), updates.shape)
    out = np.array(operand)
    at = tuple(i[keep] for i in idx)
    if combine is None:
        out[at] = updates[keep]  # lax leaves the order of repeated indices unspecified; NumPy's last wins
    else:
        combine.at(out, at, updates[keep])
    return out


def _scatter_add(*args: Any, **params: Any) -> Any:
    return _scatter(*args, combine=np.add, **params)


_STRUCTURAL: dict[str, Callable] = {
    "convert_element_type": _convert,
    "reshape": lambda x, new_sizes, **_: np.reshape(x, new_sizes),
    "broadcast_in_dim": _broadcast_in_dim,
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "squeeze": lambda x, dimensions: np.squeeze(x, tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "slice": _slice, "pad": _pad, "iota": _iota, "select_n": _select_n,
    "dynamic_slice": _dynamic_slice, "dynamic_update_slice": _dynamic_update_slice,
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)),
    "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
    "integer_pow": _integer_pow,
    "reduce_sum": _reduction(np.sum), "reduce_max": _reduction(np.max), "reduce_min": _reduction(np.min),
    "reduce_and": _reduction(np.all), "reduce_or": _reduction(np.any),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "cumsum": _cumulative(np.cumsum), "cummax": _cumulative(np.maximum.accumulate),
    "cummin": _cumulative(np.minimum.accumulate),
    "dot_general": _dot_general, "gather": _gather, "scatter": _scatter, "scatter-add": _scatter_add,
    "scatter_add": _scatter_add,
}  # fmt: skip

_DROP = ("sharding", "out_sharding", "accuracy")

# The exact tier's primitives: NumPy and XLA's CPU code give the same bits for them (IEEE's correctly rounded
# operations, integer arithmetic, logic, data movement). Float sums (reduce_sum, cumsum, scatter-add) and
# products (dot_general) are exact for integers only: their float results depend on the summation order.
_EXACT_ANY = frozenset((
    "add", "add_any", "sub", "mul", "div", "rem", "sqrt", "max", "min", "neg", "sign", "floor", "ceil", "abs",
    "is_finite", "square", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "not", "stop_gradient",
    "copy", "copy_p", "optimization_barrier", "convert_element_type", "reshape", "broadcast_in_dim", "transpose",
    "squeeze", "expand_dims", "concatenate", "slice", "pad", "iota", "select_n", "dynamic_slice",
    "dynamic_update_slice", "rev", "clamp", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "argmax",
    "argmin", "cummax", "cummin", "gather", "scatter", "dim_as_value",
))  # fmt: skip
_EXACT_INT = frozenset(("reduce_sum", "cumsum", "scatter-add", "scatter_add", "dot_general"))
_PRODUCTS = frozenset(("mul", "square", "integer_pow", "dot_general"))
_SUMS = frozenset(("add", "add_any", "sub", "reduce_sum", "cumsum", "scatter-add", "scatter_add", "dot_general"))


def _is_float(eqn: Any) -> bool:
    return any(np.dtype(v.aval.dtype).kind in _FLOAT_KINDS for v in eqn.outvars if hasattr(v.aval, "dtype"))


def _exactness(eqn: Any) -> tuple:
    """(exact, float product, float sum) of one equation (not a call of a sub-jaxpr)."""
    name = eqn.primitive.name
    flt = _is_float(eqn)
    if name == "integer_pow":
        exact = not flt or eqn.params["y"] in (0, 1, 2, -1)  # longer chains: XLA's order of squarings may differ
    else:
        exact = name in _EXACT_ANY or (not flt and name in _EXACT_INT)
    product = flt and name in _PRODUCTS and not (name == "mul" and _times_one(eqn))
    return exact, product, flt and name in _SUMS


def _keep_first(x: Any, one: Any) -> Any:
    return x


def _keep_second(one: Any, x: Any) -> Any:
    return x


def _is_real(eqn: Any) -> bool:
    """Whether the equation's result is real (bool, integer or floating point; not complex)."""
    return all(np.dtype(v.aval.dtype).kind in "biuf" for v in eqn.outvars)


def _times_one(eqn: Any) -> bool:
    """``x * 1``: XLA's simplifier drops it, so it forms no FMA (add's baked alpha=1 is such a product)."""
    return any(type(v).__name__ == "Literal" and np.ndim(v.val) == 0 and v.val == 1 for v in eqn.invars)


class _Unsupported(Exception):
    pass


def _sub_jaxpr(params: dict) -> Any:
    for name in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        j = params.get(name)
        if j is not None:
            return j
    return None


def _is_sym(x: Any) -> bool:
    if type(x) is tuple or type(x) is list:
        return any(_is_sym(y) for y in x)
    return type(x).__name__ == "_DimExpr"


def _resolve(x: Any, dims: dict) -> Any:
    """A parameter with its symbolic dimensions replaced by this call's sizes."""
    if type(x) is tuple or type(x) is list:
        return type(x)(_resolve(y, dims) for y in x)
    if type(x).__name__ == "_DimExpr":
        return int(x._evaluate(dims))
    return x


def _build(jaxpr: Any, consts: list) -> Callable:
    """``run(dims, *arrays)``: the jaxpr's equations run with NumPy, where ``dims`` gives the sizes of its
    symbolic dimensions for this call. Raises _Unsupported at build time for a primitive outside the table."""
    slots: dict = {}
    init: list = []  # (slot, value): constants and literals
    steps: list = []

    def slot_of(v: Any) -> int:
        if type(v).__name__ == "Literal":
            i = len(slots) + len(init) + 1_000_000
            init.append((i, np.asarray(v.val, dtype=v.aval.dtype)))
            return i
        return slots[v]

    for v, c in zip(jaxpr.constvars, consts):
        slots[v] = len(slots)
        init.append((slots[v], np.asarray(c)))
    n_in = len(jaxpr.invars)
    first_in = len(slots)
    for v in jaxpr.invars:
        slots[v] = len(slots)
    exact, products, sums = True, False, False
    prims = set()
    outvars = {v for v in jaxpr.outvars if type(v).__name__ != "Literal"}
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        prims.add(name)
        params = dict(eqn.params)
        multi = eqn.primitive.multiple_results
        f = _ELEMENTWISE.get(name)
        if f is not None or name in _STRUCTURAL or name == "dim_as_value":
            e, p, q = _exactness(eqn)
            exact, products, sums = exact and e, products or p, sums or q
        sym = False  # f takes this call's dims first
        if name == "mul" and _times_one(eqn) and eqn.outvars[0] not in outvars and _is_real(eqn):
            # XLA's simplifier drops ``x * 1`` (add's baked alpha=1): the value passes through (not as a result)
            f = _keep_second if type(eqn.invars[0]).__name__ == "Literal" else _keep_first
        if f is None:
            g = _STRUCTURAL.get(name)
            if g is not None:
                for k in _DROP:
                    params.pop(k, None)
                if _is_sym(tuple(params.values())):
                    f, sym = (lambda g, p: lambda dims, *xs: g(*xs, **{k: _resolve(v, dims) for k, v in p.items()}))(g, params), True
                    f.bind = (g, params)  # (``_straight_line`` binds the sizes once)
                else:
                    f = functools.partial(g, **params)
            elif name == "dim_as_value":
                dt = np.dtype(eqn.outvars[0].aval.dtype)
                f, sym = (lambda d, dt: lambda dims: np.asarray(_resolve(d, dims), dt))(params["dim"], dt), True
                f.value = (params["dim"], dt)
            else:
                inner = _sub_jaxpr(params)
                if inner is None or name not in ("pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call",
                                                 "remat", "checkpoint"):
                    raise _Unsupported(name)
                ij = getattr(inner, "jaxpr", inner)
                run = _build(ij, list(getattr(inner, "consts", ())))
                n = len(ij.invars)
                f, sym, multi = (lambda run, n: lambda dims, *xs: run(dims, *xs[len(xs) - n :]))(run, n), True, True
                f.n_steps = run.n_steps
                f.inner = (run, n)
                prims |= run.prims
                exact, products, sums = exact and run.exact, products or run.products, sums or run.sums
        steps.append((f, sym, tuple(slot_of(v) for v in eqn.invars), multi, _outs(eqn, slots)))
    outs = [slot_of(v) for v in jaxpr.outvars]
    n_steps = sum(getattr(f, "n_steps", 1) for f, *_ in steps)
    n_steps += sum((ROW_STEPS if _row_gather(eqn) else SLOW_STEPS) - 1 for eqn in jaxpr.eqns
                   if eqn.primitive.name in _HOST_SLOW)  # fmt: skip
    # general index arithmetic (a gather that is not a row take, scatters, dynamic slices): slower in NumPy
    # than a compiled call on small arrays, so ``host`` leaves the body to XLA
    slow = any(eqn.primitive.name in _HOST_SLOW and not _row_gather(eqn) for eqn in jaxpr.eqns) or any(
        getattr(f, "inner", (None,))[0] is not None and f.inner[0].slow for f, *_ in steps)

    def run(dims: dict, *args: Any) -> list:
        env: dict = dict(init)
        for i in range(n_in):
            env[first_in + i] = args[i]
        for f, sym, ins, multi, outv in steps:
            xs = [env[i] for i in ins]
            r = f(dims, *xs) if sym else f(*xs)
            if multi:
                for (o, dt), x in zip(outv, r):
                    if o is not None:
                        env[o] = _fix(x, dt)
            else:
                o, dt = outv[0]
                env[o] = _fix(r, dt)
        return [env[i] for i in outs]

    run.n_steps = n_steps
    run.parts = (init, steps, outs, n_in, first_in)  # for ``_straight_line``
    run.prims = frozenset(prims)
    run.slow = slow
    # exact: every result is XLA's bit for bit. A float product and a float sum in one kernel are not, even
    # where no product feeds a sum directly: XLA fuses the kernel and its CPU code contracts a*b+c to an FMA.
    run.exact, run.products, run.sums = exact and not (products and sums), products, sums
    return run


def _straight_line(run: Callable, dims: dict) -> Callable:
    """``run`` (``_build``'s) at the sizes ``dims`` as one generated Python function ``straight(*arrays)``:
    each step a call on local names with its parameters bound, no environment dictionary and no symbolic
    size to evaluate. The host path (``ColdKernel.host``) calls it per op, so its overhead is the op's."""
    init, steps, outs, n_in, first_in = run.parts
    ns: dict = {"fix": _fix, "ndarray": np.ndarray}
    for slot, value in init:
        ns[f"s{slot}"] = value
    params = ", ".join(f"s{first_in + i}" for i in range(n_in))
    lines = [f"def straight({params}):"]
    for k, (f, sym, ins, multi, outv) in enumerate(steps):
        if sym:
            inner = getattr(f, "inner", None)
            if inner is not None and inner[1] == len(ins):  # a call of a sub-jaxpr on all its step's arguments
                f = _straight_line(inner[0], dims)
            else:
                f = _at_sizes(f, dims)
        if all(f"s{i}" in ns for i in ins):  # constants in, constants out (a literal broadcast to a shape)
            r = f(*(ns[f"s{i}"] for i in ins))
            for (o, dt), x in zip(outv, r) if multi else ((outv[0], r),):
                if o is not None:
                    ns[f"s{o}"] = _fix(x, dt)
            continue
        if f is _keep_first or f is _keep_second:  # ``x * 1``: the same array under the result's name
            lines.append(f"    s{outv[0][0]} = s{ins[0] if f is _keep_first else ins[1]}")
            continue
        ns[f"f{k}"] = f
        args = ", ".join(f"s{i}" for i in ins)
        if multi:
            lines.append(f"    r = f{k}({args})")
            produced = [(f"r[{j}]", o, dt) for j, (o, dt) in enumerate(outv) if o is not None]
        else:
            produced = [(f"f{k}({args})", outv[0][0], outv[0][1])]
        for value, o, dt in produced:
            ns[f"d{o}"] = dt
            lines.append(f"    s{o} = {value}")
            lines.append(f"    if s{o}.__class__ is not ndarray or s{o}.dtype is not d{o}: s{o} = fix(s{o}, d{o})")
    if len(lines) == 1:
        lines.append("    pass")
    lines.append(f"    return [{', '.join(f's{o}' for o in outs)}]")
    exec("\n".join(lines), ns)  # noqa: S102 - generated from the jaxpr's own steps, nothing else
    return ns["straight"]


def _bound(run: Callable, dims: dict) -> Callable:
    """``run`` (``_build``'s) with its symbolic sizes evaluated once for ``dims``: ``bound(*arrays)``."""
    init, steps, outs, n_in, first_in = run.parts
    bound_steps = []
    for f, sym, ins, multi, outv in steps:
        if sym:
            inner = getattr(f, "inner", None)
            if inner is not None:
                f = (lambda g, n: lambda *xs: g(*xs[len(xs) - n :]))(_bound(inner[0], dims), inner[1])
            else:
                f = _at_sizes(f, dims)
        bound_steps.append((f, ins, multi, outv))

    def bound(*args: Any) -> list:
        env: dict = dict(init)
        for i in range(n_in):
            env[first_in + i] = args[i]
        for f, ins, multi, outv in bound_steps:
            r = f(*[env[i] for i in ins])
            if multi:
                for (o, dt), x in zip(outv, r):
                    if o is not None:
                        env[o] = _fix(x, dt)
            else:
                o, dt = outv[0]
                env[o] = _fix(r, dt)
        return [env[i] for i in outs]

    return bound


def _at_sizes(f: Callable, dims: dict) -> Callable:
    """A symbolic step of ``_build`` with this call's sizes bound: a function of the arrays alone."""
    bind = getattr(f, "bind", None)
    if bind is not None:
        g, params = bind
        return functools.partial(g, **{k: _resolve(v, dims) for k, v in params.items()})
    value = getattr(f, "value", None)
    if value is not None:
        const = np.asarray(_resolve(value[0], dims), value[1])
        return lambda: const
    run, n = f.inner
    inner = _straight_line(run, dims)
    return lambda *xs: inner(*xs[len(xs) - n :])


def _out_dtypes(run: Callable) -> list:
    """(slot, dtype) of every value ``run``'s steps produce."""
    return [o for *_, outv in run.parts[1] for o in outv if o[0] is not None]


def _outs(eqn: Any, slots: dict) -> tuple:
    out = []
    for v in eqn.outvars:
        if type(v).__name__ == "DropVar":
            out.append((None, None))
        else:
            slots[v] = len(slots)
            out.append((slots[v], np.dtype(v.aval.dtype)))
    return tuple(out)


def _fix(x: Any, dt: np.dtype) -> Any:
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if x.dtype != dt:
        x = x.astype(dt)
    return x


# --- the kernel wrapper ----------------------------------------------------------------------------

_HOT = "hot"
_ARRAY = None  # jax's concrete array type, found on first use
_put = None


def _array_type() -> type:
    """JAX's concrete array class (not a tracer's: this may first run inside a trace)."""
    global _ARRAY
    if _ARRAY is None:
        with jax.ensure_compile_time_eval():
            _ARRAY = type(jax.device_put(np.zeros((), np.float32)))
    return _ARRAY


def to_jax(x: np.ndarray, copy: bool = True) -> Any:
    """A NumPy array as a CPU JAX array, without the per-shape compile ``jnp.asarray`` pays. ``copy=False``:
    the caller hands its buffer over and never writes to it again."""
    if x.dtype.kind not in _OK_KINDS:
        return jax.numpy.asarray(x)
    return _to_jax(np.array(x) if copy else x)  # a copy: the caller may reuse its buffer


def to_array(x: np.ndarray, copy: bool = True) -> Any:
    """``to_jax``, except that a small array stays on the host as a read-only NumPy array where small ops run
    there (``host_enabled``): a tensor made from it then costs no transfer, and neither do the ops on it."""
    if (_host_ok or (_host_ok is None and _resolve_host())) and not lazy._on and x.size <= HOST_ELEMENTS \
            and x.dtype.kind in _OK_KINDS and x.dtype.name not in _SMALL_FLOATS:  # fmt: skip
        x = np.array(x) if copy or not x.flags.c_contiguous else x
        x.setflags(write=False)
        return x
    return to_jax(x, copy)


def _owned(o: np.ndarray, leaves: list) -> np.ndarray:
    """A NumPy program's result as an array of its own in C order: a view of an argument (a slice, a transpose)
    or the argument itself is copied, since the argument may be a user's writable array and host arrays are
    read in C order."""
    if o.flags.c_contiguous and o.flags.owndata and not any(o is x for x in leaves):
        return o
    return np.array(o, order="C")


def _made_array(x: np.ndarray) -> Any:
    """An array this module made on the host (a cold-tier result, a bucketed call's padded argument or sliced
    result): small ones stay there as read-only arrays where small ops run there (a transfer costs more than
    the op, and the next op may run there too; the sampling loop's second run: 1.16 -> 0.69 s)."""
    if x.size <= HOST_ELEMENTS and (_host_ok or (_host_ok is None and _resolve_host())):
        x.setflags(write=False)
        return x
    return _to_jax(x)


_host_ok = None  # host_enabled(), once asked (the switches it reads are fixed at import; tests flip _HOST)


def _resolve_host() -> bool:
    global _host_ok
    _host_ok = host_enabled()
    return _host_ok


def _to_jax(x: np.ndarray) -> Any:
    global _put
    if _put is None:  # (JAX's default device: torchlike makes it the process's CPU)
        _put = _putter(jax.config.jax_default_device or jax.devices()[0])
    return _put(x)


_puts: dict = {}  # device -> its put


def _putter(dev: Any) -> Callable:
    """A host array onto ``dev``, uncommitted as ``jnp.array``'s are: a kernel's executables are keyed on it
    too, so mixing committed and uncommitted arguments compiled a second executable per shape."""
    put = _puts.get(dev)
    if put is not None:
        return put
    try:  # NOTE: jax.device_put costs ~70 us per array on this CPU; this internal ~18 us
        from jax._src.core import ShapedArray
        from jax._src.interpreters import pxla

        sharding = jax.sharding.SingleDeviceSharding(dev)

        def put(a: np.ndarray) -> Any:
            a = a if a.flags.c_contiguous else np.array(a, order="C")  # (ascontiguousarray makes 0-d 1-d)
            return pxla.batched_device_put(ShapedArray(a.shape, a.dtype), sharding, [a], [dev], committed=False)

        put(np.zeros(1, np.float32))
    except Exception:  # noqa: BLE001 - another JAX layout: the public call
        def put(a: np.ndarray) -> Any:
            return jax.device_put(a, dev)

    _puts[dev] = put
    return put


def _churn_put(args: tuple) -> Callable:
    """``buckets.run``'s put for a lazy churning run: onto the device of the call's first array, contiguous."""
    for a in jax.tree_util.tree_leaves(args):
        devices = getattr(a, "devices", None)
        if devices is not None and not isinstance(a, np.ndarray):
            return _putter(next(iter(devices())))
    return _to_jax


_OK_KINDS = frozenset("biufc")
# primitives that only move data: their results are the same bits on any backend
_MOVES = frozenset(("slice", "dynamic_slice", "dynamic_update_slice", "concatenate", "reshape", "transpose",
                    "broadcast_in_dim", "squeeze", "expand_dims", "rev", "pad", "gather", "copy", "copy_p", "iota",
                    "select_n", "pjit", "jit", "closed_call", "convert_element_type", "eq", "ne", "lt", "le", "gt",
                    "ge", "and", "or", "not", "xor", "max", "min", "neg", "abs", "add", "sub"))  # fmt: skip
# (correctly rounded on any backend: no ``mul``, which XLA may contract with an ``add`` into one FMA)
_SMALL_FLOATS = frozenset(("float16", "bfloat16"))


def _signature(args: tuple) -> tuple | None:
    """(shape, dtype, weak) of each argument, or None where the cold path must not run."""
    arr = _ARRAY or _array_type()
    sig = []
    for a in args:
        t = type(a)
        if t is arr:
            dt = a.dtype
            if dt.kind not in _OK_KINDS or dt.name in _SMALL_FLOATS or a.size == 0:
                return None
            sig.append((a.shape, dt, a.weak_type))
        elif a is None:
            sig.append(None)
        elif t is list or t is tuple:
            inner = _signature(tuple(a))
            if inner is None:
                return None
            sig.append(inner)
        elif t is bool or t is int or t is float:
            sig.append(t)
        elif t is np.ndarray:  # (copied on the way in: it may be a user's buffer)
            dt = a.dtype
            if dt.kind not in _OK_KINDS or dt.name in _SMALL_FLOATS or a.size == 0:
                return None
            sig.append((a.shape, dt, False))
        else:  # tracers, sharded arrays, anything else
            return None
    return tuple(sig)


def _leaves(args: Any, out: list) -> None:
    """The NumPy views of a signature-checked argument tree's leaves, in JAX's flattening order."""
    for a in args:
        t = type(a)
        if t is list or t is tuple:
            _leaves(a, out)
        elif t is np.ndarray:
            out.append(np.array(a))
        elif a is not None:
            out.append(np.asarray(a))


def _route_leaves(args: Any, out: list) -> None:
    """``_leaves`` for a routed call, whose arguments ``_route_key`` checked: a read-only host array (a small
    op's result) is read as it is, a writable one (a user's buffer) copied."""
    for a in args:
        c = a.__class__
        if c is np.ndarray:
            out.append(a if not a.flags.writeable else np.array(a))
        elif c is list or c is tuple:
            _route_leaves(a, out)
        elif a is not None:  # (a Python number is an argument of the program too)
            out.append(np.asarray(a))


def _estimate(n_steps: int, leaves: list, outs: list) -> float:
    """The modelled seconds of one interpreted call (see COMPILE_COST)."""
    size = max(sum(x.size for x in leaves), sum(x.size for x in outs))
    return CALL_COST + n_steps * STEP_COST + ELEMENT_COST * size


def interpreted() -> float:
    """Modelled seconds of interpretation so far (the autograd engine's fused-backward rule reads it)."""
    return stats["cold_seconds"]


class _Entry:
    __slots__ = ("program", "dims", "spent", "calls", "rent", "_bound")

    def __init__(self, program: tuple, dims: dict) -> None:
        self.program = program  # (run, out_tree), shared by the signatures of one pattern
        self.dims = dims
        self._bound = None
        self.spent = 0.0
        self.calls = 0
        self.rent = None  # [seconds] shared by the signatures one bucketed executable would serve

    def bound(self) -> Callable:
        """The program at this signature's sizes, ``f(*arrays)``: the symbolic sizes evaluated once (evaluating
        them at every step of every call cost about half of a small call)."""
        f = self._bound
        if f is None:
            run = self.program[0]
            f = self._bound = _bound(run, self.dims) if hasattr(run, "parts") else functools.partial(run, self.dims)
        return f


def _pattern(sig: Any, sizes: dict) -> Any:
    """``sig`` with each size other than 0 and 1 replaced by a name, equal sizes by the same name: one trace
    with those sizes symbolic serves every signature of the pattern. ``sizes`` collects name -> size."""
    if type(sig) is tuple and len(sig) == 3 and type(sig[0]) is tuple and isinstance(sig[1], np.dtype):
        shape = []
        for n in sig[0]:
            if n <= 1:
                shape.append(n)
                continue
            for name, v in sizes.items():
                if v == n:
                    break
            else:
                name = f"d{len(sizes)}"
                sizes[name] = n
            shape.append(name)
        return (tuple(shape), sig[1], sig[2])
    if type(sig) is tuple:
        return tuple(_pattern(x, sizes) for x in sig)
    return sig


def _abstract(args: Any, pattern: Any, syms: dict) -> Any:
    """The arguments as symbolic-shape placeholders, for tracing a pattern."""
    out = []
    for a, p in zip(args, pattern):
        if type(a) is list or type(a) is tuple:
            out.append(type(a)(_abstract(a, p, syms)))
        elif a is None or p in (bool, int, float):
            out.append(a)
        else:
            shape, dt, weak = p
            out.append(jax.ShapeDtypeStruct(tuple(syms.get(n, n) for n in shape), dt, weak_type=weak))
    return out


_MODE_KEY = "mode"  # the routes table's entry for the switches it was filled under
# primitives whose NumPy forms here are general index arithmetic, slower than a compiled call on small arrays
_HOST_SLOW = frozenset(("gather", "scatter", "scatter-add", "scatter_add", "scatter-mul", "scatter_mul", "scatter-min",
                        "scatter_min", "scatter-max", "scatter_max", "dynamic_slice", "dynamic_update_slice"))
STRAIGHT_AFTER = 2  # calls of a host signature after its first before its straight-line function is built
HOST_ELEMENTS = 4096  # the largest argument ``host`` runs with NumPy (past that XLA's fused loops win)
_ROUTES = 1024  # routes kept per kernel (shapes a kernel meets; past that the table starts again)


def _mode() -> tuple:
    """The switches a route depends on (tests and users flip them at run time)."""
    return (_on, _exact_on, buckets._on)


def _route_key(args: tuple) -> tuple | None:
    """(shape, dtype, weak type) of each argument (the type of a Python number), or None where the arguments
    are not all concrete arrays, numbers or baked Nones: those take the full path every call."""
    arr = _ARRAY or _array_type()
    key = []
    for a in args:
        c = a.__class__
        if c is arr:
            v = a.aval  # (the array's own properties each read it)
            key.append((v.shape, v.dtype, v.weak_type))
        elif c is np.ndarray:  # a host array (``host``'s results): never weak
            key.append((a.shape, a.dtype, None))
        elif a is None:
            key.append(None)
        elif c is int or c is float:  # a traced number (a view write's offset): its type picks the executable
            key.append(c)
        elif c is list or c is tuple:  # (a tensor list's arrays; a backward kernel's (primals, cotangents))
            inner = _route_key(a)
            if inner is None:
                return None
            key.append((c, inner))
        else:
            return None
    return tuple(key)


def _host_leaves(args: Any, key: list, leaves: list) -> bool:
    """``ColdKernel.host``'s signature of ``args`` into ``key`` and their NumPy forms into ``leaves`` (JAX's
    flattening order); False where an argument is not a small array (or a list of them)."""
    arr = _ARRAY or _array_type()
    for a in args:
        c = a.__class__
        if c is np.ndarray:
            if a.size > HOST_ELEMENTS:
                return False
            key.append((a.shape, a.dtype, None))
            leaves.append(a)
        elif c is arr:
            v = a.aval
            if math.prod(v.shape) > HOST_ELEMENTS:
                return False
            key.append((v.shape, v.dtype, v.weak_type))
            leaves.append(np.asarray(a))
        elif a is None:
            key.append(None)
        elif c is list:
            key.append(list)
            if not _host_leaves(a, key, leaves):
                return False
            key.append(None)  # (the list's end)
        else:
            return False
    return True


class ColdKernel:
    """A jitted kernel whose calls on a signature run interpreted until it is worth compiling."""

    __slots__ = ("jitted", "hot", "__name__", "__qualname__", "entries", "programs", "buckets", "pad", "vjp_of",
                 "inexact", "numpy", "routes", "hosted", "nohost", "tier", "rents", "moves", "__weakref__")  # fmt: skip

    def __init__(self, jitted: Any, name: str | None = None, hot: Callable | None = None) -> None:
        self.jitted = jitted
        self.hot = hot or jitted  # what runs a hot signature (default: the jitted kernel)
        self.__name__ = name or getattr(jitted, "__name__", "kernel")
        self.__qualname__ = self.__name__
        self.entries = LRU(kernels=False)  # signature -> _Entry, or _HOT
        self.programs = LRU(kernels=False)  # pattern (or signature) -> (run, out_tree), or _HOT
        self.buckets = LRU(kernels=False)  # signature -> how it runs bucketed (buckets.py), or exact
        self.pad = None  # the op's padding declaration (buckets.py), where it has one
        self.vjp_of = None  # (forward kernel, its argument count): a backward kernel padded as its op declares
        self.inexact = False  # a program of this body fell outside the exact tier: so will its other shapes'
        self.numpy = None  # (run, out_tree): the body written in NumPy, exactly XLA's results, run untraced
        # (shape, dtype, weak type) of each argument -> what runs it, once that is settled (compiled exact, or
        # bucketed): a recurring call then costs one key and one lookup (the ``_mode`` it was settled under)
        self.routes: dict = {}
        self.hosted: dict = {}  # argument signature -> the exact tier's straight-line program, or False (``host``)
        self.nohost = False  # the body is outside what ``host`` runs at any shape (inexact, slow, unsupported)
        self.tier = None  # whether the body is in the exact tier (``exact_tier``), once asked
        # bucketed executable (padded shapes) -> [modelled seconds its signatures spent interpreted]: a kernel
        # whose sizes churn meets each size a few times, so renting per signature would never compile
        self.rents = LRU(kernels=False)
        self.moves = None  # whether the body only moves data (``_moved``), once found not to

    def exact_tier(self, args: tuple) -> bool:
        """Whether the body is in the exact tier, whose results do not depend on the shapes it runs at (so a
        position-wise body's padded call gives its exact call's bits). The body is the same at every shape:
        asked once."""
        if self.tier is None:
            sig = _signature(args)
            try:
                e = self._program(args, sig) if sig is not None else None
            except _Unsupported:
                e = None
            self.tier = e is not None and bool(e.program[0].exact)
        return self.tier

    def _program(self, args: tuple, sig: tuple) -> _Entry | None:
        if self.numpy is not None:
            return _Entry(self.numpy, {})
        sizes: dict = {}
        pattern = _pattern(sig, sizes)
        program = self.programs.get(pattern)
        if program is None and sizes:
            try:  # one trace for every size of the pattern
                syms = dict(zip(sizes, jax.export.symbolic_shape(", ".join(sizes))))
                program = self._trace(_abstract(args, pattern, syms))
                stats["traces"] += 1
            except _Unsupported:
                self.programs[pattern] = _HOT  # every size of the pattern: no trace again to find that out
                raise
            except Exception:  # noqa: BLE001 - the body needs concrete sizes: trace each signature
                program = "concrete"
            self.programs[pattern] = program
        if program == "concrete" or not sizes:
            symbolic, sizes = pattern, {}
            program = self.programs.get(sig)
            if program is None:
                try:
                    program = self.programs[sig] = self._trace(args)
                except _Unsupported:  # a primitive outside the table at one size: at every size of the pattern
                    self.programs[sig] = self.programs[symbolic] = _HOT
                    raise
                stats["traces"] += 1
        if program is _HOT:
            return None
        return _Entry(program, sizes)

    def _trace(self, args: Any) -> tuple:
        t0 = time.perf_counter()
        try:
            traced = self.jitted.trace(*args)
            closed = traced.jaxpr
            return _build(closed.jaxpr, list(closed.consts)), jax.tree_util.tree_structure(traced.out_info)
        finally:
            stats["trace_seconds"] += time.perf_counter() - t0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # lazy mode runs its first programs op by op and then fused: those must round alike, so all XLA
        if kwargs or lazy._on or not (_cpu or (_cpu is None and _cpu_only())):
            if lazy._churn_run and not kwargs and not _xla_tiers.tracing():  # (traced inside another kernel: hot)
                return self._churn(args)
            return self.hot(*args, **kwargs)
        return self._eager(args)

    def _churn(self, args: tuple) -> Any:
        """A node of a lazy structure whose shapes keep changing (``lazy._churns``), run on its own without a
        compile per shape: on the CPU as eager mode runs it (the exact tier rounds as XLA does), elsewhere
        data movement on the host (exact anywhere) and the rest on the bucketed executable, the argument
        padding staged through the host (a device-side pad would compile per size)."""
        if _cpu or (_cpu is None and _cpu_only()):
            out = self._eager(args)
            return jax.tree_util.tree_map(lambda o: _to_jax(o) if type(o) is np.ndarray else o, out)
        out = self._moved(args)
        if out is None and buckets._on:
            out = buckets.run(self, args, _churn_put(args))
        return self.hot(*args) if out is None else out

    def _moved(self, args: tuple) -> Any:
        """The result of a body that only moves data (slices, views, concatenations, gathers), computed on the
        host; else None."""
        if self.moves is False or not _exact_on:
            return None
        sig = _signature(args)
        if sig is None:
            return None
        try:
            e = self._program(args, sig)
        except _Unsupported:
            e = None
        if e is None or (self.numpy is None and not e.program[0].prims <= _MOVES):
            self.moves = False  # (the body's primitives are the same at every shape)
            return None
        leaves: list = []
        _leaves(args, leaves)
        leaves = [np.asarray(x) if hasattr(x, "devices") else x for x in leaves]
        run, out_tree = e.program
        outs = run(e.dims, *leaves)
        put = _churn_put(args)
        stats["moved_calls"] += 1
        return jax.tree_util.tree_unflatten(out_tree, [put(np.asarray(o)) for o in outs])

    def _eager(self, args: tuple) -> Any:
        arr = _ARRAY or _array_type()
        key = []
        for a in args:  # (``_route_key`` written out for the arguments at the top: this runs per compiled op)
            c = a.__class__
            if c is arr:
                v = a.aval
                key.append((v.shape, v.dtype, v.weak_type))
            elif c is np.ndarray:
                key.append((a.shape, a.dtype, None))
            elif a is None:
                key.append(None)
            else:
                key = _route_key(args)
                break
        if key is not None:
            key = tuple(key)
            routes = self.routes
            mode = routes.get(_MODE_KEY)
            if mode is None or mode[0] != _on or mode[1] != _exact_on or mode[2] != buckets._on:  # (``_mode()``)
                routes.clear()
                routes[_MODE_KEY] = _mode()
            route = routes.get(key)
            if route is not None:
                return route(*args)
        if not _exact_on or (self.inexact and not _on):
            return self._compiled(args, key)
        sig = _signature(args)
        if sig is None:
            return self._compiled(args, key)
        e = self.entries.get(sig)
        if e is _HOT:
            return self._compiled(args, key)
        if e is None:
            try:
                e = self._program(args, sig)
            except _Unsupported as u:
                stats["unsupported"] += 1
                unsupported[str(u)] += 1
                e = None
            if e is None or not (e.program[0].exact or (_on and not _exact.depth)):
                self.entries[sig] = _HOT
                if e is not None and not e.program[0].exact:
                    self.inexact = True  # (its body is the same at every shape; no more traces to learn that)
                return self._compiled(args)
            if buckets._on and self.numpy is None:  # (a body written in NumPy moves data: it rents per signature;
                # planning its bucket traced it twice per view, as many as a growing context's steps)
                shapes = buckets.executable(self, args)
                if shapes is not None:
                    rent = self.rents.get(shapes)
                    if rent is None:
                        rent = self.rents[shapes] = [0.0]
                    if rent[0] > COMPILE_COST:  # the bucket's executable is bought: no more renting
                        self.entries[sig] = _HOT
                        return self._compiled(args, key)
                    e.rent = rent
        leaves: list = []
        _leaves(args, leaves)
        run, out_tree = e.program
        try:
            with np.errstate(all="ignore"):
                outs = e.bound()(*leaves)
        except _Unsupported as u:
            stats["unsupported"] += 1
            unsupported[str(u) or "a value outside the table"] += 1
            self.entries[sig] = _HOT
            return self._compiled(args)
        if _check and run.exact:
            _compare(self, args, outs)
        result = jax.tree_util.tree_unflatten(out_tree, [_made_array(_owned(o, leaves)) for o in outs])
        cost = _estimate(run.n_steps, leaves, outs)
        e.spent += cost
        stats["cold_seconds"] += cost
        stats["cold_calls"] += 1
        e.calls += 1
        if e.rent is not None:
            e.rent[0] += cost
        if (e.spent > COMPILE_COST and e.calls > 1) or (e.rent is not None and e.rent[0] > COMPILE_COST):
            stats["hot_signatures"] += 1
            self.entries[sig] = _HOT
        else:
            self.entries[sig] = e
            if e.calls == 2 and key is not None and run.exact:
                # a signature that recurs: route it straight to its program bound to these sizes (evaluating
                # the symbolic sizes of every step cost about half of a small call)
                self._route(key, self._cold_route(key, sig, e))
        return result

    def _cold_route(self, key: tuple, sig: tuple, e: _Entry) -> Callable:
        """The route of a recurring exact-tier signature: its NumPy program at its sizes, rented as ``_eager``
        rents, and re-routed to the compiled kernel once the rent is paid."""
        run, out_tree = e.program
        # (not ``_straight_line``: generating its code costs about 0.5 ms, and many signatures recur only a few times)
        straight = e.bound()
        single = out_tree.num_nodes == 1 and out_tree.num_leaves == 1  # (a None result is a leaf with no value)
        n_steps = run.n_steps
        entries = self.entries

        def route(*args: Any) -> Any:
            leaves: list = []
            _route_leaves(args, leaves)
            token = _np_errors.set(_IGNORE) if _np_errors is not None else None
            try:
                if token is None:
                    with np.errstate(all="ignore"):
                        outs = straight(*leaves)
                else:
                    outs = straight(*leaves)
            except _Unsupported as u:  # a value outside the table (an integer division by zero)
                stats["unsupported"] += 1
                unsupported[str(u) or "a value outside the table"] += 1
                entries[sig] = _HOT
                self.routes.pop(key, None)
                return self._compiled(args, key)
            finally:
                if token is not None:
                    _np_errors.reset(token)
            if _check:
                _compare(self, args, outs)
            outs = [_made_array(_owned(o, leaves)) for o in outs]
            cost = _estimate(n_steps, leaves, outs)
            e.spent += cost
            stats["cold_seconds"] += cost
            stats["cold_calls"] += 1
            e.calls += 1
            if e.rent is not None:
                e.rent[0] += cost
            if e.spent > COMPILE_COST or (e.rent is not None and e.rent[0] > COMPILE_COST):
                stats["hot_signatures"] += 1
                entries[sig] = _HOT
                self.routes.pop(key, None)  # (the next call settles the compiled route)
            return outs[0] if single else jax.tree_util.tree_unflatten(out_tree, outs)

        return route

    def host(self, args: list) -> Any:
        """The kernel's result computed with NumPy on the host, as read-only NumPy arrays, where that is the
        compiled result bit for bit (the exact tier) and every argument is a small array; else None.

        A recurring small op then costs a dictionary lookup and its NumPy calls instead of an XLA dispatch
        (torch's per-op cost is a few microseconds; JAX's dispatch alone is more). The caller checks that
        the arrays are on the CPU of a CPU-only process, in eager mode."""
        if self.nohost or not _exact_on:
            return None
        key: list = []
        leaves: list = []
        jax_leaves = False  # (read into NumPy once the signature is known to run here: ~0.7 us apiece)
        arr = _ARRAY or _array_type()
        for a in args:  # (``_host_leaves`` written out for the arguments at the top: this runs per small op)
            c = a.__class__
            if c is np.ndarray:
                if a.size > HOST_ELEMENTS:
                    return None
                key.append((a.shape, a.dtype, None))
                leaves.append(a)
            elif a is None:
                key.append(None)
            elif c is arr:
                v = a.aval  # (the array's own properties each read it: ~0.1 us apiece; its size is a Python genexpr)
                if math.prod(v.shape) > HOST_ELEMENTS:
                    return None
                key.append((v.shape, v.dtype, v.weak_type))
                leaves.append(a)
                jax_leaves = True
            elif c is list:
                key.append(list)
                if not _host_leaves(a, key, leaves):
                    return None
                key.append(None)
            elif c is int and self.numpy is not None:  # (a view write's offsets: a NumPy body reads them as numbers)
                key.append(int)
                leaves.append(a)
            else:
                return None
        key = tuple(key)
        hosted = self.hosted
        plan = hosted.get(key)
        fresh = plan is None
        if fresh:
            plan = self._host_plan(tuple(args))
            if len(hosted) > _ROUTES:
                hosted.clear()
            hosted[key] = plan
        if plan is False:
            return None
        if jax_leaves:
            leaves = [np.asarray(x) if x.__class__ is arr else x for x in leaves]
        run, single, quiet, upgrade, takes = plan
        if upgrade is not None and not fresh:
            upgrade[2] += 1
            if upgrade[2] >= STRAIGHT_AFTER:  # the signature recurs: its straight-line function from now on
                plan[0] = _straight_line(upgrade[0], upgrade[1])
                plan[3] = None
        if takes is not None:
            plan[4] = takes = takes + 1
            if takes > HOST_TAKES:  # this size keeps coming: the compiled kernel from the next call (same bits)
                hosted[key] = False
                # (the call puts host arguments on the device for it, so the same sizes come back as JAX arrays)
                hosted[tuple((k[0], k[1], False) if type(k) is tuple and k[2] is None else k for k in key)] = False
        try:
            if quiet:
                outs = run(*leaves)
            elif _np_errors is not None:
                token = _np_errors.set(_IGNORE)
                try:
                    outs = run(*leaves)
                finally:
                    _np_errors.reset(token)
            else:
                with np.errstate(all="ignore"):
                    outs = run(*leaves)
        except _Unsupported:  # a value outside the table (an integer division by zero): XLA's result
            hosted[key] = False
            return None
        for o in outs:
            o.setflags(write=False)  # (a view of an input is read-only already)
        if _check:
            _compare(self, tuple(args), outs)
        stats["host_calls"] += 1
        return outs[0] if single is True else jax.tree_util.tree_unflatten(single, outs)

    def _host_plan(self, args: tuple) -> Any:
        sig = _signature(args)
        if sig is None:
            return False
        if self.numpy is not None:  # the body written in NumPy (``cold(numpy=)``): data movement, exact
            run = self.numpy[0]
            return [(lambda *xs: run(None, *xs)), True, True, None, None]
        try:
            e = self._program(args, sig)
        except _Unsupported:
            e = None
        if e is None or not e.program[0].exact or getattr(e.program[0], "slow", True):
            # the body's primitives decide that, and the body is the same at every shape: not asked again
            self.nohost = True
            return False
        run, out_tree = e.program
        # first its program bound to these sizes; from the signature's third call the straight-line function,
        # whose generated code costs about 0.2 ms to build (a growing context meets each size once a run: a
        # second run of it would pay for them all)
        bound = _bound(run, e.dims)
        stats["host_plans"] += 1
        # NumPy warns of floating-point overflow and division by zero where XLA is silent: a program with a
        # float result or a float division is run quieted (the context manager costs about a microsecond)
        quiet = not (run.products or run.sums or any(np.dtype(dt).kind in "fc" for *_, dt in _out_dtypes(run)))
        takes = 0 if "gather" in run.prims else None  # (see HOST_TAKES)
        single = out_tree.num_nodes == 1 and out_tree.num_leaves == 1  # (a None result is a leaf with no value)
        return [bound, True if single else out_tree, quiet, [run, e.dims, 0], takes]

    def _compiled(self, args: tuple, key: tuple | None = None) -> Any:
        """The compiled result: on the signature's bucketed executable where it has one (a function of the
        signature alone, so exact-tier results, which padding cannot change, stay the same either way).
        ``key`` (``_route_key``'s) is then routed straight to what ran."""
        if buckets._on:
            out = buckets.run(self, args, _made_array)
            if out is not None:
                if key is not None:
                    self._route(key, self._bucketed)
                return out
        if key is not None:
            self._route(key, self.hot)
        return self.hot(*args)

    def _bucketed(self, *args: Any) -> Any:
        out = buckets.run(self, args, _made_array)
        if out is None:  # inside a trace, or a recurring signature that now runs its exact executable
            if not _xla_tiers.tracing():
                key = _route_key(args)
                if key is not None:
                    self._route(key, self.hot)
            return self.hot(*args)
        return out

    def _route(self, key: tuple, route: Callable) -> None:
        routes = self.routes
        if len(routes) > _ROUTES:
            routes.clear()
            routes[_MODE_KEY] = _mode()
        routes[key] = route

    # the jitted kernel's staging methods; nothing else is forwarded (jax.jit and inspect read a callable's
    # attributes, such as __wrapped__, and must see this wrapper as a plain function)
    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted.lower(*args, **kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted.trace(*args, **kwargs)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted.eval_shape(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<cold kernel {self.__name__}>"


def _compare(kernel: ColdKernel, args: tuple, outs: list) -> None:
    """TORCHLIKE_COLD_CHECK: the exact tier's results must be the compiled kernel's, bit for bit."""
    hot = jax.tree_util.tree_leaves(kernel.hot(*args))
    for i, (a, b) in enumerate(zip(outs, hot)):
        b = np.asarray(b)
        a = np.asarray(a, dtype=b.dtype)
        if a.shape != b.shape or not _same_bits(a, b):
            bad = np.flatnonzero(~_same_elements(a, b).reshape(-1))[:4] if a.shape == b.shape else []
            raise AssertionError(f"cold kernel {kernel.__name__}: output {i} differs from the compiled kernel's "
                                 f"(shape {b.shape}, {b.dtype}; elements {list(bad)}: "
                                 f"{a.reshape(-1)[bad] if len(bad) else a.shape} vs {b.reshape(-1)[bad] if len(bad) else ''})")


def _same_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in _FLOAT_KINDS:  # NaNs alike whatever their payload; zeros by sign
        return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    return a == b


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(_same_elements(a, b).all())


class Rental:
    """The ski-rental rule for a whole program (the autograd engine's fused backward): run the cheap way
    on a (structure, signature) until the time spent passes ``cost_per_unit`` seconds per unit (node),
    about what compiling the program costs; then ``cold`` says no and the caller compiles."""

    def __init__(self, cost_per_unit: float) -> None:
        self.cost_per_unit = cost_per_unit
        self.spent = LRU(kernels=False)

    def key(self, structure: Any, args: Any) -> Any:
        """The key to pass to ``spend``, or None where the program should run compiled (hot, or the cold
        path does not apply to these arguments)."""
        if not _on or lazy._on or not (_cpu or (_cpu is None and _cpu_only())):
            return None
        sig = _signature(args)
        if sig is None:
            return None
        key = (structure, sig)
        return None if self.spent.get(key) is _HOT else key

    def spend(self, key: Any, seconds: float, units: int) -> None:
        """Add ``seconds`` spent running ``key`` the cheap way."""
        total, calls = self.spent.get(key) or (0.0, 0)
        total, calls = total + seconds, calls + 1
        if total > self.cost_per_unit * max(units, 1) and calls > 1:
            stats["hot_signatures"] += 1
            self.spent[key] = _HOT
        else:
            self.spent[key] = (total, calls)





def signature(args: Any) -> tuple | None:
    """The cold path's key of an argument tree (shapes, dtypes, weak types), or None where it does not apply."""
    return _signature(tuple(args))


def cold(fn: Callable, name: str | None = None, direct: bool = False, numpy: Callable | None = None,
         **jit_kwargs: Any) -> ColdKernel:
    """``jax.jit(fn)`` whose first calls on each signature run without compiling (see the module doc).
    ``direct``: ``fn`` is itself a call of jitted code, and hot signatures call it as it is. ``numpy``:
    ``fn`` on NumPy arrays, returning its one result in a list, bit for bit XLA's (data movement), with
    ``n_steps`` set: the cold path runs it without tracing ``fn``. On a GPU the compiled kernel skips XLA's
    GEMM autotuning (``_xla_tiers.one_op_jit``)."""
    jitted = _xla_tiers.one_op_jit(fn, **jit_kwargs)
    k = ColdKernel(jitted, name or getattr(fn, "__name__", None), fn if direct else None)
    if numpy is not None:
        k.numpy = (lambda dims, *xs: numpy(*xs), jax.tree_util.tree_structure(0))
        k.numpy[0].exact, k.numpy[0].n_steps = True, numpy.n_steps
    return k

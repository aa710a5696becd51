"""Helpers the op families share (dims, broadcast shapes, torch's dtype conversion, the vector-norm
kernel, the one in-place helper), kept here so the families import this module instead of each other."""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core import views as V
from .._core.tensor import Tensor
from .._core import grad_mode, graph
from .registry import RawTensor, defop, round_to


def dims(dim: Any, ndim: int) -> tuple | None:
    """Normalise torch's ``dim`` (None, int, or sequence) into sorted positive axes, with torch's errors.

    A 0-dim tensor accepts dim 0 and -1 and gives ``()``."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    n = ndim if ndim > 0 else 1
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    if ndim == 0:
        return ()
    return tuple(sorted(out))


def _broadcast_shape(*shapes: tuple) -> tuple:
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        for i, v in enumerate(s):
            j = n - len(s) + i
            if out[j] == 1:
                out[j] = v
            elif v != 1 and v != out[j]:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({v}) at non-singleton "
                    f"dimension {j}"
                )
    return tuple(out)


def convert(x: Any, np_dtype: Any) -> Any:
    """``x.astype(np_dtype)`` with torch's (x86) conversions: float -> integer truncates toward zero;
    values out of range (and NaN) become INT64_MIN for int64 and go through int32 (out of range:
    INT32_MIN) for narrower integers, which then wrap; complex -> real keeps the real part."""
    np_dtype = np.dtype(np_dtype)
    src = x.dtype
    if jnp.issubdtype(src, jnp.complexfloating) and not jnp.issubdtype(np_dtype, jnp.complexfloating):
        x = jnp.real(x) if np_dtype != np.bool_ else x != 0
        src = x.dtype
    if not jnp.issubdtype(src, jnp.floating) or np_dtype == np.bool_ or not jnp.issubdtype(np_dtype, jnp.integer):
        return x.astype(np_dtype)
    wide = np.dtype(np.int64) if np_dtype == np.int64 else np.dtype(np.int32)
    lim = float(2 ** (wide.itemsize * 8 - 1))
    if src != jnp.float64:
        x = x.astype(jnp.float32)
    ok = (x >= -lim) & (x < lim)
    t = jnp.where(ok, jnp.where(ok, x, 0).astype(wide), np.iinfo(wide).min)
    return t.astype(np_dtype)


def _complex_warning(cdt: Any, dyn: tuple, static: tuple) -> None:
    src, dt = dyn[0]._dtype, static[0]
    if src.is_complex and not dt.is_complex and dt is not D.bool:
        import warnings

        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)


# The one dtype-conversion op (Tensor.to / .type / indexing casts), shared by the families.
@defop(promote=None, method=False, grad_name="ToCopyBackward0", saves=(), check=_complex_warning)
def _to_dtype(input: RawTensor, dtype: Any) -> Any:
    return convert(input, dtype.np)


_TYPE_NAMES = {
    D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor", D.bfloat16: "BFloat16Tensor",
    D.int64: "LongTensor", D.int32: "IntTensor", D.int16: "ShortTensor", D.int8: "CharTensor",
    D.uint8: "ByteTensor", D.bool: "BoolTensor", D.complex64: "ComplexFloatTensor",
    D.complex128: "ComplexDoubleTensor",
}  # fmt: skip
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def type_name(t: Tensor) -> str:
    prefix = "torch.cuda." if t.is_cuda else "torch."
    return prefix + _TYPE_NAMES[t._dtype]


def special_ord(ord: Any) -> bool:
    """A norm order that changes the program (0, 1, 2, +-inf): baked into kernels; any other p is traced."""
    return ord == 0 or ord == 1 or ord == 2 or math.isinf(ord)


def _traced(ord: Any) -> bool:
    return not isinstance(ord, (int, float))


def norm_acc(dtype: Any) -> Any:
    """The dtype a general-order norm accumulates in: float32 for half precision, as torch's opmath type."""
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


def _vnorm_fwd(x: Any, ord: Any, axes: Any, keepdim: bool) -> Any:
    a = jnp.abs(x)
    if _traced(ord):  # a general p, as an array: 1/p rounds in p's own precision, as 1.0 / ord does
        acc = norm_acc(a.dtype)  # torch: half-precision norms accumulate in float
        s = jnp.sum(a.astype(acc) ** ord.astype(acc), axes, keepdims=keepdim)
        return (s ** (1 / ord).astype(acc)).astype(a.dtype)
    if ord == 0:
        return jnp.sum(a != 0, axes, keepdims=keepdim).astype(a.dtype)
    if math.isinf(ord):
        if x.size == 0:
            return jnp.max(a, axes, keepdims=keepdim, initial=0.0) if ord > 0 else jnp.min(a, axes, keepdims=keepdim)
        return jnp.max(a, axes, keepdims=keepdim) if ord > 0 else jnp.min(a, axes, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(a, axes, keepdims=keepdim)
    if ord == 2:
        return jnp.sqrt(jnp.sum(a * a, axes, keepdims=keepdim))
    return jnp.sum(a**ord, axes, keepdims=keepdim) ** (1.0 / ord)


def _vnorm_bwd_math(x: Any, norm: Any, g: Any, ord: Any, axes: Any, keepdim: bool) -> Any:
    # torch's norm_backward (FunctionsManual.cpp); norm and g are broadcast back over the reduced axes
    if not keepdim and axes is not None:
        norm = jnp.expand_dims(norm, axes)
        g = jnp.expand_dims(g, axes)
    a = jnp.abs(x)
    sgn = jnp.sign(x)
    if _traced(ord):  # a general p: torch's three cases, chosen by value
        p = ord.astype(a.dtype)
        scale = jnp.where(norm == 0, 0, g / jnp.where(norm == 0, 1, norm ** (p - 1)))
        low = sgn * jnp.where(x == 0, 0, a ** (p - 1)) * g * norm ** (1 - p)
        return jnp.where(p < 1, low, jnp.where(p < 2, sgn * a ** (p - 1) * scale, x * a ** (p - 2) * scale))
    if ord == 0:
        return jnp.zeros_like(x)
    if ord == 1:
        return sgn * g
    if ord == 2:
        return x * jnp.where(norm == 0, 0, g / jnp.where(norm == 0, 1, norm))
    if math.isinf(ord):
        mask = (a == norm) | jnp.isnan(a)
        count = jnp.sum(mask, axes, keepdims=True)
        return sgn * (g / count) * mask
    if ord < 1:
        scaled = sgn * jnp.where(x == 0, 0, a ** (ord - 1))
        return scaled * g * norm ** (1 - ord)
    if ord < 2:
        scale = jnp.where(norm == 0, 0, g / jnp.where(norm == 0, 1, norm ** (ord - 1)))
        return sgn * a ** (ord - 1) * scale
    scale = jnp.where(norm == 0, 0, g / jnp.where(norm == 0, 1, norm ** (ord - 1)))
    return x * a ** (ord - 2) * scale


def _vnorm_traced(x: Any, p: Any, axes: Any, keepdim: bool) -> Any:
    """The norm of a traced order: ``p`` is an argument of the custom_vjp (it must not close over tracers)."""

    @jax.custom_vjp
    def f(x: Any, p: Any) -> Any:
        return _vnorm_fwd(x, p, axes, keepdim)

    def fwd(x: Any, p: Any) -> Any:
        n = _vnorm_fwd(x, p, axes, keepdim)
        return n, (x, n, p)

    def bwd(res: Any, g: Any) -> Any:
        x, n, p = res
        return _vnorm_bwd_math(x, n, g, p, axes, keepdim).astype(x.dtype), jnp.zeros_like(p)

    f.defvjp(fwd, bwd)
    return f(x, jnp.asarray(p, np.float64))


def _vector_norm_impl(x: Any, ord: Any, axes: Any, keepdim: bool) -> Any:
    if _traced(ord):
        return _vnorm_traced(x, ord, axes, keepdim)

    @jax.custom_vjp
    def f(x: Any) -> Any:
        return _vnorm_fwd(x, ord, axes, keepdim)

    def fwd(x: Any) -> Any:
        n = _vnorm_fwd(x, ord, axes, keepdim)
        return n, (x, n)

    def bwd(res: Any, g: Any) -> Any:
        x, n = res
        return (_vnorm_bwd_math(x, n, g, ord, axes, keepdim).astype(x.dtype),)

    f.defvjp(fwd, bwd)
    return f(x)


# --- in-place ops ----------------------------------------------------------------------------------------


_HALF = (jnp.float16, jnp.bfloat16)


def half_from_result(f: Callable, grad: Callable, elementwise: bool = False) -> Callable:
    """``f`` as torch's kernels run it on float16/bfloat16: computed in float32 and rounded once, with the
    backward of torch's ``<op>_backward`` kernels or derivative formula, ``grad(result, grad_output, dtype)`` in
    float32 from the rounded result and rounded once (jax.vjp would read the unrounded float32 result); a formula
    that rounds an intermediate rounds it to ``dtype``. Other dtypes: ``f`` itself.

    ``elementwise``: ``grad`` is ``grad_output`` times a factor, written with the factor's association reversed
    (torch's ``g * (1 - y) * y`` as ``g * y * (1 - y)``); it is then the JVP, whose transpose is torch's
    formula, and forward mode works too. Otherwise (softmax) forward mode on half types raises JAX's error."""

    if elementwise:

        @jax.custom_jvp
        def low(x: Any) -> Any:
            return round_to(f(x.astype(jnp.float32)), x.dtype)

        @low.defjvp
        def low_jvp(primals: tuple, tangents: tuple) -> tuple:
            y = low(primals[0])
            return y, round_to(grad(y.astype(jnp.float32), tangents[0].astype(jnp.float32), y.dtype), y.dtype)

    else:

        @jax.custom_vjp
        def low(x: Any) -> Any:
            return round_to(f(x.astype(jnp.float32)), x.dtype)

        def low_fwd(x: Any) -> tuple:
            y = low(x)
            return y, y

        def low_bwd(y: Any, g: Any) -> tuple:
            return (round_to(grad(y.astype(jnp.float32), g.astype(jnp.float32), y.dtype), y.dtype),)

        low.defvjp(low_fwd, low_bwd)

    def run(x: Any) -> Any:
        return low(x) if x.dtype in _HALF else f(x)

    run.__name__ = getattr(f, "__name__", "half_from_result")
    return run


def check_overlap(dst: Tensor, src: Any) -> None:
    """torch's overlap checks before writing ``src`` into ``dst`` (copy_, in-place ops)."""
    if dst._view is not None:
        V.check_internal_overlap(dst._view.shape, dst._view.stride)
    if isinstance(src, Tensor) and src._buf is dst._buf and src is not dst:
        V.check_partial_overlap(dst._geometry(), src._geometry(), dst._dtype.itemsize, src._dtype.itemsize)


def inplace_variant(fn: Callable, name: str, zero_grad: str | None = None) -> Callable:
    """The one in-place helper: ``fn(self, ...)`` computed out of place, then written into ``self`` through
    the mutation door, with torch's in-place checks (autograd's leaf/version rules, overlapping memory, the
    result's dtype and shape).

    zero_grad: for a non-differentiable op (a comparison), the stem of torch's node (``"Eq"``): writing into
    a tensor that requires grad records ``EqBackward0`` (``EqBackward1`` for a tensor ``other``), whose
    gradient is zero."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if grad_mode._state.enabled and (self._rg or self._base_t is not None):
            graph.check_inplace(self)
        if self._view is not None or (args and isinstance(args[0], Tensor) and args[0]._buf is self._buf):
            check_overlap(self, args[0] if args else None)
        result = fn(self, *args, **kwargs)
        if zero_grad is not None and grad_mode._state.enabled:
            result = _zero_gradient_result(self, result, zero_grad, args[0] if args else kwargs.get("other"))
        commit(self, result)
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of :func:`torchlike.{name[:-1]}`."
    return method


def _zero_gradient_result(self: Tensor, result: Tensor, stem: str, other: Any) -> Tensor:
    tensor_other = isinstance(other, Tensor)
    sources = (self, other) if tensor_other else (self,)
    if not (self._rg or (self._base_t is not None and self._base_t._rg) or (tensor_other and other._rg)):
        return result
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        return result  # commit raises torch's cast error, or an integral tensor requires no grad
    out = result.to(self._dtype)
    graph.zero_gradient(out, f"{stem}Backward{1 if tensor_other else 0}", sources)
    return out


def commit(self: Tensor, result: Tensor) -> None:
    """Finish an in-place op: torch's cast and shape rules, then the mutation door."""
    if result._dtype is not self._dtype and not D.can_cast(result._dtype, self._dtype):
        raise RuntimeError(
            f"result type {D.cpp_name(result._dtype)} can't be cast to the desired output type {D.cpp_name(self._dtype)}"
        )
    if result._shape != self._shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, self._shape))}] doesn't match the broadcast shape "
            f"[{', '.join(map(str, result._shape))}]"
        )
    graph.commit_inplace(self, result)

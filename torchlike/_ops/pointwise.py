"""Pointwise ops. Each body is the JAX function; the table adds promotion, methods, in-place, out=.

Where torch's gradient convention differs from the one JAX derives from the body, the body is
written so that its JAX gradient is torch's (marked ``# torch:``).
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy import special as jsp

from .._core import dtype as D
from .._core.tensor import Tensor
from ._common import half_from_result, inplace_variant
from .registry import (
    OPS,
    OptScalar,
    OptTensorOrScalar,
    RawTensor,
    Scalar,
    ScalarOrStatic,
    TensorArg,
    TensorOrScalar,
    TensorOrStatic,
    defop,
    expose,
    round_to,
)

# --- checks that torch makes before computing ------------------------------------------------------


def _integral(dt: D.dtype | None) -> bool:
    return dt is not None and not (dt.is_floating_point or dt.is_complex)


def _not_implemented(kernel: str, dt: D.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(dt)}'")


def _no_bool(kernel: str) -> Callable:
    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        if cdt is D.bool:
            raise _not_implemented(kernel, cdt)

    return check


def _has_zero(x: Any) -> bool:
    """Whether an integer divisor is zero somewhere (a host read, as torch's CPU kernels do)."""
    if isinstance(x, Tensor):
        arr = x._data()
        if isinstance(arr, jax.core.Tracer):
            return False
        return bool((np.asarray(arr) == 0).any())
    return x == 0


def _int_division(kernel: str, pos: int = 1) -> Callable:
    """torch: integer division by zero raises on CPU (CUDA does not check); bool has no kernel."""

    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        if cdt is D.bool:
            raise _not_implemented(kernel, cdt)
        d = dyn[pos]
        on_cpu = not isinstance(d, Tensor) or d._buf.device.type == "cpu"
        if _integral(cdt) and on_cpu and _has_zero(d):
            raise RuntimeError("ZeroDivisionError")

    return check


def _alpha_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    alpha = dyn[-1]
    if _integral(cdt) and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if cdt is D.bool and isinstance(alpha, int) and not isinstance(alpha, bool) and alpha not in (0, 1):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _sub_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    bools = [isinstance(a, Tensor) and a._dtype is D.bool or isinstance(a, bool) for a in dyn[:2]]
    if all(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
            "operator instead."
        )
    if any(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )
    _alpha_check(cdt, dyn, static)


def _neg_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if cdt is D.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
            "the `~` or `logical_not()` operator instead."
        )


def _is_int_array(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_


def _by_tensors(*names: str) -> Callable:
    """A grad_name chooser: names[k] where k counts which of the first two arguments are not tensors
    (torch numbers its overloads Tensor-Tensor, Scalar-Tensor, Tensor-Scalar that way for some ops)."""

    def name(static: tuple, dyn: tuple) -> str:
        a, b = (isinstance(x, Tensor) for x in dyn[:2])
        return names[0] if a and b else names[1] if b else names[2]

    return name


# --- arithmetic ----------------------------------------------------------------------------------------


@defop(inplace=True, out=True, check=_alpha_check, saves=())
def add(input: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> Any:
    """torch.add: ``input + alpha * other``."""
    return input + other * alpha if input.dtype != jnp.bool_ else input | (other & alpha)


@defop(inplace=True, out=True, check=_sub_check, saves=(), aliases=("subtract",))
def sub(input: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> Any:
    return input - other * alpha


@defop(method=False, check=_sub_check, grad_name="RsubBackward1", saves=())
def rsub(input: TensorOrScalar, other: TensorOrScalar, *, alpha: Scalar = 1) -> Any:
    """torch.rsub: ``other - alpha * input``."""
    return other - input * alpha


_CROSS = (("input", "other"), ("other", "input"))


@defop(inplace=True, out=True, aliases=("multiply",), saves=_CROSS)
def mul(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return input * other if input.dtype != jnp.bool_ else input & other


# The ops of torch's backward formulas that a create_graph backward records (autograd/_higher.py's _FORMULAS)


@defop("_mul_scalar", method=False, grad_name="MulBackward1", saves=())
def _mul_scalar(input: TensorArg, other: Scalar) -> Any:
    """torch's ``tensor * Scalar`` inside C++ formulas (pow's backward): MulBackward1, no edge for the number."""
    return input * other


@defop("_tanh_backward", promote=None, method=False, grad_name="TanhBackwardBackward0")
def _tanh_backward(grad_output: RawTensor, output: RawTensor) -> Any:
    return grad_output * (1 - output * output)


@defop("_sigmoid_backward", promote=None, method=False, grad_name="SigmoidBackwardBackward0")
def _sigmoid_backward(grad_output: RawTensor, output: RawTensor) -> Any:
    return grad_output * (1 - output) * output


def _div_promote(static: tuple) -> str:
    return "float" if static[0] is None else "default"


def _div_name(static: tuple, dyn: tuple) -> str:
    return "DivBackward0" if static[0] is None else "DivBackward2"


def _div_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    mode = static[0]
    if mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'")
    if mode is not None:
        _int_division(f"div_{mode}_cpu")(cdt, dyn, static)


def _true_divide(a: Any, b: Any) -> Any:
    """``a / b``, kept a division where ``b`` is broadcast: XLA's simplifier rewrites ``a / broadcast(b)`` as
    ``a * broadcast(1 / b)``, a product by a rounded reciprocal that is one ulp off torch's quotient in about a
    sixth of float32 elements (seen in fused lazy programs). The barrier hides the broadcast from that rule;
    XLA drops it after simplification, so the division still fuses and nothing is materialised."""
    if hasattr(b, "shape"):
        shape = jnp.broadcast_shapes(jnp.shape(a), b.shape)
        if b.shape != shape:
            b = lax.optimization_barrier(jnp.broadcast_to(b, shape))
    return a / b


@defop(promote=_div_promote, inplace=True, out=True, grad_name=_div_name, check=_div_check,
       aliases=("divide", "true_divide"), saves=(("input", "other"), "other"))  # fmt: skip
def div(input: TensorOrScalar, other: TensorOrScalar, *, rounding_mode: str | None = None) -> Any:
    """torch.div. True division promotes integers to the default float dtype."""
    if rounding_mode is None:
        return _true_divide(input, other)
    if rounding_mode == "trunc":
        if _is_int_array(input):
            return lax.div(*jnp.broadcast_arrays(input, other))
        return jnp.trunc(input / other)
    return _floor_divide(input, other)


def _no_derivative(aten: str, error: type = RuntimeError, message: str | None = None) -> Callable:
    """Wrap a kernel so that backward through it raises torch's error (torch records a ``NotImplemented``
    node rather than no node)."""

    def deco(f: Callable) -> Callable:
        g = jax.custom_vjp(f)

        def bwd(res: Any, ct: Any) -> Any:
            raise error(message or f"derivative for aten::{aten} is not implemented")

        g.defvjp(lambda *args: (g(*args), None), bwd)
        return g

    return deco


def _floor_divide(a: Any, b: Any) -> Any:
    if _is_int_array(a):
        # eager calls raise on a zero divisor first; traced ones must not hit XLA's undefined result
        return jnp.floor_divide(a, jnp.where(b == 0, 1, b))
    return jnp.floor_divide(a, b)


@defop(inplace=True, out=True, dtypes="nocomplex", check=_int_division("div_floor_cpu"), grad_name="NotImplemented")
def floor_divide(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.floor_divide: rounds toward -inf (torch >= 1.13). torch has no derivative for it."""
    return _no_derivative("floor_divide")(_floor_divide)(input, other)


@defop(inplace=True, out=True, dtypes="nocomplex", check=_int_division("remainder_cpu"),
       grad_name=_by_tensors("RemainderBackward1", "RemainderBackward1", "RemainderBackward0"))  # fmt: skip
def remainder(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.remainder: the sign follows the divisor (Python's %)."""
    return jnp.remainder(input, other)


@defop(inplace=True, out=True, dtypes="nocomplex", check=_int_division("fmod_cpu"),
       grad_name=_by_tensors("FmodBackward1", "FmodBackward1", "FmodBackward0"))  # fmt: skip
def fmod(input: TensorArg, other: TensorOrScalar) -> Any:
    """torch.fmod: the sign follows the dividend (C's fmod)."""
    return jnp.fmod(input, other)


def _pow_name(static: tuple, dyn: tuple) -> str:
    if not isinstance(dyn[0], Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(dyn[1], Tensor) else "PowBackward0"


def _pow_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    e = dyn[1]
    if cdt is D.bool:
        raise _not_implemented("pow", cdt)
    if _integral(cdt) and isinstance(e, int) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _int_pow(x: Any, e: Any) -> Any:
    # torch: negative integer powers are 1 for base 1, +-1 for base -1 and 0 otherwise
    r = jnp.power(x, jnp.where(e < 0, 0, e))
    neg = jnp.where(x == 1, 1, jnp.where(x == -1, jnp.where(e % 2 == 0, 1, -1), 0)).astype(r.dtype)
    return jnp.where(e < 0, neg, r)


def _pow(x: Any, e: Any) -> Any:
    # torch: scalar exponents 2, 3, 0.5, -0.5, -1, -2 use exact special kernels (x*x, sqrt, ...); 0 and 1
    # are exact anyway. Any other exponent, integral or not, is a real pow (a multiplication chain for
    # x ** 4 differs from torch's pow in about half of the float32 elements, XLA's pow in under 2%).
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        if e == 0.5:
            return jnp.sqrt(x)
        if e == -0.5:
            return lax.rsqrt(x)
        if float(e).is_integer() and -2 <= e <= 3 and not _is_int_array(x):
            return lax.integer_pow(x, int(e))
        if isinstance(e, int) and _is_int_array(x) and e >= 0:
            return lax.integer_pow(x, e)
        if jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.power(x, jnp.asarray(e, x.dtype))  # an array exponent: lax.pow, not integer_pow
        return jnp.power(x, e)
    if jnp.issubdtype(x.dtype, jnp.signedinteger):
        return _int_pow(x, e)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return _fpow(*jnp.broadcast_arrays(x, e))
    return jnp.power(x, e)


@jax.custom_jvp
def _fpow(x: Any, y: Any) -> Any:
    return jnp.power(x, y)


@_fpow.defjvp
def _fpow_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dx is 0 where y == 0, d/dy is 0 where x == 0 and y >= 0 (JAX gives NaN at 0 ** 0)
    (x, y), (dx, dy) = primals, tangents
    r = _fpow(x, y)
    cx = jnp.where(y == 0, 0, y * jnp.power(x, y - 1))
    cy = jnp.where((x == 0) & (y >= 0), 0, r * jnp.log(x))
    return r, dx * cx + dy * cy


def _pow_bakes(e: Any) -> bool:
    """Exponents baked into pow's kernel: the ones ``_pow`` runs as special exact kernels, integers and
    complex numbers; any other float is a traced argument, so a new value compiles nothing."""
    if isinstance(e, float):
        return e in (0.5, -0.5) or (e.is_integer() and -2 <= e <= 3)
    return isinstance(e, (int, complex))


@defop(inplace=True, out=True, grad_name=_pow_name, check=_pow_check, bake=_pow_bakes, scalar=("input",))
def pow(input: TensorOrScalar, exponent: TensorOrStatic) -> Any:
    return _pow(input, exponent)


OPS["pow"].keep_numbers = True  # a create_graph backward records torch's formula with the exponent


def _float_power_name(static: tuple, dyn: tuple) -> str:
    return "PowBackward1" if isinstance(dyn[1], Tensor) else "PowBackward0"


@defop(promote="float", out=True, grad_name=_float_power_name)
def float_power(input: TensorOrScalar, exponent: TensorOrScalar) -> Any:
    """torch.float_power: computes and returns float64 (complex128 for complex inputs)."""
    x, e = input.astype(_wide(input.dtype)), exponent.astype(_wide(exponent.dtype))
    return _fpow(*jnp.broadcast_arrays(x, e)) if x.dtype == jnp.float64 else jnp.power(x, e)


def _wide(dt: Any) -> Any:
    return jnp.complex128 if jnp.issubdtype(dt, jnp.complexfloating) else jnp.float64


def _float_power_checked(self: Tensor, exponent: Any) -> Tensor:
    """float_power for the in-place form: torch only allows it on float64/complex128 tensors."""
    want = D.complex128 if self._dtype.is_complex or isinstance(exponent, complex) else D.float64
    if isinstance(exponent, Tensor) and exponent._dtype.is_complex:
        want = D.complex128
    if self._dtype is not want:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {D.cpp_name(self._dtype)} but the operation's result "
            f"requires dtype {D.cpp_name(want)}"
        )
    return float_power(self, exponent)


float_power_ = inplace_variant(_float_power_checked, "float_power_")


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, check=_neg_check, aliases=("negative",), saves=())
def neg(input: TensorArg) -> Any:
    return -input


def _sign(x: Any) -> Any:
    # torch: sign(NaN) = 0 and sign(-0.0) = +0 (JAX gives NaN and -0.0)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@jax.custom_jvp
def _abs0(x: Any) -> Any:
    return jnp.abs(x)


# torch: d|x|/dx = sign(x): 0 at 0 and at NaN (JAX's abs gives 1 at 0)
_abs0.defjvp(lambda p, t: (_abs0(p[0]), t[0] * _sign(p[0])))


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, aliases=("absolute",), dtypes="nobool")
def abs(input: TensorArg) -> Any:
    if jnp.issubdtype(input.dtype, jnp.floating):
        return _abs0(input)
    return jnp.abs(input)


@defop(inplace=True, out=True, dtypes="nocomplex")
def sign(input: TensorArg) -> Any:
    return _sign_any(input)


def _sign_any(x: Any) -> Any:
    if jnp.issubdtype(x.dtype, jnp.floating):
        return _sign(x)
    return jnp.sign(x) if x.dtype != jnp.bool_ else x


@defop(inplace=True, out=True)
def sgn(input: TensorArg) -> Any:
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        a = jnp.abs(input)
        return jnp.where(a == 0, 0, input / jnp.where(a == 0, 1, a)).astype(input.dtype)
    return _sign_any(input)


@expose("torch")
def positive(input: Tensor) -> Tensor:
    """torch.positive: returns ``input`` itself."""
    if input._dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@defop(promote=None, out=True, differentiable=False)
def signbit(input: RawTensor) -> Any:
    if input.dtype == jnp.bool_:
        return jnp.zeros(input.shape, bool)
    if jnp.issubdtype(input.dtype, jnp.integer):
        return input < 0
    return jnp.signbit(input)


@defop(inplace_in=("Tensor", "torch"), promote="float", inplace=True, out=True)
def reciprocal(input: TensorArg) -> Any:
    return _reciprocal(input)


# torch's derivative formula: -grad * (result * result), each product rounded in a half type
_reciprocal = half_from_result(lambda x: 1 / x, lambda y, g, dt: -g * round_to(y * y, dt).astype(jnp.float32),
                               elementwise=True)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, grad_name="PowBackward0")
def square(input: TensorArg) -> Any:
    return input * input if input.dtype != jnp.bool_ else input.astype(jnp.int64)


def _unary_float(name: str, f: Any, **kw: Any) -> Any:
    def body(input: TensorArg) -> Any:
        return f(input)

    body.__name__ = name
    body.__doc__ = f"torch.{name}; integer and bool inputs give the default float dtype."
    kw.setdefault("inplace_in", ("Tensor", "torch"))  # torch.sqrt_ as Tensor.sqrt_, for most of these
    return defop(name, promote="float", inplace=True, out=True, **kw)(body)


def _in_float64(f: Any, x: Any) -> Any:
    """``f`` evaluated in float64 and rounded to x's dtype: XLA's float32 lgamma/digamma are several ulp
    (up to thousands near their zeros) from torch's C library values; rounded float64 ones agree."""
    return f(x.astype(jnp.float64)).astype(x.dtype) if x.dtype != jnp.float64 else f(x)


@jax.custom_jvp
def _digamma(x: Any) -> Any:
    # torch: digamma(+-0) = -+inf and NaN at negative integers (JAX gives NaN at 0)
    r = _in_float64(jsp.digamma, x)
    r = jnp.where((x < 0) & (x == jnp.floor(x)), jnp.nan, r)
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x), r).astype(x.dtype)


def _trigamma(x: Any) -> Any:
    """torch's trigamma (reflection below 0.5, 6 recurrence steps, asymptotic series); finite at negative
    integers where JAX's polygamma gives NaN."""
    pi = jnp.asarray(np.pi, x.dtype)
    small = x < 0.5
    s = jnp.sin(pi * x)
    result = jnp.where(small, -(pi * pi) / (s * s), 0)
    x = jnp.where(small, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(small, -result, result)


@_digamma.defjvp
def _digamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (dx,) = primals, tangents
    return _digamma(x), dx * _trigamma(x)


@jax.custom_jvp
def _lgamma(x: Any) -> Any:
    return _in_float64(jsp.gammaln, x)


@_lgamma.defjvp
def _lgamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d lgamma = digamma with torch's values at the poles
    (x,), (dx,) = primals, tangents
    return _lgamma(x), dx * _digamma(x)


@jax.custom_jvp
def _i0(x: Any) -> Any:
    return jsp.i0(x)


@_i0.defjvp
def _i0_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d i0 = i1 (JAX's i0 derivative is 1 at 0)
    (x,), (dx,) = primals, tangents
    return _i0(x), dx * jsp.i1(x)


@jax.custom_jvp
def _rsqrt(x: Any) -> Any:
    return lax.rsqrt(x)


# torch: d rsqrt = -0.5 * rsqrt(x) ** 3 (JAX's -0.5 * rsqrt(x) / x has the other sign at -0.0)
_rsqrt.defjvp(lambda p, t: (_rsqrt(p[0]), t[0] * (-0.5 * _rsqrt(p[0]) ** 3)))

sqrt = _unary_float("sqrt", half_from_result(jnp.sqrt, lambda y, g, _: g / (2 * y), elementwise=True))  # torch's
rsqrt = _unary_float("rsqrt", _rsqrt)
exp = _unary_float("exp", jnp.exp, saves=("result",))
exp2 = _unary_float("exp2", jnp.exp2, namespaces=("torch", "Tensor", "special"))
expm1 = _unary_float("expm1", jnp.expm1, namespaces=("torch", "Tensor", "special"))
log = _unary_float("log", jnp.log)
log2 = _unary_float("log2", jnp.log2)
log10 = _unary_float("log10", jnp.log10)
log1p = _unary_float("log1p", jnp.log1p, namespaces=("torch", "Tensor", "special"), grad_name="Log1PBackward0")
sin = _unary_float("sin", jnp.sin)
cos = _unary_float("cos", jnp.cos)
tan = _unary_float("tan", jnp.tan)
asin = _unary_float("asin", jnp.arcsin, aliases=("arcsin",))
acos = _unary_float("acos", jnp.arccos, aliases=("arccos",))
atan = _unary_float("atan", jnp.arctan, aliases=("arctan",))
sinh = _unary_float("sinh", jnp.sinh)
cosh = _unary_float("cosh", jnp.cosh)
# torch's tanh_backward/sigmoid_backward read the rounded result (half types: float32, rounded once)
_tanh = half_from_result(jnp.tanh, lambda y, g, _: g * (1 - y * y), elementwise=True)
tanh = _unary_float("tanh", _tanh, saves=("result",), namespaces=("torch", "Tensor", "nn.functional"))
asinh = _unary_float("asinh", jnp.arcsinh, aliases=("arcsinh",))
acosh = _unary_float("acosh", jnp.arccosh, aliases=("arccosh",))
atanh = _unary_float("atanh", jnp.arctanh, aliases=("arctanh",))
_sigmoid = half_from_result(jax.nn.sigmoid, lambda y, g, _: g * y * (1 - y), elementwise=True)  # torch: g * (1 - y) * y
sigmoid = _unary_float("sigmoid", _sigmoid, saves=("result",),
                        namespaces=("torch", "Tensor", "nn.functional", "special:expit"))
erf = _unary_float("erf", jsp.erf, namespaces=("torch", "Tensor", "special"))
erfc = _unary_float("erfc", jsp.erfc, namespaces=("torch", "Tensor", "special"))
erfinv = _unary_float("erfinv", jsp.erfinv, namespaces=("torch", "Tensor", "special"), inplace_in=("Tensor",))
lgamma = _unary_float("lgamma", _lgamma, namespaces=("torch", "Tensor", "special:gammaln"), inplace_in=("Tensor",))
digamma = _unary_float("digamma", _digamma, namespaces=("torch", "Tensor", "special", "special:psi"), inplace_in=("Tensor",))
deg2rad = _unary_float("deg2rad", jnp.deg2rad, grad_name="Deg2RadBackward0")
rad2deg = _unary_float("rad2deg", jnp.rad2deg, grad_name="Rad2DegBackward0")
sinc = _unary_float("sinc", jnp.sinc, namespaces=("torch", "Tensor", "special"))
i0 = _unary_float("i0", _i0, namespaces=("torch", "Tensor", "special"))


def _logit_fn(x: Any, eps: Any) -> Any:
    """torch's logit: with ``eps`` (a traced number) inputs below eps read as eps and inputs above 1 - eps as
    1 - eps (in that order, so eps > 0.5 maps everything to one of the two); a negative eps clamps nothing."""
    if eps is None:
        lo = hi = None
    else:
        eps = jnp.asarray(eps, x.dtype)  # torch: 1 - eps is computed in the input's type
        lo = jnp.where(eps < 0, -jnp.inf, eps).astype(x.dtype)
        hi = jnp.where(eps < 0, jnp.inf, 1 - eps).astype(x.dtype)

    @jax.custom_jvp
    def f(x: Any, lo: Any, hi: Any) -> Any:
        z = x if lo is None else jnp.where(x < lo, lo, jnp.where(x > hi, hi, x))
        return jnp.log(z / (1 - z))

    @f.defjvp
    def f_jvp(primals: tuple, tangents: tuple) -> tuple:
        # torch: outside [eps, 1 - eps] the gradient is 0 (NaN outside [0, 1] without eps)
        (x, lo, hi), (dx, _, _) = primals, tangents
        coef = jnp.where((x == 0) | (x == 1), jnp.inf, 1 / (x * (1 - x)))
        if lo is None:
            coef = jnp.where((x < 0) | (x > 1), jnp.nan, coef)
        else:
            unclamped = jnp.isneginf(lo)
            outside = jnp.where(unclamped, (x < 0) | (x > 1), (x < lo) | (x > hi))
            coef = jnp.where(outside, jnp.where(unclamped, jnp.nan, 0), coef)
        return f(x, lo, hi), dx * coef.astype(x.dtype)

    return f(x, lo, hi)


@defop(inplace_in=("Tensor", "torch"), promote="float", namespaces=("torch", "Tensor", "special"), inplace=True, out=True)
def logit(input: TensorArg, eps: OptScalar = None) -> Any:
    return _logit_fn(input, eps)


def _rounding(name: str, f: Any, kernel: str, aliases: tuple = ()) -> Any:
    def body(input: TensorArg) -> Any:
        if _is_int_array(input):
            return input
        return f(input)

    body.__name__ = name
    return defop(name, inplace=True, out=True, dtypes="nocomplex", check=_no_bool(kernel), aliases=aliases,
                 inplace_in=("Tensor", "torch"))(body)  # fmt: skip


floor = _rounding("floor", jnp.floor, "floor_vml_cpu")
ceil = _rounding("ceil", jnp.ceil, "ceil_vml_cpu")
trunc = _rounding("trunc", jnp.trunc, "trunc_vml_cpu", aliases=("fix",))


def _frac_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if _integral(cdt):
        raise _not_implemented("frac_cpu", cdt)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, check=_frac_check)
def frac(input: TensorArg) -> Any:
    return input - jnp.trunc(input)


def _round_name(static: tuple, dyn: tuple) -> str:
    return "RoundBackward0" if dyn[1] == 0 else "RoundBackward1"


def _round_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    d = dyn[1]
    if not isinstance(d, int) or isinstance(d, bool):
        got = "Tensor, decimals=" + type(d).__name__
        raise TypeError(f"round() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, *, Tensor out = None)\n * (Tensor input, *, int decimals, Tensor out = None)\n")  # fmt: skip
    if not -(2**63) <= d < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if _integral(cdt) and (d != 0 or cdt is D.bool):
        raise _not_implemented("round_cpu" if d != 0 else "round_vml_cpu", cdt)


def _pow10(k: int) -> float:
    try:
        return 10.0**k  # C's pow(10, k), as torch's std::pow(10, decimals)
    except OverflowError:
        return math.inf


# 10**k for k = 0..309 (inf from 309): torch's power of ten, looked up by a traced |decimals|
_TEN_POWERS = np.array([_pow10(k) for k in range(310)], np.float64)


@defop(namespaces=("torch", "Tensor", "special"), inplace=True, out=True, grad_name=_round_name, dtypes="nocomplex",
       check=_round_check, bake=lambda d: d == 0, inplace_in=("Tensor", "torch"))  # fmt: skip
def round(input: TensorArg, *, decimals: ScalarOrStatic = 0) -> Any:
    """torch.round: half to even. With decimals (a traced int64; 0 is its own program), torch's
    ``nearbyint(x * 10**d) / 10**d`` (``nearbyint(x / 10**-d) * 10**-d`` for d < 0) in the op-math dtype
    (float for half and bfloat16), the power of ten computed in double and cast to it."""
    if _is_int_array(input):
        return input
    if isinstance(decimals, int) and decimals == 0:
        return jnp.round(input)
    dt = input.dtype
    op_dt = jnp.float32 if dt == jnp.float16 or dt == jnp.bfloat16 else dt
    k = jnp.clip(jnp.abs(decimals), 0, _TEN_POWERS.size - 1)
    # the barrier keeps XLA from turning the division into a multiplication by an (inexact) reciprocal
    scale = lax.optimization_barrier(jnp.asarray(_TEN_POWERS)[k].astype(op_dt))
    x = input.astype(op_dt)
    out = jnp.where(decimals > 0, jnp.round(x * scale) / scale, jnp.round(x / scale) * scale)
    return out.astype(dt)


# --- clamp ---------------------------------------------------------------------------------------------


def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    """torch's clamp; its gradient goes to x where lo <= x <= hi (bounds included), to lo where x < lo < hi,
    to hi where x > hi or hi < lo. torch: JAX's clip would split ties at the bounds."""
    ref = x
    if lo is not None:
        ref = jnp.maximum(ref, lo)  # NaN-propagating, as torch
    if hi is not None:
        ref = jnp.minimum(ref, hi)
    take_x = jnp.ones(x.shape, bool)
    if lo is not None:
        take_x = take_x & (x >= lo)
    if hi is not None:
        take_x = take_x & (x <= hi)
    out = lax.stop_gradient(ref)
    if hi is not None:
        take_hi = x > hi if lo is None else (x > hi) | (hi < lo)
        out = jnp.where(take_hi, hi, out)
    if lo is not None:
        take_lo = x < lo if hi is None else (x < lo) & (lo < hi)
        out = jnp.where(take_lo, lo, out)
    out = jnp.where(take_x, x, out)
    out = jnp.where(jnp.isnan(ref), lax.stop_gradient(ref), out) if not _is_int_array(ref) else out
    return jnp.broadcast_to(out, ref.shape).astype(ref.dtype)


def _clamp_name(static: tuple, dyn: tuple) -> str:
    return "ClampBackward0" if any(isinstance(a, Tensor) for a in dyn[1:]) else "ClampBackward1"


def _clamp_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if dyn[1] is None and dyn[2] is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


# torch.clamp/clip and their method and in-place forms are the fronts below (torch's overload choice), so the
# table gives the function only; Tensor.clamp, clip and the in-place forms are added at the end of this file.
@defop(namespaces=("torch",), inplace=True, inplace_in=(), out=True, grad_name=_clamp_name, check=_clamp_check,
       dtypes="nocomplex")  # fmt: skip
def clamp(input: TensorArg, min: OptTensorOrScalar = None, max: OptTensorOrScalar = None) -> Any:
    """torch.clamp: the result dtype promotes ``input`` with the bounds; NaN bounds give NaN."""
    return _clamp(input, min, max)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, dtypes="nocomplex", grad_name=_by_tensors("ClampMinBackward1", "", "ClampMinBackward0"))
def clamp_min(input: TensorArg, min: TensorOrScalar) -> Any:
    return _clamp(input, min, None)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, dtypes="nocomplex", grad_name=_by_tensors("ClampMaxBackward1", "", "ClampMaxBackward0"))
def clamp_max(input: TensorArg, max: TensorOrScalar) -> Any:
    return _clamp(input, None, max)


# --- interpolation and fused arithmetic ------------------------------------------------------------------


def _lerp_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    input, end, weight = dyn
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._dtype is not input._dtype:
            raise RuntimeError(f"expected dtype {D.c_type(input._dtype)} for `{name}` but got dtype {D.c_type(t._dtype)}")
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        kind = "tensor" if isinstance(weight, Tensor) else "scalar"
        raise _not_implemented(f"lerp_kernel_{kind}", input._dtype)


@defop(promote=None, inplace=True, out=True, saves=(), check=_lerp_check, scalar=("weight",),
       grad_name=lambda static, dyn: "LerpBackward1" if isinstance(dyn[2], Tensor) else "LerpBackward0")  # fmt: skip
def lerp(input: RawTensor, end: RawTensor, weight: TensorOrScalar) -> Any:
    """torch.lerp: ``input`` and ``end`` (and a tensor ``weight``) must share a floating dtype."""
    # torch's formula switches at |weight| = 0.5 for accuracy at both ends
    dt = input.dtype
    if dt in (jnp.float16, jnp.bfloat16):  # torch computes half types in float32, rounding once
        input, end, weight = input.astype(jnp.float32), end.astype(jnp.float32), jnp.asarray(weight, jnp.float32)
    diff = end - input
    weight = jnp.asarray(weight, input.dtype)  # a Python-number weight arrives as a double
    return jnp.where(jnp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight)).astype(dt)


@defop(inplace=True, out=True, check=_no_bool("addcmul_cpu_out"))
def addcmul(input: TensorArg, tensor1: TensorArg, tensor2: TensorArg, *, value: Scalar = 1) -> Any:
    return input + value * tensor1 * tensor2


def _addcdiv_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if _integral(dyn[1]._dtype) and _integral(dyn[2]._dtype):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )


@defop(inplace=True, out=True, check=_addcdiv_check)
def addcdiv(input: TensorArg, tensor1: TensorArg, tensor2: TensorArg, *, value: Scalar = 1) -> Any:
    return input + value * tensor1 / tensor2


@defop(promote="float", inplace=True, out=True, aliases=("arctan2",))
def atan2(input: TensorArg, other: TensorArg) -> Any:
    return jnp.arctan2(input, other)


@defop(inplace=True, out=True, dtypes="real_float")
def hypot(input: TensorArg, other: TensorArg) -> Any:
    return jnp.hypot(input, other)


@defop(out=True, dtypes="real_float")
def logaddexp(input: TensorArg, other: TensorArg) -> Any:
    return jnp.logaddexp(input, other)


@defop(out=True, dtypes="real_float")
def logaddexp2(input: TensorArg, other: TensorArg) -> Any:
    return jnp.logaddexp2(input, other)


@jax.custom_jvp
def _nextafter(x: Any, y: Any) -> Any:
    return jnp.nextafter(x, y)


# torch: the gradient passes to ``input`` where input != other, none to ``other`` (XLA's has no derivative)
_nextafter.defjvp(lambda p, t: (_nextafter(*p), t[0] * (p[0] != p[1]).astype(p[0].dtype) + 0 * t[1]))


@defop(inplace=True, out=True, dtypes="real_float")
def nextafter(input: TensorArg, other: TensorArg) -> Any:
    x, y = jnp.broadcast_arrays(input, other)
    return _nextafter(x, y)


def _gcd_check(name: str) -> Callable:
    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        if not _integral(cdt) or cdt is D.bool:
            raise _not_implemented(f"{name}_cpu", cdt)

    return check


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, differentiable=False, check=_gcd_check("gcd"))
def gcd(input: TensorArg, other: TensorArg) -> Any:
    return jnp.gcd(input, other)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True, differentiable=False, check=_gcd_check("lcm"))
def lcm(input: TensorArg, other: TensorArg) -> Any:
    return jnp.lcm(input, other)


def _heaviside_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if dyn[0]._dtype is not dyn[1]._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside(x: Any, values: Any) -> Any:
    return jnp.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype)


@defop(promote=None, inplace=True, out=True, check=_heaviside_check, grad_name="NotImplemented")
def heaviside(input: RawTensor, values: RawTensor) -> Any:
    return _no_derivative("heaviside")(_heaviside)(input, values)


def _extremum(f: Callable, x_loses: Callable) -> Callable:
    """torch's maximum/minimum: ties split the gradient evenly; where a NaN decides, both sides get it all
    (JAX's NaN case differs)."""

    @jax.custom_jvp
    def g(x: Any, y: Any) -> Any:
        return f(x, y)

    @g.defjvp
    def g_jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (dx, dy) = primals, tangents
        share = jnp.where(x == y, 0.5, 1.0).astype(x.dtype)
        return g(x, y), dx * jnp.where(x_loses(x, y), 0, share) + dy * jnp.where(x_loses(y, x), 0, share)

    return g


_maximum = _extremum(jnp.maximum, lambda a, b: a < b)
_minimum = _extremum(jnp.minimum, lambda a, b: a > b)


@defop(out=True, dtypes="nocomplex")
def maximum(input: TensorArg, other: TensorArg) -> Any:
    return _maximum(*jnp.broadcast_arrays(input, other))


@defop(out=True, dtypes="nocomplex")
def minimum(input: TensorArg, other: TensorArg) -> Any:
    return _minimum(*jnp.broadcast_arrays(input, other))


@defop(out=True, dtypes="nocomplex")
def fmax(input: TensorArg, other: TensorArg) -> Any:
    # torch: ties send the whole gradient to ``input`` (jnp.fmax would split it)
    return jnp.where((input >= other) | jnp.isnan(other), input, other)


@defop(out=True, dtypes="nocomplex")
def fmin(input: TensorArg, other: TensorArg) -> Any:
    # torch: ties send the whole gradient to ``input``
    return jnp.where((input <= other) | jnp.isnan(other), input, other)


@defop(promote="float", inplace=True, out=True, grad_name=_by_tensors("CopysignBackward0", "", "CopysignBackward1"))
def copysign(input: TensorArg, other: TensorOrScalar) -> Any:
    x, y = jnp.broadcast_arrays(input, other)
    return _copysign(x, y)


@jax.custom_jvp
def _copysign(x: Any, y: Any) -> Any:
    return jnp.copysign(x, y)


@_copysign.defjvp
def _copysign_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dx = result / x, 0 where x == 0 (JAX's copysign gives +-1 there); nothing flows to y
    (x, y), (dx, _) = primals, tangents
    r = _copysign(x, y)
    return r, dx * jnp.where(x == 0, 0, r / jnp.where(x == 0, 1, x))


@jax.custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    # torch: NaN when y is NaN even if x == 0
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0, x * jnp.log(y))).astype(x.dtype)


@_xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dx is 0 where x == 0 and y <= 0 (log(y) is NaN or -inf there)
    (x, y), (dx, dy) = primals, tangents
    gx = jnp.where((x == 0) & (y <= 0), 0, jnp.log(y))
    return _xlogy(x, y), (dx * gx + dy * x / y).astype(x.dtype)


@defop(inplace_in=("Tensor", "torch"), promote="float", namespaces=("torch", "Tensor", "special"), inplace=True, out=True,
       grad_name=_by_tensors("XlogyBackward0", "XlogyBackward1", "XlogyBackward2"))  # fmt: skip
def xlogy(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    x, y = jnp.broadcast_arrays(input, other)
    return _xlogy(x, y)


@defop(inplace_in=("Tensor", "torch"), inplace=True, out=True)
def nan_to_num(input: TensorArg, nan: OptScalar = 0.0, posinf: OptScalar = None, neginf: OptScalar = None) -> Any:
    """torch.nan_to_num: infinities default to the dtype's largest finite values."""
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        return jax.lax.complex(_nan_to_num(input.real, nan, posinf, neginf), _nan_to_num(input.imag, nan, posinf, neginf))
    if not jnp.issubdtype(input.dtype, jnp.floating):
        return input
    return _nan_to_num(input, nan, posinf, neginf)


def _nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    """Each element is tested once, as torch does (jnp.nan_to_num would turn a NaN replaced by a value that
    overflows to inf into posinf's value)."""
    info = jnp.finfo(x.dtype)
    nan_v = jnp.asarray(0.0 if nan is None else nan, x.dtype)
    pos_v = jnp.asarray(info.max if posinf is None else posinf, x.dtype)
    neg_v = jnp.asarray(info.min if neginf is None else neginf, x.dtype)
    return jnp.where(jnp.isnan(x), nan_v, jnp.where(x == jnp.inf, pos_v, jnp.where(x == -jnp.inf, neg_v, x)))


# --- comparison and logic (results are bool) -------------------------------------------------------


def _cmp(name: str, f: Any, aliases: tuple = ()) -> Any:
    def body(input: TensorArg, other: TensorOrScalar) -> Any:
        return f(input, other)

    body.__name__ = name
    wrapper = defop(name, inplace=True, out=True, differentiable=False, aliases=aliases)(body)
    OPS[name].zero_grad = name.capitalize()  # torch: eq_ of a tensor that requires grad records EqBackward0
    return wrapper


eq = _cmp("eq", jnp.equal)
ne = _cmp("ne", jnp.not_equal, ("not_equal",))
lt = _cmp("lt", jnp.less, ("less",))
le = _cmp("le", jnp.less_equal, ("less_equal",))
gt = _cmp("gt", jnp.greater, ("greater",))
ge = _cmp("ge", jnp.greater_equal, ("greater_equal",))


def _logical(name: str, f: Any) -> Any:
    def body(input: RawTensor, other: RawTensor) -> Any:
        return f(input.astype(jnp.bool_), other.astype(jnp.bool_))

    body.__name__ = name
    return defop(name, promote=None, inplace=True, out=True, differentiable=False)(body)


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)


@defop(promote=None, inplace=True, out=True, differentiable=False)
def logical_not(input: RawTensor) -> Any:
    return input == 0


def _bitwise(name: str, f: Any, check: Callable | None = None) -> Any:
    def body(input: TensorOrScalar, other: TensorOrScalar) -> Any:
        return f(input, other)

    body.__name__ = name
    dtypes = None if check else "int"
    return defop(name, inplace=True, out=True, differentiable=False, dtypes=dtypes, check=check)(body)


def _shift_check(kernel: str) -> Callable:
    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        if not _integral(cdt) or cdt is D.bool:
            raise _not_implemented(kernel, cdt)

    return check


bitwise_and = _bitwise("bitwise_and", jnp.bitwise_and)
bitwise_or = _bitwise("bitwise_or", jnp.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", jnp.bitwise_xor)
# torch: shifts by a negative amount or by >= the bit width give 0 (or -1 for negative right shifts),
# which is what XLA's shifts do.
bitwise_left_shift = _bitwise("bitwise_left_shift", jnp.left_shift, _shift_check("lshift_cpu"))
bitwise_right_shift = _bitwise("bitwise_right_shift", jnp.right_shift, _shift_check("rshift_cpu"))


@defop(inplace=True, out=True, differentiable=False, dtypes="int")
def bitwise_not(input: TensorArg) -> Any:
    return jnp.invert(input) if input.dtype != jnp.bool_ else ~input


def _isx(name: str, f: Any, int_value: bool) -> Any:
    def body(input: RawTensor) -> Any:
        if _is_int_array(input):
            return jnp.full(input.shape, int_value)
        return f(input)

    body.__name__ = name
    return defop(name, promote=None, differentiable=False, out=name in ("isposinf", "isneginf"))(body)


isnan = _isx("isnan", jnp.isnan, False)
isinf = _isx("isinf", jnp.isinf, False)
isfinite = _isx("isfinite", jnp.isfinite, True)
isposinf = _isx("isposinf", jnp.isposinf, False)
isneginf = _isx("isneginf", jnp.isneginf, False)


@defop(promote=None, differentiable=False)
def isreal(input: RawTensor) -> Any:
    return jnp.isreal(input)


@defop(promote=None, differentiable=False)
def _isclose(input: RawTensor, other: RawTensor, rtol: Scalar, atol: Scalar, equal_nan: bool, fdt: Any,
             exact: bool) -> Any:  # fmt: skip
    """torch's formula: equal, or finite |input - other| <= atol + |rtol * other|; bool compares as ``fdt``.
    ``exact``: both tolerances are 0, where torch compares for equality only."""
    close = input == other
    floating = jnp.issubdtype(input.dtype, jnp.inexact)
    if equal_nan and floating:
        close = close | (jnp.isnan(input) & jnp.isnan(other))
    if exact:
        return close
    if input.dtype == jnp.bool_:
        input, other = input.astype(fdt), other.astype(fdt)
        floating = True
    err_dt = input.dtype if floating else fdt
    rtol, atol = jnp.asarray(rtol, err_dt), jnp.asarray(atol, err_dt)  # as torch's Python scalars: weakly typed
    allowed = atol + jnp.abs(rtol * other.astype(err_dt))
    actual = jnp.abs(input - other).astype(err_dt)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


@expose("torch")
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """torch.isclose: both tensors must have the same dtype."""
    if isinstance(other, Tensor) and isinstance(input, Tensor) and input._dtype is not other._dtype:
        raise RuntimeError(f"{D.cpp_name(input._dtype)} did not match {D.cpp_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {float(rtol):g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {float(atol):g}")
    rtol, atol = float(rtol), float(atol)
    return _isclose(input, other, rtol, atol, bool(equal_nan), D.get_default_dtype().np, rtol == 0 and atol == 0)


@expose("torch")
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@expose("torch")
def equal(input: Tensor, other: Tensor) -> bool:
    """torch.equal: same shape and same values (after promotion)."""
    if input.shape != other.shape:
        return False
    return bool(eq(input, other).all())


# --- selection ----------------------------------------------------------------------------------


@defop(promote="default", method=False, out=True, saves=("condition",), grad_name="WhereBackward0", nondiff=("condition",))
def _where(condition: RawTensor, input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jnp.where(condition.astype(bool), input, other)


@expose("torch")
def where(condition: Tensor, input: Any = None, other: Any = None, *, out: Tensor | None = None) -> Any:
    """torch.where(condition, input, other), or torch.where(condition) == nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        from .indexing_ops import nonzero

        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition._dtype not in (D.bool, D.uint8):
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{D.cpp_name(condition._dtype)}"
        )
    return _where(condition, input, other, out=out)


def _mf_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    mask, value = dyn[1], dyn[2]
    if mask._dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {D.c_type(mask._dtype)}")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )


@defop(promote=None, inplace=True, check=_mf_check, saves=("mask",), nondiff=("mask",), scalar=("value",),
       grad_name=lambda static, dyn: "MaskedFillBackward1" if isinstance(dyn[2], Tensor) else "MaskedFillBackward0")  # fmt: skip
def masked_fill(input: RawTensor, mask: RawTensor, value: TensorOrScalar) -> Any:
    """torch.masked_fill: ``value`` (a number or 0-dim tensor) is cast to ``input``'s dtype."""
    v = jnp.asarray(value)
    if _is_int_array(input) and jnp.issubdtype(v.dtype, jnp.inexact) and input.dtype != jnp.bool_:
        v = jnp.trunc(v)
    return jnp.where(mask, v.astype(input.dtype), input)


# --- in-place forms with torch quirks -------------------------------------------------------------------


def _inplace_without_derivative(name: str, f: Callable) -> Callable:
    """torch has no derivative for the in-place asinh_/acosh_/atanh_: they record a node that raises."""
    kernel = _no_derivative(
        name, NotImplementedError, f"the derivative for 'inplace version of {name}' is not implemented."
    )(f)

    def body(input: TensorArg) -> Any:
        return kernel(input)

    body.__name__ = f"_{name}_inplace"
    op = defop(body.__name__, promote="float", method=False, grad_name=f"{_title(name)}Backward1")(body)
    return inplace_variant(op, name + "_")


def _title(name: str) -> str:
    return name[:1].upper() + name[1:]


def _clamp_inplace(fn: Callable, name: str) -> Callable:
    """clamp_ and friends: torch names C++ types ("long int") when a scalar bound can't be cast in."""

    def checked(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        bounds = [a for a in (*args, *kwargs.values()) if a is not None]
        if all(not isinstance(b, Tensor) for b in bounds):
            dt = D.result_type_from((self._dtype,) if self._shape else (), () if self._shape else (self._dtype,),
                                    tuple(D.scalar_dtype(b) for b in bounds))  # fmt: skip
            if not D.can_cast(dt, self._dtype):
                raise RuntimeError(
                    f"result type {D.cpp_name(dt)} can't be cast to the desired output type {D.c_type(self._dtype)}"
                )
        return fn(self, *args, **kwargs)

    return inplace_variant(checked, name)


asinh_ = _inplace_without_derivative("asinh", jnp.arcsinh)
acosh_ = _inplace_without_derivative("acosh", jnp.arccosh)
atanh_ = _inplace_without_derivative("atanh", jnp.arctanh)
_clamp_inplace_fn = _clamp_inplace(clamp, "clamp_")
clamp_min_ = _clamp_inplace(clamp_min, "clamp_min_")
clamp_max_ = _clamp_inplace(clamp_max, "clamp_max_")


# --- clamp's overloads -------------------------------------------------------------------------------------
# torch's schema has clamp(Tensor, Tensor? min, Tensor? max) and clamp(Tensor, Scalar? min, Scalar? max), and its
# argument parser picks one for both bounds: a tensor bound beside a number is taken as a number when it is 0-d and
# does not require grad (ClampBackward1, no edge for it), and is a TypeError otherwise, whose text lists the
# overloads of the form called.

_CLAMP_OVERLOADS = {
    "function": ("(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
                 "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)"),
    "inplace_function": ("(Tensor input, Tensor min = None, Tensor max = None)",
                         "(Tensor input, Number min = None, Number max = None)"),
    "method": ("(Tensor min = None, Tensor max = None)", "(Number min = None, Number max = None)"),
}  # fmt: skip


def _py_typename(v: Any) -> str:
    t = type(v)
    return t.__name__ if t.__module__ in ("builtins",) or isinstance(v, Tensor) else f"{t.__module__}.{t.__name__}"


def _clamp_overload_error(name: str, form: str, args: tuple, kwargs: dict) -> TypeError:
    """torch's argument parser's error (torch/csrc/utils/invalid_arguments.cpp); keywords are listed last
    first, as its map of them iterates."""
    kinds = [_py_typename(a) for a in args]
    keywords = list(reversed(kwargs))
    named = [f"{k}={_py_typename(kwargs[k])}" for k in keywords]
    got = ", ".join(kinds + named) if kinds else ", ".join(named) + ", "
    msg = f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
    for option in _CLAMP_OVERLOADS["method" if form.endswith("method") else form]:
        msg += f" * {option}\n"
        if form == "function":
            continue  # (torch gives no reasons for the overloads with out=)
        if kwargs:
            msg += f"      didn't match because some of the keywords were incorrect: {', '.join(keywords)}\n"
        else:
            marks = [k if i == 0 and form == "inplace_function" else f"!{k}!" for i, k in enumerate(kinds)]
            msg += f"      didn't match because some of the arguments have invalid types: ({', '.join(marks)})\n"
    return TypeError(msg)


def _clamp_front(fn: Callable, name: str, form: str) -> Callable:
    """``fn`` (clamp, out of place or in place) called with the bounds of one of torch's overloads."""

    def front(*args: Any, **kwargs: Any) -> Any:
        first = 0 if "input" in kwargs and not form.endswith("method") else 1
        slots = [first + i if len(args) > first + i else key for i, key in enumerate(("min", "max"))]
        values = [args[s] if isinstance(s, int) else kwargs.get(s) for s in slots]
        if any(isinstance(v, Tensor) for v in values) and any(v is not None and not isinstance(v, Tensor)
                                                             for v in values):  # fmt: skip
            if any(isinstance(v, Tensor) and (v.dim() != 0 or v.requires_grad) for v in values):
                shown = args[1:] if form.endswith("method") else args
                raise _clamp_overload_error(name, form, shown, kwargs)
            args, kwargs = list(args), dict(kwargs)
            for s, v in zip(slots, values):
                if isinstance(v, Tensor):
                    if isinstance(s, int):
                        args[s] = v.item()
                    else:
                        kwargs[s] = v.item()
        return fn(*args, **kwargs)

    front.__name__ = front.__qualname__ = name
    front.__doc__ = fn.__doc__
    front.__signature__ = inspect.signature(fn)
    front._op = OPS["clamp"]
    front.__wrapped__ = OPS["clamp"].fn  # ("go to definition" lands on the spec entry)
    return front


_clamp_op = OPS["clamp"]
_clamp_table = _clamp_op.wrapper
clamp = _clamp_op.wrapper = _clamp_front(_clamp_table, "clamp", "function")
clamp.__module__ = "torchlike"
clip = expose("torch", "clip")(_clamp_front(_clamp_table, "clip", "function"))
clamp_ = _clamp_front(_clamp_inplace_fn, "clamp_", "method")
clip_ = _clamp_front(_clamp_inplace_fn, "clip_", "method")
expose("torch", "clamp_")(_clamp_front(_clamp_inplace_fn, "clamp_", "inplace_function"))
expose("torch", "clip_")(_clamp_front(_clamp_inplace_fn, "clip_", "inplace_function"))
_clamp_method = _clamp_front(_clamp_table, "clamp", "method")
_clip_method = _clamp_front(_clamp_table, "clip", "method")

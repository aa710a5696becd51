"""Pointwise ops. Each body is the JAX function; the table adds promotion, methods, in-place, out=."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .._core import dtype as D
from .registry import RawTensor, Scalar, TensorArg, TensorOrScalar, TensorOrStatic, defop

__all__ = ["where", "allclose", "equal", "clamp_min", "clamp_max"]

# --- checks that torch makes before computing ------------------------------------------------------


def _alpha_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    alpha = dyn[-1]
    if not (cdt.is_floating_point or cdt.is_complex) and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if cdt is D.bool and isinstance(alpha, int) and not isinstance(alpha, bool) and alpha not in (0, 1):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _sub_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    from .._core.tensor import Tensor

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


def _pow_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    e = dyn[1]
    if not (cdt.is_floating_point or cdt.is_complex) and isinstance(e, int) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


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


def _div_promote(static: tuple) -> str:
    return "float" if static[0] is None else "default"


def _div_name(static: tuple, dyn: tuple) -> str:
    return "DivBackward0" if static[0] is None else "DivBackward3"


def _int_div_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if static and static[0] not in (None, "trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + str(static[0]) + "'"
        )


@defop(promote=_div_promote, inplace=True, out=True, grad_name=_div_name, check=_int_div_check,
       aliases=("divide", "true_divide"), saves=(("input", "other"), "other"))  # fmt: skip
def div(input: TensorOrScalar, other: TensorOrScalar, *, rounding_mode: str | None = None) -> Any:
    """torch.div; integer division by zero is not checked (JAX returns an unspecified value)."""
    if rounding_mode is None:
        return input / other
    if rounding_mode == "trunc":
        if jnp.issubdtype(input.dtype, jnp.integer):
            return lax.div(input, other)
        return jnp.trunc(input / other)
    return jnp.floor_divide(input, other)


@defop(inplace=True, out=True, differentiable=False, dtypes="nocomplex")
def floor_divide(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jnp.floor_divide(input, other)


@defop(inplace=True, out=True, dtypes="nocomplex")
def remainder(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jnp.remainder(input, other)


@defop(inplace=True, out=True, dtypes="nocomplex")
def fmod(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jnp.fmod(input, other)


def _pow_name(static: tuple, dyn: tuple) -> str:
    from .._core.tensor import Tensor

    if not isinstance(dyn[0], Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(dyn[1], Tensor) else "PowBackward0"


def _pow(x: Any, e: Any) -> Any:
    # torch: scalar exponents 2, 3, 0.5, -0.5, -1, -2 use exact special kernels (x*x, sqrt, ...)
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        if e == 0.5:
            return jnp.sqrt(x)
        if e == -0.5:
            return lax.rsqrt(x)
        if float(e).is_integer() and abs(e) <= 3 and not jnp.issubdtype(x.dtype, jnp.integer):
            return lax.integer_pow(x, int(e))
        if isinstance(e, int) and jnp.issubdtype(x.dtype, jnp.integer) and e >= 0:
            return lax.integer_pow(x, e)
    return jnp.power(x, e)


@defop(inplace=True, out=True, grad_name=_pow_name, check=_pow_check)
def pow(input: TensorOrScalar, exponent: TensorOrStatic) -> Any:
    return _pow(input, exponent)


@defop(promote="float", inplace=True, out=True)
def float_power(input: TensorOrScalar, exponent: TensorOrScalar) -> Any:
    return jnp.power(input.astype(_wide(input.dtype)), exponent.astype(_wide(exponent.dtype)))


def _wide(dt: Any) -> Any:
    return jnp.complex128 if jnp.issubdtype(dt, jnp.complexfloating) else jnp.float64


@defop(inplace=True, out=True, check=_neg_check, aliases=("negative",), saves=())
def neg(input: TensorArg) -> Any:
    return -input


@defop(inplace=True, out=True, aliases=("absolute",))
def abs(input: TensorArg) -> Any:
    return jnp.abs(input) if input.dtype != jnp.bool_ else input


@defop(inplace=True, out=True, dtypes="nocomplex")
def sign(input: TensorArg) -> Any:
    return jnp.sign(input) if input.dtype != jnp.bool_ else input


@defop(inplace=True, out=True)
def sgn(input: TensorArg) -> Any:
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        a = jnp.abs(input)
        return jnp.where(a == 0, 0, input / jnp.where(a == 0, 1, a)).astype(input.dtype)
    return jnp.sign(input) if input.dtype != jnp.bool_ else input


@defop(promote="float", inplace=True, out=True)
def reciprocal(input: TensorArg) -> Any:
    return 1 / input


@defop(inplace=True, out=True, grad_name="PowBackward0")
def square(input: TensorArg) -> Any:
    return input * input if input.dtype != jnp.bool_ else input.astype(jnp.int64)


def _unary_float(name: str, f: Any, **kw: Any) -> Any:
    def body(input: TensorArg) -> Any:
        return f(input)

    body.__name__ = name
    body.__doc__ = f"torch.{name}"
    return defop(name, promote="float", inplace=True, out=True, **kw)(body)


sqrt = _unary_float("sqrt", jnp.sqrt)
rsqrt = _unary_float("rsqrt", lax.rsqrt)
exp = _unary_float("exp", jnp.exp, saves=("result",))
exp2 = _unary_float("exp2", jnp.exp2)
expm1 = _unary_float("expm1", jnp.expm1)
log = _unary_float("log", jnp.log)
log2 = _unary_float("log2", jnp.log2)
log10 = _unary_float("log10", jnp.log10)
log1p = _unary_float("log1p", jnp.log1p)
sin = _unary_float("sin", jnp.sin)
cos = _unary_float("cos", jnp.cos)
tan = _unary_float("tan", jnp.tan)
asin = _unary_float("asin", jnp.arcsin, aliases=("arcsin",))
acos = _unary_float("acos", jnp.arccos, aliases=("arccos",))
atan = _unary_float("atan", jnp.arctan, aliases=("arctan",))
sinh = _unary_float("sinh", jnp.sinh)
cosh = _unary_float("cosh", jnp.cosh)
tanh = _unary_float("tanh", jnp.tanh, saves=("result",))
asinh = _unary_float("asinh", jnp.arcsinh, aliases=("arcsinh",))
acosh = _unary_float("acosh", jnp.arccosh, aliases=("arccosh",))
atanh = _unary_float("atanh", jnp.arctanh, aliases=("arctanh",))
sigmoid = _unary_float("sigmoid", jax.nn.sigmoid, saves=("result",))
erf = _unary_float("erf", jax.scipy.special.erf)
erfc = _unary_float("erfc", jax.scipy.special.erfc)
erfinv = _unary_float("erfinv", jax.scipy.special.erfinv)
lgamma = _unary_float("lgamma", jax.scipy.special.gammaln)
digamma = _unary_float("digamma", jax.scipy.special.digamma)
deg2rad = _unary_float("deg2rad", jnp.deg2rad)
rad2deg = _unary_float("rad2deg", jnp.rad2deg)
sinc = _unary_float("sinc", jnp.sinc)
i0 = _unary_float("i0", jax.scipy.special.i0)


@defop(promote="float", inplace=True, out=True)
def logit(input: TensorArg, eps: float | None = None) -> Any:
    if eps is not None:
        input = jnp.clip(input, eps, 1 - eps)
    return jnp.log(input / (1 - input))


def _rounding(name: str, f: Any) -> Any:
    def body(input: TensorArg) -> Any:
        if jnp.issubdtype(input.dtype, jnp.integer) or input.dtype == jnp.bool_:
            return input
        return f(input)

    body.__name__ = name
    return defop(name, inplace=True, out=True, dtypes="nocomplex")(body)


floor = _rounding("floor", jnp.floor)
ceil = _rounding("ceil", jnp.ceil)
trunc = _rounding("trunc", jnp.trunc)
fix = _rounding("fix", jnp.trunc)
frac = _rounding("frac", lambda x: x - jnp.trunc(x))


def _round_name(static: tuple, dyn: tuple) -> str:
    return "RoundBackward0" if static[0] == 0 else "RoundBackward1"


@defop(inplace=True, out=True, grad_name=_round_name, dtypes="nocomplex")
def round(input: TensorArg, *, decimals: int = 0) -> Any:
    """torch.round: half to even; with decimals, torch scales by 10**decimals first."""
    if jnp.issubdtype(input.dtype, jnp.integer):
        return input
    if decimals == 0:
        return jnp.round(input)
    scale = 10.0**decimals
    if decimals > 0:
        return jnp.round(input * scale) / scale
    return jnp.round(input / 10.0 ** (-decimals)) * 10.0 ** (-decimals)


def _clamp_name(static: tuple, dyn: tuple) -> str:
    from .._core.tensor import Tensor

    return "ClampBackward0" if any(isinstance(a, Tensor) for a in dyn[1:]) else "ClampBackward1"


def _clamp_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if dyn[1] is None and dyn[2] is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


@defop(inplace=True, out=True, grad_name=_clamp_name, check=_clamp_check, aliases=("clip",))
def clamp(input: TensorArg, min: TensorOrScalar = None, max: TensorOrScalar = None) -> Any:
    """torch.clamp. torch: the gradient passes where min <= x <= max, including at the bounds
    (``jnp.clip`` would split ties 0.5/0.5)."""
    out = input
    if min is not None:
        out = jnp.where(out < min, min, out)
    if max is not None:
        out = jnp.where(out > max, max, out)
    return out.astype(input.dtype) if min is None or max is None else out


def clamp_min(input: Any, min: Any) -> Any:
    return clamp(input, min=min)


def clamp_max(input: Any, max: Any) -> Any:
    return clamp(input, max=max)


@defop(inplace=True, out=True, saves=())
def lerp(input: TensorArg, end: TensorArg, weight: TensorOrScalar) -> Any:
    # torch's formula switches at weight 0.5 for accuracy at both ends
    return jnp.where(jnp.abs(weight) < 0.5, input + weight * (end - input), end - (end - input) * (1 - weight))


@defop(inplace=True, out=True)
def addcmul(input: TensorArg, tensor1: TensorArg, tensor2: TensorArg, *, value: Scalar = 1) -> Any:
    return input + value * tensor1 * tensor2


@defop(inplace=True, out=True)
def addcdiv(input: TensorArg, tensor1: TensorArg, tensor2: TensorArg, *, value: Scalar = 1) -> Any:
    return input + value * tensor1 / tensor2


@defop(promote="float", inplace=True, out=True)
def atan2(input: TensorArg, other: TensorArg) -> Any:
    return jnp.arctan2(input, other)


@defop(promote="float", inplace=True, out=True)
def hypot(input: TensorArg, other: TensorArg) -> Any:
    return jnp.hypot(input, other)


@defop(inplace=False, out=True, dtypes="nocomplex")
def maximum(input: TensorArg, other: TensorArg) -> Any:
    return jnp.maximum(input, other)


@defop(inplace=False, out=True, dtypes="nocomplex")
def minimum(input: TensorArg, other: TensorArg) -> Any:
    return jnp.minimum(input, other)


@defop(inplace=False, out=True, dtypes="nocomplex")
def fmax(input: TensorArg, other: TensorArg) -> Any:
    return jnp.fmax(input, other)


@defop(inplace=False, out=True, dtypes="nocomplex")
def fmin(input: TensorArg, other: TensorArg) -> Any:
    return jnp.fmin(input, other)


@defop(promote="float", inplace=True, out=True)
def copysign(input: TensorArg, other: TensorOrScalar) -> Any:
    return jnp.copysign(input, other)


@defop(promote="float", inplace=True, out=True)
def xlogy(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jax.scipy.special.xlogy(input, other)


@defop(inplace=True, out=True)
def nan_to_num(input: TensorArg, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Any:
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# --- comparison and logic (results are bool) -------------------------------------------------------


def _cmp(name: str, f: Any, aliases: tuple = ()) -> Any:
    def body(input: TensorArg, other: TensorOrScalar) -> Any:
        return f(input, other)

    body.__name__ = name
    return defop(name, inplace=True, out=True, differentiable=False, aliases=aliases)(body)


eq = _cmp("eq", jnp.equal)
ne = _cmp("ne", jnp.not_equal, ("not_equal",))
lt = _cmp("lt", jnp.less, ("less",))
le = _cmp("le", jnp.less_equal, ("less_equal",))
gt = _cmp("gt", jnp.greater, ("greater",))
ge = _cmp("ge", jnp.greater_equal, ("greater_equal",))


def _logical(name: str, f: Any) -> Any:
    def body(input: RawTensor, other: RawTensor) -> Any:
        return f(input != 0, other != 0)

    body.__name__ = name
    return defop(name, promote=None, inplace=True, out=True, differentiable=False)(body)


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)


@defop(promote=None, inplace=True, out=True, differentiable=False)
def logical_not(input: RawTensor) -> Any:
    return input == 0


def _bitwise(name: str, f: Any) -> Any:
    def body(input: TensorOrScalar, other: TensorOrScalar) -> Any:
        return f(input, other)

    body.__name__ = name
    return defop(name, inplace=True, out=True, differentiable=False, dtypes="int")(body)


bitwise_and = _bitwise("bitwise_and", jnp.bitwise_and)
bitwise_or = _bitwise("bitwise_or", jnp.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", jnp.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", jnp.left_shift)
bitwise_right_shift = _bitwise("bitwise_right_shift", jnp.right_shift)


@defop(inplace=True, out=True, differentiable=False, dtypes="int")
def bitwise_not(input: TensorArg) -> Any:
    return jnp.invert(input) if input.dtype != jnp.bool_ else ~input


def _isx(name: str, f: Any) -> Any:
    def body(input: RawTensor) -> Any:
        if jnp.issubdtype(input.dtype, jnp.integer) or input.dtype == jnp.bool_:
            return jnp.full(input.shape, name == "isfinite")
        return f(input)

    body.__name__ = name
    return defop(name, promote=None, differentiable=False)(body)


isnan = _isx("isnan", jnp.isnan)
isinf = _isx("isinf", jnp.isinf)
isfinite = _isx("isfinite", jnp.isfinite)
isposinf = _isx("isposinf", jnp.isposinf)
isneginf = _isx("isneginf", jnp.isneginf)


@defop(promote=None, differentiable=False)
def isreal(input: RawTensor) -> Any:
    return jnp.isreal(input)


@defop(differentiable=False)
def isclose(input: TensorArg, other: TensorArg, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    return jnp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Any, other: Any) -> bool:
    if input.shape != other.shape:
        return False
    return bool(eq(input, other).all())


# --- selection ----------------------------------------------------------------------------------


@defop(promote="default", method=False, out=True, saves=("condition",))
def _where(condition: RawTensor, input: TensorOrScalar, other: TensorOrScalar) -> Any:
    return jnp.where(condition.astype(bool), input, other)


def where(condition: Any, input: Any = None, other: Any = None, *, out: Any = None) -> Any:
    """torch.where(condition, input, other) or torch.where(condition) (== nonzero(as_tuple=True))."""
    if input is None and other is None:
        from .indexing_ops import nonzero

        return nonzero(condition, as_tuple=True)
    if condition._dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {D.cpp_name(condition._dtype)}")
    return _where(condition, input, other, out=out)


_where._op.grad_name = "WhereBackward0"


def _mf_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    mask = dyn[1]
    if mask._dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask._dtype.name}")


@defop(promote=None, inplace=True, check=_mf_check, saves=("mask",))
def masked_fill(input: RawTensor, mask: RawTensor, value: TensorOrScalar) -> Any:
    v = jnp.asarray(value).astype(input.dtype)
    return jnp.where(mask, v, input)

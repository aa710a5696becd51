"""Activation functions and softmax: the JAX bodies behind torch.nn.functional's activations.

Names torch has at top level (relu, selu, celu, prelu, rrelu, threshold, hardshrink, softmax,
log_softmax) are public table ops; the rest (torch._C._nn.*) are private ops that
torchlike.nn.functional wraps. Gradients at kinks follow torch (e.g. relu'(0) = 0), which the
``jnp.where`` forms below give.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._core import buckets
from ..._core import dtype as D
from ..._core.tensor import Tensor
from .._common import dims, half_from_result
from ..registry import RawTensor, Scalar, TensorArg, defop, expose


def _float_kernel(kernel: str) -> Any:
    """A ``check=`` raising torch's error for integral inputs of a float-only CPU kernel."""

    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        if cdt is not None and not (cdt.is_floating_point or cdt.is_complex):
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(cdt)}'")

    return check


def _wrap_dim(dim: int, ndim: int) -> int:
    wrapped = dims(dim, ndim)
    return wrapped[0] if wrapped else 0  # a 0-dim tensor accepts dim 0 and -1


@defop(namespaces=("torch", "Tensor", "nn.functional"), inplace=True, inplace_in=("torch", "Tensor", "nn.functional"),
       inplace_arg=True, saves=("result",))  # fmt: skip
def relu(input: TensorArg) -> Any:
    # torch: NaN propagates (relu is clamp_min(0)); the gradient at 0 is 0
    return jnp.where(input <= 0, jnp.zeros_like(input), input)


def _hardtanh_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    if dyn[1] > dyn[2]:
        raise ValueError("min_val cannot be greater than max_val")


def _clip_open(x: Any, lo: Any, hi: Any) -> Any:
    # torch: the gradient is 1 strictly inside (lo, hi) and 0 at and beyond the bounds; NaN propagates
    return jnp.where(x <= lo, jnp.asarray(lo, x.dtype), jnp.where(x >= hi, jnp.asarray(hi, x.dtype), x))


@defop(namespaces=("nn.functional",), inplace=True, inplace_in=("nn.functional",), inplace_arg=True,
       check=_hardtanh_check)  # fmt: skip
def hardtanh(input: TensorArg, min_val: Scalar = -1.0, max_val: Scalar = 1.0) -> Any:
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"hardtanh_backward_cpu\" not implemented for 'Bool'")
    return _clip_open(input, min_val, max_val)


@defop(namespaces=("nn.functional",), inplace=True, inplace_in=("nn.functional",), inplace_arg=True,
       check=_float_kernel("leaky_relu_cpu"), inplace_grad_name="LeakyReluBackward1", inplace_saves=("result",))  # fmt: skip
def leaky_relu(input: TensorArg, negative_slope: Scalar = 0.01) -> Any:
    return jnp.where(input > 0, input, input * negative_slope)


def _elu_body(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    neg = jnp.expm1(jnp.where(x > 0, jnp.zeros_like(x), x) * input_scale) * (alpha * scale)
    return jnp.where(x > 0, x * jnp.asarray(scale, x.dtype), neg.astype(x.dtype))


@defop(namespaces=("nn.functional",), inplace=True, inplace_in=("nn.functional",), inplace_arg=True,
       check=_float_kernel("elu_cpu"), inplace_grad_name="EluBackward1", inplace_saves=("result",))  # fmt: skip
def elu(input: TensorArg, alpha: Scalar = 1.0) -> Any:
    return _elu_body(input, alpha, 1.0, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@defop(namespaces=("torch", "nn.functional"), inplace=True, inplace_in=("torch", "nn.functional"), inplace_arg=True,
       grad_name="EluBackward0", check=_float_kernel("elu_cpu"), inplace_grad_name="EluBackward1",
       inplace_saves=("result",))  # fmt: skip
def selu(input: TensorArg) -> Any:
    return _elu_body(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def _celu_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _float_kernel("elu_cpu")(cdt, dyn, static)
    if dyn[1] == 0:
        raise RuntimeError("ZeroDivisionError")


@defop(namespaces=("torch", "nn.functional"), inplace=True, inplace_in=("torch", "nn.functional"), inplace_arg=True,
       check=_celu_check, inplace_grad_name="CeluBackward1", inplace_saves=("result",))  # fmt: skip
def celu(input: TensorArg, alpha: Scalar = 1.0) -> Any:
    return _elu_body(input, alpha, 1.0, 1.0 / alpha)


def _gelu_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    if static[0] not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_kernel("GeluKernelImpl")(cdt, dyn, static)


@defop(namespaces=("nn.functional",), check=_gelu_check)
def gelu(input: TensorArg, approximate: str = "none") -> Any:
    x = input
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + jnp.tanh(inner))
    return 0.5 * x * (1.0 + jax.scipy.special.erf(x * (1.0 / math.sqrt(2.0))))


@defop(namespaces=("nn.functional",), inplace_arg=True, check=_float_kernel("silu_cpu"))
def silu(input: TensorArg) -> Any:
    return input * jax.nn.sigmoid(input)


def _softplus_body(x: Any, beta: float, threshold: float) -> Any:
    xb = x * beta
    big = xb > threshold
    safe = jnp.where(big, jnp.zeros_like(xb), xb)  # keeps exp() finite in the branch not taken
    return jnp.where(big, x, jnp.log1p(jnp.exp(safe)) / beta)


@defop(namespaces=("nn.functional",), inplace_arg=True, check=_float_kernel("mish_cpu"))
def mish(input: TensorArg) -> Any:
    return input * jnp.tanh(_softplus_body(input, 1.0, 20.0))


@defop(namespaces=("nn.functional",), check=_float_kernel("softplus_cpu"))
def softplus(input: TensorArg, beta: Scalar = 1.0, threshold: Scalar = 20.0) -> Any:
    return _softplus_body(input, beta, threshold)


@defop(promote="float", namespaces=("nn.functional",), grad_name="DivBackward0")
def softsign(input: TensorArg) -> Any:
    return input / (1 + jnp.abs(input))


@defop(namespaces=("nn.functional",), inplace_arg=True, check=_float_kernel("hardsigmoid_cpu"))
def hardsigmoid(input: TensorArg) -> Any:
    inside = (input > -3) & (input < 3)
    # torch: NaN propagates, with a zero gradient
    outside = jnp.where(input <= -3, jnp.zeros_like(input), jnp.where(input >= 3, jnp.ones_like(input),
                                                                        jax.lax.stop_gradient(input)))  # fmt: skip
    return jnp.where(inside, input / 6 + 0.5, outside)


@defop(namespaces=("nn.functional",), inplace_arg=True, check=_float_kernel("hardswish_cpu"))
def hardswish(input: TensorArg) -> Any:
    x = input
    # torch: the gradient is 0 for x <= -3, x/3 + 0.5 inside, 1 for x >= 3
    mid = (x > -3) & (x < 3)
    xm = jnp.where(mid, x, jnp.zeros_like(x))  # NOTE: so that NaN/inf outside give no NaN gradient
    # torch computes x * 0 below -3: -0.0 there, and NaN at -inf
    return jnp.where(x <= -3, x * 0, jnp.where(mid, xm * (xm + 3) / 6, x))


@defop(namespaces=("nn.functional",), grad_name="LogSigmoidBackward0", check=_float_kernel("log_sigmoid_cpu"))
def logsigmoid(input: TensorArg) -> Any:
    return -jnp.logaddexp(jnp.zeros_like(input), -input)


@defop(promote="float", namespaces=("nn.functional",), grad_name="SubBackward0")
def tanhshrink(input: TensorArg) -> Any:
    return input - jnp.tanh(input)


def _lambd_check(kernel: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        _float_kernel(kernel)(cdt, dyn, static)
        lambd = dyn[1]
        if kernel == "softshrink_check" and not lambd >= 0:
            raise RuntimeError(
                f"lambda must be in range [0, 3.40282e+38] for input dtype {D.cpp_name(cdt)}, but found {lambd:g}"
            )

    return check


@defop(namespaces=("nn.functional",), check=_lambd_check("softshrink_check"))
def softshrink(input: TensorArg, lambd: Scalar = 0.5) -> Any:
    x = input
    zero = jnp.zeros_like(x)
    return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, zero))


@defop(namespaces=("torch", "Tensor", "nn.functional"), check=_lambd_check("hardshrink_cpu"))
def hardshrink(input: TensorArg, lambd: Scalar = 0.5) -> Any:
    return jnp.where((input > lambd) | (input < -lambd), input, jnp.zeros_like(input))


@defop(namespaces=("torch", "nn.functional"), inplace=True, inplace_in=("torch", "nn.functional"), inplace_arg=True,
       inplace_grad_name="ThresholdBackward1")  # fmt: skip
def threshold(input: TensorArg, threshold: Scalar, value: Scalar) -> Any:
    return jnp.where(input <= threshold, jnp.asarray(value, input.dtype), input)  # torch: NaN propagates


def _glu_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _float_kernel("glu_cpu")(cdt, dyn, static)
    x = dyn[0]
    if x.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(static[0], x.dim())
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}")


@defop(namespaces=("nn.functional",), check=_glu_check)
def glu(input: TensorArg, dim: int = -1) -> Any:
    a, b = jnp.split(input, 2, axis=_wrap_dim(dim, input.ndim))
    return a * jax.nn.sigmoid(b)


def _prelu_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _float_kernel("prelu_cpu")(cdt, dyn, static)
    x, w = dyn
    n = w.numel()
    if n != 1:
        if x.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.dim() > 1 else 1
        if channels != n:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{n} and channel size = {channels}."
            )
    if w.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.dim()}")


@defop(namespaces=("torch", "Tensor", "nn.functional"), grad_name="PreluKernelBackward0", check=_prelu_check)
def prelu(input: TensorArg, weight: TensorArg) -> Any:
    w = weight.reshape(-1)
    if w.shape[0] != 1 and input.ndim > 1:
        w = w.reshape((1, -1) + (1,) * (input.ndim - 2))
    elif w.shape[0] == 1:
        w = w.reshape(())
    return jnp.where(input > 0, input, w * input)


# torch: rrelu_ records RreluWithNoiseBackward1, which saves the result
_RRELU_INPLACE = {"inplace": True, "inplace_in": (), "inplace_grad_name": "RreluWithNoiseBackward1",
                  "inplace_saves": ("result",)}  # fmt: skip


@defop(method=False, grad_name="RreluWithNoiseBackward0", check=_float_kernel("rrelu_with_noise_out_cpu"),
       **_RRELU_INPLACE)  # fmt: skip
def _rrelu_noise(input: TensorArg, noise: RawTensor) -> Any:
    """Leaky ReLU with one slope per element (drawn by torchlike.nn.functional.rrelu)."""
    return jnp.where(input > 0, input, input * noise.astype(input.dtype))


@defop(method=False, grad_name="RreluWithNoiseBackward0", check=_float_kernel("rrelu_with_noise_out_cpu"),
       **_RRELU_INPLACE)  # fmt: skip
def _rrelu_eval(input: TensorArg, slope: Scalar) -> Any:
    return jnp.where(input > 0, input, input * slope)


def _rrelu_noise_of(input: Tensor, lower: float, upper: float, generator: Any) -> Tensor:
    """rrelu's per-element slopes in training: each non-positive element draws from U(lower, upper), in order."""
    import numpy as np

    from .. import random as R

    x = np.asarray(input.detach()._data())
    neg = x <= 0
    gen = R._generator_for(generator, input.device)
    draws = np.asarray(R._draw("uniform", gen, (int(neg.sum()),), D.float64, low=lower, high=upper))
    noise = np.ones(x.shape, np.float64)
    noise[neg] = draws
    from ..creation import from_array

    return from_array(noise.astype(x.dtype), input.device)


@expose("torch")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Any = None) -> Tensor:  # fmt: skip
    """torch.rrelu: in training, each non-positive element draws its slope from U(lower, upper), in order."""
    if not training:
        return _rrelu_eval(input, (lower + upper) / 2)
    return _rrelu_noise(input, _rrelu_noise_of(input, lower, upper, generator))


@expose("torch")
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator: Any = None) -> Tensor:  # fmt: skip
    from .. import inplace_fn

    if not training:
        return inplace_fn(_rrelu_eval._op)(input, (lower + upper) / 2)
    return inplace_fn(_rrelu_noise._op)(input, _rrelu_noise_of(input, lower, upper, generator))


# --- softmax family --------------------------------------------------------------------------------


def _softmax_check(kernel: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        x = dyn[0]
        dim, dtype = static
        _wrap_dim(dim, x.dim())
        dt = dtype if dtype is not None else x.dtype
        if not (dt.is_floating_point or dt.is_complex):
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(dt)}'")

    return check


def _softmax_input(input: Any, dim: int, dtype: Any) -> tuple:
    x = input if dtype is None else input.astype(D.to_dtype(dtype).np)
    return x, _wrap_dim(dim, x.ndim)


def _softmax_pad(static: tuple, shapes: tuple) -> tuple:
    return (buckets.all_but(shapes[0], static[0], -np.inf),)  # -inf: exp gives 0, nothing added to the sum


@defop(promote=None, namespaces=("torch", "Tensor", "special"), grad_name="SoftmaxBackward0",
       check=_softmax_check("softmax_lastdim_kernel_impl"), saves=("result",), pad=_softmax_pad)  # fmt: skip
def softmax(input: RawTensor, dim: int, dtype: Any = None) -> Any:
    x, d = _softmax_input(input, dim, dtype)
    if not x.ndim:
        return jax.nn.softmax(x.reshape(1), axis=0).reshape(())  # nan for ±inf, as torch
    # half types: float32, rounded once; the backward reads the rounded result (torch's softmax_backward_data)
    return half_from_result(lambda v: jax.nn.softmax(v, axis=d),
                            lambda y, g, _: y * (g - (g * y).sum(axis=d, keepdims=True)))(x)


@defop(promote=None, namespaces=("torch", "Tensor", "special"), grad_name="LogSoftmaxBackward0",
       check=_softmax_check("log_softmax_lastdim_kernel_impl"), saves=("result",), pad=_softmax_pad)  # fmt: skip
def log_softmax(input: RawTensor, dim: int, dtype: Any = None) -> Any:
    x, d = _softmax_input(input, dim, dtype)
    if not x.ndim:
        return jax.nn.log_softmax(x.reshape(1), axis=0).reshape(())
    return half_from_result(lambda v: jax.nn.log_softmax(v, axis=d),
                            lambda y, g, _: g - jnp.exp(y) * g.sum(axis=d, keepdims=True))(x)


@defop(promote=None, method=False, grad_name="SoftmaxBackward0", check=_softmax_check("softmax_lastdim_kernel_impl"))  # fmt: skip
def _softmin(input: RawTensor, dim: int, dtype: Any = None) -> Any:
    x, d = _softmax_input(input, dim, dtype)
    return jax.nn.softmax(-x, axis=d) if x.ndim else jax.nn.softmax(-x.reshape(1), axis=0).reshape(())

"""torch's ``native_*`` normalizations: the kernels behind layer_norm, batch_norm and group_norm, returning the
saved statistics (mean and reciprocal standard deviation) beside the output."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from ..._core.tensor import Tensor
from ..._core import grad_mode
from ..registry import OptScalar, OptTensor, TensorArg, defop, expose


def _acc(x: Any) -> Any:
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x


def _float_eps(op: str, position: int, eps: Any) -> None:
    """torch's argument check for a native norm's ``eps`` (a None would reach the kernel as a traced value)."""
    if eps is None:
        raise TypeError(f"{op}(): argument 'eps' (position {position}) must be float, not NoneType")


def _layer_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, w, b, eps = dyn
    _float_eps("native_layer_norm", 5, eps)
    shape = tuple(static[0])
    if x.dim() < len(shape) or tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(x.shape)}")  # fmt: skip


@defop("_native_layer_norm", promote="default", method=False, grad_name="NativeLayerNormBackward0",
       check=_layer_check)  # fmt: skip
def _native_layer_norm(input: TensorArg, normalized_shape: Any, weight: OptTensor, bias: OptTensor,
                      eps: OptScalar) -> Any:  # fmt: skip
    axes = tuple(range(input.ndim - len(tuple(normalized_shape)), input.ndim))
    x = _acc(input)
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    rstd = jax.lax.rsqrt(var + jnp.asarray(eps, var.dtype))
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(input.dtype), mean, rstd


@expose("torch")
def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple:  # fmt: skip
    """torch.native_layer_norm: ``(output, mean, rstd)``; the statistics are not differentiable, as in torch."""
    out, mean, rstd = _native_layer_norm(input, tuple(normalized_shape), weight, bias, eps)
    return out, mean.detach(), rstd.detach()


def _group_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    _float_eps("native_group_norm", 8, dyn[3])


@defop(promote="default", method=False, grad_name="NativeGroupNormBackward0", check=_group_check)
def native_group_norm(input: TensorArg, weight: OptTensor, bias: OptTensor, N: int, C: int, HxW: int, group: int,
                      eps: OptScalar) -> Any:  # fmt: skip
    x = _acc(input).reshape(N, group, -1)
    mean = x.mean(-1)
    var = ((x - mean[..., None]) ** 2).mean(-1)
    rstd = jax.lax.rsqrt(var + jnp.asarray(eps, var.dtype))
    out = ((x - mean[..., None]) * rstd[..., None]).reshape(input.shape)
    shape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype), mean, rstd


@defop("_native_batch_norm", promote="default", method=False, grad_name="NativeBatchNormBackward0")
def _native_batch_norm(input: TensorArg, weight: OptTensor, bias: OptTensor, running_mean: OptTensor,
                       running_var: OptTensor, training: bool, eps: OptScalar) -> Any:  # fmt: skip
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    x = _acc(input)
    if training:
        mean = x.mean(axes)
        var = ((x - mean.reshape(shape)) ** 2).mean(axes)
        invstd = jax.lax.rsqrt(var + jnp.asarray(eps, var.dtype))
        saved = (mean, invstd)
    else:
        mean, invstd = running_mean, jax.lax.rsqrt(running_var + jnp.asarray(eps, running_var.dtype))
        saved = (jnp.zeros((0,), x.dtype), jnp.zeros((0,), x.dtype))
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return (out.astype(input.dtype),) + saved


@expose("torch")
def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float, eps: float) -> tuple:  # fmt: skip
    """torch.native_batch_norm: ``(output, save_mean, save_invstd)``; in training the running statistics are
    updated in place (unbiased variance), as torch does; in evaluation the saved statistics are empty."""
    _float_eps("native_batch_norm", 8, eps)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    stats = (None, None) if training else (running_mean, running_var)  # training reads (and saves) neither
    out = _native_batch_norm(input, weight, bias, *stats, training, eps)
    if training and running_mean is not None and running_var is not None:
        n = input.numel() // input.shape[1]
        with grad_mode.no_grad():
            mean = out[1].detach()
            var = (1.0 / out[2].detach()) ** 2 - eps
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
            unbiased = var * (n / max(n - 1, 1)) if math.isfinite(n) else var
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    return out[0], out[1].detach(), out[2].detach()  # torch: the saved statistics are not differentiable

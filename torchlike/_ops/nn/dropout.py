"""Dropout: masks drawn as torch draws them, applied by one table op (``_dropout_apply``).

torch's top-level ``dropout``/``feature_dropout``/``alpha_dropout``/``feature_alpha_dropout`` (and their
in-place forms) live here; torchlike.nn.functional adds torch's argument checks and warnings.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._core import dtype as D
from ..._core import lazy
from ..._core.tensor import Tensor
from . import layers as N
from .. import random as R
from ..registry import expose


def keep_mask(
    input: Tensor, shape: tuple, p_keep: float, generator: Any = None, like_input: bool = False
) -> Any:
    """The dropout keep-mask (1 = keep), as torch's ``bernoulli_(p_keep)`` on its noise tensor draws it.

    The one place dropout draws randomness: on the CPU generator it is torch's stream; under
    torchlike.compile (``random.trace_rng``) and on CUDA it comes from a jax.random key stream.
    ``like_input``: the noise is ``empty_like(input)``, which keeps a dense input's strides, so the
    draws fill it in the input's memory order.
    """
    gen = R._generator_for(generator, input.device)
    values = R._draw("bernoulli", gen, tuple(shape), input.dtype, p=float(p_keep))
    if like_input and isinstance(values, np.ndarray) and not input.is_contiguous():
        stride = tuple(input.stride())
        if _dense(tuple(input.shape), stride):
            values = R._memory_order(values, tuple(shape), stride)
    return values


def _dense(shape: tuple, stride: tuple) -> bool:
    """Whether a strided layout covers its memory exactly once (torch's non_overlapping_and_dense)."""
    expected = 1
    for size, st in sorted(zip(shape, stride), key=lambda p: p[1]):
        if size == 1:
            continue
        if st != expected:
            return False
        expected *= size
    return True


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _scaled_noise(mask: Any, p: float, dtype: D.dtype) -> Any:
    """``noise.div_(1 - p)`` in torch's arithmetic: a scalar divisor becomes a multiply by its reciprocal."""
    np_dt = np.float32 if dtype in (D.float16, D.bfloat16) else dtype.np
    inv = np.asarray(1, np_dt) / np.asarray(1 - p, np_dt)
    key = (np.dtype(np_dt), dtype)
    k = _noise_kernels.get(key)
    if k is None:
        k = _noise_kernels[key] = jax.jit(lambda m, inv: (jnp.asarray(m).astype(np_dt) * inv).astype(dtype.np))
    return lazy.call(k, (mask, inv))


_noise_kernels: dict = {}


def _finish(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    if inplace:
        from .. import commit

        commit(input, out)
        return input
    return out


def dropout_impl(
    input: Tensor, p: float, training: bool, inplace: bool, feature: bool, alpha: bool
) -> Tensor:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    if p == 0 or not training or input.numel() == 0:
        return input
    from ..creation import from_array

    if feature:
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    if p == 1:
        zero = from_array(jnp.zeros((), input.dtype.np), input.device)
        return _finish(input, N._dropout_apply(input, zero), inplace)
    mask = keep_mask(input, shape, 1 - p, like_input=not feature)
    if not alpha:
        noise = from_array(_scaled_noise(mask, p, input.dtype), input.device)
        return _finish(input, N._dropout_apply(input, noise), inplace)

    alpha_ = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha_ * alpha_ * p + 1) * (1 - p))
    f = np.float32 if input.dtype is not D.float64 else np.float64
    m = jnp.asarray(mask).astype(f)
    b = ((m + f(-1)) * f(alpha_ * a) + f(alpha_ * a * p)).astype(f)
    noise = (m * f(a)).astype(f)
    out = N._alpha_dropout_apply(input, from_array(noise, input.device), from_array(b, input.device))
    return _finish(input, out, inplace)


@expose("torch")
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, False, False, False)


@expose("torch")
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, True, False, False)


@expose("torch")
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, False, True, False)


@expose("torch")
def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, True, True, False)


@expose("torch")
def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, False, False, True)


@expose("torch")
def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, True, False, True)


@expose("torch")
def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, False, True, True)


@expose("torch")
def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return dropout_impl(input, p, train, True, True, True)

"""clip_grad_norm_ and clip_grad_value_: one compiled kernel over all gradients."""

from __future__ import annotations

import math
from typing import Any, Iterable

import jax
import jax.numpy as jnp

from ..._core import tensor as T
from ..._core.kernel_cache import LRU
from ..._core.tensor import Tensor
from ..._ops import creation
from ..._ops._common import special_ord
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensor_norm(g: Any, p: Any) -> Any:
    a = jnp.abs(g)
    if not isinstance(p, float):  # a traced general order
        return jnp.sum(a**p) ** (1.0 / p)
    if p == math.inf:
        return jnp.max(a) if a.size else jnp.zeros((), a.dtype)
    if p == -math.inf:
        return jnp.min(a)
    if p == 0:
        return jnp.sum(a != 0).astype(a.dtype)
    if p == 1:
        return jnp.sum(a)
    if p == 2:
        return jnp.sqrt(jnp.sum(a * a))
    return jnp.sum(a**p) ** (1.0 / p)


@jax.jit
def _scale(grads: list, coef: Any) -> list:
    return [(g * coef.astype(g.dtype)) for g in grads]


_norm_kernels: LRU = LRU()


def _total_norm_kernel(p: float) -> Any:
    """One kernel per special order (0, 1, 2, +-inf: each its own reduction); one kernel for every other
    order, which it takes as a (weakly typed, so computed in the gradients' dtype) argument."""
    key = p if special_ord(p) else None
    k = _norm_kernels.get(key)
    if k is None:

        def total(grads: list, q: Any) -> Any:
            order = p if key is not None else q
            norms = [_tensor_norm(g, order) for g in grads]
            dt = jnp.result_type(*norms)
            return _tensor_norm(jnp.stack([n.astype(dt) for n in norms]), order)

        k = _norm_kernels[key] = jax.jit(total)
    return k


def _as_list(tensors: Any) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:  # fmt: skip
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    total = _total_norm_kernel(norm_type)([t._data() for t in tensors], norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return T.make(total, tensors[0].device)


def clip_grads_with_norm_(
    parameters: Any, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = jnp.minimum(float(max_norm) / (total_norm._data() + 1e-6), 1.0)
    new = _scale([g._data() for g in grads], coef)
    with no_grad():
        for g, arr in zip(grads, new):
            g._assign(arr)


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:  # fmt: skip
    """torch.nn.utils.clip_grad_norm_: scales gradients in place by min(1, max_norm / (total + 1e-6))."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:  # fmt: skip
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@jax.jit
def _clamp_all(grads: list, lo: Any, hi: Any) -> list:
    return [jnp.clip(g, lo.astype(g.dtype), hi.astype(g.dtype)) for g in grads]


def clip_grad_value_(parameters: Iterable | Tensor, clip_value: float, foreach: bool | None = None) -> None:
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    new = _clamp_all([g._data() for g in grads], jnp.asarray(-clip_value), jnp.asarray(clip_value))
    with no_grad():
        for g, arr in zip(grads, new):
            g._assign(arr)

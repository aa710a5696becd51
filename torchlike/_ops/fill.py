"""fill / zero: the in-place fills every layer initialiser and optimizer uses."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .registry import RawTensor, TensorOrScalar, defop

__all__ = ["zero_", "fill_"]


def _fill_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    from .._core.tensor import Tensor

    v = dyn[1]
    if isinstance(v, Tensor) and v.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {v.dim()} dimensions."
        )


@defop(promote=None, inplace=True, check=_fill_check, saves=())
def fill(input: RawTensor, value: TensorOrScalar) -> Any:
    return jnp.full(input.shape, value, input.dtype) if not hasattr(value, "astype") else jnp.broadcast_to(
        value.astype(input.dtype), input.shape)  # fmt: skip


@defop("_zero", promote=None, method=False, inplace="zero", grad_name="ZeroBackward0", saves=())
def _zero(input: RawTensor) -> Any:
    return jnp.zeros_like(input)


def zero_(input: Any) -> Any:
    return input.zero_()


def fill_(input: Any, value: Any) -> Any:
    return input.fill_(value)

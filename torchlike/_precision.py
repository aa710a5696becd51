"""torch.set_float32_matmul_precision: 'highest' (torch's default: full float32), 'high'/'medium' (TF32)."""

from __future__ import annotations

import jax

_precision = "highest"
_JAX = {"highest": "highest", "high": "tensorfloat32", "medium": "bfloat16"}


def set_float32_matmul_precision(precision: str) -> None:
    global _precision
    if precision not in _JAX:
        raise RuntimeError(f"Invalid precision: {precision}")
    _precision = precision
    jax.config.update("jax_default_matmul_precision", _JAX[precision])


def get_float32_matmul_precision() -> str:
    return _precision

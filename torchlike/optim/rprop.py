"""torch.optim.Rprop (resilient backpropagation)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_lr
from ._fused import FusedOptimizer, hyper

__all__ = ["Rprop"]


def _sign(x: Any) -> Any:
    # torch: sign(nan) is 0 (computed as (0 < x) - (x < 0))
    return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)


class Rprop(FusedOptimizer):
    """torch.optim.Rprop with torch's single-tensor maths."""

    _state_order = ("step", "prev", "step_size")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"],)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        return hyper(group["lr"], etaminus, etaplus, step_size_min, step_size_max)

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        lr = h[0].astype(p.real.dtype)
        fill = jax.lax.complex(lr, lr) if jnp.iscomplexobj(p) else lr
        return {"step": jnp.zeros((), sdt), "prev": jnp.zeros_like(p), "step_size": jnp.full_like(p, fill)}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        (maximize,) = static
        etaminus, etaplus, step_size_min, step_size_max = h[1], h[2], h[3], h[4]
        if maximize:
            g = -g
        dt = g.dtype
        sign = _sign(M.mul(g, st["prev"]))
        minus = etaminus.astype(dt)
        sign = jnp.where(sign > 0, etaplus.astype(dt), jnp.where(sign < 0, minus, jnp.ones((), dt)))
        step_size = M.clamp(M.mul(st["step_size"], sign), step_size_min, step_size_max)
        g = jnp.where(sign == minus, jnp.zeros((), dt), g)
        new = {"step": c["step"], "prev": g, "step_size": step_size}
        return M.addcmul(p, _sign(g), step_size, -1.0), new

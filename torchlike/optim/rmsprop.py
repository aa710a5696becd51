"""torch.optim.RMSprop (centered, momentum)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_lr_eps, check_nonnegative
from ._fused import FusedOptimizer, hyper

__all__ = ["RMSprop"]


class RMSprop(FusedOptimizer):
    """torch.optim.RMSprop with torch's single-tensor maths."""

    _state_order = ("step", "square_avg", "momentum_buffer", "grad_avg")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr_eps(lr, eps)
        check_nonnegative(momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _group_defaults(self) -> dict[str, Any]:
        return {**super()._group_defaults(), "momentum": 0, "centered": False}

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["centered"], group["momentum"] > 0)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["alpha"], group["eps"], group["weight_decay"], group["momentum"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        st = {"step": jnp.zeros((), sdt), "square_avg": jnp.zeros_like(p)}
        if static[3]:
            st["momentum_buffer"] = jnp.zeros_like(p)
        if static[2]:
            st["grad_avg"] = jnp.zeros_like(p)
        return st

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd, centered, has_momentum = static
        lr, alpha, eps, weight_decay, momentum = h[0], h[1], h[2], h[3], h[4]
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        new = {"step": c["step"]}
        square_avg = new["square_avg"] = M.addcmul(M.mul_scalar(st["square_avg"], alpha), g, g, 1 - alpha)
        if centered:
            grad_avg = new["grad_avg"] = M.lerp(st["grad_avg"], g, 1 - alpha)
            avg = M.sqrt(M.addcmul(square_avg, grad_avg, grad_avg, -1))
        else:
            avg = M.sqrt(square_avg)
        avg = M.add_scalar(avg, eps)
        if has_momentum:
            buf = new["momentum_buffer"] = M.addcdiv(M.mul_scalar(st["momentum_buffer"], momentum), g, avg)
            return M.add(p, buf, -lr), new
        return M.addcdiv(p, g, avg, -lr), new

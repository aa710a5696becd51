"""torch.optim.Adadelta."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._fused import FusedOptimizer, hyper
from .adam import check_lr_eps

__all__ = ["Adadelta"]


class Adadelta(FusedOptimizer):
    """torch.optim.Adadelta with torch's single-tensor maths."""

    _state_order = ("step", "square_avg", "acc_delta")
    _capturable_xla = False

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_lr_eps(lr, eps)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
            "capturable": capturable, "foreach": foreach, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _group_defaults(self) -> dict[str, Any]:
        return {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["rho"], group["eps"], group["weight_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        return {"step": jnp.zeros((), sdt), "square_avg": jnp.zeros_like(p), "acc_delta": jnp.zeros_like(p)}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd = static
        lr, rho, eps, weight_decay = h[0], h[1], h[2], h[3]
        if maximize:
            g = -g
        if has_wd:
            g = M.add(g, p, weight_decay)
        square_avg = M.addcmul(M.mul_scalar(st["square_avg"], rho), g, g, 1 - rho)
        std = M.sqrt(M.add_scalar(square_avg, eps))
        delta = M.mul(M.div(M.sqrt(M.add_scalar(st["acc_delta"], eps)), std), g)
        acc_delta = M.addcmul(M.mul_scalar(st["acc_delta"], rho), delta, delta, 1 - rho)
        new = {"step": c["step"], "square_avg": square_avg, "acc_delta": acc_delta}
        return M.add(p, delta, -lr), new

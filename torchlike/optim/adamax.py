"""torch.optim.Adamax (Adam on the infinity norm)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_betas, check_lr_eps, check_nonnegative
from ._fused import FusedOptimizer, hyper, zeros_init

__all__ = ["Adamax"]


class Adamax(FusedOptimizer):
    """torch.optim.Adamax with torch's single-tensor maths."""

    _state_order = ("step", "exp_avg", "exp_inf")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr_eps(lr, eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        return hyper(group["lr"], beta1, beta2, group["eps"], group["weight_decay"])

    _init = zeros_init("step", "exp_avg", "exp_inf")

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        lr, beta1 = h[0], h[1]
        step_t = s["step"] + 1
        return {"step": step_t, "clr": lr / (1 - beta1 ** step_t.astype(jnp.float64))}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd = static
        beta1, beta2, eps, weight_decay = h[1], h[2], h[3], h[4]
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        exp_avg = M.lerp(st["exp_avg"], g, 1 - beta1)
        exp_inf = M.maximum(M.mul_scalar(st["exp_inf"], beta2), M.add_scalar(jnp.abs(g), eps))
        new = {"step": c["step"], "exp_avg": exp_avg, "exp_inf": exp_inf}
        return M.addcdiv(p, exp_avg, exp_inf, -c["clr"]), new

"""torch.optim.RAdam (rectified Adam)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_betas, check_lr_eps, check_nonnegative
from ._fused import FusedOptimizer, hyper, zeros_init

__all__ = ["RAdam"]


class RAdam(FusedOptimizer):
    """torch.optim.RAdam with torch's single-tensor maths."""

    _state_order = ("step", "exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr_eps(lr, eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"])

    def _hyper(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        return hyper(group["lr"], beta1, beta2, group["eps"], group["weight_decay"])

    _init = zeros_init("step", "exp_avg", "exp_avg_sq")

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        beta1, beta2 = h[1], h[2]
        step_t = s["step"] + 1
        step = step_t.astype(jnp.float64)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rect = jnp.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return {"step": step_t, "bc1": bias_correction1, "bc2_sqrt": jnp.sqrt(bias_correction2), "rect": rect,
                "rectify": rho_t > 5.0}  # fmt: skip

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd, decoupled = static
        lr, beta1, beta2, eps, weight_decay = h[0], h[1], h[2], h[3], h[4]
        p, g, exp_avg, exp_avg_sq = M.adam_moments(p, g, st, lr, beta1, beta2, weight_decay, maximize, has_wd, decoupled)
        corrected = M.div_scalar(exp_avg, c["bc1"])
        # torch branches on rho_t > 5 in Python; both sides are cheap, select the one torch takes
        adaptive_lr = M.rdiv_scalar(c["bc2_sqrt"], M.add_scalar(M.sqrt(exp_avg_sq), eps))
        scaled = M.mul_scalar(corrected, lr)
        rectified = M.mul_scalar(M.mul(scaled, adaptive_lr), c["rect"])
        update = jnp.where(c["rectify"], rectified, scaled)
        return M.add(p, update, -1.0), {"step": c["step"], "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}

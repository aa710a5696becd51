"""torch.optim.NAdam (Adam with Nesterov momentum and momentum decay)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_betas, check_lr_eps, check_nonnegative
from ._fused import FusedOptimizer, hyper

__all__ = ["NAdam"]


class NAdam(FusedOptimizer):
    """torch.optim.NAdam with torch's single-tensor maths."""

    _state_order = ("step", "mu_product", "exp_avg", "exp_avg_sq")
    _capturable_what = "params, mu_products and state_steps"
    _scalar_keys = ("step", "mu_product")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr_eps(lr, eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"])

    def _hyper(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        return hyper(group["lr"], beta1, beta2, group["eps"], group["weight_decay"], group["momentum_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        return {"step": jnp.zeros((), sdt), "mu_product": jnp.ones((), sdt), "exp_avg": jnp.zeros_like(p),
                "exp_avg_sq": jnp.zeros_like(p)}  # fmt: skip

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        lr, beta1, beta2, momentum_decay = h[0], h[1], h[2], h[5]
        step_t = s["step"] + 1
        step = step_t.astype(jnp.float64)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product = M.mul_scalar(s["mu_product"], mu)  # torch: a float tensor, `mu_product *= mu`
        mu_prod = mu_product.astype(jnp.float64)
        return {
            "step": step_t, "mu_product": mu_product, "bc2": 1 - beta2**step,
            "grad_coef": (-lr * (1.0 - mu)) / (1.0 - mu_prod), "avg_coef": (-lr * mu_next) / (1.0 - mu_prod * mu_next),
        }  # fmt: skip

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd, decoupled = static
        lr, beta1, beta2, eps, weight_decay = h[0], h[1], h[2], h[3], h[4]
        p, g, exp_avg, exp_avg_sq = M.adam_moments(p, g, st, lr, beta1, beta2, weight_decay, maximize, has_wd, decoupled)
        denom = M.add_scalar(M.sqrt(M.div_scalar(exp_avg_sq, c["bc2"])), eps)
        p = M.addcdiv(p, g, denom, c["grad_coef"])
        p = M.addcdiv(p, exp_avg, denom, c["avg_coef"])
        return p, {"step": c["step"], "mu_product": c["mu_product"], "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}

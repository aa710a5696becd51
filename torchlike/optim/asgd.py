"""torch.optim.ASGD (averaged SGD)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_lr, check_nonnegative
from ._fused import FusedOptimizer, hyper

__all__ = ["ASGD"]


class ASGD(FusedOptimizer):
    """torch.optim.ASGD with torch's single-tensor maths (its step, eta and mu live on the parameter's device)."""

    _state_order = ("step", "eta", "mu", "ax")
    _capturable_what = "params, mus, etas, and state_steps"
    _scalar_keys = ("step", "eta", "mu")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["lambd"], group["alpha"], group["t0"], group["weight_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        return {"step": jnp.zeros((), sdt), "eta": h[0].astype(sdt), "mu": jnp.ones((), sdt), "ax": jnp.zeros_like(p)}

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        lr, lambd, alpha, t0 = h[0], h[1], h[2], h[3]
        step_t = s["step"] + 1
        step = step_t.astype(jnp.float64)
        eta, mu = s["eta"], s["mu"]
        eta_value = eta.astype(jnp.float64)
        return {
            "step": step_t, "decay": 1 - lambd * eta_value, "neg_eta": -eta_value, "old_mu": mu, "average": mu != 1,
            "eta": (lr / ((1 + lambd * lr * step) ** alpha)).astype(eta.dtype),
            "mu": (1 / jnp.maximum(1.0, step - t0)).astype(mu.dtype),
        }  # fmt: skip

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd = static
        weight_decay = h[4]
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        ax = st["ax"]
        p = M.mul_scalar(p, c["decay"])
        p = M.add(p, g, c["neg_eta"])
        # torch: `if mu.item() != 1: ax += (p - ax) * mu else: ax = p`
        ax = jnp.where(c["average"], M.add(ax, M.mul(M.sub(p, ax), c["old_mu"])), p)
        return p, {"step": c["step"], "eta": c["eta"], "mu": c["mu"], "ax": ax}
